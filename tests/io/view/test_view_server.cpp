/// `clockwork view`'s static server (io/view/view_server.hpp): mapping, refusals, a live
/// request over a socket.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "io/view/view_server.hpp"
#include "tests/support/files.hpp"

using namespace clockwork;
namespace fs = std::filesystem;

namespace {

struct Site {
  fs::path viewer, run;
  std::vector<ViewMount> mounts;
};

/// Its own folder per test case: CTest runs them in parallel.
Site make_site(const std::string& name) {
  Site s;
  const fs::path root = test::fresh_dir(name);
  s.viewer = root / "viewer";
  s.run = root / "run";
  fs::create_directories(s.viewer);
  fs::create_directories(s.run / "frames");
  std::ofstream(s.viewer / "index.html") << "<html>viewer</html>";
  std::ofstream(s.run / "bodies.json") << R"({"bodies": []})";
  std::ofstream(s.run / "frames" / "cloth_00000.ply") << "ply";
  std::ofstream(root / "secret.txt") << "secret";
  s.mounts = {{"/", s.viewer.string()}, {"/run/", s.run.string()}};
  return s;
}

std::string fetch(int port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::send(fd, request.data(), request.size(), 0) == ssize_t(request.size()));
  std::string response;
  char buffer[1024];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) response.append(buffer, n);
  ::close(fd);
  return response;
}

}  // namespace

TEST_CASE("view server: request paths map into their mount, '..' and bad escapes are refused") {
  const Site site = make_site("view_server_map");
  int status = 0;
  CHECK(resolve_request(site.mounts, "/run/bodies.json", &status) ==
        (site.run / "bodies.json").string());
  CHECK(status == 200);
  CHECK(resolve_request(site.mounts, "/run/frames/cloth%5F00000.ply?x=1", &status) ==
        (site.run / "frames" / "cloth_00000.ply").string());
  CHECK(resolve_request(site.mounts, "/?run=/run/", &status) ==
        (site.viewer / "index.html").string());
  for (const char* bad : {"/run/../secret.txt", "/../secret.txt", "/run/%2e%2e/secret.txt",
                          "/run/frames/..", "/run/..%2fsecret.txt", "/run/%zz", "run/x",
                          "/run/a\\..\\b"}) {
    CAPTURE(bad);
    CHECK_FALSE(resolve_request(site.mounts, bad, &status));
    CHECK(status == 403);
  }
  CHECK_FALSE(resolve_request(site.mounts, "/run/nothing.csv", &status));
  CHECK(status == 404);
}

TEST_CASE("view server: a live GET is answered, '..' gets 403, POST 405") {
  const Site site = make_site("view_server_live");
  ViewServer server(site.mounts, 0);
  REQUIRE(server.port() > 0);
  std::thread serve([&] {
    for (int i = 0; i < 3; ++i) server.serve_one();
  });
  const std::string ok = fetch(server.port(), "GET /run/bodies.json HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string up = fetch(server.port(), "GET /run/../secret.txt HTTP/1.1\r\n\r\n");
  const std::string post = fetch(server.port(), "POST /run/bodies.json HTTP/1.1\r\n\r\n");
  serve.join();
  CHECK(ok.rfind("HTTP/1.0 200 OK", 0) == 0);
  CHECK(ok.find("Content-Type: application/json") != std::string::npos);
  CHECK(ok.find(R"({"bodies": []})") != std::string::npos);
  CHECK(up.rfind("HTTP/1.0 403", 0) == 0);
  CHECK(up.find("secret") == std::string::npos);
  CHECK(post.rfind("HTTP/1.0 405", 0) == 0);
}
