#pragma once
/// Frame outputs: OBJ of a body's surface and a PLY with per-vertex position,
/// velocity, mass and, when the kernel counts them, the cumulative number of events
/// that touched the vertex (ASCII, 17 significant digits: exact round trip, readable
/// by any tool). Kinematic vertices have mass written as inf. Subnormal values
/// (nonzero, |x| < DBL_MIN) are written as a zero of their sign: a vanishing quantity's
/// noise, which strtod-based readers refuse (ERANGE). Writers throw IoError naming the
/// file and the reason (cannot open, disk full at a write, flush or close).
#include <string>
#include <vector>

#include "engine/vertex_state.hpp"
#include "io/mesh/mesh.hpp"

namespace clockwork {

struct FrameVertex {
  Vec3 x, v;
  double mass;
  std::uint64_t events = 0;  ///< cumulative events whose stencil holds the vertex
  /// A phantom body's implicit copy (integrators/phantom/phantom_source.hpp): its position q̃
  /// and velocity ṽ, which a resumed run needs — the primary's velocity holds the
  /// coupling's pull towards the copy, (q̃ − q)/h_imp at each tick.
  bool has_phantom = false;
  Vec3 phantom_x = Vec3::Zero(), phantom_v = Vec3::Zero();
};

void write_obj(const std::string& path, const std::vector<Vec3>& vertices,
               const std::vector<std::array<Index, 3>>& triangles,
               const std::vector<std::array<Index, 2>>& edges);
/// `with_events`: adds the vertex property `double events` (double, not uint: PLY's
/// integers are 32-bit, and a double holds counts exactly up to 2^53). Vertices with
/// a phantom copy (all or none) add phantom_x, phantom_y, phantom_z, phantom_vx,
/// phantom_vy, phantom_vz.
void write_ply(const std::string& path, const std::vector<FrameVertex>& vertices,
               const std::vector<std::array<Index, 3>>& triangles, bool with_events = false);

/// Reads back a PLY written by write_ply (vertices only; `events` is 0 when the file
/// has no such property, `has_phantom` false without the phantom properties). Throws
/// SceneError naming the file (and the line): a directory, a binary PLY ("binary PLY
/// is not supported, expected format ascii 1.0"), a token that is not a number, a
/// non-finite value (but a mass of +inf: a kinematic vertex), a vertex line with the
/// wrong number of values, a truncated list. Subnormal values are accepted (finite;
/// frames of earlier versions hold some).
std::vector<FrameVertex> read_ply(const std::string& path);

}  // namespace clockwork
