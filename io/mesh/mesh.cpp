#include "io/mesh/mesh.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <algorithm>
#include <numbers>
#include <sstream>

#include "io/scene_error.hpp"
#include "io/text_input.hpp"

namespace clockwork {

namespace {
/// Two triangles of the quad p0 p1 p2 p3 (counter-clockwise), split along p0–p2 or
/// p1–p3; meshes alternate the diagonal so they have no preferred shear direction.
void add_quad(TriangleMesh& m, Index p0, Index p1, Index p2, Index p3, bool diagonal02) {
  if (diagonal02) {
    m.triangles.push_back({p0, p1, p2});
    m.triangles.push_back({p0, p2, p3});
  } else {
    m.triangles.push_back({p0, p1, p3});
    m.triangles.push_back({p1, p2, p3});
  }
}
}  // namespace

TriangleMesh make_grid(double size_u, double size_v, int nu, int nv, const Vec3& center,
                       const Vec3& axis_u, const Vec3& axis_v) {
  TriangleMesh m;
  for (int j = 0; j <= nv; ++j)
    for (int i = 0; i <= nu; ++i)
      m.vertices.push_back(center + (size_u * (double(i) / nu - 0.5)) * axis_u +
                           (size_v * (double(j) / nv - 0.5)) * axis_v);
  auto id = [nu](int i, int j) { return static_cast<Index>(j * (nu + 1) + i); };
  for (int j = 0; j < nv; ++j)
    for (int i = 0; i < nu; ++i) {
      add_quad(m, id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1), (i + j) % 2 == 0);
    }
  return m;
}

TriangleMesh make_disk(double radius, int rings, const Vec3& center, const Vec3& axis_u,
                       const Vec3& axis_v) {
  TriangleMesh m;
  m.vertices.push_back(center);
  std::vector<Index> ring_start{0};
  for (int r = 1; r <= rings; ++r) {
    ring_start.push_back(static_cast<Index>(m.vertices.size()));
    const int n = 6 * r;
    for (int k = 0; k < n; ++k) {
      const double phi = 2.0 * std::numbers::pi * k / n;
      const double rho = radius * r / rings;
      m.vertices.push_back(center + rho * (std::cos(phi) * axis_u + std::sin(phi) * axis_v));
    }
  }
  // Ring r-1 (n0 = 6(r-1) vertices, 1 for r = 1) to ring r (n1 = 6r): walk both rings
  // by angle, always advancing the one whose next vertex has the smaller angle.
  for (int r = 1; r <= rings; ++r) {
    const int n0 = r == 1 ? 1 : 6 * (r - 1), n1 = 6 * r;
    const Index s0 = ring_start[r - 1], s1 = ring_start[r];
    int i0 = 0, i1 = 0;
    while (i0 < (r == 1 ? 0 : n0) || i1 < n1) {
      const double next0 = r == 1 ? 2.0 : double(i0 + 1) / n0;
      const double next1 = double(i1 + 1) / n1;
      const Index a = s0 + (r == 1 ? 0 : i0 % n0), b = s1 + i1 % n1;
      if (next1 <= next0 && i1 < n1) {
        m.triangles.push_back({a, b, static_cast<Index>(s1 + (i1 + 1) % n1)});
        ++i1;
      } else {
        m.triangles.push_back({a, b, static_cast<Index>(s0 + (i0 + 1) % n0)});
        ++i0;
      }
    }
  }
  return m;
}

TriangleMesh make_hat(const Vec3& center, const Vec3& axis_u, const Vec3& axis_v,
                      double crown_radius, double crown_height, double brim_radius,
                      int segments) {
  const Vec3 w = axis_u.cross(axis_v);
  const double edge = 2.0 * std::numbers::pi * crown_radius / segments;
  const auto divisions = [&](double length) { return std::max(1, int(std::lround(length / edge))); };
  // The profile (radius, height) from the top centre outwards; the pole is the first.
  std::vector<std::pair<double, double>> profile;
  const int top = divisions(crown_radius), wall = divisions(crown_height),
            brim = divisions(brim_radius - crown_radius);
  for (int i = 0; i <= top; ++i) profile.emplace_back(crown_radius * i / top, crown_height);
  for (int i = 1; i <= wall; ++i) profile.emplace_back(crown_radius, crown_height * (1.0 - double(i) / wall));
  for (int i = 1; i <= brim; ++i)
    profile.emplace_back(crown_radius + (brim_radius - crown_radius) * i / brim, 0.0);
  TriangleMesh m;
  m.vertices.push_back(center + crown_height * w);
  for (std::size_t r = 1; r < profile.size(); ++r)
    for (int k = 0; k < segments; ++k) {
      const double phi = 2.0 * std::numbers::pi * k / segments;
      const auto [rho, z] = profile[r];
      m.vertices.push_back(center + rho * (std::cos(phi) * axis_u + std::sin(phi) * axis_v) + z * w);
    }
  const auto ring = [&](std::size_t r, int k) {
    return static_cast<Index>(1 + (r - 1) * segments + ((k % segments) + segments) % segments);
  };
  for (int k = 0; k < segments; ++k) m.triangles.push_back({0, ring(1, k), ring(1, k + 1)});
  // Quads between rings, split along alternating diagonals. Counter-clockwise seen
  // from outside: going down the wall and out the brim keeps the same winding.
  for (std::size_t r = 1; r + 1 < profile.size(); ++r)
    for (int k = 0; k < segments; ++k) {
      add_quad(m, ring(r, k), ring(r + 1, k), ring(r + 1, k + 1), ring(r, k + 1),
               (k + static_cast<int>(r)) % 2 == 0);
    }
  return m;
}

