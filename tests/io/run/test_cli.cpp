/// The command-line tool, run as a user would: exit codes, messages, outputs.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "io/exit_codes.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/files.hpp"

using namespace clockwork;
namespace fs = std::filesystem;

namespace {
using test::run_cli;
using Result = test::CliResult;

std::string scene_file(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / "clockwork_cli_scenes";
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return (dir / name).string();
}
}  // namespace

TEST_CASE("--help and --version") {
  const Result help = run_cli("--help");
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("run") != std::string::npos);
  CHECK(help.out.find("validate") != std::string::npos);
  const Result version = run_cli("--version");
  CHECK(version.exit_code == 0);
  CHECK(version.out.find("clockwork 0.") == 0);
}

TEST_CASE("validate accepts the demos and rejects bad scenes with one clear message") {
  const Result ok = run_cli("validate " CLOCKWORK_SOURCE_DIR "/demos/hanging_cloth.json");
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("valid") != std::string::npos);

  const std::string bad = scene_file(
      "bad_young.json",
      R"({"name":"x","end_time":1,"frame_rate":10,"bodies":[{"name":"c",
      "shape":{"type":"grid","size":[1,1],"resolution":[2,2],"center":[0,0,0]},
      "material":{"area_density":0.1,"young":-5,"poisson":0.3,"bending":0}}]})");
  const Result r = run_cli("validate " + bad);
  CHECK(r.exit_code == kExitInput);
  CHECK(r.err == "clockwork: error: " + bad + ": /bodies/0/material/young: must be > 0, got -5\n");

  const Result missing = run_cli("run /no/such/scene.json");
  CHECK(missing.exit_code == kExitInput);
  CHECK(missing.err.find("/no/such/scene.json: cannot open the file") != std::string::npos);
}

TEST_CASE("bad command-line values fail with a message and a non-zero exit") {
  const std::string demo = CLOCKWORK_SOURCE_DIR "/demos/hanging_cloth.json";
  const Result until = run_cli("run " + demo + " --until -1");
  CHECK(until.exit_code == kExitUsage);
  CHECK(until.err.find("--until: must be a positive time in s, got -1") != std::string::npos);
  const Result format = run_cli("run " + demo + " --trace t.json --trace-format xml");
  CHECK(format.exit_code == kExitUsage);
  CHECK(format.err.find("--trace-format") != std::string::npos);
  const Result unwritable = run_cli("run " + demo + " --until 0.01 --out /proc/forbidden");
  CHECK(unwritable.exit_code == kExitIo);
  CHECK(unwritable.err.find("--out: cannot create '/proc/forbidden'") != std::string::npos);
  const Result lone_frame = run_cli("run " + demo + " --resume-frame 2");
  CHECK(lone_frame.exit_code == kExitUsage);
  CHECK(lone_frame.err.find("--resume-frame: needs --resume DIR") != std::string::npos);
  const Result no_run = run_cli("run " + demo + " --resume /no/such/run");
  CHECK(no_run.exit_code == kExitInput);
  CHECK(no_run.err.find("--resume /no/such/run: no frames folder") != std::string::npos);
}

TEST_CASE("run --resume goes on from the last frame and says so") {
  const fs::path out = fs::temp_directory_path() / ("clockwork_cli_resume_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const std::string demo = CLOCKWORK_SOURCE_DIR "/demos/hanging_cloth.json";
  REQUIRE(run_cli("run " + demo + " --until 0.1 --out " + out.string()).exit_code == 0);
  const Result r = run_cli("run " + demo + " --until 0.2 --resume " + out.string());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("resuming " + out.string() + " at frame 3 (t = 0.1 s)") != std::string::npos);
  CHECK(r.out.find("wrote 7 frames") != std::string::npos);
  CHECK(fs::exists(out / "frames" / "cloth_00006.ply"));
  fs::remove_all(out);
}

