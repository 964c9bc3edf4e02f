// find_overlapping_tets (io/mesh/tet_mesh.hpp): tets whose interiors intersect without
// sharing a face (issue 42: "an overlapping tet ... accepted").
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "io/mesh/tet_mesh.hpp"

namespace clockwork {

namespace {

/// Penetration below this fraction of the mesh's bounding-box diagonal is contact, not
/// overlap: conforming neighbours and coincident faces touch at depth 0 up to rounding
/// (~1e-16 in the mesh units used below), far under it.
constexpr double kDepthTolerance = 1e-9;
/// Each axis of the broad-phase grid has at most this many cells, so a cell's three
/// coordinates fit in one 64-bit key.
constexpr std::uint64_t kMaxCellsPerAxis = std::uint64_t{1} << 20;

/// A tet in mesh units (the mesh centred on its bounding box and divided by its
/// diagonal, so |y| ≤ 1 and rounding is relative to the mesh, not to its distance from
/// the origin): corners, unit face normals and its own extent along each of them.
struct UnitTet {
  std::array<Vec3, 4> y;
  std::array<Vec3, 4> normal;  ///< face k is opposite corner k
  std::array<double, 4> lo, hi;
};
struct Box {
  Vec3 lo, hi;
};
/// The grid cells a tet's box covers, lo to hi inclusive along x, y, z.
struct CellRange {
  std::array<std::uint32_t, 3> lo, hi;
};

/// Whether `a`'s and `b`'s projections on `axis` overlap by at most `slack` (|axis|
/// times the tolerance): a plane normal to `axis` separates them up to the tolerance.
bool apart_along(const Vec3& axis, const UnitTet& a, const UnitTet& b, double slack) {
  double a_lo = a.y[0].dot(axis), a_hi = a_lo, b_lo = b.y[0].dot(axis), b_hi = b_lo;
  for (int k = 1; k < 4; ++k) {
    const double pa = a.y[k].dot(axis), pb = b.y[k].dot(axis);
    a_lo = std::min(a_lo, pa);
    a_hi = std::max(a_hi, pa);
    b_lo = std::min(b_lo, pb);
    b_hi = std::max(b_hi, pb);
  }
  return a_hi <= b_lo + slack || b_hi <= a_lo + slack;
}

/// `b` lies within the tolerance outside one of `a`'s face slabs.
bool outside_a_face(const UnitTet& a, const UnitTet& b) {
  for (int f = 0; f < 4; ++f) {
    double b_lo = b.y[0].dot(a.normal[f]), b_hi = b_lo;
    for (int k = 1; k < 4; ++k) {
      const double p = b.y[k].dot(a.normal[f]);
      b_lo = std::min(b_lo, p);
      b_hi = std::max(b_hi, p);
    }
    if (a.hi[f] <= b_lo + kDepthTolerance || b_hi <= a.lo[f] + kDepthTolerance) return true;
  }
  return false;
}

constexpr int kEdges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};

/// Separating axis theorem for two tets: their interiors meet deeper than the
/// tolerance iff no face normal of either and no cross product of an edge of each
/// separates them. These are the facet normals of the Minkowski difference a − b, so
/// the smallest overlap over them is the penetration depth; a shared corner projects
/// to the same value on every axis and so counts as contact.
bool interiors_intersect(const UnitTet& a, const UnitTet& b) {
  if (outside_a_face(a, b) || outside_a_face(b, a)) return false;
  for (const auto& ea : kEdges) {
    const Vec3 u = a.y[ea[1]] - a.y[ea[0]];
    for (const auto& eb : kEdges) {
      const Vec3 v = b.y[eb[1]] - b.y[eb[0]], axis = u.cross(v);
      const double length = axis.norm();
      // Parallel edges (a shared edge gives exactly 0) span no facet: the face
      // normals and the other pairs bound the Minkowski difference there.
      if (!(length > 1e-12 * u.norm() * v.norm())) continue;
      if (apart_along(axis, a, b, kDepthTolerance * length)) return false;
    }
  }
  return true;
}

/// Number of corners `a` and `b` share.
int shared_corners(const std::array<Index, 4>& a, const std::array<Index, 4>& b) {
  int shared = 0;
  for (const Index i : a) shared += (i == b[0]) + (i == b[1]) + (i == b[2]) + (i == b[3]);
  return shared;
}

}  // namespace