TriangleMesh make_chain(const Vec3& start, const Vec3& end, int segments) {
  TriangleMesh m;
  for (int i = 0; i <= segments; ++i)
    m.vertices.push_back(start + (end - start) * (double(i) / segments));
  for (int i = 0; i < segments; ++i)
    m.edges.push_back({static_cast<Index>(i), static_cast<Index>(i + 1)});
  return m;
}

namespace {
/// Whether the longest squared edge and twice the area of triangle (a, b, c) are
/// finite, and whether it is degenerate by MembraneStVK::is_degenerate's scale-free
/// test: twice its area ≤ 1e-12 × its longest squared edge.
struct TriangleShape {
  bool finite, degenerate;
};
TriangleShape triangle_shape(const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 e1 = b - a, e2 = c - a;
  const double longest = std::max({e1.squaredNorm(), e2.squaredNorm(), (e2 - e1).squaredNorm()});
  const double area2 = e1.cross(e2).norm();
  if (!std::isfinite(longest) || !std::isfinite(area2)) return {false, false};
  return {true, !(longest > 0.0) || !(area2 > 1e-12 * longest)};
}
}  // namespace

TriangleMesh read_obj(const std::string& path, ObjFaces faces) {
  std::ifstream in = open_input(path, "OBJ");
  TriangleMesh m;
  std::string line;
  int line_no = 0;
  auto fail = [&](std::string_view what) {
    throw SceneError(fmt::format("{}:{}: {}: '{}'", path, line_no, what, printable(line)));
  };
  std::map<std::vector<Index>, std::pair<int, int>> seen;  // sorted face -> face number, line
  int face_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "v") {
      Vec3 x;
      std::string token;
      for (int k = 0; k < 3; ++k) {
        if (!(ls >> token)) fail("vertex needs 3 coordinates");
        // Subnormal coordinates are accepted: they are finite, and frames of older runs
        // hold some (std::stod refused them as out of range).
        if (!parse_double(token, x[k])) fail("vertex coordinate is not a number within a double's range");
        if (!std::isfinite(x[k])) fail("vertex coordinate is not finite");
      }
      m.vertices.push_back(x);
    } else if (tag == "f") {
      ++face_no;
      std::vector<Index> face;
      std::string token;
      while (ls >> token) {
        const std::string digits = token.substr(0, token.find('/'));
        long long idx = 0;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), idx);
        if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty())
          fail("face index is not an integer");
        const long long n = static_cast<long long>(m.vertices.size());
        if (idx < 0) idx = n + idx + 1;
        if (idx < 1 || idx > n) fail("face index out of range");
        face.push_back(static_cast<Index>(idx - 1));
      }
      if (face.size() < 3) fail("face needs at least 3 vertices");
      if (faces == ObjFaces::kSurface) {
        std::vector<Index> key = face;
        std::sort(key.begin(), key.end());
        if (std::adjacent_find(key.begin(), key.end()) != key.end())
          fail(fmt::format("face {} uses a vertex twice (a degenerate face)", face_no));
        const auto [it, fresh] = seen.emplace(std::move(key), std::pair{face_no, line_no});
        if (!fresh)
          fail(fmt::format("face {} has the vertices of face {} (line {}): a duplicated face", face_no,
                           it->second.first, it->second.second));
      }
      for (std::size_t k = 1; k + 1 < face.size(); ++k) {
        const std::array<Index, 3> t{face[0], face[k], face[k + 1]};
        if (faces == ObjFaces::kSurface) {
          const TriangleShape shape = triangle_shape(m.vertices[t[0]], m.vertices[t[1]], m.vertices[t[2]]);
          if (!shape.finite)
            fail(fmt::format("face {}: its area is not finite (coordinates too large to compute it)",
                             face_no));
          if (shape.degenerate)
            fail(fmt::format("face {} (vertices {} {} {}) is degenerate (zero area)", face_no,
                             t[0] + 1, t[1] + 1, t[2] + 1));
        }
        m.triangles.push_back(t);
      }
    }
  }
  if (m.vertices.empty()) throw SceneError(fmt::format("{}: OBJ file has no vertices", path));
  return m;
}

std::vector<std::array<Index, 4>> interior_hinges(const TriangleMesh& mesh) {
  // Directed edge (a, b) -> opposite vertex of the triangle where it appears.
  std::map<std::pair<Index, Index>, Index> opposite;
  for (const auto& t : mesh.triangles)
    for (int k = 0; k < 3; ++k) opposite[{t[k], t[(k + 1) % 3]}] = t[(k + 2) % 3];
  std::vector<std::array<Index, 4>> hinges;
  for (const auto& [edge, x2] : opposite) {
    const auto [a, b] = edge;
    if (a > b) continue;  // each undirected edge once
    auto twin = opposite.find({b, a});
    if (twin == opposite.end()) continue;
    hinges.push_back({a, b, x2, twin->second});
  }
  return hinges;
}

}  // namespace clockwork
