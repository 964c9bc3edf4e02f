// Procedural voxel solids. Each voxel is split into the 6 tets of the Kuhn
// (Freudenthal) triangulation: for every permutation (a, b, c) of the axes, the tet
// {x : x_a >= x_b >= x_c} of the unit cube, i.e. the path 000 → e_a → e_a + e_b → 111.
// Why this split: on a cube face, say x = 0, the tets cut the square along y = z, the
// diagonal from the face's lowest to its highest corner. That cut depends only on the
// face, not on which of its two cubes is looked at, so any set of voxels gives a
// conforming mesh, with no parity bookkeeping (the 5-tet split needs alternating
// orientations, and a voxel set with a hole in the checkerboard would break it). The
// price is 6 tets per voxel instead of 5.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "io/scene/scene_limits.hpp"
#include "io/mesh/tet_mesh.hpp"

namespace clockwork {

namespace {

void require(bool ok, const char* who, const char* name, double value, const char* what) {
  if (!ok) throw std::invalid_argument(fmt::format("{}: {} {}, got {}", who, name, what, value));
}

/// One primitive of a shape in model coordinates, labelled with its region.
struct Part {
  enum class Kind { box, ellipsoid, capsule };
  Kind kind;
  Vec3 a, b;              ///< box: lowest and highest corner; ellipsoid: centre and semi-axes;
                          ///< capsule: the ends of its axis
  double ra = 0, rb = 0;  ///< capsule: radius at a and at b (linear taper)
  int region = 0;

  bool contains(const Vec3& p) const {
    switch (kind) {
      case Kind::box:
        return (p.array() >= a.array()).all() && (p.array() <= b.array()).all();
      case Kind::ellipsoid:
        return ((p - a).array() / b.array()).matrix().squaredNorm() <= 1.0;
      case Kind::capsule: {
        // Distance to the closest point of the axis against the radius there: the
        // cone-sphere up to the taper's slope, exact for a constant radius.
        const Vec3 d = b - a;
        const double t = std::clamp((p - a).dot(d) / d.squaredNorm(), 0.0, 1.0);
        const double r = ra + t * (rb - ra);
        return (p - (a + t * d)).squaredNorm() <= r * r;
      }
    }
    return false;
  }
  void grow_bounds(Vec3& lo, Vec3& hi) const {
    const auto grow = [&](const Vec3& l, const Vec3& h) {
      lo = lo.cwiseMin(l);
      hi = hi.cwiseMax(h);
    };
    switch (kind) {
      case Kind::box:
        grow(a, b);
        break;
      case Kind::ellipsoid:
        grow(a - b, a + b);
        break;
      case Kind::capsule: {
        const Vec3 r = Vec3::Constant(std::max(ra, rb));
        grow(a.cwiseMin(b) - r, a.cwiseMax(b) + r);
        break;
      }
    }
  }
};

Part box(const Vec3& lo, const Vec3& hi, int region) {
  return {Part::Kind::box, lo, hi, 0, 0, region};
}
Part ellipsoid(const Vec3& c, const Vec3& semi, int region) {
  return {Part::Kind::ellipsoid, c, semi, 0, 0, region};
}
Part capsule(const Vec3& a, const Vec3& b, double ra, double rb, int region) {
  return {Part::Kind::capsule, a, b, ra, rb, region};
}

/// Voxels of edge `cell` from `corner`, `n` per axis; label −1 = outside.
struct VoxelGrid {
  Vec3 corner;
  double cell;
  std::array<int, 3> n;
  std::vector<int> label;

