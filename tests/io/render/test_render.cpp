/// The software rasterizer and `clockwork render` (io/render/render.hpp, io/render/render_run.hpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "io/render/render.hpp"
#include "io/render/render_run.hpp"
#include "io/run/run.hpp"
#include "io/scene/scene.hpp"
#include "io/scene_error.hpp"
#include "tests/support/files.hpp"

using namespace clockwork;
namespace fs = std::filesystem;

namespace {

const Rgb kWhite{255, 255, 255};

/// Camera at z = 5 looking down at the origin, y up on screen, 90° field of view: a
/// point (x, y, 0) lands at pixel (W/2 + (H/2) x / 5, H/2 − (H/2) y / 5).
Camera top_camera() {
  Camera c;
  c.eye = Vec3(0, 0, 5);
  c.target = Vec3::Zero();
  c.up = Vec3::UnitY();
  c.fov_y = 90.0;
  return c;
}

std::array<Vec3, 3> flat(const Vec3& c) { return {c, c, c}; }

int count_not(const Image& im, Rgb colour) {
  int n = 0;
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x) n += im.pixel(x, y) != colour;
  return n;
}

/// Width and height from a PNG's IHDR chunk, after checking the 8-byte signature.
std::pair<int, int> png_size(const fs::path& p) {
  const std::string bytes = test::read_file(p);
  REQUIRE(bytes.size() > 24);
  REQUIRE(bytes.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  REQUIRE(bytes.substr(12, 4) == "IHDR");
  const auto be32 = [&](std::size_t i) {
    return int(std::uint8_t(bytes[i])) << 24 | int(std::uint8_t(bytes[i + 1])) << 16 |
           int(std::uint8_t(bytes[i + 2])) << 8 | int(std::uint8_t(bytes[i + 3]));
  };
  return {be32(16), be32(20)};
}

}  // namespace

TEST_CASE("render: one triangle covers its analytic area, the corners keep the background") {
  Rasterizer r(64, 64, top_camera(), kWhite);
  // Screen scale: 32 px / 5 m = 6.4 px per m at depth 5.
  const std::array<Vec3, 3> x = {Vec3(-2.1, -1.7, 0), Vec3(2.3, -1.3, 0), Vec3(0.2, 2.9, 0)};
  r.draw_triangle(x, flat(Vec3(1, 0, 0)));
  const double area_px = 0.5 * (x[1] - x[0]).cross(x[2] - x[0]).norm() * 6.4 * 6.4;
  const int covered = count_not(r.image(), kWhite);
  CAPTURE(area_px);
  CAPTURE(covered);
  CHECK(std::abs(covered - area_px) <= 3.0);
  CHECK(r.image().pixel(0, 0) == kWhite);
  CHECK(r.image().pixel(63, 63) == kWhite);
  CHECK(r.image().pixel(0, 63) == kWhite);
  // The centroid (0.133, -0.033) m → pixel (32.85, 32.21): red.
  CHECK(r.image().pixel(32, 32) == Rgb{255, 0, 0});
  // Screen y grows downwards: the apex (y = 2.9 m) is in the upper half, at row ~13.5.
  CHECK(r.image().pixel(33, 15) == Rgb{255, 0, 0});
  CHECK(r.image().pixel(33, 50) == kWhite);
}

TEST_CASE("render: the z-buffer keeps the nearer of two overlapping triangles in any order") {
  const std::array<Vec3, 3> near_tri = {Vec3(-3, -3, 1), Vec3(3, -3, 1), Vec3(0, 3, 1)};
  const std::array<Vec3, 3> far_tri = {Vec3(-3, 3, -1), Vec3(3, 3, -1), Vec3(0, -3, -1)};
  for (int order = 0; order < 2; ++order) {
    CAPTURE(order);
    Rasterizer r(64, 64, top_camera(), kWhite);
    if (order == 0) {
      r.draw_triangle(near_tri, flat(Vec3(1, 0, 0)));
      r.draw_triangle(far_tri, flat(Vec3(0, 0, 1)));
    } else {
      r.draw_triangle(far_tri, flat(Vec3(0, 0, 1)));
      r.draw_triangle(near_tri, flat(Vec3(1, 0, 0)));
    }
    CHECK(r.image().pixel(32, 32) == Rgb{255, 0, 0});  // both cover the centre: near wins
    // Pixel (40, 18): at depth 6 (far, 32/6 px per m) the point (1.5, 2.6) m, inside
    // the far triangle (half width 2.8 m there); at depth 4 (near, 8 px per m) the
    // point (1.0, 1.75) m, outside the near one (half width 0.63 m there).
    CHECK(r.image().pixel(40, 18) == Rgb{0, 0, 255});
  }
}

