/// Issue 42's hostile-input battery (tests/hostile/hostile.hpp): every case is the tool
/// run in its own folder under `timeout 10`, asserting the exit status, the message
/// (file, field, value) and that nothing it wrote holds a non-finite number.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/hostile/hostile.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/files.hpp"

namespace fs = std::filesystem;
using namespace clockwork;
using namespace clockwork::hostile;

namespace {

constexpr int kTimeoutExit = 124;  // timeout(1): the command ran past its 10 s

/// test::run_cli's capture, with the tool under `timeout 10` and in `dir` (cases name
/// their files relative to it; run_cli runs in the test's folder without a time limit).
test::CliResult run_capped(const fs::path& dir, const fs::path& capture, const std::string& args) {
  const std::string cmd = fmt::format("cd '{}' && timeout 10 {} {} >'{}' 2>'{}' </dev/null", dir.string(),
                                      CLOCKWORK_EXE, args, (capture / "out").string(),
                                      (capture / "err").string());
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, test::read_file(capture / "out"),
          test::read_file(capture / "err")};
}

bool non_finite_token(std::string t) {
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (!t.empty() && (t[0] == '+' || t[0] == '-')) t.erase(0, 1);
  return t == "nan" || t == "inf" || t == "infinity" || t.rfind("nan(", 0) == 0;
}

/// The first non-finite number in a written PLY, OBJ or CSV file ("" if none). A PLY's
/// `mass` column is skipped: kinematic vertices have mass inf (io/frames/frame_io.hpp).
std::string first_non_finite(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  int mass_column = -1, columns = 0;
  bool in_header = file.extension() == ".ply";
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (in_header) {
      std::istringstream ls(line);
      std::string a, b, c;
      ls >> a >> b >> c;
      if (a == "property" && b != "list") {
        if (c == "mass") mass_column = columns;
        ++columns;
      }
      if (a == "end_header") in_header = false;
      continue;
    }
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream ls(line);
    std::string token;
    for (int col = 0; ls >> token; ++col)
      if (col != mass_column && non_finite_token(token))
        return fmt::format("{}:{}: {}", file.string(), line_no, token);
  }
  return {};
}

void run_case(const Case& c, const fs::path& root, int index) {
  CAPTURE(c.name);
  const fs::path dir = root / std::to_string(index) / "work", capture = root / std::to_string(index);
  fs::remove_all(capture);
  fs::create_directories(dir);
  for (const auto& [path, text] : c.files) {
    fs::create_directories((dir / path).parent_path());
    std::ofstream(dir / path, std::ios::binary) << text;
  }
  // A setup step that fails is the case's failure, not the table's: the rest still run.
  for (const std::string& step : c.setup) {
    CAPTURE(step);
    if (step.rfind("$ ", 0) == 0) {
      const int status = std::system(fmt::format("cd '{}' && {}", dir.string(), step.substr(2)).c_str());
      CHECK(status == 0);
      if (status != 0) return;
    } else {
      const auto r = run_capped(dir, capture, step);
      CAPTURE(r.err);
      CHECK(r.exit_code == 0);
      if (r.exit_code != 0) return;
    }
  }
  // What the setup left (edited frames may hold NaN on purpose): only what the case's
  // command writes or changes is checked for non-finite numbers.
  std::map<fs::path, std::string> before;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) before[entry.path()] = test::read_file(entry.path());
  const auto r = run_capped(dir, capture, c.args);
  CAPTURE(c.args);
  CAPTURE(r.err);
  CHECK(r.exit_code != kTimeoutExit);  // a hang
  CHECK(r.exit_code == c.exit_code);
  for (const std::string& s : c.err_has) {
    CAPTURE(s);
    CHECK(r.err.find(s) != std::string::npos);
  }
  // No crash report and no uncaught-exception text, whatever the status.
  CHECK(r.err.find("Sanitizer") == std::string::npos);
  CHECK(r.err.find("terminate called") == std::string::npos);
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".ply" && ext != ".obj" && ext != ".csv")) continue;
    const auto old = before.find(entry.path());
    if (old != before.end() && old->second == test::read_file(entry.path())) continue;
    const std::string bad = first_non_finite(entry.path());
    CAPTURE(bad);
    CHECK(bad.empty());
  }
  fs::remove_all(capture);
}

void run_table(const std::vector<Case>& cases, const std::string& table) {
  const fs::path root = fs::temp_directory_path() / fmt::format("clockwork_hostile_{}_{}", ::getpid(), table);
  fs::remove_all(root);
  std::set<std::string> names;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CHECK_MESSAGE(names.insert(cases[i].name).second, "duplicate case name ", cases[i].name);
    run_case(cases[i], root, static_cast<int>(i));
  }
  fs::remove_all(root);
}

}  // namespace

TEST_CASE("hostile scenes: every key of the cloth and chain scenes refused by file and field") {
  run_table(scene_cases(), "scenes");
}

TEST_CASE("hostile solid and contact scenes: refused by file and field") {
  run_table(solid_contact_cases(), "solids");
}

TEST_CASE("hostile OBJ meshes and TetGen and Gmsh files: refused naming the file") {
  run_table(file_cases(), "files");
}

TEST_CASE("hostile runs: good runs write finite frames, bad PLY frames and run folders refused") {
  run_table(run_cases(), "runs");
}

TEST_CASE("hostile command lines: usage errors exit 2 with the usage") {
  run_table(cli_cases(), "cli");
}

TEST_CASE("hostile failure classes: blow-ups, limits, numbers, names, readers, run folders") {
  run_table(failure_class_cases(), "classes");
}

TEST_CASE("the hostile battery holds at least 150 cases with distinct names") {
  std::set<std::string> names;
  std::size_t n = 0;
  for (const auto& table : {scene_cases(), solid_contact_cases(), file_cases(), run_cases(), cli_cases(),
                            failure_class_cases()})
    for (const Case& c : table) {
      ++n;
      CHECK_MESSAGE(names.insert(c.name).second, "duplicate case name ", c.name);
    }
  MESSAGE(n, " cases");
  CHECK(n >= 150);
}
