#include "io/render/render_run.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "io/frames/check_frames.hpp"
#include "io/run/run.hpp"
#include "io/frames/run_folder.hpp"
#include "io/scene_error.hpp"

namespace clockwork {

namespace fs = std::filesystem;

namespace {

const Vec3 kBackground(0.93, 0.95, 0.98);
const Vec3 kObstacle(0.62, 0.64, 0.68);
const Vec3 kChecker[2] = {Vec3(0.80, 0.81, 0.83), Vec3(0.62, 0.63, 0.66)};
/// Front and back colours of the deformable bodies, cycled.
const Vec3 kFront[3] = {Vec3(0.93, 0.50, 0.18), Vec3(0.30, 0.70, 0.35), Vec3(0.75, 0.35, 0.70)};
const Vec3 kBack[3] = {Vec3(0.25, 0.50, 0.85), Vec3(0.85, 0.80, 0.25), Vec3(0.35, 0.75, 0.80)};

Rgb to_rgb(const Vec3& c) {
  const auto byte = [](double u) {
    return static_cast<std::uint8_t>(std::lround(255.0 * std::clamp(u, 0.0, 1.0)));
  };
  return {byte(c.x()), byte(c.y()), byte(c.z())};
}

/// A flat horizontal obstacle (every vertex at one height) is the ground: drawn as the
/// checker plane instead of its mesh.
bool is_flat(const TriangleMesh& m, double* z) {
  if (m.vertices.empty() || m.triangles.empty()) return false;
  double lo = m.vertices[0].z(), hi = lo, extent = 0.0;
  for (const Vec3& x : m.vertices) {
    lo = std::min(lo, x.z());
    hi = std::max(hi, x.z());
    extent = std::max(extent, (x - m.vertices[0]).norm());
  }
  *z = lo;
  return hi - lo <= 1e-9 * std::max(1.0, extent);
}

struct Box {
  Vec3 lo = Vec3::Constant(kNever), hi = Vec3::Constant(-kNever);
  void add(const Vec3& x) {
    lo = lo.cwiseMin(x);
    hi = hi.cwiseMax(x);
  }
  bool empty() const { return !(lo.x() <= hi.x()); }
};

/// Bounding box of what the camera frames: deformable bodies over all frames and
/// non-flat obstacles (the ground would push the camera far away).
Box framed_box(const RunFrames& run) {
  Box box;
  for (const auto& frame : run.meshes)
    for (std::size_t b = 0; b < frame.size(); ++b) {
      double z;
      if (run.obstacle[b] && is_flat(frame[b], &z)) continue;
      for (const Vec3& x : frame[b].vertices) box.add(x);
    }
  if (box.empty()) box.add(Vec3::Zero());
  return box;
}

/// Ground height: the flat obstacle's, else the lower of 0 and the lowest point.
double ground_height(const RunFrames& run, const Box& box) {
  for (std::size_t b = 0; b < run.body_names.size(); ++b) {
    double z;
    if (run.obstacle[b] && !run.meshes.empty() && is_flat(run.meshes[0][b], &z)) return z;
  }
  return std::min(0.0, box.lo.z());
}

double nice_step(double x) {
  const double p = std::pow(10.0, std::floor(std::log10(x)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= x) return m * p;
  return 10.0 * p;
}

void draw_mesh(Rasterizer& r, const TriangleMesh& m, const Vec3& front, const Vec3& back) {
  // Gouraud: area-weighted vertex normals, shaded per vertex. A triangle seen from
  // behind takes the back colour and the flipped normals (cloth is two-sided).
  std::vector<Vec3> normal(m.vertices.size(), Vec3::Zero());
  for (const auto& t : m.triangles) {
    const Vec3 n = (m.vertices[t[1]] - m.vertices[t[0]]).cross(m.vertices[t[2]] - m.vertices[t[0]]);
    for (Index a : t) normal[a] += n;
  }
  const Camera& cam = r.camera();
  for (const auto& t : m.triangles) {
    const std::array<Vec3, 3> x = {m.vertices[t[0]], m.vertices[t[1]], m.vertices[t[2]]};
    const Vec3 face = (x[1] - x[0]).cross(x[2] - x[0]);
    const bool seen_front = face.dot(cam.eye - x[0]) >= 0.0;
    std::array<Vec3, 3> colour;
    for (int i = 0; i < 3; ++i) {
      Vec3 n = normal[t[i]].squaredNorm() > 0 ? normal[t[i]].normalized() : face.normalized();
      if (!seen_front) n = -n;
      Vec3 nv = r.to_view(cam.eye + n);
      if (nv.z() > 0) nv = -nv;  // a silhouette vertex normal turned away: light it as facing
      colour[i] = shade(seen_front ? front : back, nv);
    }
    r.draw_triangle(x, colour);
  }
}

void draw_ground(Rasterizer& r, const Box& box, double z) {
  const Vec3 c = 0.5 * (box.lo + box.hi);
  const double size = std::max({box.hi.x() - box.lo.x(), box.hi.y() - box.lo.y(), 0.5});
  const double cell = nice_step(size / 4.0);
  const int n = 16;  // cells each side of the centre
  const double x0 = std::floor(c.x() / cell) * cell - n * cell;
  const double y0 = std::floor(c.y() / cell) * cell - n * cell;
  const Vec3 up_view = r.to_view(r.camera().eye + Vec3::UnitZ());
  const Vec3 n_view = r.camera().eye.z() >= z ? up_view : Vec3(-up_view);
  for (int j = 0; j < 2 * n; ++j)
    for (int i = 0; i < 2 * n; ++i) {
      const Vec3 col = shade(kChecker[(i + j) & 1], n_view);
      const Vec3 a(x0 + i * cell, y0 + j * cell, z),
          b = a + Vec3(cell, 0, 0), d = a + Vec3(0, cell, 0), e = a + Vec3(cell, cell, 0);
      r.draw_triangle({a, b, e}, {col, col, col});
      r.draw_triangle({a, e, d}, {col, col, col});
    }
}

double read_frame_interval(const std::string& out_dir) {
  std::ifstream in(out_dir + "/diagnostics.csv");
  std::string header, first, second;
  if (!std::getline(in, header) || !std::getline(in, first) || !std::getline(in, second))
    return 0.0;
  const auto time_of = [](const std::string& row) { return std::strtod(row.c_str(), nullptr); };
  const double dt = time_of(second) - time_of(first);
  return std::isfinite(dt) && dt > 0.0 ? dt : 0.0;  // 0: unknown, the video at 30 frames/s
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::error_code ec;
    const fs::path p = fs::path(dir.empty() ? "." : dir) / program;
    if (fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0) return true;
  }
  return false;
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

RunFrames read_run_frames(const std::string& out_dir) {
  // The whole run or nothing: a missing or cut frame is refused, not skipped.
  const RunFolder folder = scan_run_folder(out_dir, "obj");
  RunFrames run;
  for (const ManifestBody& b : folder.bodies) {
    run.body_names.push_back(b.name);
    run.obstacle.push_back(b.obstacle);
  }
  for (int frame = 0; frame < folder.frames; ++frame) {
    std::vector<TriangleMesh> bodies;
    for (const ManifestBody& b : folder.bodies)
      bodies.push_back(read_obj(frame_path(out_dir, b.name, frame, "obj")));
    run.meshes.push_back(std::move(bodies));
  }
  run.frame_interval = read_frame_interval(out_dir);
  return run;
}

Camera default_camera(const RunFrames& run, double aspect) {
  const Box box = framed_box(run);
  Camera cam;
  cam.target = 0.5 * (box.lo + box.hi);
  const double radius = std::max(0.5 * (box.hi - box.lo).norm(), 1e-3);
  constexpr double kPi = 3.14159265358979323846;
  // The bounding sphere fills the narrower field of view (its silhouette slightly
  // overflows; the bodies rarely fill their box).
  const double half_fov = 0.5 * cam.fov_y * kPi / 180.0;
  const double narrow = aspect >= 1.0 ? half_fov : std::atan(std::tan(half_fov) * aspect);
  const double distance = radius / std::tan(narrow);
  cam.eye = cam.target + distance * Vec3(0.55, -1.0, 0.5).normalized();
  cam.near = 1e-3 * distance;
  return cam;
}

Image render_frame(const RunFrames& run, int frame, const Camera& camera, int width, int height) {
  Rasterizer r(width, height, camera, to_rgb(kBackground));
  const Box box = framed_box(run);
  draw_ground(r, box, ground_height(run, box) - 1e-4 * (box.hi - box.lo).norm());
  const auto& bodies = run.meshes[std::size_t(frame)];
  int deformable = 0;
  for (std::size_t b = 0; b < bodies.size(); ++b) {
    double z;
    if (run.obstacle[b]) {
      if (!is_flat(bodies[b], &z)) draw_mesh(r, bodies[b], kObstacle, kObstacle);
    } else {
      draw_mesh(r, bodies[b], kFront[deformable % 3], kBack[deformable % 3]);
      ++deformable;
    }
  }
  return r.image();
}

RenderSummary render_run(const std::string& out_dir, const RenderOptions& options) {
  const auto check_size = [](const char* name, int v) {
    if (v < 16 || v > 8192)
      throw SceneError(fmt::format("--{}: must be in 16..8192 pixels, got {}", name, v));
  };
  check_size("width", options.width);
  check_size("height", options.height);
  if (options.sheet_frames < 0)
    throw SceneError(fmt::format("--sheet: must be >= 0 frames, got {}", options.sheet_frames));
  const RunFrames run = read_run_frames(out_dir);
  const Camera camera = options.camera
                            ? *options.camera
                            : default_camera(run, double(options.width) / options.height);

  RenderSummary summary;
  summary.folder = out_dir + "/render";
  std::error_code ec;
  fs::create_directories(summary.folder, ec);
  if (ec)
    throw std::runtime_error(fmt::format("cannot create '{}': {}", summary.folder, ec.message()));
  const int frames = static_cast<int>(run.meshes.size());
  for (int f = 0; f < frames; ++f)
    write_png(fmt::format("{}/frame_{:05d}.png", summary.folder, f),
              render_frame(run, f, camera, options.width, options.height));
  summary.frames = frames;

  if (options.sheet_frames > 0) {
    // N evenly spaced frames (first and last included), half size, in a near-square grid.
    const int n = std::min(options.sheet_frames, frames);
    const int cols = static_cast<int>(std::ceil(std::sqrt(double(n))));
    const int rows = (n + cols - 1) / cols;
    const int tw = std::max(8, options.width / 2), th = std::max(8, options.height / 2);
    const int gap = 4;
    Image sheet(cols * tw + (cols + 1) * gap, rows * th + (rows + 1) * gap, {255, 255, 255});
    for (int i = 0; i < n; ++i) {
      const int f = n == 1 ? 0 : static_cast<int>(std::lround(double(i) * (frames - 1) / (n - 1)));
      const Image tile = render_frame(run, f, camera, tw, th);
      const int ox = gap + (i % cols) * (tw + gap), oy = gap + (i / cols) * (th + gap);
      for (int y = 0; y < th; ++y)
        for (int x = 0; x < tw; ++x) sheet.set(ox + x, oy + y, tile.pixel(x, y));
    }
    summary.sheet = summary.folder + "/contact_sheet.png";
    write_png(summary.sheet, sheet);
  }

  if (!options.video) {
    // --no-video: nothing to say.
  } else if (!on_path("ffmpeg")) {
    summary.video_note = "ffmpeg is not on the PATH: no MP4 (the PNG frames are written)";
  } else {
    const double fps = run.frame_interval > 0 ? 1.0 / run.frame_interval : 30.0;
    const std::string video = summary.folder + "/run.mp4";
    const std::string input = quoted(summary.folder + "/frame_%05d.png");
    // H.264 in yuv420p plays everywhere (it needs even sizes); MPEG-4 part 2 if this
    // ffmpeg has no libx264.
    const std::string common = fmt::format(
        "ffmpeg -y -loglevel error -framerate {:.6g} -i {} -vf 'scale=trunc(iw/2)*2:trunc(ih/2)*2' "
        "-pix_fmt yuv420p",
        fps, input);
    if (std::system((common + " -c:v libx264 " + quoted(video) + " </dev/null").c_str()) == 0 ||
        std::system((common + " -c:v mpeg4 -q:v 3 " + quoted(video) + " </dev/null").c_str()) == 0)
      summary.video = video;
    else
      summary.video_note = "ffmpeg failed (libx264 and mpeg4): no MP4";
  }
  return summary;
}

}  // namespace clockwork