TEST_CASE("render: triangles crossing the camera plane are clipped, not dropped or wrapped") {
  Camera c;
  c.eye = Vec3(0, 0, 1);
  c.target = Vec3(0, 10, 1);
  c.up = Vec3::UnitZ();
  c.fov_y = 60.0;
  Rasterizer r(32, 32, c, kWhite);
  // A ground triangle under and behind the camera: only the lower half can see it.
  r.draw_triangle({Vec3(-50, -5, 0), Vec3(50, -5, 0), Vec3(0, 100, 0)}, flat(Vec3(0, 1, 0)));
  CHECK(r.image().pixel(16, 31) == Rgb{0, 255, 0});
  CHECK(r.image().pixel(16, 0) == kWhite);
  CHECK(count_not(r.image(), kWhite) < 32 * 32 / 2 + 32);
}

TEST_CASE("render: write_png writes a PNG of the image's size, an unwritable path throws") {
  const fs::path dir = test::fresh_dir("render_png");
  const Image im(37, 21, {10, 20, 30});
  write_png((dir / "a.png").string(), im);
  CHECK(png_size(dir / "a.png") == std::pair<int, int>{37, 21});
  CHECK_THROWS_WITH_AS(write_png((dir / "missing/b.png").string(), im),
                       doctest::Contains("cannot write the PNG"), std::runtime_error);
}

TEST_CASE("clockwork render: PNGs of every frame and a contact sheet of a tiny run") {
  const fs::path out = test::fresh_dir("render_run");
  Scene scene = load_scene(std::string(CLOCKWORK_SOURCE_DIR) + "/demos/hanging_cloth.json");
  RunOptions run;
  run.out_dir = out.string();
  run.until = 0.1;  // frames 0..3
  run_scene(scene, run);
  RenderOptions options;
  options.width = 64;
  options.height = 48;
  options.sheet_frames = 4;
  options.video = false;
  const RenderSummary s = render_run(out.string(), options);
  CHECK(s.frames == 4);
  for (int f = 0; f < 4; ++f) {
    const fs::path png = out / "render" / ("frame_0000" + std::to_string(f) + ".png");
    CAPTURE(png.string());
    REQUIRE(fs::exists(png));
    CHECK(png_size(png) == std::pair<int, int>{64, 48});
  }
  CHECK_FALSE(fs::exists(out / "render" / "frame_00004.png"));
  // 4 tiles of 32x24 in a 2x2 grid with 4-pixel gaps.
  CHECK(png_size(s.sheet) == std::pair<int, int>{2 * 32 + 3 * 4, 2 * 24 + 3 * 4});
  CHECK(s.video.empty());

  // The cloth is in view: the default camera frames it, and a frame is not all
  // background and ground.
  const RunFrames frames = read_run_frames(out.string());
  CHECK(frames.frame_interval == doctest::Approx(1.0 / 30));
  const Image im = render_frame(frames, 0, default_camera(frames, 64.0 / 48), 64, 48);
  int orange = 0;
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x) {
      const Rgb p = im.pixel(x, y);
      orange += p[0] > p[2] + 60;  // the cloth's front or back colour, not the grey ground
    }
  CHECK(orange > 64 * 48 / 20);
}

TEST_CASE("clockwork render: a missing folder, a folder that is not a run, bad sizes") {
  const fs::path empty = test::fresh_dir("render_not_a_run");
  CHECK_THROWS_WITH_AS(render_run((empty / "nope").string(), {}),
                       doctest::Contains("nope: no such folder"), SceneError);
  CHECK_THROWS_WITH_AS(render_run(empty.string(), {}),
                       doctest::Contains("no bodies.json: not an output folder"), SceneError);
  std::ofstream(empty / "bodies.json") << R"({"bodies": [{"name": "c", "obstacle": false,
                                             "collide": false}]})";
  CHECK_THROWS_WITH_AS(render_run(empty.string(), {}), doctest::Contains("frames: no such folder"),
                       SceneError);
  fs::create_directories(empty / "frames");
  CHECK_THROWS_WITH_AS(render_run(empty.string(), {}),
                       doctest::Contains("frames: no frames of the bodies of bodies.json (c)"),
                       SceneError);
  RenderOptions bad;
  bad.width = 8;
  CHECK_THROWS_WITH_AS(render_run(empty.string(), bad),
                       doctest::Contains("--width: must be in 16..8192 pixels, got 8"), SceneError);
}
