#include "io/resume.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "io/scene_error.hpp"

namespace clockwork {

namespace {

/// Frame numbers of DIR/frames/NAME_NNNNN.ply.
std::set<int> ply_frames(const std::filesystem::path& frames, const std::string& name) {
  std::set<int> out;
  const std::string prefix = name + "_";
  for (const auto& entry : std::filesystem::directory_iterator(frames)) {
    const std::string file = entry.path().filename().string();
    if (file.size() != prefix.size() + 9 || file.compare(0, prefix.size(), prefix) != 0 ||
        file.compare(file.size() - 4, 4, ".ply") != 0)
      continue;
    const std::string digits = file.substr(prefix.size(), 5);
    if (digits.find_first_not_of("0123456789") == std::string::npos) out.insert(std::stoi(digits));
  }
  return out;
}

}  // namespace

ResumePoint read_resume_point(const std::string& dir, const std::vector<std::string>& names,
                              int frame) {
  namespace fs = std::filesystem;
  const fs::path frames = fs::path(dir) / "frames";
  if (!fs::is_directory(frames))
    throw SceneError(fmt::format("--resume {}: no frames folder (expected the output folder of "
                                 "'clockwork run')", dir));
  std::set<int> common;
  for (std::size_t b = 0; b < names.size(); ++b) {
    const std::set<int> mine = ply_frames(frames, names[b]);
    if (mine.empty())
      throw SceneError(fmt::format("--resume {}: no PLY frames of body '{}' ({}/{}_NNNNN.ply; "
                                   "the scene's \"output\" must keep \"ply\")",
                                   dir, names[b], frames.string(), names[b]));
    if (b == 0) {
      common = mine;
      continue;
    }
    std::set<int> both;
    for (int f : mine)
      if (common.count(f)) both.insert(f);
    common = std::move(both);
  }
  if (common.empty())
    throw SceneError(fmt::format("--resume {}: no frame was written for every body", dir));
  if (frame >= 0 && !common.count(frame))
    throw SceneError(fmt::format("--resume-frame {}: {} has no such frame for every body (its last is {})",
                                 frame, dir, *common.rbegin()));
  ResumePoint point;
  point.frame = frame >= 0 ? frame : *common.rbegin();
  point.later_frames = point.frame < *common.rbegin();
  for (const std::string& name : names)
    point.bodies.push_back(read_ply(fmt::format("{}/{}_{:05d}.ply", frames.string(), name, point.frame)));
  return point;
}

std::vector<std::string> diagnostics_before(const std::string& dir, const std::string& header,
                                            double t0) {
  const std::string path = dir + "/diagnostics.csv";
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
    try {
      t = std::stod(line.substr(0, line.find(',')));
    } catch (const std::exception&) {
      throw SceneError(fmt::format("--resume {}: {}: a row without a time: '{}'", dir, path, line));
    }
    // Frames are at i / frame_rate: rows within rounding of t0 belong to the resumed frame.
    if (t < t0 * (1.0 - 1e-12) - 1e-15) rows.push_back(line);
  }
  return rows;
}

}  // namespace clockwork
