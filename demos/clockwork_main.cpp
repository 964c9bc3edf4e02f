/// The `clockwork` command-line tool: run and validate scenes.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "io/check_frames.hpp"
#include "io/profile.hpp"
#include "io/run.hpp"
#include "io/scene.hpp"
#include "io/scene_error.hpp"

namespace {

constexpr int kExitBadInput = 2;

int summarise(const clockwork::Scene& scene) {
  std::size_t vertices = 0;
  for (const auto& b : scene.bodies) vertices += b.vertex_count;
  fmt::print("scene '{}' ({}): {} bodies, {} vertices, end_time {} s, {} frames/s\n", scene.name,
             scene.file, scene.bodies.size(), vertices, scene.end_time, scene.frame_rate);
  for (const auto& t : scene.terms)
    fmt::print("  {:<16} {:>8} stencils, period {:.3g} .. {:.3g} s\n", t.kind, t.count,
               t.min_period, t.max_period);
  return 0;
}

/// Exit 0: no frame has intersecting triangles; 1: some do (listed).
int check_intersections(const std::string& dir) {
  const auto frames = clockwork::check_frames(dir);
  std::size_t bad_frames = 0, pairs = 0;
  for (const auto& f : frames) {
    if (f.pairs.empty()) continue;
    ++bad_frames;
    pairs += f.pairs.size();
    fmt::print("frame {:5d}: {} intersecting pairs, e.g. {}\n", f.frame, f.pairs.size(),
               f.pairs.front());
  }
  fmt::print("{}: {} frames checked ({} triangles in the last), {} with intersections, {} "
             "intersecting pairs in all\n",
             dir, frames.size(), frames.back().triangles, bad_frames, pairs);
  return bad_frames == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  auto console = spdlog::stderr_color_st("clockwork");
  spdlog::set_default_logger(console);
  spdlog::set_pattern("clockwork: %^%l%$: %v");

  CLI::App app{"Clockwork: asynchronous simulation of cloth, shells and solids"};
  app.set_version_flag("--version", std::string("clockwork ") + CLOCKWORK_VERSION);
  app.require_subcommand(1);

  std::string scene_path, out_dir, trace_path, trace_format = "json";
  double until = std::nan("");
  auto* run = app.add_subcommand("run", "Run a scene, writing frames and diagnostics");
  run->add_option("SCENE", scene_path, "Scene file (JSON, docs/scene-format.md)")->required();
  run->add_option("--out", out_dir, "Output folder (default: out/<scene name>)");
  run->add_option("--until", until, "Simulate until this time in s (default: the scene's end_time)");
  run->add_option("--trace", trace_path, "Write an event trace to FILE (docs/trace-format.md)");
  run->add_option("--trace-format", trace_format, "Trace format: json (JSON lines) or chrome")
      ->check(CLI::IsMember({"json", "chrome"}));
  bool profile = false;
  run->add_flag("--profile", profile,
                "Time the events (short ones sampled): wall time per kind and the shares of elastic forces, "
                "penalties and certificate maintenance (docs/performance.md)");

  std::string validate_path;
  auto* validate = app.add_subcommand("validate", "Load and check a scene without running it");
  validate->add_option("SCENE", validate_path, "Scene file")->required();

  std::string check_dir;
  auto* check = app.add_subcommand(
      "check-intersections",
      "Check every written frame of a run for intersecting triangles (exit 1 if any)");
  check->add_option("OUTDIR", check_dir, "Output folder of 'clockwork run'")->required();

  CLI11_PARSE(app, argc, argv);

  try {
    if (*validate) {
      clockwork::Scene scene = clockwork::load_scene(validate_path);
      summarise(scene);
      fmt::print("{}: valid\n", validate_path);
      return 0;
    }
    if (*check) return check_intersections(check_dir);
    if (!std::isnan(until) && !(until > 0.0 && std::isfinite(until))) {
      spdlog::error("--until: must be a positive time in s, got {}", until);
      return kExitBadInput;
    }
    clockwork::Scene scene = clockwork::load_scene(scene_path);
    summarise(scene);
    clockwork::RunOptions options;
    options.out_dir = out_dir.empty() ? "out/" + scene.name : out_dir;
    options.until = until;
    options.trace_path = trace_path;
    options.trace_format = clockwork::parse_trace_format(trace_format);
    options.progress = isatty(fileno(stderr)) != 0;
    scene.kernel->enable_profiling(profile);
    const auto summary = clockwork::run_scene(scene, options);
    fmt::print("simulated {:.4g} s: {} events in {:.3f} s wall ({:.3g} events/s)\n",
               summary.simulated_seconds, summary.events, summary.wall_seconds,
               summary.wall_seconds > 0 ? summary.events / summary.wall_seconds : 0.0);
    // Where the events went: one line per kind (processed, queue updates).
    for (std::size_t k = 0; k < scene.kernel->source_count(); ++k) {
      const auto kind = static_cast<clockwork::EventKind>(k);
      const auto& st = scene.kernel->stats(kind);
      fmt::print("  {:<26} {:>12} processed {:>13} rescheduled", scene.kernel->source(kind).name(),
                 st.processed, st.rescheduled);
      if (profile) fmt::print(" {:>10.3f} s", st.seconds);
      fmt::print("\n");
    }
    for (const clockwork::PhantomSource* ph : scene.phantoms) {
      const auto& c = ph->counters();
      fmt::print("  phantom: {} ticks, {:.2f} solver iterations per tick (max {}), {} unconverged, "
                 "{:.3f} s in solves, {} torque corrections (largest {:.3g} m/s)\n",
                 c.ticks, c.ticks ? double(c.iterations) / double(c.ticks) : 0.0, c.max_iterations,
                 c.unconverged, c.solve_seconds, c.torque_corrections, c.max_correction_speed);
    }
    if (scene.contact) {
      const auto c = scene.contact->counters();
      fmt::print("  contact: {} triangle pairs ({} expanded), {} element pairs, {} expansions, "
                 "{} envelope exits, deepest layer {}\n",
                 c.triangle_pairs, c.expanded_pairs, c.live_pairs, c.expansions,
                 scene.kernel->envelope_exits(), c.deepest_layer_ever);
    }
    if (profile) fmt::print("{}\n", clockwork::describe(clockwork::time_shares(*scene.kernel, summary.wall_seconds)));
    fmt::print("wrote {} frames and diagnostics.csv to {}\n", summary.frames,
               std::filesystem::absolute(options.out_dir).lexically_normal().string());
    if (!trace_path.empty()) fmt::print("wrote the event trace to {}\n", trace_path);
    return 0;
  } catch (const clockwork::SceneError& e) {
    spdlog::error("{}", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return kExitBadInput;
  }
}
