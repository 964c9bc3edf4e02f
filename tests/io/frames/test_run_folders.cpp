/// Damaged run output folders (issue 42, "a run never lies"): the readers of a run —
/// `check-intersections`, `render`, `plot`, `view` — refuse a folder with a missing,
/// cut or changed frame, naming the file and exiting with the input error, instead of
/// checking, drawing or showing part of the run as if it were all of it.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "io/exit_codes.hpp"
#include "io/run/run.hpp"
#include "io/frames/run_folder.hpp"
#include "io/scene_error.hpp"
#include "io/view/view_server.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/files.hpp"

using namespace clockwork;
namespace fs = std::filesystem;
using test::run_cli;
using test::what_thrown;

namespace {

/// A real short run in its own folder (CTest runs test cases in parallel):
/// the FPU chain (13 vertices, no faces) to 1 s: frames 0..10; or the hanging cloth
/// (625 vertices, 1152 faces) to 0.1 s: frames 0..3.
fs::path short_run(const std::string& name, const std::string& demo, const std::string& until,
                   const std::string& last_frame) {
  const fs::path out = test::fresh_dir("run_folders_" + name) / "run";
  const auto r = run_cli("run " CLOCKWORK_SOURCE_DIR "/demos/" + demo + " --until " + until + " --out " + out.string());
  REQUIRE(r.exit_code == 0);
  REQUIRE(fs::exists(out / "frames" / last_frame));
  return out;
}

fs::path chain_run(const std::string& name) {
  return short_run(name, "fpu_chain.json", "1.0", "chain_00010.ply");
}

fs::path cloth_run(const std::string& name) {
  return short_run(name, "hanging_cloth.json", "0.1", "cloth_00003.ply");
}

fs::path frame(const fs::path& out, const std::string& body, int f, const char* ext) {
  return frame_path(out.string(), body, f, ext);
}

void write_run_file(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

/// Rows of a text file, each without its newline.
std::vector<std::string> rows_of(const fs::path& p) {
  std::vector<std::string> rows;
  std::istringstream in(test::read_file(p));
  for (std::string line; std::getline(in, line);) rows.push_back(line);
  return rows;
}

std::string joined(const std::vector<std::string>& rows) {
  std::string s;
  for (const auto& r : rows) s += r + "\n";
  return s;
}

/// check-intersections and render (which read the frames) both exit with the input
/// error, one message naming the damage, and render writes no image.
void both_refuse(const fs::path& out, const std::string& message) {
  CAPTURE(message);
  const auto check = run_cli("check-intersections " + out.string());
  CHECK(check.exit_code == kExitInput);
  CHECK(check.err.find(message) != std::string::npos);
  CHECK(check.out.empty());
  CAPTURE(check.err);
  const auto render = run_cli("render --no-video --width 32 --height 24 " + out.string());
  CHECK(render.exit_code == kExitInput);
  CHECK(render.err.find(message) != std::string::npos);
  CAPTURE(render.err);
  CHECK_FALSE(fs::exists(out / "render"));
  CHECK(what_thrown([&] { scan_run_folder(out.string()); }).find(message) != std::string::npos);
}

/// `plot` on a folder whose diagnostics.csv is damaged: one line from plot_run.py
/// naming the file, the input error, no traceback, no plots.
void plot_refuses(const fs::path& out, const std::string& message) {
  CAPTURE(message);
  const auto plot = run_cli("plot " + out.string());
  CAPTURE(plot.err);
  CHECK(plot.exit_code == kExitInput);
  CHECK(plot.err.find("plot_run.py: " + message) != std::string::npos);
  CHECK(plot.err.find("Traceback") == std::string::npos);
  CHECK(std::count(plot.err.begin(), plot.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(out / "plots"));
}

}  // namespace

TEST_CASE("run folders: a whole run passes check-intersections, render, plot and the scan") {
  const fs::path chain = chain_run("whole_chain"), cloth = cloth_run("whole_cloth");
  const RunFolder c = scan_run_folder(chain.string(), "ply");
  CHECK(c.frames == 11);
  CHECK((c.obj && c.ply));
  CHECK(c.vertices == std::vector<std::size_t>{13});
  CHECK(c.faces == std::vector<std::size_t>{0});
  const RunFolder k = scan_run_folder(cloth.string(), "obj");
  CHECK(k.frames == 4);
  CHECK(k.vertices == std::vector<std::size_t>{625});
  CHECK(k.faces == std::vector<std::size_t>{1152});
  for (const fs::path& out : {chain, cloth}) {
    CAPTURE(out.string());
    CHECK(run_cli("check-intersections " + out.string()).exit_code == 0);
    CHECK(run_cli("render --no-video --width 32 --height 24 " + out.string()).exit_code == 0);
    const auto plot = run_cli("plot " + out.string());
    if (plot.exit_code == kExitIo && plot.err.find("matplotlib is not installed") != std::string::npos)
      MESSAGE("no matplotlib for /usr/bin/python3: plot's success not checked");
    else
      CHECK(plot.exit_code == 0);
  }
}

TEST_CASE("run folders: a missing frame is named with the frames that exist") {
  const fs::path out = chain_run("gap");
  fs::remove(frame(out, "chain", 4, "ply"));
  both_refuse(out, frame(out, "chain", 4, "ply").string() + ": missing (frames 0-3 and 5-10 exist)");
  // Both formats gone: the OBJ (read by check-intersections and render) is named first.
  fs::remove(frame(out, "chain", 7, "obj"));
  fs::remove(frame(out, "chain", 8, "obj"));
  both_refuse(out, frame(out, "chain", 4, "ply").string() + ": missing (frames 0-3 and 5-10 exist)");
  fs::remove(frame(out, "chain", 4, "obj"));
  both_refuse(out, frame(out, "chain", 4, "obj").string() +
                       ": missing (frames 0-3, 5-6 and 9-10 exist)");
  // The last frame lost: only diagnostics.csv knows there was one.
  const fs::path last = chain_run("gap_last");
  fs::remove(frame(last, "chain", 10, "obj"));
  fs::remove(frame(last, "chain", 10, "ply"));
  both_refuse(last, frame(last, "chain", 10, "ply").string() +
                        ": missing (frames 0-9 exist, diagnostics.csv has 11 rows)");
}

TEST_CASE("run folders: frames left over from a longer run are refused") {
  const fs::path out = chain_run("stale");
  for (const char* ext : {"obj", "ply"})
    fs::copy_file(frame(out, "chain", 10, ext), frame(out, "chain", 11, ext));
  both_refuse(out, (out / "diagnostics.csv").string() +
                       ": 11 rows, but frames 0-11 exist (frames left over from a longer run");
}

TEST_CASE("run folders: a frame without faces") {
  const fs::path out = cloth_run("no_faces");
  // The PLY frame 2 keeps its vertices and loses its faces (header and rows).
  std::vector<std::string> ply = rows_of(frame(out, "cloth", 2, "ply"));
  const auto end = std::find(ply.begin(), ply.end(), "end_header");
  REQUIRE(end != ply.end());
  ply.erase(end + 1 + 625, ply.end());
  for (auto& row : ply)
    if (row.rfind("element face", 0) == 0) row = "element face 0";
  write_run_file(frame(out, "cloth", 2, "ply"), joined(ply));
  both_refuse(out, frame(out, "cloth", 2, "ply").string() + ": no faces (frame 0 has 1152)");
  // The OBJ too: it is named first (frame order, OBJ before PLY).
  std::vector<std::string> obj = rows_of(frame(out, "cloth", 2, "obj"));
  obj.erase(std::remove_if(obj.begin(), obj.end(), [](const std::string& r) { return r[0] == 'f'; }),
            obj.end());
  write_run_file(frame(out, "cloth", 2, "obj"), joined(obj));
  both_refuse(out, frame(out, "cloth", 2, "obj").string() + ": no faces (frame 0 has 1152)");
}

TEST_CASE("run folders: a vertex count that changes between frames") {
  const fs::path out = chain_run("vertices");
  // OBJ frame 5 with one vertex row more: 14 against 13.
  std::vector<std::string> obj = rows_of(frame(out, "chain", 5, "obj"));
  obj.insert(obj.begin(), "v 0 0 0");
  write_run_file(frame(out, "chain", 5, "obj"), joined(obj));
  both_refuse(out, frame(out, "chain", 5, "obj").string() + ": 14 vertices, frame 0 has 13");
  // PLY frame 3 with one vertex fewer, its header consistent with it.
  const fs::path ply_out = chain_run("vertices_ply");
  std::vector<std::string> ply = rows_of(frame(ply_out, "chain", 3, "ply"));
  const auto end = std::find(ply.begin(), ply.end(), "end_header");
  REQUIRE(end != ply.end());
  ply.erase(end + 1);
  for (auto& row : ply)
    if (row == "element vertex 13") row = "element vertex 12";
  write_run_file(frame(ply_out, "chain", 3, "ply"), joined(ply));
  both_refuse(ply_out, frame(ply_out, "chain", 3, "ply").string() + ": 12 vertices, frame 0 has 13");
}

TEST_CASE("run folders: an empty or missing frames folder") {
  const fs::path out = chain_run("empty_frames");
  for (const auto& entry : fs::directory_iterator(out / "frames")) fs::remove(entry.path());
  both_refuse(out, (out / "frames").string() +
                       ": no frames of the bodies of bodies.json (chain): no chain_00000.obj or .ply");
  fs::remove(out / "frames");
  both_refuse(out, (out / "frames").string() + ": no such folder");
}

TEST_CASE("run folders: a truncated, garbled or binary PLY frame") {
  const fs::path out = chain_run("truncated_ply");
  const fs::path ply = frame(out, "chain", 6, "ply");
  const std::string whole = test::read_file(ply);
  // Cut after its 10th vertex row (of 13).
  std::vector<std::string> rows = rows_of(ply);
  const auto end = std::find(rows.begin(), rows.end(), "end_header");
  rows.erase(end + 11, rows.end());
  write_run_file(ply, joined(rows));
  both_refuse(out, ply.string() + ": truncated: 10 of the 13 vertex rows and 0 of the 0 face rows");
  // Without the end of its last row (cut inside its last number, which may be one digit).
  write_run_file(ply, whole.substr(0, whole.size() - 1));
  both_refuse(out, ply.string() + ": truncated inside its last row");
  // A garbled value, an empty file, a binary header, a cut header.
  const std::size_t data = whole.find("end_header\n") + 11;
  write_run_file(ply, whole.substr(0, data) + "x" + whole.substr(data + 1));
  both_refuse(out, ply.string() + ":16: vertex 0: x: '");
  write_run_file(ply, "");
  both_refuse(out, ply.string() + ": empty file");
  write_run_file(ply, "ply\nformat binary_little_endian 1.0\nelement vertex 13\nend_header\n");
  both_refuse(out, ply.string() + ":2: format 'format binary_little_endian 1.0': only ASCII PLY");
  write_run_file(ply, whole.substr(0, 60));
  both_refuse(out, ply.string() + ": truncated header (no end_header)");
}

TEST_CASE("run folders: other files in frames/ are not read, a folder named as a frame is missing") {
  const fs::path out = chain_run("other_files");
  write_run_file(out / "frames" / "notes.txt", "not a frame");
  write_run_file(out / "frames" / "chain_3.ply", "not a frame either");  // not frame_path's name
  write_run_file(out / "frames" / "other_00000.ply", "ply");              // not a body of bodies.json
  CHECK(scan_run_folder(out.string()).frames == 11);
  CHECK(run_cli("check-intersections " + out.string()).exit_code == 0);
  // A face of frame 2 naming a vertex that does not exist (the cloth's PLY).
  const fs::path cloth = cloth_run("face_index");
  std::vector<std::string> ply = rows_of(frame(cloth, "cloth", 2, "ply"));
  ply.back() = "3 0 1 625";
  write_run_file(frame(cloth, "cloth", 2, "ply"), joined(ply));
  both_refuse(cloth, frame(cloth, "cloth", 2, "ply").string() +
                         ":1792: face 1151: vertex index '625' is not one of the 625 vertices");
  fs::remove(frame(out, "chain", 9, "ply"));
  fs::create_directory(frame(out, "chain", 9, "ply"));
  both_refuse(out, frame(out, "chain", 9, "ply").string() + ": missing (frames 0-8 and 10 exist)");
}

TEST_CASE("run folders: bodies.json naming a body with no frames, or no body") {
  const fs::path out = chain_run("ghost_body");
  write_run_file(out / "bodies.json", R"({"bodies": [{"name": "chain", "obstacle": false, "collide": false},
                                            {"name": "ghost", "obstacle": false, "collide": false}]})");
  both_refuse(out, frame(out, "ghost", 0, "obj").string() +
                       ": missing (body 'ghost' of bodies.json has no .obj frames; the run has "
                       "frames 0-10)");
  write_run_file(out / "bodies.json", R"({"bodies": []})");
  both_refuse(out, (out / "bodies.json").string() + ": /bodies: empty");
}

