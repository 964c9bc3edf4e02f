#pragma once
/// `clockwork render OUTDIR` (docs/viewer.md): PNG images of every frame of a run,
/// a contact sheet of evenly spaced frames, and an MP4 when ffmpeg is on the PATH.
/// Reads the run's bodies.json and OBJ frames; deformable bodies are drawn two-sided
/// (front and back in different colours), obstacles in grey, and the ground as a
/// checker plane (a flat horizontal obstacle's plane, else z = min(0, lowest point)).
#include <optional>
#include <string>
#include <vector>

#include "io/mesh/mesh.hpp"
#include "io/render/render.hpp"

namespace clockwork {

struct RenderOptions {
  int width = 640, height = 480;  ///< pixels, each in 16..8192
  std::optional<Camera> camera;   ///< default: framing the bodies over the whole run
  int sheet_frames = 12;          ///< frames on the contact sheet; 0: no sheet
  bool video = true;              ///< MP4 through ffmpeg when it is on the PATH
};

struct RenderSummary {
  int frames = 0;
  std::string folder;      ///< OUT/render
  std::string sheet;       ///< contact sheet path, empty if none
  std::string video;       ///< MP4 path, empty if none
  std::string video_note;  ///< why there is no video (empty if there is one or --no-video)
};

/// The frames of a run in memory: meshes[frame][body].
struct RunFrames {
  std::vector<std::string> body_names;
  std::vector<bool> obstacle;
  std::vector<std::vector<TriangleMesh>> meshes;
  double frame_interval = 0.0;  ///< s, from diagnostics.csv (0 if unknown)
};

/// Reads OUT/bodies.json and every OBJ frame. Throws SceneError naming the file
/// when the folder is missing, is not a complete run's output folder (a missing,
/// cut or changed frame: scan_run_folder, io/frames/run_folder.hpp), or holds no OBJ frames.
RunFrames read_run_frames(const std::string& out_dir);

/// A camera that frames the deformable bodies (and non-flat obstacles) of every frame,
/// looking from the front right and above (z up).
Camera default_camera(const RunFrames& run, double aspect);

/// Draws one frame: ground checker, obstacles, bodies.
Image render_frame(const RunFrames& run, int frame, const Camera& camera, int width, int height);

/// Renders OUT/render/frame_NNNNN.png for every frame, OUT/render/contact_sheet.png
/// and OUT/render/run.mp4 (if ffmpeg exists). Throws SceneError on a bad folder or
/// option, std::runtime_error if files cannot be written.
RenderSummary render_run(const std::string& out_dir, const RenderOptions& options);

}  // namespace clockwork
