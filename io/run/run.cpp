#include "io/run/run.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "engine/diagnostics.hpp"
#include "engine/observer.hpp"
#include "io/frames/check_frames.hpp"
#include "io/run/event_counts.hpp"
#include "io/frames/frame_io.hpp"
#include "io/frames/resume.hpp"
#include "io/scene_error.hpp"
#include "io/scene/scene_limits.hpp"

namespace clockwork {

std::string frame_path(const std::string& out_dir, const std::string& body, int frame,
                       const char* extension) {
  return fmt::format("{}/frames/{}_{:05d}.{}", out_dir, body, frame, extension);
}

namespace {

volatile std::sig_atomic_t interrupt_requested = 0;

/// Body and local index of global vertex a, e.g. "body 'cloth' vertex 12".
std::string name_vertex(const Scene& scene, Index a) {
  for (const Body& b : scene.bodies)
    if (a >= b.first_vertex && a < b.first_vertex + b.vertex_count)
      return fmt::format("body '{}' vertex {}", b.name, a - b.first_vertex);
  return fmt::format("vertex {}", a);
}

/// The health check at a frame (engine/health.hpp), before any of its files is written:
/// every vertex (and an integrator's vertex copy, e.g. a phantom's) inside the limits,
/// the energy and momenta finite.
void check_frame(const Scene& scene, const Kernel& kernel, const Diagnostics& d, double t) {
  for (const Body& body : scene.bodies) {
    const BodyIntegrator* copies = body.integrator && body.integrator->has_vertex_copy() ? body.integrator : nullptr;
    for (Index i = 0; i < body.vertex_count; ++i) {
      const Index a = body.first_vertex + i;
      std::string problem = kernel.health_problem(a, t);
      if (problem.empty() && copies) {
        Vec3 x, v;
        copies->vertex_copy(i, t, x, v);
        if (!(x.allFinite() && v.allFinite())) problem = fmt::format("its {} copy's state is not finite", copies->kind());
      }
      if (!problem.empty())
        throw NumericalFailure(problem, "observer", t, a, problem);
    }
  }
  if (!std::isfinite(d.total()) || !d.linear_momentum.allFinite() || !d.angular_momentum.allFinite()) {
    const std::string problem = fmt::format("kinetic energy {} J, potential {} J, momentum ({}, {}, {}) kg m/s: not finite",
                                            d.kinetic, d.potential, d.linear_momentum.x(),
                                            d.linear_momentum.y(), d.linear_momentum.z());
    throw NumericalFailure(problem, "observer", t, NumericalFailure::kNoVertex, problem);
  }
}

/// The output folder: created if missing; an existing one must be empty, unless the run
/// resumes into it or `overwrite` clears it (only a folder a run wrote: one with a
/// bodies.json manifest or a diagnostics.csv, so that a mistyped --out never empties
/// a folder of other files).
void prepare_out_dir(const Scene& scene, const RunOptions& options) {
  namespace fs = std::filesystem;
  const fs::path out(options.out_dir);
  std::error_code ec;
  if (fs::exists(out, ec)) {
    if (!fs::is_directory(out, ec))
      throw IoError(fmt::format("--out: '{}' exists and is not a folder", options.out_dir));
    const bool resuming_here = !scene.resumed_from.empty() && fs::equivalent(out, scene.resumed_from, ec);
    if (!resuming_here && !fs::is_empty(out, ec)) {
      const bool ours = fs::exists(out / "bodies.json") || fs::exists(out / "diagnostics.csv");
      if (!options.overwrite)
        throw SceneError(fmt::format("--out: '{}' is not empty{}: its files would mix with this run's; "
                                     "give another folder, --overwrite to clear it, or --resume",
                                     options.out_dir, ours ? " (an earlier run's output)" : ""));
      if (!ours)
        throw SceneError(fmt::format("--overwrite: '{}' holds no bodies.json or diagnostics.csv: not a "
                                     "Clockwork output folder, so it is not cleared",
                                     options.out_dir));
      for (const fs::directory_entry& e : fs::directory_iterator(out)) {
        fs::remove_all(e.path(), ec);
        if (ec) throw IoError(fmt::format("--overwrite: cannot remove '{}': {}", e.path().string(), ec.message()));
      }
    }
  }
  fs::create_directories(out / "frames", ec);
  if (ec)
    throw IoError(fmt::format("--out: cannot create '{}': {}", options.out_dir, ec.message()));
}

/// `events`: the per-vertex event counts (EventCounts), empty when they are off.
void write_frame(const Scene& scene, const std::string& out_dir, int frame, double t,
                 const Kernel& kernel, const std::vector<std::uint64_t>& events) {
  const VertexState& s = kernel.state();
  std::vector<Vec3> x;
  std::vector<FrameVertex> ply;
  for (const Body& body : scene.bodies) {
    x.clear();
    ply.clear();
    // An integrator's vertex copy (a phantom's) goes into the PLY's phantom_* columns.
    const BodyIntegrator* copies = body.integrator && body.integrator->has_vertex_copy() ? body.integrator : nullptr;
    for (Index i = 0; i < body.vertex_count; ++i) {
      const Index a = body.first_vertex + i;
      x.push_back(s.position_at(a, t));
      ply.push_back(FrameVertex{x.back(), s.velocity(a), s.mass(a), events.empty() ? 0 : events[a]});
      if (copies) {
        ply.back().has_phantom = true;
        copies->vertex_copy(i, t, ply.back().phantom_x, ply.back().phantom_v);
      }
    }
    if (scene.write_obj)
      write_obj(frame_path(out_dir, body.name, frame, "obj"), x, body.triangles, body.edges);
    if (scene.write_ply)
      write_ply(frame_path(out_dir, body.name, frame, "ply"), ply, body.triangles, !events.empty());
  }
}

/// kind,period_lo,period_hi,events: the period histograms, non-empty bins.
void write_event_periods(const std::string& out_dir, const Kernel& kernel, const EventCounts& counts) {
  const std::string path = out_dir + "/event_periods.csv";
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw IoError(fmt::format("cannot open '{}' for writing", path));
  fmt::print(f, "kind,period_lo,period_hi,events\n");
  for (std::size_t k = 0; k < kernel.source_count(); ++k) {
    const auto kind = static_cast<EventKind>(k);
    const auto& bins = counts.period_histogram(kind);
    for (int b = 0; b < EventCounts::kPeriodBins; ++b)
      if (bins[std::size_t(b)] > 0)
        fmt::print(f, "{},{:.6g},{:.6g},{}\n", kernel.source(kind).name(),
                   EventCounts::period_bin_lower(b), EventCounts::period_bin_lower(b + 1), bins[std::size_t(b)]);
  }
  std::fclose(f);
}

/// A run resumed into another folder starts it with the earlier run's frames before
/// the resumed one (hard links where the file system allows, else copies). Resumed in
/// place, it may only continue from the last frame: its later frames would be mixed
/// with the new ones.
void copy_earlier_frames(const Scene& scene, const std::string& to) {
  namespace fs = std::filesystem;
  const std::string& from = scene.resumed_from;
  if (fs::equivalent(fs::path(from), fs::path(to))) {
    if (scene.later_frames)
      throw SceneError(fmt::format("--resume-frame {}: {} has later frames; write the resumed run "
                                   "to another folder (--out)", scene.first_frame, from));
    return;
  }
  for (const Body& body : scene.bodies)
    for (int frame = 0; frame < scene.first_frame; ++frame)
      for (const char* extension : {"obj", "ply"}) {
        const fs::path source = frame_path(from, body.name, frame, extension);
        if (!fs::exists(source)) continue;
        const fs::path target = frame_path(to, body.name, frame, extension);
        std::error_code ec;
        fs::remove(target, ec);
        fs::create_hard_link(source, target, ec);
        if (ec) fs::copy_file(source, target, fs::copy_options::overwrite_existing);
      }
}

}  // namespace

void request_interrupt() { interrupt_requested = 1; }

RunSummary run_scene(Scene& scene, const RunOptions& options) {
  const double until = std::isnan(options.until) ? scene.end_time : options.until;
  // The scene's own end_time is checked as it loads (io/scene/scene_limits.hpp); --until too.
  if (!(until * scene.frame_rate <= kMaxFrames))
    throw SceneError(fmt::format("--until {} s: {:.3g} frames at {} frames/s, above the limit of {:.0f} "
                                 "(docs/scene-format.md \"Limits\")",
                                 until, until * scene.frame_rate, scene.frame_rate, kMaxFrames));
  // The state the run starts from (a scene's or a resumed frame's) inside the limits.
  // (A scene's own state is checked as it is read, io/scene/scene_limits.hpp: this catches a
  // resumed frame's.)
  for (const Body& body : scene.bodies)
    for (Index i = 0; i < body.vertex_count; ++i)
      if (std::string problem = scene.kernel->health_problem(body.first_vertex + i, scene.kernel->now());
          !problem.empty())
        throw SceneError(scene.resumed_from.empty()
                             ? fmt::format("{}: the initial state of body '{}' vertex {}: {}", scene.file, body.name, i, problem)
                             : fmt::format("{}: vertex {}: {}", frame_path(scene.resumed_from, body.name, scene.first_frame, "ply"),
                                           i, problem));
  prepare_out_dir(scene, options);

  std::vector<ManifestBody> manifest;
  for (const Body& b : scene.bodies) manifest.push_back({b.name, b.obstacle, b.collide});
  write_manifest(options.out_dir, manifest);

  // Contact counters (DESIGN §2) follow the conserved quantities when contact is on.
  std::vector<std::string> extra_columns;
  if (scene.contact)
    extra_columns = {"active_layers", "deepest_layer", "deepest_layer_ever", "certificates",
                     "certificate_reschedules_per_s", "layer_potential"};
  // Phantom bodies (DESIGN §3): solver iterations per implicit tick since the previous
  // frame, the worst tick, ticks that did not converge, and the primary–phantom mismatch.
  const std::vector<PhantomSource*> phantoms = scene.bodies_of<PhantomSource>();
  if (!phantoms.empty())
    for (const char* c : {"solver_iterations_per_tick", "solver_iterations_max", "unconverged_ticks",
                          "phantom_mismatch"})
      extra_columns.emplace_back(c);
  Kernel& kernel = *scene.kernel;
  const double t0 = kernel.now();
  if (!(until > t0))
    throw SceneError(fmt::format("--until: the run starts at frame {} (t = {} s); {} s is not later",
                                         scene.first_frame, t0, until));
  std::vector<std::string> earlier_rows;
  if (!scene.resumed_from.empty()) {
    earlier_rows = diagnostics_before(scene.resumed_from, DiagnosticsCsv::header(extra_columns), t0);
    copy_earlier_frames(scene, options.out_dir);
  }
  DiagnosticsCsv csv(options.out_dir + "/diagnostics.csv", extra_columns, earlier_rows);
  std::vector<double> extra;
  std::uint64_t last_reschedules = 0, last_ticks = 0, last_iterations = 0;
  double last_time = t0;
  std::unique_ptr<Trace> trace;
  if (!options.trace_path.empty()) trace = std::make_unique<Trace>(options.trace_path, options.trace_format);
  std::optional<EventCounts> counts;
  if (options.event_counts) counts.emplace(kernel.state().size());
  const std::vector<std::uint64_t> no_counts;
  const std::vector<std::uint64_t>& vertex_events = counts ? counts->vertex_events() : no_counts;

  const int frames = static_cast<int>(std::floor(until * scene.frame_rate + 1e-9));
  const auto wall_start = std::chrono::steady_clock::now();
  auto wall = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  };
  RunSummary summary;
  int last_frame = -1;
  double next_report = options.progress_seconds;
  // On a terminal one line updated in place; in a pipe or a log, a plain line every
  // progress_seconds of wall time (flushed: a log shows how far a run got).
  auto report_progress = [&](double t) {
    const double w = wall();
    const double rate = w > 0 ? kernel.events_processed() / w : 0.0;
    const double eta = t > t0 ? w * (until - t) / (t - t0) : 0.0;
    if (options.progress_tty)
      fmt::print(stderr, "\r  t = {:.4f} / {:.4f} s   wall {:.1f} s   {:.3g} events/s   ETA {:.1f} s   ",
                 t, until, w, rate, eta);
    else
      fmt::print(stderr, "clockwork: progress: t = {:.6g} / {:.6g} s, frame {}, wall {:.1f} s, {:.3g} events/s, ETA {:.0f} s\n",
                 t, until, last_frame, w, rate, eta);
    std::fflush(stderr);
  };
  auto observe = [&](int frame, double t, Kernel& k) {
    extra.clear();
    if (scene.contact) {
      const ContactCounters c = scene.contact->counters();
      const double dt = t - last_time;
      extra = {double(c.active_layers), double(c.deepest_layer), double(c.deepest_layer_ever),
               double(c.certificates),
               dt > 0 ? double(c.certificate_reschedules - last_reschedules) / dt : 0.0,
               scene.contact->potential_energy(k.state(), t)};
      last_reschedules = c.certificate_reschedules;
      last_time = t;
    }
    if (!phantoms.empty()) {
      std::uint64_t ticks = 0, iterations = 0, unconverged = 0;
      int worst = 0;
      double mismatch = 0.0;
      for (const PhantomSource* ph : phantoms) {
        ticks += ph->counters().ticks;
        iterations += ph->counters().iterations;
        unconverged += ph->counters().unconverged;
        worst = std::max(worst, ph->counters().max_iterations);
        mismatch = std::max(mismatch, ph->mismatch(k.state(), t));
      }
      const std::uint64_t dt = ticks - last_ticks;
      extra.insert(extra.end(), {dt ? double(iterations - last_iterations) / double(dt) : 0.0,
                                 double(worst), double(unconverged), mismatch});
      last_ticks = ticks;
      last_iterations = iterations;
    }
    const Diagnostics d = measure(k, t);
    check_frame(scene, k, d, t);
    csv.write(d, k.events_processed(), extra);
    write_frame(scene, options.out_dir, frame, t, k, vertex_events);
    summary.frames = frame + 1;
    last_frame = frame;
    if (options.progress && options.progress_tty) report_progress(t);
  };
  auto observer = std::make_unique<ObserverSource>(scene.frame_rate, frames, observe, scene.first_frame);
  ObserverSource& obs = *observer;
  const EventKind kind = kernel.add_source(std::move(observer));
  // Observers (engine/kernel_observer.hpp) for this run only.
  std::optional<ScopedObserver> counting, tracing;
  if (counts) counting.emplace(kernel, *counts);
  if (trace) tracing.emplace(kernel, *trace);
  kernel.set_poll([&] {
    if (interrupt_requested) return true;
    if (options.progress && !options.progress_tty && wall() >= next_report) {
      report_progress(kernel.now());
      next_report = wall() + options.progress_seconds;
    }
    return false;
  });
  const auto last_good = [&] {
    return last_frame < 0 ? std::string("no frame was written")
                          : fmt::format("frames up to {} (t = {:.6g} s) are in {}", last_frame,
                                        last_frame / scene.frame_rate, options.out_dir);
  };
  // The integrators' totals and end-of-run lines (e.g. the energy safeguard's
  // re-solves, integrators/implicit/energy_safeguard.hpp): once per run and body, not per step.
  const auto report_integrators = [&] {
    IntegratorTotals totals;
    for (const BodyIntegrator* integrator : scene.integrators) {
      integrator->add_totals(totals);
      for (const std::string& line : integrator->run_log()) spdlog::info("{}", line);
    }
    summary.safeguarded_steps = totals.safeguarded_steps;
  };
  try {
    obs.start(kind, kernel);
    kernel.run_until(until);
  } catch (const NumericalFailure& e) {
    report_integrators();
    kernel.set_poll({});
    if (options.progress && options.progress_tty) fmt::print(stderr, "\n");
    // The kernel knows global vertices; the user knows bodies.
    const std::string where = e.vertex == NumericalFailure::kNoVertex ? std::string() : name_vertex(scene, e.vertex) + ": ";
    throw NumericalFailure(fmt::format("numerical failure at t = {:.9g} s in event '{}': {}{}; {}", e.time,
                                       e.event_kind, where, e.problem, last_good()),
                           e.event_kind, e.time, e.vertex, e.problem);
  }
  kernel.set_poll({});
  tracing.reset();
  if (options.progress && options.progress_tty) fmt::print(stderr, "\n");
  if (kernel.stopped())
    throw Interrupted(fmt::format("interrupted at t = {:.6g} s; {}", kernel.now(), last_good()));
  if (counts) write_event_periods(options.out_dir, kernel, *counts);
  report_integrators();
  summary.events = kernel.events_processed();
  summary.simulated_seconds = until - t0;
  summary.wall_seconds = wall();
  return summary;
}

}  // namespace clockwork
