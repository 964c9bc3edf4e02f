#include "io/mesh/obstacle_meshes.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <numbers>
#include <stdexcept>

namespace clockwork {

namespace {

void require(bool ok, const char* name, double value, const char* what) {
  if (!ok) throw std::invalid_argument(fmt::format("{}: {}, got {}", name, what, value));
}

/// Two unit vectors completing `w` (unit) to a right-handed frame (u, v, w).
std::pair<Vec3, Vec3> frame_of(const Vec3& w) {
  const Vec3 helper = std::abs(w.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  const Vec3 u = w.cross(helper).normalized();
  return {u, w.cross(u)};
}

/// Rings of `segments` vertices stacked along a profile (radius, height) in the frame
/// (u, v, w) around `origin`; poles where the radius is zero become single vertices.
/// Triangles face away from the axis when the profile runs with increasing height.
TriangleMesh make_revolution(const Vec3& origin, const Vec3& w,
                             const std::vector<std::pair<double, double>>& profile,
                             int segments) {
  const auto [u, v] = frame_of(w);
  TriangleMesh m;
  std::vector<std::vector<Index>> rings;
  for (const auto& [r, h] : profile) {
    std::vector<Index> ring;
    if (r == 0.0) {
      ring.assign(segments, static_cast<Index>(m.vertices.size()));
      m.vertices.push_back(origin + h * w);
    } else {
      for (int k = 0; k < segments; ++k) {
        const double phi = 2.0 * std::numbers::pi * k / segments;
        ring.push_back(static_cast<Index>(m.vertices.size()));
        m.vertices.push_back(origin + h * w + r * (std::cos(phi) * u + std::sin(phi) * v));
      }
    }
    rings.push_back(std::move(ring));
  }
  for (std::size_t i = 0; i + 1 < rings.size(); ++i)
    for (int k = 0; k < segments; ++k) {
      const int k1 = (k + 1) % segments;
      const Index a = rings[i][k], b = rings[i][k1], c = rings[i + 1][k], d = rings[i + 1][k1];
      if (a != b) m.triangles.push_back({a, b, d});
      if (c != d) m.triangles.push_back({a, d, c});
    }
  return m;
}

}  // namespace

TriangleMesh make_ground(const Vec3& center, double half_size, int divisions) {
  require(half_size > 0.0, "half_size", half_size, "must be > 0");
  require(divisions >= 1, "divisions", divisions, "must be >= 1");
  TriangleMesh m;
  const int n = divisions;
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i)
      m.vertices.push_back(center + Vec3(half_size * (2.0 * i / n - 1.0),
                                         half_size * (2.0 * j / n - 1.0), 0.0));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const Index v0 = j * (n + 1) + i, v1 = v0 + 1, v2 = v0 + n + 1, v3 = v2 + 1;
      m.triangles.push_back({v0, v1, v3});
      m.triangles.push_back({v0, v3, v2});
    }
  return m;
}

TriangleMesh make_sphere(const Vec3& center, double radius, int subdivisions) {
  require(radius > 0.0, "radius", radius, "must be > 0");
  require(subdivisions >= 0 && subdivisions <= 6, "subdivisions", subdivisions,
          "must be in 0..6");
  const double g = (1.0 + std::sqrt(5.0)) / 2.0;
  std::vector<Vec3> x = {{-1, g, 0}, {1, g, 0},  {-1, -g, 0}, {1, -g, 0},
                         {0, -1, g}, {0, 1, g},  {0, -1, -g}, {0, 1, -g},
                         {g, 0, -1}, {g, 0, 1},  {-g, 0, -1}, {-g, 0, 1}};
  for (Vec3& p : x) p.normalize();
  std::vector<std::array<Index, 3>> t = {
      {0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
      {11, 10, 2}, {10, 7, 6}, {7, 1, 8},  {3, 9, 4},  {3, 4, 2},   {3, 2, 6}, {3, 6, 8},
      {3, 8, 9},  {4, 9, 5},  {2, 4, 11},  {6, 2, 10}, {8, 6, 7},   {9, 8, 1}};
  for (int s = 0; s < subdivisions; ++s) {
    std::map<std::pair<Index, Index>, Index> midpoint;
    const auto mid = [&](Index a, Index b) {
      const auto key = std::minmax(a, b);
      auto [it, inserted] = midpoint.try_emplace(key, static_cast<Index>(x.size()));
      if (inserted) x.push_back((x[a] + x[b]).normalized());
      return it->second;
    };
    std::vector<std::array<Index, 3>> finer;
    for (const auto& [a, b, c] : t) {
      const Index ab = mid(a, b), bc = mid(b, c), ca = mid(c, a);
      finer.push_back({a, ab, ca});
      finer.push_back({b, bc, ab});
      finer.push_back({c, ca, bc});
      finer.push_back({ab, bc, ca});
    }
    t = std::move(finer);
  }
  TriangleMesh m;
  for (const Vec3& p : x) m.vertices.push_back(center + radius * p);
  m.triangles = std::move(t);
  return m;
}

TriangleMesh make_cylinder(const Vec3& base, const Vec3& axis, double radius, double length,
                           int segments, int rings, bool capped) {
  require(radius > 0.0, "radius", radius, "must be > 0");
  require(length > 0.0, "length", length, "must be > 0");
  require(segments >= 3, "segments", segments, "must be >= 3");
  require(rings >= 1, "rings", rings, "must be >= 1");
  require(axis.norm() > 0.0, "axis", axis.norm(), "must be non-zero (its length)");
  std::vector<std::pair<double, double>> profile;
  if (capped) profile.emplace_back(0.0, 0.0);
  for (int i = 0; i <= rings; ++i) profile.emplace_back(radius, length * i / rings);
  if (capped) profile.emplace_back(0.0, length);
  return make_revolution(base, axis.normalized(), profile, segments);
}

TriangleMesh make_capsule(const Vec3& a, const Vec3& b, double radius, int segments, int rings) {
  require(radius > 0.0, "radius", radius, "must be > 0");
  require(segments >= 3, "segments", segments, "must be >= 3");
  require(rings >= 1, "rings", rings, "must be >= 1");
  const double length = (b - a).norm();
  require(length > 0.0, "b", length, "must differ from a (distance)");
  std::vector<std::pair<double, double>> profile{{0.0, -radius}};
  for (int i = 1; i <= rings; ++i) {  // lower hemisphere, from the pole to the equator
    const double theta = 0.5 * std::numbers::pi * (1.0 - double(i) / rings);
    profile.emplace_back(radius * std::cos(theta), -radius * std::sin(theta));
  }
  for (int i = 0; i < rings; ++i) {  // upper hemisphere, from the equator to the pole
    const double theta = 0.5 * std::numbers::pi * double(i) / rings;
    profile.emplace_back(radius * std::cos(theta), length + radius * std::sin(theta));
  }
  profile.emplace_back(0.0, length + radius);
  return make_revolution(a, (b - a) / length, profile, segments);
}

}  // namespace clockwork
