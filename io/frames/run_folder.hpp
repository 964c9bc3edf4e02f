#pragma once
/// Is this a complete run output folder? The one check shared by the readers of a run
/// (`check-intersections`, `render`, `view`): a damaged folder (a frame deleted, cut
/// short or left over from a longer run) is refused with a message naming the file,
/// instead of being checked, drawn or shown as if it were the whole run.
#include <string>
#include <string_view>
#include <vector>

#include "io/frames/check_frames.hpp"

namespace clockwork {

/// What scan_run_folder found; every body has frames 0 .. frames-1 in each format.
struct RunFolder {
  std::vector<ManifestBody> bodies;        ///< bodies.json, in order
  int frames = 0;                          ///< the same for every body and format
  bool obj = false, ply = false;           ///< the frame formats the run wrote
  std::vector<std::size_t> vertices;       ///< per body, the same in every frame
  std::vector<std::size_t> faces;          ///< per body, the same in every frame
};

/// Scans OUT: bodies.json (at least one body), frames/BODY_NNNNN.{obj,ply} numbered
/// 0 .. N-1 without a gap for every body in each format the run wrote, every frame
/// of a body with the vertex and face counts of its frame 0 (a body whose frame 0 has
/// faces has them in every frame), each PLY frame whole (its header's rows, each with
/// the declared values, finite numbers, face indices in range), and diagnostics.csv
/// with one row per frame. `need`: "obj" or "ply" when the caller reads that format
/// (refused if the run did not write it), empty for either.
/// Throws SceneError naming the file, e.g.
/// "out/frames/cloth_00004.ply: missing (frames 0-3 and 5-10 exist)".
RunFolder scan_run_folder(const std::string& out_dir, std::string_view need = {});

}  // namespace clockwork
