#include "io/run.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>

#include "engine/diagnostics.hpp"
#include "engine/observer.hpp"
#include "io/frame_io.hpp"

namespace clockwork {

std::string frame_path(const std::string& out_dir, const std::string& body, int frame,
                       const char* extension) {
  return fmt::format("{}/frames/{}_{:05d}.{}", out_dir, body, frame, extension);
}

namespace {

void write_frame(const Scene& scene, const std::string& out_dir, int frame, double t,
                 const VertexState& s) {
  std::vector<Vec3> x;
  std::vector<FrameVertex> ply;
  for (const Body& body : scene.bodies) {
    x.clear();
    ply.clear();
    for (Index i = 0; i < body.vertex_count; ++i) {
      const Index a = body.first_vertex + i;
      x.push_back(s.position_at(a, t));
      ply.push_back(FrameVertex{x.back(), s.velocity(a), s.mass(a)});
    }
    if (scene.write_obj)
      write_obj(frame_path(out_dir, body.name, frame, "obj"), x, body.triangles, body.edges);
    if (scene.write_ply) write_ply(frame_path(out_dir, body.name, frame, "ply"), ply, body.triangles);
  }
}

}  // namespace

RunSummary run_scene(Scene& scene, const RunOptions& options) {
  const double until = std::isnan(options.until) ? scene.end_time : options.until;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(fs::path(options.out_dir) / "frames", ec);
  if (ec)
    throw std::runtime_error(
        fmt::format("--out: cannot create '{}': {}", options.out_dir, ec.message()));

  DiagnosticsCsv csv(options.out_dir + "/diagnostics.csv");
  std::unique_ptr<Trace> trace;
  if (!options.trace_path.empty()) trace = std::make_unique<Trace>(options.trace_path, options.trace_format);

  Kernel& kernel = *scene.kernel;
  const int frames = static_cast<int>(std::floor(until * scene.frame_rate + 1e-9));
  const auto wall_start = std::chrono::steady_clock::now();
  auto wall = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  };
  RunSummary summary;
  auto observe = [&](int frame, double t, Kernel& k) {
    csv.write(measure(k, t), k.events_processed());
    write_frame(scene, options.out_dir, frame, t, k.state());
    summary.frames = frame + 1;
    if (options.progress) {
      const double w = wall();
      const double rate = w > 0 ? k.events_processed() / w : 0.0;
      const double eta = t > 0 ? w * (until - t) / t : 0.0;
      fmt::print(stderr, "\r  t = {:.4f} / {:.4f} s   wall {:.1f} s   {:.3g} events/s   ETA {:.1f} s   ",
                 t, until, w, rate, eta);
    }
  };
  auto observer = std::make_unique<ObserverSource>(scene.frame_rate, frames, observe);
  ObserverSource& obs = *observer;
  const EventKind kind = kernel.add_source(std::move(observer));
  kernel.set_trace(trace.get());
  obs.start(kind, kernel);
  kernel.run_until(until);
  kernel.set_trace(nullptr);
  if (options.progress) fmt::print(stderr, "\n");
  summary.events = kernel.events_processed();
  summary.simulated_seconds = until;
  summary.wall_seconds = wall();
  return summary;
}

}  // namespace clockwork
