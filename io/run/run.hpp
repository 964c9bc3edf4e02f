#pragma once
/// Running a loaded scene: observer events write frames (OBJ, PLY) and the
/// diagnostics CSV into an output folder; optional event trace and progress line.
#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/trace.hpp"
#include "io/scene/scene.hpp"

namespace clockwork {

struct RunOptions {
  /// Created if missing. An existing folder must be empty, unless `overwrite` (it is
  /// then cleared, if it is a Clockwork output folder) or the run resumes into it.
  std::string out_dir;
  bool overwrite = false;
  double until = std::nan("");        ///< end time; NaN: the scene's end_time
  std::string trace_path;             ///< empty: no trace
  TraceFormat trace_format = TraceFormat::kJsonLines;
  /// Progress on stderr: a line updated in place on a terminal (`progress_tty`), else
  /// a plain log line every `progress_seconds` of wall time.
  bool progress = false;
  bool progress_tty = false;
  double progress_seconds = 10.0;
  /// Per-vertex event counts in the PLY frames and OUT/event_periods.csv (the viewer's
  /// heat map and `clockwork plot`'s period histogram).
  bool event_counts = true;
};

struct RunSummary {
  std::uint64_t events = 0;
  int frames = 0;
  double simulated_seconds = 0.0;
  double wall_seconds = 0.0;
  /// Linearised solid steps re-solved by the energy safeguard, all solids
  /// (integrators/implicit/energy_safeguard.hpp; also logged once at info level).
  std::uint64_t safeguarded_steps = 0;
};

/// Layout: OUT/diagnostics.csv, OUT/frames/BODY_NNNNN.obj and .ply (frame NNNNN at
/// time NNNNN / frame_rate), OUT/event_periods.csv (with event counts). Throws std::runtime_error if the folder cannot be written.
/// A scene resumed from an earlier run (Scene::resumed_from) continues its
/// diagnostics.csv rows before the resumed frame and, if out_dir is another folder, gets
/// its earlier frames there: either way out_dir then holds the whole run from frame 0.
RunSummary run_scene(Scene& scene, const RunOptions& options);

/// The run stopped on SIGINT/SIGTERM (request_interrupt) after its last whole event;
/// the frames written so far are whole. The tool exits kExitInterrupted.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Asks a running run_scene to stop at its next poll (async-signal-safe).
void request_interrupt();

/// Path of a frame file, e.g. frame_path("out", "cloth", 12, "ply").
std::string frame_path(const std::string& out_dir, const std::string& body, int frame,
                       const char* extension);

}  // namespace clockwork
