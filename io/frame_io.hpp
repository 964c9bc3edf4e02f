#pragma once
/// Frame outputs: OBJ of a body's surface and a PLY with per-vertex position,
/// velocity and mass (ASCII, 17 significant digits: exact round trip, readable by any
/// tool). Kinematic vertices have mass written as inf.
#include <string>
#include <vector>

#include "engine/vertex_state.hpp"
#include "io/mesh.hpp"

namespace clockwork {

struct FrameVertex {
  Vec3 x, v;
  double mass;
};

void write_obj(const std::string& path, const std::vector<Vec3>& vertices,
               const std::vector<std::array<Index, 3>>& triangles,
               const std::vector<std::array<Index, 2>>& edges);
void write_ply(const std::string& path, const std::vector<FrameVertex>& vertices,
               const std::vector<std::array<Index, 3>>& triangles);

/// Reads back a PLY written by write_ply (vertices only); throws SceneError.
std::vector<FrameVertex> read_ply(const std::string& path);

}  // namespace clockwork
