/// The `clockwork` command-line tool: run and validate scenes, check, render, plot and
/// view their outputs.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <sys/wait.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

#include "io/frames/check_frames.hpp"
#include "io/exit_codes.hpp"
#include "io/run/profile.hpp"
#include "io/render/render_run.hpp"
#include "io/run/run.hpp"
#include "io/frames/run_folder.hpp"
#include "io/scene/scene.hpp"
#include "io/scene_error.hpp"
#include "io/scene/scene_schema.hpp"
#include "io/view/view_server.hpp"

namespace {

/// A bad command line: exits kExitUsage with the message and the usage.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

int summarise(const clockwork::Scene& scene) {
  std::size_t vertices = 0;
  for (const auto& b : scene.bodies) vertices += b.vertex_count;
  fmt::print("scene '{}' ({}): {} bodies, {} vertices, end_time {} s, {} frames/s\n", scene.name,
             scene.file, scene.bodies.size(), vertices, scene.end_time, scene.frame_rate);
  if (!scene.description.empty()) fmt::print("  {}\n", scene.description);
  for (const auto& t : scene.terms)
    fmt::print("  {:<16} {:>8} stencils, period {:.3g} .. {:.3g} s\n", t.kind, t.count,
               t.min_period, t.max_period);
  return 0;
}

/// Exit 0: no frame has intersecting triangles; 1: some do (listed).
/// `clockwork schema`: the scene format's key tables from io/scene_schema, printed, or
/// rewritten in place in FILE (docs/scene-format.md) between its schema markers.
int schema(const std::string& update) {
  if (update.empty()) {
    for (const clockwork::SchemaObjectInfo& o : clockwork::schema_objects())
      fmt::print("### {}\n\n{}\n", o.name, clockwork::schema_table(o.name));
    return 0;
  }
  std::ifstream in(update);
  if (!in) throw clockwork::SceneError(fmt::format("{}: cannot read", update));
  std::stringstream text;
  text << in.rdbuf();
  std::string updated;
  try {
    updated = clockwork::update_schema_tables(text.str());
  } catch (const std::invalid_argument& e) {
    throw clockwork::SceneError(fmt::format("{}: {}", update, e.what()));
  }
  if (updated == text.str()) return 0;
  std::ofstream out(update);
  out << updated;
  if (!out) throw clockwork::IoError(fmt::format("{}: cannot write", update));
  fmt::print("{}: key tables rewritten\n", update);
  return 0;
}

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

int render(const std::string& dir, const clockwork::RenderOptions& options) {
  const auto s = clockwork::render_run(dir, options);
  fmt::print("wrote {} frames ({}x{}) to {}/frame_NNNNN.png\n", s.frames, options.width,
             options.height, s.folder);
  if (!s.sheet.empty()) fmt::print("wrote the contact sheet {}\n", s.sheet);
  if (!s.video.empty()) fmt::print("wrote the video {}\n", s.video);
  else if (!s.video_note.empty()) spdlog::info("{}", s.video_note);
  return 0;
}

/// Runs scripts/plot_run.py with Debian's python3 (python3-matplotlib) when present.
int plot(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir))
    throw clockwork::SceneError(fmt::format(
        "{}: no such folder (expected the output folder of 'clockwork run')", dir));
  const std::string script = std::string(CLOCKWORK_SOURCE_DIR) + "/scripts/plot_run.py";
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  const std::string cmd = python + " '" + script + "' '" + dir + "'";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : clockwork::kExitIo;
}

