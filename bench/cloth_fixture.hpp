#pragma once
/// Square cloth scenes for benchmarks, built through the scene loader.
#include <nlohmann/json.hpp>

#include "io/scene/scene.hpp"

namespace clockwork::bench {

/// An n-by-n-cell cloth (n+1)² vertices, pinned at two corners, under gravity.
/// `bending` false leaves only membrane (and gravity if `gravity`) stencils.
inline Scene make_cloth_scene(int n, bool bending = true, bool gravity = true) {
  nlohmann::json doc = {
      {"name", "bench_cloth"},
      {"end_time", 1000.0},
      {"frame_rate", 1.0},
      {"gravity", gravity ? nlohmann::json::array({0.0, 0.0, -9.81}) : nlohmann::json::array({0.0, 0.0, 0.0})},
      {"bodies",
       {{{"name", "cloth"},
         {"shape",
          {{"type", "grid"}, {"size", {1.0, 1.0}}, {"resolution", {n, n}}, {"center", {0.0, 0.0, 1.0}}}},
         {"material",
          {{"area_density", 0.1}, {"young", 500.0}, {"poisson", 0.3}, {"bending", bending ? 1e-4 : 0.0}}},
         {"pins", {"u0v1", "u1v1"}}}}}};
  return build_scene(doc, "<bench>", ".");
}

}  // namespace clockwork::bench