TEST_CASE("run folders: a missing, truncated or garbled diagnostics.csv") {
  const fs::path out = chain_run("diagnostics");
  const fs::path csv = out / "diagnostics.csv";
  const std::string whole = test::read_file(csv);

  fs::remove(csv);
  both_refuse(out, csv.string() + ": missing");
  plot_refuses(out, csv.string() + ": missing (every run writes it)");

  write_run_file(csv, whole.substr(0, whole.size() - 3));  // cut inside the last number
  both_refuse(out, csv.string() + ": truncated inside its last row");
  plot_refuses(out, csv.string() + ": truncated inside its last row");

  write_run_file(csv, whole.substr(0, whole.rfind(',')) + "\n");  // cut at a comma: a field short
  both_refuse(out, csv.string() + ":12: ");
  plot_refuses(out, csv.string() + ":12: ");

  std::string garbled = whole;
  garbled.replace(garbled.find('\n') + 1, 1, "\xff\xfe\x01");
  write_run_file(csv, garbled);
  both_refuse(out, csv.string() + ":2: field 1: '");
  plot_refuses(out, csv.string() + ": not a text file");

  write_run_file(csv, whole.substr(0, whole.find('\n') + 1));  // the header alone
  plot_refuses(out, csv.string() + ": no rows after the header");

  write_run_file(csv, std::regex_replace(whole, std::regex("\n0.5,"), "\n0.5e400,"));
  plot_refuses(out, csv.string() + ":7: column 'time': not a finite number: '0.5e400'");
}