  std::size_t voxel(int i, int j, int k) const {
    return (static_cast<std::size_t>(k) * n[1] + j) * n[0] + i;
  }
  Vec3 centre(int i, int j, int k) const { return corner + cell * Vec3(i + 0.5, j + 0.5, k + 0.5); }
};

VoxelGrid make_grid(const Vec3& corner, double cell, std::array<int, 3> n) {
  return {corner, cell, n, std::vector<int>(static_cast<std::size_t>(n[0]) * n[1] * n[2], -1)};
}

/// Number of face-connected pieces of the labelled voxels.
int voxel_pieces(const VoxelGrid& g) {
  std::vector<char> seen(g.label.size(), 0);
  std::vector<std::array<int, 3>> stack;
  int pieces = 0;
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) {
        if (g.label[g.voxel(i, j, k)] < 0 || seen[g.voxel(i, j, k)]) continue;
        ++pieces;
        seen[g.voxel(i, j, k)] = 1;
        stack.push_back({i, j, k});
        while (!stack.empty()) {
          const auto v = stack.back();
          stack.pop_back();
          for (int axis = 0; axis < 3; ++axis)
            for (int step : {-1, 1}) {
              auto w = v;
              w[axis] += step;
              if (w[axis] < 0 || w[axis] >= g.n[axis]) continue;
              const std::size_t id = g.voxel(w[0], w[1], w[2]);
              if (g.label[id] < 0 || seen[id]) continue;
              seen[id] = 1;
              stack.push_back(w);
            }
        }
      }
  return pieces;
}

/// Whether the corners of the 2×2×2 block set in `mask` (bit x + 2y + 4z) are
/// face-connected inside the block (corners differing in one bit are neighbours).
bool block_connected(int mask) {
  if (mask == 0) return true;
  int seen = mask & -mask;
  for (int grown = 0; grown != seen;) {
    grown = seen;
    for (int c = 0; c < 8; ++c)
      if (seen >> c & 1)
        for (int axis = 0; axis < 3; ++axis) seen |= (1 << (c ^ (1 << axis))) & mask;
  }
  return seen == mask;
}

/// Makes the voxel set well-composed (Latecki): around every lattice point both the
/// occupied and the empty voxels of the 2×2×2 block are face-connected, so no two
/// voxels touch along an edge or at a corner only and the boundary surface is a
/// 2-manifold (a pinched edge would be shared by four boundary triangles). A bad
/// block is filled with the label of its first occupied voxel; filling only grows the
/// set, so this ends. Blocks reaching outside the grid are not examined: callers pad
/// the grid with a layer of empty voxels.
void make_well_composed(VoxelGrid& g) {
  static const auto good = [] {
    std::array<bool, 256> table;
    for (int m = 0; m < 256; ++m) table[m] = block_connected(m) && block_connected(255 & ~m);
    return table;
  }();
  for (bool changed = true; changed;) {
    changed = false;
    for (int k = 0; k + 1 < g.n[2]; ++k)
      for (int j = 0; j + 1 < g.n[1]; ++j)
        for (int i = 0; i + 1 < g.n[0]; ++i) {
          int mask = 0, label = -1;
          for (int c = 0; c < 8; ++c) {
            const int l = g.label[g.voxel(i + (c & 1), j + (c >> 1 & 1), k + (c >> 2))];
            if (l >= 0) mask |= 1 << c;
            if (l >= 0 && label < 0) label = l;
          }
          if (good[mask]) continue;
          for (int c = 0; c < 8; ++c) {
            int& l = g.label[g.voxel(i + (c & 1), j + (c >> 1 & 1), k + (c >> 2))];
            if (l < 0) l = label;
          }
          changed = true;
        }
  }
}

/// The Kuhn tets of every labelled voxel on the shared lattice; only lattice points
/// used by some tet become vertices (numbered in lattice order).
TetMesh tetrahedralize(const VoxelGrid& g, std::vector<std::string> names, const char* who) {
  const int pieces = voxel_pieces(g);
  if (pieces != 1)
    throw std::invalid_argument(
        fmt::format("{}: cell {} gives {} face-connected pieces of voxels, need exactly 1", who,
                    g.cell, pieces));
  std::vector<std::size_t> per_region(names.size(), 0);
  for (const int l : g.label)
    if (l >= 0) ++per_region[l];
  for (std::size_t r = 0; r < names.size(); ++r)
    if (per_region[r] == 0)
      throw std::invalid_argument(fmt::format("{}: cell {} is too coarse, region '{}' has no voxel",
                                              who, g.cell, names[r]));

  const int px = g.n[0] + 1, py = g.n[1] + 1, pz = g.n[2] + 1;
  const auto point = [&](int i, int j, int k) {
    return (static_cast<std::size_t>(k) * py + j) * px + i;
  };
  constexpr Index kUnused = ~Index{0};
  std::vector<Index> vertex(static_cast<std::size_t>(px) * py * pz, kUnused);
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i)
        if (g.label[g.voxel(i, j, k)] >= 0)
          for (int c = 0; c < 8; ++c)
            vertex[point(i + (c & 1), j + (c >> 1 & 1), k + (c >> 2))] = 0;
  TetMesh mesh;
  for (int k = 0; k < pz; ++k)
    for (int j = 0; j < py; ++j)
      for (int i = 0; i < px; ++i)
        if (vertex[point(i, j, k)] != kUnused) {
          vertex[point(i, j, k)] = static_cast<Index>(mesh.vertices.size());
          mesh.vertices.push_back(g.corner + g.cell * Vec3(i, j, k));
        }

