#include "contact/obstacles/static_collider.hpp"

#include "contact/obstacles/mesh_collider.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace clockwork {

namespace {

/// Closest point `c` of a convex core (a point or a segment) inflated by `radius`.
StaticCollider::Closest around(const Vec3& x, const Vec3& c, double radius,
                               const Vec3& fallback) {
  StaticCollider::Closest out;
  const Vec3 d = x - c;
  const double r = d.norm();
  // On the core itself the normal is undefined: any outward direction will do.
  out.normal = r > 0.0 ? Vec3(d / r) : fallback;
  out.distance = r - radius;
  out.point = c + radius * out.normal;
  return out;
}

std::string text(const Vec3& v) { return fmt::format("({}, {}, {})", v.x(), v.y(), v.z()); }

}  // namespace

StaticCollider StaticCollider::plane(const Vec3& point, const Vec3& unit_normal, double mu) {
  return {Shape::Plane, point, unit_normal, 0.0, mu};
}

StaticCollider StaticCollider::sphere(const Vec3& centre, double radius, double mu) {
  return {Shape::Sphere, centre, Vec3::Zero(), radius, mu};
}

StaticCollider StaticCollider::capsule(const Vec3& a, const Vec3& b, double radius, double mu) {
  return {Shape::Capsule, a, b, radius, mu};
}

StaticCollider StaticCollider::box(const Vec3& min, const Vec3& max, double mu) {
  return {Shape::Box, min, max, 0.0, mu};
}

StaticCollider StaticCollider::ground(const Vec3& centre, double half_size, double mu) {
  const double s = half_size;
  return box(centre - Vec3(s, s, s), centre + Vec3(s, s, 0.0), mu);
}

StaticCollider StaticCollider::from_mesh(std::shared_ptr<const MeshCollider> mesh, double mu) {
  StaticCollider c{Shape::Mesh, Vec3::Zero(), Vec3::Zero(), 0.0, mu};
  c.mesh = std::move(mesh);
  return c;
}

StaticCollider StaticCollider::grown(double d) const {
  StaticCollider c = *this;
  switch (c.shape) {
    case Shape::Plane: c.a += d * c.b; break;
    case Shape::Sphere:
    case Shape::Capsule:
    case Shape::Mesh: c.radius += d; break;
    case Shape::Box:
      c.a -= Vec3::Constant(d);
      c.b += Vec3::Constant(d);
      break;
  }
  return c;
}

std::string StaticCollider::shape_name() const {
  switch (shape) {
    case Shape::Plane: return "plane";
    case Shape::Sphere: return "sphere";
    case Shape::Capsule: return "capsule";
    case Shape::Box: return "box";
    case Shape::Mesh: return "mesh";
  }
  return "?";
}

StaticCollider::Closest StaticCollider::closest(const Vec3& x) const {
  switch (shape) {
    case Shape::Plane: {
      Closest out;
      out.normal = b;
      out.distance = b.dot(x - a);
      out.point = x - out.distance * b;
      return out;
    }
    case Shape::Sphere: return around(x, a, radius, Vec3::UnitZ());
    case Shape::Capsule: {
      const Vec3 axis = b - a;
      const double t = std::clamp(axis.dot(x - a) / axis.squaredNorm(), 0.0, 1.0);
      return around(x, a + t * axis, radius, axis.unitOrthogonal());
    }
    case Shape::Box: {
      const Vec3 c = x.cwiseMax(a).cwiseMin(b);
      if (c != x) return around(x, c, 0.0, Vec3::UnitZ());
      // Inside: the nearest face.
      Closest out;
      out.distance = -kNever;
      for (int k = 0; k < 3; ++k) {
        for (int side = 0; side < 2; ++side) {
          const double depth = side == 0 ? x[k] - a[k] : b[k] - x[k];
          if (-depth > out.distance) {
            out.distance = -depth;
            out.normal = Vec3::Zero();
            out.normal[k] = side == 0 ? -1.0 : 1.0;
          }
        }
      }
      out.point = x - out.distance * out.normal;
      return out;
    }
    case Shape::Mesh: {
      // The offset surface at `radius`: same normal, the distance less the offset.
      Closest out = mesh->closest(x);
      out.distance -= radius;
      out.point += radius * out.normal;
      return out;
    }
  }
  return {};
}

void validate_static_collider(const StaticCollider& c) {
  const auto bad = [](const std::string& what) { throw std::invalid_argument(what); };
  if (!(c.friction >= 0.0 && std::isfinite(c.friction)))
    bad(fmt::format("friction {} must be non-negative", c.friction));
  if (!c.a.allFinite() || !c.b.allFinite())
    bad(fmt::format("{} has a non-finite coordinate", c.shape_name()));
  switch (c.shape) {
    case StaticCollider::Shape::Plane:
      if (!(std::abs(c.b.norm() - 1.0) < 1e-9))
        bad(fmt::format("collision plane normal {} is not a unit vector", text(c.b)));
      break;
    case StaticCollider::Shape::Sphere:
    case StaticCollider::Shape::Capsule:
      if (!(c.radius > 0.0 && std::isfinite(c.radius)))
        bad(fmt::format("{} radius {} must be positive", c.shape_name(), c.radius));
      if (c.shape == StaticCollider::Shape::Capsule && !((c.b - c.a).norm() > 0.0))
        bad(fmt::format("capsule ends {} and {} coincide", text(c.a), text(c.b)));
      break;
    case StaticCollider::Shape::Box:
      if (!(c.a.array() < c.b.array()).all())
        bad(fmt::format("box min {} is not below max {} in every coordinate", text(c.a),
                        text(c.b)));
      break;
    case StaticCollider::Shape::Mesh:
      if (!c.mesh) bad("mesh collider without a mesh");
      if (!(c.radius >= 0.0 && std::isfinite(c.radius)))
        bad(fmt::format("mesh collider grown by {} (must be non-negative)", c.radius));
      break;
  }
}

}  // namespace clockwork