TEST_CASE("run folders: plot names a garbled event_periods.csv") {
  const fs::path out = chain_run("periods");
  write_run_file(out / "event_periods.csv", "kind,period_lo,period_hi,events\nspring,1e-3,oops,4\n");
  plot_refuses(out, (out / "event_periods.csv").string() + ":2: column 'period_hi': not a number: 'oops'");
}

TEST_CASE("run folders: a resumed run is whole") {
  const fs::path out = chain_run("resumed");
  // From its last frame into the same folder, and from frame 6 into another one
  // (earlier frames linked or copied, earlier diagnostics rows kept).
  const fs::path other = out.parent_path() / "from6";
  REQUIRE(run_cli("run " CLOCKWORK_SOURCE_DIR "/demos/fpu_chain.json --resume " + out.string() +
                  " --resume-frame 6 --until 1.2 --out " + other.string())
              .exit_code == 0);
  REQUIRE(run_cli("run " CLOCKWORK_SOURCE_DIR "/demos/fpu_chain.json --resume " + out.string() +
                  " --until 1.5")
              .exit_code == 0);
  CHECK(scan_run_folder(out.string()).frames == 16);
  CHECK(scan_run_folder(other.string()).frames == 13);
  CHECK(run_cli("check-intersections " + out.string()).exit_code == 0);
  CHECK(run_cli("check-intersections " + other.string()).exit_code == 0);
}

