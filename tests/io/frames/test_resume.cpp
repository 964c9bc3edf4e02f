// Resuming a run from one of its frames (io/frames/resume.hpp, `clockwork run --resume`).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "io/frames/frame_io.hpp"
#include "io/scene/json_reader.hpp"
#include "io/run/run.hpp"
#include "io/scene/scene.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/files.hpp"

using namespace clockwork;
namespace fs = std::filesystem;

namespace {

/// The hanging cloth with its two pins walked by a script: +10 cm in x by 0.3 s, then
/// up 5 cm by 0.5 s (so a resume at 0.2 s starts mid-segment).
nlohmann::json walked_cloth() {
  nlohmann::json doc = parse_json_file(std::string(CLOCKWORK_SOURCE_DIR) + "/demos/hanging_cloth.json");
  doc["bodies"][0]["pin_motion"] = nlohmann::json::parse(R"({"keyframes": [
      {"time": 0, "offset": [0, 0, 0]}, {"time": 0.3, "offset": [0.1, 0, 0]},
      {"time": 0.5, "offset": [0.1, 0, 0.05]}]})");
  return doc;
}

fs::path write_scene(const nlohmann::json& doc, const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "clockwork_resume_scenes";
  fs::create_directories(dir);
  std::ofstream(dir / name) << doc.dump();
  return dir / name;
}

RunSummary run(const fs::path& scene_file, const fs::path& out, double until,
               const fs::path& resume = {}, int resume_frame = -1) {
  Scene scene = load_scene(scene_file.string(), resume.string(), resume_frame);
  RunOptions options;
  options.out_dir = out.string();
  options.until = until;
  return run_scene(scene, options);
}

