/// The command-line tool, run as a user would: exit codes, messages, outputs.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
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