TEST_CASE("run folders: view refuses a run without PLY frames, the server answers 404 naming the frame") {
  const fs::path out = chain_run("view");
  for (int f = 0; f <= 10; ++f) fs::remove(frame(out, "chain", f, "ply"));
  CHECK(what_thrown([&] { scan_run_folder(out.string(), "ply"); }) ==
        (out / "frames").string() + ": no PLY frames (was output.ply false?)");
  CHECK(scan_run_folder(out.string(), "obj").frames == 11);

  // A missing frame over HTTP: the viewer gets a 404 naming the file it asked for.
  const fs::path damaged = chain_run("view_404");
  fs::remove(frame(damaged, "chain", 10, "ply"));
  // `clockwork view` refuses the folder before serving it.
  const auto view = run_cli("view " + damaged.string() + " --port 0");
  CHECK(view.exit_code == 3);
  CHECK(view.err.find(frame(damaged, "chain", 10, "ply").string() + ": missing (frames 0-9 exist)") !=
        std::string::npos);
  ViewServer server({{"/run/", damaged.string()}}, 0);
  std::thread serve([&] { server.serve_one(); });
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(server.port()));
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  const std::string request = "GET /run/frames/chain_00010.ply HTTP/1.1\r\n\r\n";
  REQUIRE(::send(fd, request.data(), request.size(), 0) == ssize_t(request.size()));
  std::string response;
  char buffer[1024];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) response.append(buffer, n);
  ::close(fd);
  serve.join();
  CHECK(response.rfind("HTTP/1.0 404 Not Found", 0) == 0);
  CHECK(response.find("not found: /run/frames/chain_00010.ply") != std::string::npos);
}