  // The six paths 000 → e_a → e_a + e_b → 111 as corner bit masks (x = 1, y = 2,
  // z = 4); det[e_a, e_a + e_b, 111] = det[e_a, e_b, e_c] is the permutation's sign,
  // so the odd ones swap their middle vertices to stay positively oriented.
  constexpr int kKuhn[6][4] = {{0, 1, 3, 7}, {0, 2, 6, 7}, {0, 4, 5, 7},   // xyz yzx zxy
                               {0, 5, 1, 7}, {0, 3, 2, 7}, {0, 6, 4, 7}};  // xzy yxz zyx
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) {
        const int l = g.label[g.voxel(i, j, k)];
        if (l < 0) continue;
        for (const auto& path : kKuhn) {
          std::array<Index, 4> tet;
          for (int v = 0; v < 4; ++v) {
            const int c = path[v];
            tet[v] = vertex[point(i + (c & 1), j + (c >> 1 & 1), k + (c >> 2))];
          }
          mesh.tets.push_back(tet);
          mesh.tet_region.push_back(static_cast<std::uint16_t>(l));
        }
      }
  mesh.region_names = std::move(names);
  return mesh;
}

/// Voxelises the union of `parts` (model coordinates, mapped to origin + scale · p):
/// a voxel takes the region of the first part that contains its centre.
TetMesh voxelize(const std::vector<Part>& parts, std::vector<std::string> names, const Vec3& origin,
                 double scale, double cell, const char* who) {
  require(scale > 0.0 && std::isfinite(scale), who, "scale", scale, "must be > 0");
  require(cell > 0.0 && std::isfinite(cell), who, "cell", cell, "must be > 0");
  Vec3 lo = Vec3::Constant(INFINITY), hi = Vec3::Constant(-INFINITY);
  for (const Part& p : parts) p.grow_bounds(lo, hi);
  std::array<int, 3> n;
  for (int axis = 0; axis < 3; ++axis) {
    const double cells = std::ceil(scale * (hi[axis] - lo[axis]) / cell);
    require(cells <= 2000, who, "cell", cell, "is too fine (more than 2000 cells along an axis)");
    n[axis] = static_cast<int>(cells) + 2;  // one empty layer each side
  }
  // Every pass over the grid (flood fill, well-composedness) visits all its voxels:
  // a grid this large takes seconds and gigabytes before the tets are even counted.
  const double voxels = double(n[0]) * n[1] * n[2];
  if (voxels > kMaxVoxels)
    throw std::invalid_argument(fmt::format(
        "{}: cell {} gives a grid of {} × {} × {} = {:.3g} voxels, above the limit of {:.3g} "
        "(an estimated {} for the grid alone, up to {} with its tets; docs/scene-format.md "
        "\"Limits\")",
        who, cell, n[0], n[1], n[2], voxels, kMaxVoxels, bytes_text(voxels * kBytesPerVoxel),
        bytes_text(voxels * (kBytesPerVoxel + 6 * kBytesPerTet))));
  VoxelGrid g = make_grid(origin + scale * lo - Vec3::Constant(cell), cell, n);
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const Vec3 p = (g.centre(i, j, k) - origin) / scale;
        for (const Part& part : parts)
          if (part.contains(p)) {
            g.label[g.voxel(i, j, k)] = part.region;
            break;
          }
      }
  make_well_composed(g);
  return tetrahedralize(g, std::move(names), who);
}

}  // namespace

