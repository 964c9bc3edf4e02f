#include "io/view/view_server.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace clockwork {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(s[i + 2])))
      return std::nullopt;
    out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return out;
}

const char* content_type(const fs::path& p) {
  const std::string e = p.extension().string();
  if (e == ".html") return "text/html; charset=utf-8";
  if (e == ".js" || e == ".mjs") return "text/javascript; charset=utf-8";
  if (e == ".css") return "text/css; charset=utf-8";
  if (e == ".json") return "application/json";
  if (e == ".png") return "image/png";
  if (e == ".svg") return "image/svg+xml";
  if (e == ".mp4") return "video/mp4";
  if (e == ".csv" || e == ".obj" || e == ".ply" || e == ".txt") return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

void send_all(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the client went away: nothing to do
    sent += static_cast<std::size_t>(n);
  }
}

void respond(int fd, int status, const char* reason, const char* type, const std::string& body,
             bool head) {
  send_all(fd, fmt::format("HTTP/1.0 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n"
                           "Cache-Control: no-cache\r\nConnection: close\r\n\r\n",
                           status, reason, type, body.size()));
  if (!head) send_all(fd, body);
}

}  // namespace

std::optional<std::string> resolve_request(const std::vector<ViewMount>& mounts,
                                           std::string_view target, int* status) {
  *status = 403;
  const std::string_view path = target.substr(0, target.find_first_of("?#"));
  const auto decoded = percent_decode(path);
  if (!decoded || decoded->empty() || (*decoded)[0] != '/' ||
      decoded->find('\0') != std::string::npos || decoded->find('\\') != std::string::npos)
    return std::nullopt;
  // No ".." segment anywhere (also not one that would stay inside the mount).
  for (std::size_t start = 0; start <= decoded->size();) {
    const std::size_t end = std::min(decoded->find('/', start), decoded->size());
    if (decoded->compare(start, end - start, "..") == 0) return std::nullopt;
    start = end + 1;
  }
  *status = 404;
  const ViewMount* best = nullptr;
  for (const ViewMount& m : mounts)
    if (decoded->compare(0, m.prefix.size(), m.prefix) == 0 &&
        (!best || m.prefix.size() > best->prefix.size()))
      best = &m;
  if (!best) return std::nullopt;
  fs::path file = fs::path(best->dir) / decoded->substr(best->prefix.size());
  std::error_code ec;
  if (fs::is_directory(file, ec)) file /= "index.html";
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  *status = 200;
  return file.string();
}

ViewServer::ViewServer(std::vector<ViewMount> mounts, int port) : mounts_(std::move(mounts)) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) throw std::runtime_error(fmt::format("socket: {}", std::strerror(errno)));
  const int yes = 1;
  ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 16) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd_);
    throw std::runtime_error(fmt::format("--port: cannot listen on 127.0.0.1:{}: {}", port, why));
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
}

ViewServer::~ViewServer() {
  if (fd_ >= 0) ::close(fd_);
}

void ViewServer::serve_one() {
  const int client = ::accept(fd_, nullptr, nullptr);
  if (client < 0) return;
  // A silent client must not hang the (single-threaded) server.
  timeval timeout{5, 0};
  ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string request;
  char buffer[4096];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 16384) {
    const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    request.append(buffer, static_cast<std::size_t>(n));
  }
  const std::size_t sp1 = request.find(' ');
  const std::size_t sp2 = sp1 == std::string::npos ? sp1 : request.find(' ', sp1 + 1);
  if (sp2 == std::string::npos) {
    respond(client, 400, "Bad Request", "text/plain", "bad request\n", false);
  } else {
    const std::string method = request.substr(0, sp1);
    const bool head = method == "HEAD";
    int status = 0;
    const auto file =
        method == "GET" || head
            ? resolve_request(mounts_, std::string_view(request).substr(sp1 + 1, sp2 - sp1 - 1),
                              &status)
            : std::nullopt;
    if (method != "GET" && !head) {
      respond(client, 405, "Method Not Allowed", "text/plain", "GET only\n", false);
    } else if (!file) {
      // The viewer shows the status with the file it asked for (viewer/run_data.js).
      const std::string target = request.substr(sp1 + 1, sp2 - sp1 - 1);
      respond(client, status, status == 403 ? "Forbidden" : "Not Found", "text/plain",
              status == 403 ? "forbidden\n" : "not found: " + target.substr(0, 200) + "\n", head);
    } else {
      std::ifstream in(*file, std::ios::binary);
      const std::string body((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      respond(client, 200, "OK", content_type(*file), body, head);
    }
  }
  ::close(client);
}

}  // namespace clockwork
