#pragma once
/// Static rigid bodies for the particle collision response of Schroeder et al. §6
/// (integrators/schroeder/schroeder_scheme.hpp): a half-space, a sphere, a capsule or an
/// axis-aligned box, each with a signed distance and an outward normal; or any static
/// triangle mesh (contact/obstacles/mesh_collider.hpp).
#include <memory>
#include <string>

#include "engine/types.hpp"

namespace clockwork {

class MeshCollider;

struct StaticCollider {
  enum class Shape { Plane, Sphere, Capsule, Box, Mesh };

  /// The closest surface point of x: signed distance (negative inside), the outward
  /// unit normal there, and the point itself (x − distance · normal).
  struct Closest {
    double distance = 0.0;
    Vec3 normal = Vec3::UnitZ();
    Vec3 point = Vec3::Zero();
  };

  Shape shape = Shape::Plane;
  Vec3 a = Vec3::Zero();      ///< plane: a point; sphere: centre; capsule: one end; box: min
  Vec3 b = Vec3::UnitZ();     ///< plane: unit normal; capsule: other end; box: max
  double radius = 0.0;        ///< sphere, capsule; mesh: how far it is grown (≥ 0)
  double friction = 0.0;      ///< Coulomb coefficient μ ≥ 0
  std::shared_ptr<const MeshCollider> mesh;  ///< mesh (shared by the solids that see it)

  /// The half-space {x : n·(x − point) ≥ 0} (the body stays where n points).
  static StaticCollider plane(const Vec3& point, const Vec3& unit_normal, double mu = 0.0);
  static StaticCollider sphere(const Vec3& centre, double radius, double mu = 0.0);
  /// Points within `radius` of the segment [a, b].
  static StaticCollider capsule(const Vec3& a, const Vec3& b, double radius, double mu = 0.0);
  static StaticCollider box(const Vec3& min, const Vec3& max, double mu = 0.0);
  /// The solid under a "ground" obstacle: its square (centre ± half_size in x and y, at
  /// centre.z) as the top of a box as deep as it is wide.
  static StaticCollider ground(const Vec3& centre, double half_size, double mu = 0.0);
  /// A triangle mesh's surface (closed: its inside; open: one-sided within its band).
  static StaticCollider from_mesh(std::shared_ptr<const MeshCollider> mesh, double mu = 0.0);

  Closest closest(const Vec3& x) const;
  /// This body grown by `d` along its outward normals (a plane moved out, the radius
  /// of a sphere or capsule and every side of a box grown, a mesh's offset surface:
  /// its signed distance less d, the closest point moved d along the normal).
  StaticCollider grown(double d) const;
  /// "plane", "sphere", ...
  std::string shape_name() const;
};

/// Throws std::invalid_argument naming the bad value: a non-unit plane normal, a
/// non-positive or non-finite radius, coincident capsule ends, an empty box, μ < 0, a
/// mesh shape without its mesh or grown by a negative distance.
void validate_static_collider(const StaticCollider& c);

}  // namespace clockwork