TetMesh make_tet_bar(const Vec3& origin, int nx, int ny, int nz, double cell) {
  const char* who = "make_tet_bar";
  require(nx >= 1, who, "nx", nx, "must be >= 1");
  require(ny >= 1, who, "ny", ny, "must be >= 1");
  require(nz >= 1, who, "nz", nz, "must be >= 1");
  require(cell > 0.0 && std::isfinite(cell), who, "cell", cell, "must be > 0");
  VoxelGrid g = make_grid(origin, cell, {nx, ny, nz});
  std::fill(g.label.begin(), g.label.end(), 0);
  return tetrahedralize(g, {"all"}, who);
}

TetMesh make_tet_sphere(const Vec3& center, double radius, int cells_per_diameter) {
  const char* who = "make_tet_sphere";
  require(radius > 0.0 && std::isfinite(radius), who, "radius", radius, "must be > 0");
  require(cells_per_diameter >= 2 && cells_per_diameter <= kMaxSphereCells, who,
          "cells_per_diameter", cells_per_diameter,
          fmt::format("must be in 2..{}", kMaxSphereCells).c_str());
  const int n = cells_per_diameter + 2;  // one empty layer each side
  const double cell = 2.0 * radius / cells_per_diameter;
  VoxelGrid g = make_grid(center - Vec3::Constant(radius + cell), cell, {n, n, n});
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        if ((g.centre(i, j, k) - center).norm() < radius) g.label[g.voxel(i, j, k)] = 0;
  make_well_composed(g);
  return tetrahedralize(g, {"all"}, who);
}

TetMesh make_tet_dinosaur(const Vec3& origin, double scale, double cell) {
  enum { body, neck_head, tail };
  const double leg = 0.045;
  std::vector<Part> parts = {
      ellipsoid({0.0, 0, 0.42}, {0.24, 0.13, 0.14}, body),
      capsule({0.18, 0, 0.48}, {0.36, 0, 0.78}, 0.065, 0.045, neck_head),
      ellipsoid({0.43, 0, 0.80}, {0.1, 0.055, 0.055}, neck_head),
      capsule({-0.18, 0, 0.44}, {-0.6, 0, 0.3}, 0.085, 0.03, tail),
  };
  for (const double x : {-0.13, 0.13})
    for (const double y : {-0.08, 0.08})
      parts.push_back(capsule({x, y, 0.4}, {x, y, leg}, 0.055, leg, body));
  return voxelize(parts, {"body", "neck_head", "tail"}, origin, scale, cell, "make_tet_dinosaur");
}

TetMesh make_tet_dragon(const Vec3& origin, double scale, double cell) {
  // Regions by priority (a voxel in two parts takes the first): the jaw under the
  // snout, the head, the neck, the chest with the front legs, the rest.
  enum { jaw, head, neck, front, body };
  std::vector<Part> parts = {
      box({0.52, -0.055, 0.585}, {0.78, 0.055, 0.665}, jaw),
      ellipsoid({0.52, 0, 0.72}, {0.12, 0.095, 0.095}, head),
      box({0.52, -0.06, 0.665}, {0.80, 0.06, 0.76}, head),
      capsule({0.28, 0, 0.44}, {0.46, 0, 0.68}, 0.07, 0.055, neck),
      ellipsoid({0.16, 0, 0.36}, {0.15, 0.12, 0.12}, front),
      ellipsoid({-0.1, 0, 0.34}, {0.17, 0.11, 0.11}, body),
      capsule({-0.22, 0, 0.34}, {-0.45, 0, 0.24}, 0.07, 0.05, body),
      capsule({-0.45, 0, 0.24}, {-0.6, 0, 0.2}, 0.05, 0.04, body),
  };
  for (const double y : {-0.09, 0.09}) {
    parts.push_back(capsule({0.18, y, 0.30}, {0.2, 1.1 * y, 0.05}, 0.05, 0.05, front));
    parts.push_back(capsule({-0.12, y, 0.28}, {-0.12, 1.2 * y, 0.05}, 0.05, 0.05, body));
  }
  return voxelize(parts, {"jaw", "head", "neck", "front", "body"}, origin, scale, cell,
                  "make_tet_dragon");
}

}  // namespace clockwork