std::vector<std::string> lines(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("a resumed run continues the run it resumes: state, frames, diagnostics, script") {
  const fs::path scene = write_scene(walked_cloth(), "walked_cloth.json");
  const fs::path a = test::fresh_dir("resume_a"), whole = test::fresh_dir("resume_whole"),
                 c = test::fresh_dir("resume_c");
  run(scene, a, 0.2);  // frames 0..6
  run(scene, whole, 0.4);  // frames 0..12, uninterrupted
  const RunSummary resumed = run(scene, c, 0.4, a);
  CHECK(resumed.frames == 13);
  CHECK(resumed.simulated_seconds == doctest::Approx(0.2));

  // The earlier frames are carried over unchanged, and the resumed frame holds
  // exactly the state it was resumed from (17 digits: an exact round trip), but for
  // the pins, which their script places anew (to rounding).
  for (int f = 0; f < 6; ++f)
    CHECK(test::read_file(frame_path(c.string(), "cloth", f, "ply")) ==
          test::read_file(frame_path(a.string(), "cloth", f, "ply")));
  const auto from = read_ply(frame_path(a.string(), "cloth", 6, "ply"));
  const auto at = read_ply(frame_path(c.string(), "cloth", 6, "ply"));
  REQUIRE(at.size() == from.size());
  for (std::size_t i = 0; i < at.size(); ++i) {
    if (std::isinf(at[i].mass)) {
      CHECK((at[i].x - from[i].x).norm() < 1e-12);
    } else {
      CHECK(at[i].x == from[i].x);
    }
    CHECK(at[i].v == from[i].v);
  }

  // diagnostics.csv: the earlier run's rows for frames 0..5, then the resumed ones.
  const auto rows_a = lines(a / "diagnostics.csv"), rows_c = lines(c / "diagnostics.csv");
  REQUIRE(rows_c.size() == 14u);  // header + 13 frames
  for (int r = 0; r <= 6; ++r) CHECK(rows_c[std::size_t(r)] == rows_a[std::size_t(r)]);

  // The pins follow their script from mid-segment exactly; the free cloth stays with
  // the uninterrupted run: the force ticks restart in another phase (each stencil's
  // clock from 0.2 s), an O(h) difference, measured at 1.7e-4 m of a 0.97 m displacement.
  const auto end_whole = read_ply(frame_path(whole.string(), "cloth", 12, "ply"));
  const auto end_c = read_ply(frame_path(c.string(), "cloth", 12, "ply"));
  const auto start = read_ply(frame_path(whole.string(), "cloth", 0, "ply"));
  double worst = 0.0, swing = 0.0;
  for (std::size_t i = 0; i < end_c.size(); ++i) {
    if (std::isinf(end_c[i].mass)) {
      CHECK((end_c[i].x - end_whole[i].x).norm() < 1e-12);
      CHECK((end_c[i].x - start[i].x - Vec3(0.1, 0, 0.025)).norm() < 1e-12);  // at 0.4 s
      continue;
    }
    worst = std::max(worst, (end_c[i].x - end_whole[i].x).norm());
    swing = std::max(swing, (end_whole[i].x - start[i].x).norm());
  }
  MESSAGE("resumed vs uninterrupted at 0.4 s: " << worst << " m apart; largest displacement " << swing << " m");
  CHECK(swing > 0.05);
  CHECK(worst < 2e-3 * swing);
}

TEST_CASE("resuming in place continues the folder, an earlier frame needs another folder") {
  const fs::path scene = write_scene(walked_cloth(), "walked_cloth.json");
  const fs::path a = test::fresh_dir("resume_in_place");
  run(scene, a, 0.1);  // frames 0..3
  CHECK(run(scene, a, 0.2, a).frames == 7);
  CHECK(lines(a / "diagnostics.csv").size() == 8u);
  CHECK(fs::exists(frame_path(a.string(), "cloth", 6, "ply")));
  CHECK(test::what_thrown([&] { run(scene, a, 0.3, a, 2); }) ==
        "--resume-frame 2: " + a.string() + " has later frames; write the resumed run to another folder (--out)");
  // From frame 2 into another folder: frames 0, 1 carried over, 2.. new.
  const fs::path b = test::fresh_dir("resume_from_2");
  CHECK(run(scene, b, 0.15, a, 2).frames == 5);
  CHECK(lines(b / "diagnostics.csv").size() == 6u);
}

TEST_CASE("bad resume input: one message naming the folder, frame, body and value") {
  const fs::path scene = write_scene(walked_cloth(), "walked_cloth.json");
  const fs::path empty = test::fresh_dir("resume_empty");
  CHECK(test::what_thrown([&] { load_scene(scene.string(), empty.string()); }) ==
        "--resume " + empty.string() + ": no frames folder (expected the output folder of 'clockwork run')");

  const fs::path a = test::fresh_dir("resume_bad_a");
  run(scene, a, 0.1);
  CHECK(test::what_thrown([&] { load_scene(scene.string(), a.string(), 9); }) ==
        "--resume-frame 9: " + a.string() + " has no such frame for every body (its last is 3)");
  CHECK(test::what_thrown([&] { run(scene, test::fresh_dir("resume_bad_b"), 0.05, a); }) ==
        "--until: the run starts at frame 3 (t = 0.1 s); 0.05 s is not later");

  // Another cloth: as many vertices but another density; another mesh; another name.
  nlohmann::json denser = walked_cloth();
  denser["bodies"][0]["material"]["area_density"] = 0.2;
  CHECK(test::what_thrown([&] { load_scene(write_scene(denser, "denser.json").string(), a.string()); })
            .find("--resume " + a.string() + ": frame 3 of body 'cloth': vertex 0 has mass ") == 0);
  nlohmann::json finer = walked_cloth();
  finer["bodies"][0]["shape"]["resolution"] = {12, 12};
  CHECK(test::what_thrown([&] { load_scene(write_scene(finer, "finer.json").string(), a.string()); }) ==
        "--resume " + a.string() + ": frame 3 of body 'cloth': 625 vertices, the scene's body has 169 (a run of another scene?)");
  nlohmann::json renamed = walked_cloth();
  renamed["bodies"][0]["name"] = "sheet";
  CHECK(test::what_thrown([&] { load_scene(write_scene(renamed, "renamed.json").string(), a.string()); }) ==
        "--resume " + a.string() + ": no PLY frames of body 'sheet' (" + (a / "frames").string() +
            "/sheet_NNNNN.ply; the scene's \"output\" must keep \"ply\")");
  // A corrupted diagnostics.csv (other columns) is refused before anything is written.
  std::ofstream(a / "diagnostics.csv") << "time,x\n0,1\n";
  CHECK(test::what_thrown([&] { run(scene, test::fresh_dir("resume_bad_c"), 0.2, a); }) ==
        "--resume " + a.string() + ": " + a.string() + "/diagnostics.csv has the columns 'time,x', this "
        "scene writes 'time,px,py,pz,Lx,Ly,Lz,kinetic,potential,total,events' (a run of another scene?)");
}
