#pragma once
/// `clockwork check-intersections OUTDIR`: the independent intersection checker
/// (contact/intersections/intersection_check.hpp) over every written frame of a run. It reads the
/// run's `bodies.json` manifest and the OBJ frames, and shares no code with the
/// certificates it audits.
#include <string>
#include <vector>

namespace clockwork {

struct FrameIntersections {
  int frame = 0;
  std::size_t triangles = 0;
  std::vector<std::string> pairs;  ///< "body:triangle x body:triangle", deformable only
};

/// Every frame of the run, in order. Pairs of obstacle triangles are not reported
/// (obstacles may overlap each other); neither are triangles sharing a vertex.
/// Throws SceneError naming the file if the folder is not a complete run with OBJ
/// frames (scan_run_folder, io/frames/run_folder.hpp) or a frame is unreadable.
std::vector<FrameIntersections> check_frames(const std::string& out_dir);

/// Writes OUT/bodies.json: name, obstacle flag and collide flag of each body.
struct ManifestBody {
  std::string name;
  bool obstacle = false, collide = false;
};
void write_manifest(const std::string& out_dir, const std::vector<ManifestBody>& bodies);
/// Reads OUT/bodies.json; throws SceneError if the folder is not a run's output.
std::vector<ManifestBody> read_manifest(const std::string& out_dir);

}  // namespace clockwork
