#pragma once
/// The obstacle features near a deformable surface at a time, for implicit solves that
/// must see contact (docs/phantom.md "Obstacles in the tick"). The penalty layers keep
/// the primary mesh off the obstacles whatever happens; this answers the implicit
/// tick's question "which parts of the surface are about to meet which parts of the
/// obstacle", so that its elastic solution does not cut through the body it drapes
/// over.
///
/// Obstacle triangles (all vertices kinematic) are binned into a uniform grid at the
/// queried time (rebuilt lazily when the time changes: kinematic obstacles follow
/// scripts), as sorted (cell, triangle) pairs reused between rebuilds, so that a tick's
/// queries allocate nothing once the buffers have grown. A query reports every
/// feature pair of a surface triangle and an obstacle triangle within reach — surface
/// vertex – obstacle face, obstacle vertex – surface face, edge–edge — each once:
/// a feature shared by several triangles is *owned* by the first of them.
///
/// Flat obstacle features are left out: an interior edge or vertex of the obstacle
/// whose adjacent triangles are coplanar (a tessellated ground) is no feature of the
/// surface the body meets, and the pairs it would give have slanted normals on a flat
/// obstacle — the common perpendicular of a surface edge and a flat edge tilts with the
/// surface edge, a surface point clamped onto a flat edge from the neighbouring
/// triangle is offset sideways, a flat obstacle vertex against a surface face points
/// along the face's normal. Every such plane pushed the body sideways: a tet block at
/// rest on the scene's `ground` slid at 2.5e-4 m/s after 1 s. The triangle the point
/// lies over answers it with the true (vertical) normal instead; a point exactly over a
/// flat edge or vertex keeps its clamped pair, whose normal is then the face's.
#include <array>
#include <cstdint>
#include <vector>

#include "engine/vertex_state.hpp"

namespace clockwork {

/// Triangles with, per triangle, which of its vertices (bits 0–2) and edges (bits
/// 3–5, edge k from corner k to k + 1) it owns.
struct OwnedTriangles {
  std::vector<std::array<Index, 3>> triangles;
  std::vector<std::uint8_t> owns;
  explicit OwnedTriangles(std::vector<std::array<Index, 3>> t);
};

/// One feature pair: the surface point Σ w_i x_i (vertices with zero weight unused)
/// within reach of an obstacle point.
struct ObstacleContact {
  std::array<Index, 3> vertices{};  ///< global indices on the surface side
  Vec3 weights = Vec3::Zero();
  Vec3 point = Vec3::Zero();     ///< closest obstacle point at the queried time
  Vec3 velocity = Vec3::Zero();  ///< its velocity (blend of the obstacle vertices')
};

class ObstacleProximity {
 public:
  /// `triangles`: global vertex indices of obstacle triangles (kinematic vertices).
  /// `reach`: the usual query reach; the grid's cell is at least that and at least the
  /// obstacles' median edge.
  ObstacleProximity(std::vector<std::array<Index, 3>> triangles, double reach);

  /// Feature pairs of `surface` (positions at time t) and the obstacles within `reach`.
  void find(const VertexState& s, double t, const OwnedTriangles& surface, double reach,
            std::vector<ObstacleContact>& out);
  /// Largest speed of an obstacle vertex at the last rebuild (m/s).
  double max_speed() const { return max_speed_; }

 private:
  void rebuild(const VertexState& s, double t);
  std::uint64_t key(const Eigen::Vector3i& c) const;
  Eigen::Vector3i cell_of(const Vec3& p) const;
  /// The obstacle triangles binned in cells overlapping [lo, hi], sorted, unique.
  void candidates(const Vec3& lo, const Vec3& hi);
  void pair_features(const VertexState& s, const std::array<Index, 3>& surface,
                     std::uint8_t surface_owns, const StencilPositions<3>& x, std::uint32_t obstacle,
                     double reach, std::vector<ObstacleContact>& out) const;

  /// Which obstacle edges and vertices are flat at the rebuild's positions.
  void mark_flat();

  OwnedTriangles obstacles_;
  /// Adjacency, fixed at construction: per triangle corner k, its edge k (corner k to
  /// k + 1) and its vertex, as indices into edge_triangles_ and the vertex fan.
  std::vector<std::array<std::uint32_t, 3>> edge_of_, vertex_of_;
  /// Per edge, its triangles: the first two and how many (a boundary edge has one,
  /// a non-manifold edge more than two).
  struct EdgeTriangles {
    std::array<std::uint32_t, 2> triangle{};
    std::uint32_t count = 0;
  };
  std::vector<EdgeTriangles> edge_triangles_;
  /// Per vertex, its incident triangles: fan_[fan_start_[v] .. fan_start_[v + 1]).
  std::vector<std::uint32_t> fan_start_, fan_;
  std::vector<Vec3> normals_;            ///< unit normal per triangle at built_at_ (NaN if degenerate)
  std::vector<std::uint8_t> edge_flat_, vertex_flat_;
  /// Per triangle, which of its vertices (bits 0–2) and edges (bits 3–5) are flat.
  std::vector<std::uint8_t> flat_;
  double cell_ = 0.0;
  double built_at_ = 0.0;
  bool built_ = false;
  double max_speed_ = 0.0;
  std::vector<Vec3> corners_;                                  ///< 3 per triangle, at built_at_
  std::vector<std::pair<std::uint64_t, std::uint32_t>> bins_;  ///< (cell key, triangle), sorted
  std::vector<std::uint32_t> candidates_;
  /// Triangles spanning more than kLargeCells cells, with their bounding boxes.
  static constexpr double kLargeCells = 512.0;
  struct LargeTriangle {
    Vec3 lo, hi;
    std::uint32_t index;
  };
  std::vector<LargeTriangle> large_;
};

}  // namespace clockwork