TEST_CASE("run folders: the viewer shows load errors on the page") {
  // The page has a visible error element, filled by a classic script (so that it
  // works when the module cannot load) and by the viewer when loading the run fails.
  const std::string html = test::read_file(CLOCKWORK_SOURCE_DIR "/viewer/index.html");
  CHECK(html.find(R"(<div id="error" role="alert" hidden></div>)") != std::string::npos);
  CHECK(html.find("window.showViewerError") != std::string::npos);
  const std::string css = test::read_file(CLOCKWORK_SOURCE_DIR "/viewer/viewer.css");
  CHECK(css.find("#error {") != std::string::npos);
  const std::string js = test::read_file(CLOCKWORK_SOURCE_DIR "/viewer/viewer.js");
  CHECK(js.find("showError(`cannot load the run ${base}: ${e.message}`)") != std::string::npos);

  // viewer/run_data.js under node, when there is one: each damage names its file.
  if (std::system("node --version >/dev/null 2>&1") != 0) {
    MESSAGE("no node on the PATH: viewer/test/run_data_test.mjs not run");
    return;
  }
  const fs::path chain = chain_run("viewer_chain"), cloth = cloth_run("viewer_cloth");
  const fs::path log = chain.parent_path() / "node.log";
  const int status = std::system(("node " CLOCKWORK_SOURCE_DIR "/viewer/test/run_data_test.mjs " +
                                  chain.string() + " " + cloth.string() + " >" + log.string() + " 2>&1")
                                     .c_str());
  CAPTURE(test::read_file(log));
  CHECK(status == 0);
}
