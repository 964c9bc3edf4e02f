#include "io/frames/resume.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "io/run/run.hpp"
#include "io/scene_error.hpp"
#include "io/text_input.hpp"

namespace clockwork {

ResumePoint read_resume_point(const std::string& dir, const std::vector<std::string>& names,
                              int frame) {
  namespace fs = std::filesystem;
  const fs::path frames = fs::path(dir) / "frames";
  if (!fs::is_directory(frames))
    throw SceneError(fmt::format("--resume {}: no frames folder (expected the output folder of "
                                 "'clockwork run')", dir));
  // Frames are numbered from 0 without gaps: scan until no body has one.
  std::vector<bool> seen(names.size(), false);
  int last = -1;
  for (int f = 0;; ++f) {
    bool any = false, all = true;
    for (std::size_t b = 0; b < names.size(); ++b) {
      const bool here = fs::exists(frame_path(dir, names[b], f, "ply"));
      seen[b] = seen[b] || here;
      any = any || here;
      all = all && here;
    }
    if (!any) break;
    if (all) last = f;
  }
  for (std::size_t b = 0; b < names.size(); ++b)
    if (!seen[b])
      throw SceneError(fmt::format("--resume {}: no PLY frames of body '{}' ({}/{}_NNNNN.ply; "
                                   "the scene's \"output\" must keep \"ply\")",
                                   dir, names[b], frames.string(), names[b]));
  if (last < 0) throw SceneError(fmt::format("--resume {}: no frame was written for every body", dir));
  if (frame > last || (frame >= 0 && !std::all_of(names.begin(), names.end(), [&](const std::string& n) {
                         return fs::exists(frame_path(dir, n, frame, "ply"));
                       })))
    throw SceneError(fmt::format("--resume-frame {}: {} has no such frame for every body (its last is {})",
                                 frame, dir, last));
  ResumePoint point;
  point.frame = frame >= 0 ? frame : last;
  point.later_frames = point.frame < last;
  for (const std::string& name : names) point.bodies.push_back(read_ply(frame_path(dir, name, point.frame, "ply")));
  return point;
}

std::vector<std::string> diagnostics_before(const std::string& dir, const std::string& header,
                                            double t0) {
  const std::string path = dir + "/diagnostics.csv";
  if (std::filesystem::is_directory(path))
    throw SceneError(fmt::format("--resume {}: {}: is a directory, expected a file", dir, path));
  std::ifstream in(path);
  if (!in) throw SceneError(fmt::format("--resume {}: cannot read {}", dir, path));
  std::string line;
  std::getline(in, line);
  if (line != header)
    throw SceneError(fmt::format("--resume {}: {} has the columns '{}', this scene writes '{}' "
                                 "(a run of another scene?)",
                                 dir, path, line, header));
  std::vector<std::string> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    double t = 0.0;
    if (!parse_double(line.substr(0, line.find(',')), t) || !std::isfinite(t))
      throw SceneError(fmt::format("--resume {}: {}: a row without a time: '{}'", dir, path,
                                   printable(line)));
    // Frames are at i / frame_rate: rows within rounding of t0 belong to the resumed frame.
    if (t < t0 * (1.0 - 1e-12) - 1e-15) rows.push_back(line);
  }
  return rows;
}

}  // namespace clockwork