TEST_CASE("run writes frames, diagnostics and a trace, and says where") {
  const fs::path out = test::fresh_dir("cli_run");
  const fs::path trace = out / "trace.jsonl";
  const Result r = run_cli("run " CLOCKWORK_SOURCE_DIR "/demos/fpu_chain.json --until 1 --out " +
                           out.string() + " --trace " + trace.string());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("wrote 11 frames and diagnostics.csv to " + out.string()) != std::string::npos);
  CHECK(fs::exists(out / "diagnostics.csv"));
  CHECK(fs::exists(out / "frames" / "chain_00010.obj"));
  CHECK(fs::file_size(trace) > 1000);
  CHECK(r.err.empty());  // quiet when stderr is not a terminal
}

TEST_CASE("render, plot and view name a missing output folder and exit with the input error") {
  for (const char* command : {"render", "plot", "view"}) {
    CAPTURE(command);
    const Result r = run_cli(std::string(command) + " /no/such/run");
    CHECK(r.exit_code == kExitInput);
    CHECK(r.err.find("/no/such/run: no such folder (expected the output folder of 'clockwork "
                     "run')") != std::string::npos);
  }
  const Result camera = run_cli("render /no/such/run --eye 1 2 3");
  CHECK(camera.exit_code == kExitUsage);
  CHECK(camera.err.find("--eye and --target: give both or neither") != std::string::npos);
}

namespace {
/// Whether a frame or diagnostics row under `dir` holds a non-finite number: a PLY's
/// positions and velocities (its mass column is inf for pinned vertices), any number of
/// an OBJ or CSV.
bool holds_non_finite(const fs::path& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const std::string ext = e.path().extension().string();
    if (ext != ".ply" && ext != ".obj" && ext != ".csv") continue;
    std::istringstream in(test::read_file(e.path()));
    bool body = ext != ".ply";
    for (std::string line; std::getline(in, line);) {
      if (!body) {
        body = line == "end_header";
        continue;
      }
      std::istringstream tokens(line);
      std::string token;
      for (int i = 0; tokens >> token && (ext != ".ply" || i < 6); ++i) {
        for (char& c : token) c = char(std::tolower(static_cast<unsigned char>(c)));
        if (token.find("nan") != std::string::npos || token.find("inf") != std::string::npos) return true;
      }
    }
  }
  return false;
}
}  // namespace

TEST_CASE("a run that blows up stops at the event, names it and exits with the numerical failure") {
  const fs::path out = test::fresh_dir("cli_blowup");
  std::string text = test::read_file(CLOCKWORK_SOURCE_DIR "/demos/hanging_cloth.json");
  text.replace(text.find("[0, 0, -9.81]"), 13, "[0, 0, -1e12]");
  const std::string scene = scene_file("huge_gravity.json", text);
  const Result r = run_cli("run " + scene + " --out " + (out / "run").string());
  CHECK(r.exit_code == kExitNumerical);
  CAPTURE(r.err);
  CHECK(r.err.find("clockwork: error: numerical failure at t = ") == 0);
  CHECK(r.err.find("s in event 'force:gravity': body 'cloth' vertex ") != std::string::npos);
  CHECK(r.err.find("is above the health limit max_speed = 10000 m/s; frames up to 0 (t = 0 s) are in " +
                   (out / "run").string()) != std::string::npos);
  CHECK(fs::exists(out / "run" / "frames" / "cloth_00000.ply"));
  CHECK_FALSE(fs::exists(out / "run" / "frames" / "cloth_00001.ply"));
  CHECK_FALSE(holds_non_finite(out / "run"));
}

