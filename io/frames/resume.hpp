#pragma once
/// Resuming a run (`clockwork run SCENE --resume DIR`): the state of the last frame an
/// earlier run of the scene wrote — positions and velocities of every vertex, from
/// the PLY frames (17 significant digits: exact) — becomes the initial state at that
/// frame's time, with a phantom body's implicit copy from its own PLY columns. What the
/// frames do not hold starts afresh: penalty layers and certificates are rebuilt from
/// the positions (ContactSystem::start), force stencils restart their clocks
/// (docs/scene-format.md, "Resuming a run").
#include <string>
#include <vector>

#include "io/frames/frame_io.hpp"

namespace clockwork {

struct ResumePoint {
  int frame = 0;  ///< the frame resumed from
  bool later_frames = false;  ///< the folder holds later frames of every body
  std::vector<std::vector<FrameVertex>> bodies;  ///< its vertices, in the order of the names
};

/// Finds the last frame of DIR/frames for which every body in `names` has a PLY (or
/// frame `frame` if it is >= 0) and reads them. Throws SceneError naming DIR and what
/// is missing.
ResumePoint read_resume_point(const std::string& dir, const std::vector<std::string>& names,
                              int frame = -1);

/// The rows of DIR/diagnostics.csv before time `t0` (those of frames before the one
/// resumed from), for the resumed run to continue the file; `header` must be the
/// header the resumed run writes. Throws SceneError if the file is missing or its
/// header differs (another scene's run).
std::vector<std::string> diagnostics_before(const std::string& dir, const std::string& header,
                                            double t0);

}  // namespace clockwork