int view(const std::string& dir, int port, const std::string& viewer_dir) {
  namespace fs = std::filesystem;
  clockwork::scan_run_folder(dir, "ply");  // a whole run folder, or a SceneError naming the file
  if (!fs::exists(viewer_dir + "/node_modules/three/build/three.module.js"))
    throw clockwork::SceneError(fmt::format(
        "{}: three.js is not installed: run 'npm ci --prefix {}' (docs/viewer.md)", viewer_dir,
        viewer_dir));
  clockwork::ViewServer server({{"/", viewer_dir}, {"/run/", dir}}, port);
  fmt::print("serving {} at http://127.0.0.1:{}/index.html?run=/run/  (Ctrl-C stops)\n",
             fs::absolute(dir).lexically_normal().string(), server.port());
  std::fflush(stdout);
  server.serve_forever();
  return 0;
}

void on_interrupt(int) { clockwork::request_interrupt(); }

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
  std::string resume_dir;
  run->add_option("--out", out_dir, "Output folder (default: out/<scene name>, or the --resume folder)");
  run->add_option("--resume", resume_dir,
                  "Continue an earlier run of SCENE from the last frame in its output folder DIR "
                  "(positions and velocities from the PLY frames; layers and certificates rebuilt)");
  int resume_frame = -1;
  run->add_option("--resume-frame", resume_frame, "With --resume: the frame to continue from (default: the last)")
      ->check(CLI::NonNegativeNumber);
  double progress_every = 10.0;
  run->add_option("--progress-every", progress_every,
                  "When stderr is not a terminal: a progress line every this many s of wall time (default 10)")
      ->check(CLI::PositiveNumber);
  bool overwrite = false;
  run->add_flag("--overwrite", overwrite,
                "Clear the output folder first if it holds an earlier run (a non-empty --out is refused otherwise)");
  run->add_option("--until", until, "Simulate until this time in s (default: the scene's end_time)");
  run->add_option("--trace", trace_path, "Write an event trace to FILE (docs/trace-format.md)");
  run->add_option("--trace-format", trace_format, "Trace format: json (JSON lines) or chrome")
      ->check(CLI::IsMember({"json", "chrome"}));
  bool profile = false, no_event_counts = false;
  run->add_flag("--no-event-counts", no_event_counts,
                "Do not count events per vertex (no heat map in the viewer, no event_periods.csv)");
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

  std::string render_dir;
  clockwork::RenderOptions render_options;
  std::vector<double> eye, target;
  double fov = 40.0;
  bool no_video = false;
  auto* render_cmd = app.add_subcommand(
      "render", "PNG images of every frame of a run, a contact sheet, and an MP4 if ffmpeg exists");
  render_cmd->add_option("OUTDIR", render_dir, "Output folder of 'clockwork run'")->required();
  render_cmd->add_option("--width", render_options.width, "Image width in pixels (default 640)");
  render_cmd->add_option("--height", render_options.height, "Image height in pixels (default 480)");
  render_cmd->add_option("--sheet", render_options.sheet_frames,
                         "Frames on the contact sheet, evenly spaced (default 12; 0: none)");
  render_cmd->add_option("--eye", eye, "Camera position X Y Z in m (default: framing the bodies)")
      ->expected(3);
  render_cmd->add_option("--target", target, "Point the camera looks at, X Y Z in m")->expected(3);
  render_cmd->add_option("--fov", fov, "Vertical field of view in degrees (default 40)");
  render_cmd->add_flag("--no-video", no_video, "Do not write render/run.mp4");

  std::string plot_dir;
  auto* plot_cmd = app.add_subcommand(
      "plot", "Plots of a run's diagnostics: OUTDIR/plots/*.png (scripts/plot_run.py, matplotlib)");
  plot_cmd->add_option("OUTDIR", plot_dir, "Output folder of 'clockwork run'")->required();

  std::string view_dir, viewer_dir = std::string(CLOCKWORK_SOURCE_DIR) + "/viewer";
  int port = 8080;
  auto* view_cmd = app.add_subcommand(
      "view", "Serve the browser viewer and a run on 127.0.0.1 (docs/viewer.md)");
  view_cmd->add_option("OUTDIR", view_dir, "Output folder of 'clockwork run'")->required();
  view_cmd->add_option("--port", port, "TCP port (default 8080; 0: any free port)")
      ->check(CLI::Range(0, 65535));
  view_cmd->add_option("--viewer", viewer_dir, "The viewer's folder (default: viewer/ of the sources)");

  std::string schema_update;
  auto* schema_cmd = app.add_subcommand(
      "schema", "Print the scene format's key tables (from io/scene_schema), or rewrite them in FILE");
  schema_cmd->add_option("--update", schema_update,
                         "Rewrite the generated tables of FILE (docs/scene-format.md) in place");

  try {
    // An unknown command is named (CLI11 would say only that an argument was unexpected).
    if (argc > 1 && argv[1][0] != '-') {
      bool known = false;
      std::string names;
      for (const CLI::App* sub : app.get_subcommands({})) {
        known = known || sub->get_name() == argv[1];
        names += (names.empty() ? "" : ", ") + sub->get_name();
      }
      if (!known) {
        fmt::print(stderr, "clockwork: error: unknown command '{}' (commands: {})\n\n{}", argv[1], names,
                   app.help());
        return clockwork::kExitUsage;
      }
    }
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (100+) would say nothing to a script: every bad command line
    // exits kExitUsage, with the message and the usage of the (sub)command.
    const CLI::App* failed = &app;
    for (const CLI::App* sub : app.get_subcommands()) failed = sub;
    fmt::print(stderr, "clockwork: error: {}\n\n{}", e.what(), failed->help());
    return clockwork::kExitUsage;
  }

  try {
    if (*validate) {
      clockwork::Scene scene = clockwork::load_scene(validate_path);
      summarise(scene);
      fmt::print("{}: valid\n", validate_path);
      return 0;
    }
    if (*check) return check_intersections(check_dir);
    if (*schema_cmd) return schema(schema_update);
    if (*plot_cmd) return plot(plot_dir);
    if (*view_cmd) return view(view_dir, port, viewer_dir);
    if (*render_cmd) {
      if (eye.empty() != target.empty())
        throw UsageError("--eye and --target: give both or neither");
      if (!(fov > 1.0 && fov < 179.0))
        throw UsageError(fmt::format("--fov: must be in (1, 179) degrees, got {}", fov));
      if (!eye.empty()) {
        clockwork::Camera camera;
        camera.eye = clockwork::Vec3(eye[0], eye[1], eye[2]);
        camera.target = clockwork::Vec3(target[0], target[1], target[2]);
        camera.fov_y = fov;
        const double d = (camera.target - camera.eye).norm();
        if (!(d > 0.0) || camera.eye.cross(camera.target).hasNaN() ||
            (camera.target - camera.eye).normalized().cross(camera.up).norm() < 1e-6)
          throw UsageError(
              "--eye, --target: the camera must look from a point other than its target, not "
              "straight up or down");
        camera.near = 1e-3 * d;
        render_options.camera = camera;
      }
      render_options.video = !no_video;
      return render(render_dir, render_options);
    }
    if (run->count("--until") > 0 && !(until > 0.0 && std::isfinite(until))) {
      throw UsageError(fmt::format("--until: must be a positive time in s, got {}", until));
    }
    if (resume_frame >= 0 && resume_dir.empty())
      throw UsageError("--resume-frame: needs --resume DIR");
    clockwork::Scene scene = clockwork::load_scene(scene_path, resume_dir, resume_frame);
    summarise(scene);
    if (!resume_dir.empty())
      fmt::print("resuming {} at frame {} (t = {:.6g} s)\n", resume_dir, scene.first_frame,
                 scene.kernel->now());
    std::fflush(stdout);  // the summary is in a log before the run, not after it
    clockwork::RunOptions options;
    options.out_dir = !out_dir.empty() ? out_dir : !resume_dir.empty() ? resume_dir : "out/" + scene.name;
    options.until = until;
    options.overwrite = overwrite;
    options.trace_path = trace_path;
    options.trace_format = clockwork::parse_trace_format(trace_format);
    options.progress = true;
    options.progress_tty = isatty(fileno(stderr)) != 0;
    options.progress_seconds = progress_every;
    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
    // The sampling profiler watches the run through the kernel's observer hook.
    clockwork::EventProfiler profiler;
    std::optional<clockwork::ScopedObserver> profiling;
    if (profile) profiling.emplace(*scene.kernel, profiler);
    options.event_counts = !no_event_counts;
    const auto summary = clockwork::run_scene(scene, options);
    fmt::print("simulated {:.4g} s: {} events in {:.3f} s wall ({:.3g} events/s)\n",
               summary.simulated_seconds, summary.events, summary.wall_seconds,
               summary.wall_seconds > 0 ? summary.events / summary.wall_seconds : 0.0);
    // Where the events went: one line per kind (processed, new times).
    for (std::size_t k = 0; k < scene.kernel->source_count(); ++k) {
      const auto kind = static_cast<clockwork::EventKind>(k);
      const auto& st = scene.kernel->stats(kind);
      fmt::print("  {:<26} {:>12} processed {:>13} rescheduled", scene.kernel->source(kind).name(),
                 st.processed, st.rescheduled);
      if (profile) fmt::print(" {:>10.3f} s", profiler.seconds(kind));
      // Kernel::reschedule_no_later: later failure times that left the queue alone.
      if (st.kept > 0) fmt::print(" ({} in place)", st.kept);
      fmt::print("\n");
    }
    if (summary.safeguarded_steps > 0)
      fmt::print("  solids: {} linearised steps re-solved by the energy safeguard\n",
                 summary.safeguarded_steps);
    for (const clockwork::BodyIntegrator* integrator : scene.integrators)
      for (const std::string& line : integrator->summary_lines()) fmt::print("{}\n", line);
    if (scene.contact) {
      const auto c = scene.contact->counters();
      fmt::print("  contact: {} triangle pairs ({} expanded), {} element pairs, {} expansions, "
                 "{} envelope exits, deepest layer {}\n",
                 c.triangle_pairs, c.expanded_pairs, c.live_pairs, c.expansions,
                 scene.contact->contingency().envelope_exits(), c.deepest_layer_ever);
      if (scene.contact->params().position_slack > 0.0)
        fmt::print("  contact: {} entries into position envelopes, {} exits from them\n",
                   scene.contact->contingency().ball_entries(), scene.contact->contingency().ball_exits());
    }
    if (profile) fmt::print("{}\n", clockwork::describe(clockwork::time_shares(*scene.kernel, profiler, summary.wall_seconds)));
    fmt::print("wrote {} frames and diagnostics.csv to {}\n", summary.frames,
               std::filesystem::absolute(options.out_dir).lexically_normal().string());
    if (!trace_path.empty()) fmt::print("wrote the event trace to {}\n", trace_path);
    return 0;
  } catch (const clockwork::Interrupted& e) {
    std::fflush(stdout);
    spdlog::error("{}", e.what());
    return clockwork::kExitInterrupted;
  } catch (const clockwork::NumericalFailure& e) {
    std::fflush(stdout);
    spdlog::error("{}", e.what());
    return clockwork::kExitNumerical;
  } catch (const UsageError& e) {
    spdlog::error("{} (clockwork --help, clockwork COMMAND --help)", e.what());
    return clockwork::kExitUsage;
  } catch (const clockwork::SceneError& e) {
    spdlog::error("{}", e.what());
    return clockwork::kExitInput;
  } catch (const clockwork::IoError& e) {
    spdlog::error("{}", e.what());
    return clockwork::kExitIo;
  } catch (const std::system_error& e) {  // an output the engine could not write (diagnostics)
    spdlog::error("{}", e.what());
    return clockwork::kExitIo;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return clockwork::kExitInput;
  }
}
