#pragma once
/// Scenes: a JSON file (docs/scene-format.md) loaded into a ready-to-run kernel.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contact/contact_system.hpp"
#include "engine/kernel.hpp"
#include "integrators/body_integrator.hpp"
#include "integrators/phantom/phantom_source.hpp"
#include "integrators/schroeder/schroeder_source.hpp"
#include "integrators/implicit/solid_source.hpp"

namespace clockwork {

struct Body {
  std::string name;
  Index first_vertex = 0;  ///< global index of local vertex 0
  Index vertex_count = 0;
  std::vector<std::array<Index, 3>> triangles;  ///< local indices
  std::vector<std::array<Index, 2>> edges;      ///< local indices (springs)
  bool obstacle = false;  ///< kinematic mesh from `obstacles`
  bool collide = false;   ///< its triangles (or chain vertices) are in the contact system
  bool self_contact = true;  ///< its triangles may collide with each other (solids: opt-in)
  /// Its integrator (one of Scene::integrators); null for an obstacle.
  BodyIntegrator* integrator = nullptr;
};

/// How many stencils of each kind, and their period range (for logs and docs).
struct TermSummary {
  std::string kind;
  std::size_t count = 0;
  double min_period = kNever, max_period = 0.0;
};

struct Scene {
  std::string file;  ///< where it was read from ("<memory>" for JSON built in code)
  std::string name;
  std::string description;  ///< free text: what the scene shows, how long a full run takes
  double end_time = 0.0;    ///< s
  double frame_rate = 0.0;  ///< frames per simulated second
  bool write_obj = true, write_ply = true;
  /// Frame the run starts at: 0, or the frame a resumed run continues from (its time,
  /// first_frame / frame_rate, is the kernel's clock at the start).
  int first_frame = 0;
  std::string resumed_from;   ///< the earlier run's output folder (empty: not resumed)
  bool later_frames = false;  ///< that folder holds frames after first_frame
  std::vector<Body> bodies;
  std::vector<TermSummary> terms;
  std::unique_ptr<Kernel> kernel;
  std::unique_ptr<ContactSystem> contact;  ///< null without a `contact` object; after kernel
  /// Every deformable body's integrator (integrators/body_integrator.hpp), in the
  /// order they were started: owned by the kernel (those with an event source) or by
  /// `kept_integrators` (an explicit shell's adapter).
  std::vector<BodyIntegrator*> integrators;
  std::vector<std::unique_ptr<BodyIntegrator>> kept_integrators;

  /// The integrators of one class, e.g. bodies_of<SolidSource>() (tests, benchmarks).
  template <typename T>
  std::vector<T*> bodies_of() const {
    std::vector<T*> found;
    for (BodyIntegrator* i : integrators)
      if (T* t = dynamic_cast<T*>(i)) found.push_back(t);
    return found;
  }
};

/// Reads, validates and builds a scene. Throws SceneError naming the file, the JSON
/// pointer and the offending value. Relative mesh paths resolve against the file.
/// With `resume_dir` (an earlier run's output folder) the scene starts from the last
/// frame written there (io/frames/resume.hpp) instead of its initial state.
/// `resume_frame` >= 0 picks an earlier frame than the last.
Scene load_scene(const std::string& path, const std::string& resume_dir = {}, int resume_frame = -1);
/// Same from an already parsed document; `file` names it in errors, `base_dir`
/// resolves relative paths.
Scene build_scene(const nlohmann::json& doc, const std::string& file,
                  const std::string& base_dir, const std::string& resume_dir = {},
                  int resume_frame = -1);

}  // namespace clockwork