std::optional<std::pair<Index, Index>> find_overlapping_tets(const TetMesh& mesh) {
  const std::size_t n_tets = mesh.tets.size();
  if (n_tets < 2) return std::nullopt;
  Vec3 lo = mesh.vertices[mesh.tets[0][0]], hi = lo;
  for (const auto& tet : mesh.tets)
    for (const Index i : tet) {
      lo = lo.cwiseMin(mesh.vertices[i]);
      hi = hi.cwiseMax(mesh.vertices[i]);
    }
  const Vec3 centre = 0.5 * (lo + hi);
  const double diagonal = (hi - lo).norm();
  std::vector<UnitTet> tets(n_tets);
  std::vector<Box> boxes(n_tets);
  std::vector<double> extents(n_tets);
  for (std::size_t t = 0; t < n_tets; ++t) {
    UnitTet& u = tets[t];
    for (int k = 0; k < 4; ++k) u.y[k] = (mesh.vertices[mesh.tets[t][k]] - centre) / diagonal;
    boxes[t].lo = boxes[t].hi = u.y[0];
    for (int k = 1; k < 4; ++k) {
      boxes[t].lo = boxes[t].lo.cwiseMin(u.y[k]);
      boxes[t].hi = boxes[t].hi.cwiseMax(u.y[k]);
    }
    for (int f = 0; f < 4; ++f) {
      const Vec3 &p = u.y[(f + 1) % 4], &q = u.y[(f + 2) % 4], &r = u.y[(f + 3) % 4];
      u.normal[f] = (q - p).cross(r - p).normalized();
      u.lo[f] = u.hi[f] = p.dot(u.normal[f]);
      for (const Vec3* x : std::array<const Vec3*, 3>{&q, &r, &u.y[f]}) {
        u.lo[f] = std::min(u.lo[f], x->dot(u.normal[f]));
        u.hi[f] = std::max(u.hi[f], x->dot(u.normal[f]));
      }
    }
    extents[t] = (boxes[t].hi - boxes[t].lo).maxCoeff();
  }

  // Broad phase: a grid of cells the size of the median tet (robust to a few huge or
  // tiny ones), each tet listed in the cells its box covers; coarser while there would
  // be more than 8 cells or 32 entries per tet (a sparse shell, needle-like tets
  // spanning the mesh), so that the memory stays O(T).
  std::nth_element(extents.begin(), extents.begin() + n_tets / 2, extents.end());
  const Vec3 grid_lo = (lo - centre) / diagonal, grid_size = (hi - lo) / diagonal;
  double cell = std::max(extents[n_tets / 2], 1.0 / double(kMaxCellsPerAxis));
  std::array<std::uint64_t, 3> dims{};
  std::vector<CellRange> ranges(n_tets);
  std::uint64_t n_cells = 0, n_entries = 0;
  for (;; cell *= 2) {
    for (int k = 0; k < 3; ++k)
      dims[k] = std::min(kMaxCellsPerAxis, std::uint64_t(std::floor(grid_size[k] / cell)) + 1);
    const auto cell_of = [&](const Vec3& y, int k) {
      return std::uint32_t(std::min(double(dims[k] - 1), std::max(0.0, std::floor((y[k] - grid_lo[k]) / cell))));
    };
    n_cells = dims[0] * dims[1] * dims[2];
    n_entries = 0;
    for (std::size_t t = 0; t < n_tets; ++t) {
      std::uint64_t covered = 1;
      for (int k = 0; k < 3; ++k) {
        ranges[t].lo[k] = cell_of(boxes[t].lo, k);
        ranges[t].hi[k] = cell_of(boxes[t].hi, k);
        covered *= ranges[t].hi[k] - ranges[t].lo[k] + 1;
      }
      n_entries += covered;
    }
    if (n_cells <= 8 * n_tets + 4096 && n_entries <= 32 * n_tets) break;
  }
  // The cells' lists, by counting sort (tets in increasing order within a cell).
  const auto for_each_cell = [&](const CellRange& r, auto&& visit) {
    for (std::uint64_t z = r.lo[2]; z <= r.hi[2]; ++z)
      for (std::uint64_t y = r.lo[1]; y <= r.hi[1]; ++y)
        for (std::uint64_t x = r.lo[0]; x <= r.hi[0]; ++x) visit((z * dims[1] + y) * dims[0] + x);
  };
  std::vector<std::size_t> start(n_cells + 1, 0);
  for (const CellRange& r : ranges) for_each_cell(r, [&](std::uint64_t c) { ++start[c + 1]; });
  for (std::uint64_t c = 0; c < n_cells; ++c) start[c + 1] += start[c];
  std::vector<Index> listed(n_entries);
  {
    std::vector<std::size_t> next(start.begin(), start.end() - 1);
    for (Index t = 0; t < n_tets; ++t) for_each_cell(ranges[t], [&](std::uint64_t c) { listed[next[c]++] = t; });
  }

  // Narrow phase, per cell: each pair is tested in one cell only, the one holding the
  // lower corner of the intersection of their boxes (the larger of their lower cells).
  // A cell's tets are first copied side by side: the pair loop then reads memory in order.
  struct Listed {
    Vec3 lo, hi;
    std::array<std::uint32_t, 3> cell_lo;
    Index tet;
  };
  std::vector<Listed> here;
  for (std::uint64_t c = 0; c < n_cells; ++c) {
    const std::array<std::uint64_t, 3> at = {c % dims[0], c / dims[0] % dims[1], c / (dims[0] * dims[1])};
    here.clear();
    for (std::size_t i = start[c]; i < start[c + 1]; ++i)
      here.push_back({boxes[listed[i]].lo, boxes[listed[i]].hi, ranges[listed[i]].lo, listed[i]});
    // Sweep along x: a pair is looked at only if b starts before a ends, and only if b
    // starts in this cell's slab of x (b starts after a, so b's lower cell is the home
    // cell's x), those being after the ones that start in earlier slabs.
    std::sort(here.begin(), here.end(), [](const Listed& a, const Listed& b) { return a.lo.x() < b.lo.x(); });
    const std::size_t x_home = static_cast<std::size_t>(
        std::find_if(here.begin(), here.end(), [&](const Listed& a) { return a.cell_lo[0] == at[0]; }) -
        here.begin());
    for (std::size_t i = 0; i < here.size(); ++i)
      for (std::size_t j = std::max(i + 1, x_home);
           j < here.size() && here[j].lo.x() < here[i].hi.x() - kDepthTolerance; ++j) {
        const Listed &a = here[i], &b = here[j];
        // Tested here only if this is the cell of the pair's home corner (in x it is, by
        // the sweep), and if the boxes overlap by more than the tolerance along x, y
        // and z (else that bounds the penetration depth as well).
        if (std::max(a.cell_lo[1], b.cell_lo[1]) != at[1] || std::max(a.cell_lo[2], b.cell_lo[2]) != at[2]) continue;
        if (!((a.hi.cwiseMin(b.hi) - a.lo.cwiseMax(b.lo)).minCoeff() > kDepthTolerance)) continue;
        // Face neighbours lie on either side of their face (validate_tet_mesh checks
        // the windings before); a shared edge or corner still allows a fold.
        if (shared_corners(mesh.tets[a.tet], mesh.tets[b.tet]) >= 3) continue;
        if (interiors_intersect(tets[a.tet], tets[b.tet]))
          return std::make_pair(std::max(a.tet, b.tet), std::min(a.tet, b.tet));
      }
  }
  return std::nullopt;
}

}  // namespace clockwork
