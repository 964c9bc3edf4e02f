#pragma once
/// The triangle and chain shapes of a scene's bodies and obstacles (docs/scene-format.md
/// "Shapes"): generated grids, disks, hats and chains, inline meshes and OBJ files.
#include <string>

#include "io/scene/json_reader.hpp"
#include "io/mesh/mesh.hpp"
#include "io/scene/scene_limits.hpp"

namespace clockwork {

/// Reads a triangle or chain shape (`kind` receives its type); the memory a generated
/// shape will need is estimated into `budget` from its counts first.
TriangleMesh read_shape(const JsonField& shape, const std::string& base_dir, std::string& kind,
                        SceneBudget& budget);

}  // namespace clockwork