TEST_CASE("run refuses a non-empty output folder unless --overwrite clears an earlier run") {
  const fs::path out = test::fresh_dir("cli_overwrite");
  const std::string demo = CLOCKWORK_SOURCE_DIR "/demos/fpu_chain.json";
  const std::string run = "run " + demo + " --out " + (out / "run").string();
  REQUIRE(run_cli(run + " --until 1").exit_code == 0);
  REQUIRE(fs::exists(out / "run" / "frames" / "chain_00010.obj"));
  const Result again = run_cli(run + " --until 0.5");
  CHECK(again.exit_code == kExitInput);
  CHECK(again.err.find("--out: '" + (out / "run").string() +
                       "' is not empty (an earlier run's output): its files would mix with this "
                       "run's; give another folder, --overwrite to clear it, or --resume") != std::string::npos);
  const Result cleared = run_cli(run + " --until 0.5 --overwrite");
  CHECK(cleared.exit_code == 0);
  CHECK(fs::exists(out / "run" / "frames" / "chain_00005.obj"));
  CHECK_FALSE(fs::exists(out / "run" / "frames" / "chain_00006.obj"));  // the longer run's

  // A folder of other files is never cleared.
  fs::create_directories(out / "mine");
  std::ofstream(out / "mine" / "notes.txt") << "keep me";
  const Result foreign = run_cli("run " + demo + " --until 0.5 --overwrite --out " + (out / "mine").string());
  CHECK(foreign.exit_code == kExitInput);
  CHECK(foreign.err.find("holds no bodies.json or diagnostics.csv: not a Clockwork output folder") !=
        std::string::npos);
  CHECK(fs::exists(out / "mine" / "notes.txt"));
}

TEST_CASE("command-line errors exit with the usage status and say what is wrong") {
  const Result unknown = run_cli("frobnicate demos/hats.json");
  CHECK(unknown.exit_code == kExitUsage);
  CHECK(unknown.err.find("clockwork: error: unknown command 'frobnicate' (commands: run, validate, "
                         "check-intersections, render, plot, view, schema)") == 0);
  CHECK(unknown.err.find("Usage:") != std::string::npos);
  const Result flag = run_cli("run " CLOCKWORK_SOURCE_DIR "/demos/hats.json --no-such-flag");
  CHECK(flag.exit_code == kExitUsage);
  CHECK(flag.err.find("--no-such-flag") != std::string::npos);
  CHECK(flag.err.find("Usage:") != std::string::npos);
  const Result none = run_cli("");
  CHECK(none.exit_code == kExitUsage);
  const Result long_until = run_cli("run " CLOCKWORK_SOURCE_DIR "/demos/fpu_chain.json --until 1e300 --out " +
                                    test::fresh_dir("cli_long_until").string() + "/run");
  CHECK(long_until.exit_code == kExitInput);
  CHECK(long_until.err.find("--until 1e+300 s: 1e+301 frames at 10 frames/s, above the limit of 1000000") !=
        std::string::npos);
  const Result nan_until = run_cli("run " CLOCKWORK_SOURCE_DIR "/demos/hats.json --until nan");
  CHECK(nan_until.exit_code == kExitUsage);
  CHECK(nan_until.err.find("--until: must be a positive time in s, got nan") != std::string::npos);
}

TEST_CASE("a run in a pipe logs plain progress lines, and Ctrl-C stops it with its frames whole") {
  const fs::path out = test::fresh_dir("cli_progress");
  const std::string demo = CLOCKWORK_SOURCE_DIR "/demos/hanging_cloth.json";
  const Result r = run_cli("run " + demo + " --until 0.2 --progress-every 1e-9 --out " + (out / "a").string());
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("clockwork: progress: t = ") == 0);
  CHECK(r.err.find(" / 0.2 s, frame ") != std::string::npos);

  // SIGINT after a second of a 3 s scene that takes several seconds of wall time.
  const fs::path log = out / "log";
  fs::create_directories(log);
  const std::string cmd = fmt::format("({} run {} --out {} >{} 2>{} </dev/null & pid=$!; sleep 1; kill -INT "
                                      "$pid; wait $pid)",
                                      CLOCKWORK_EXE, demo, (out / "b").string(), (log / "out").string(),
                                      (log / "err").string());
  const int status = std::system(cmd.c_str());
  const Result stopped{WIFEXITED(status) ? WEXITSTATUS(status) : -1, test::read_file(log / "out"),
                       test::read_file(log / "err")};
  CHECK(stopped.exit_code == kExitInterrupted);
  CHECK(stopped.err.find("clockwork: error: interrupted at t = ") != std::string::npos);
  CHECK(stopped.err.find("are in " + (out / "b").string()) != std::string::npos);
  CHECK(stopped.out.find("scene 'hanging_cloth'") == 0);  // the log was flushed
  CHECK(fs::exists(out / "b" / "frames" / "cloth_00000.ply"));
  CHECK_FALSE(holds_non_finite(out / "b"));
}
