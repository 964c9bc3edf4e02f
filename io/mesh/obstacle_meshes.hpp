#pragma once
/// Meshes of kinematic obstacles (docs/scene-format.md): outward-facing triangles
/// (counter-clockwise seen from outside), closed surfaces without duplicate vertices.
/// Invalid arguments throw std::invalid_argument naming the parameter and value.
#include "io/mesh/mesh.hpp"

namespace clockwork {

/// Square at height center.z spanning center ± half_size in x and y, normal +z,
/// divisions × divisions cells of two triangles.
TriangleMesh make_ground(const Vec3& center, double half_size, int divisions);

/// Icosphere: an icosahedron subdivided `subdivisions` times (0..6), projected on the
/// sphere (20 · 4^subdivisions triangles).
TriangleMesh make_sphere(const Vec3& center, double radius, int subdivisions);

/// Pole from `base` to base + length · axis (axis normalised here): `segments`
/// around (>= 3), `rings` along (>= 1), optionally closed by triangle-fan caps.
TriangleMesh make_cylinder(const Vec3& base, const Vec3& axis, double radius, double length,
                           int segments, int rings, bool capped);

/// Cylinder from a to b closed by hemispheres: `segments` around (>= 3), `rings`
/// latitude bands per hemisphere (>= 1).
TriangleMesh make_capsule(const Vec3& a, const Vec3& b, double radius, int segments, int rings);

}  // namespace clockwork
