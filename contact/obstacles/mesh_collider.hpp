#pragma once
/// A static triangle mesh as a body of Schroeder et al.'s §6 collision response
/// (integrators/schroeder/schroeder_scheme.hpp): the closest surface point of a query
/// point, its signed distance and the outward normal there, for any static obstacle
/// mesh without an exact analytic surface (an OBJ, a "grid", a "cylinder", a Python
/// `add_obstacle`; docs/schroeder.md "Obstacles in the solve"). StaticCollider::mesh
/// wraps it behind the interface the scheme queries.
///
/// Sign. A *closed* mesh (every edge shared by exactly two triangles that traverse it
/// in opposite directions) is signed by the angle-weighted pseudo-normal of the
/// closest feature (Bærentzen & Aanæs, "Signed distance computation using the angle
/// weighted pseudonormal", IEEE TVCG 11(3), 2005, Theorem 1): x is outside iff
/// (x − p)·n_f ≥ 0, where p is the closest point and n_f the face normal (p inside a
/// face), the sum of the two face normals (p on an edge) or Σ_i α_i n_i over the
/// incident faces with their angles α_i at the vertex (p a vertex). A closed mesh
/// whose triangles face inward (negative enclosed volume) is turned outward.
///
/// An *open* mesh (a "grid" sheet, a bare cylinder tube, a ground square from an OBJ)
/// has no inside. It is taken as one-sided along its triangle normals: a point behind
/// it, no deeper than `band`, and over the sheet (its closest point not on a boundary
/// edge or boundary vertex) is inside, and pushed back to the front; every other point
/// is outside at its unsigned distance. The band stands for the thickness the sheet
/// bounds: a particle that crosses more than `band` in one step, or starts behind the
/// sheet deeper than that, is not caught. World gives an obstacle sheet half its
/// largest bounding-box extent (as StaticCollider::ground's box is half_size deep).
///
/// Queries descend a bounding-box tree over the triangles (median split on the longest
/// axis), nearest child first, pruning boxes farther than the best distance found:
/// O(log n) for the usual query and no allocation (a fixed stack).
#include <array>
#include <vector>

#include "contact/obstacles/static_collider.hpp"

namespace clockwork {

class MeshCollider {
 public:
  /// Throws std::invalid_argument naming the problem: no triangle, a vertex index out
  /// of range, a non-finite coordinate, every triangle degenerate, band ≤ 0 for an open
  /// mesh. Zero-area triangles are left out (their edges belong to their neighbours).
  /// `band` ≤ 0: half the largest extent of the mesh's bounding box.
  MeshCollider(std::vector<Vec3> vertices, const std::vector<std::array<Index, 3>>& triangles,
               double band = 0.0);

  /// Signed distance (negative inside), outward unit normal and closest surface point
  /// (x − distance · normal).
  StaticCollider::Closest closest(const Vec3& x) const;
  /// The same answer by a scan of every triangle (tests).
  StaticCollider::Closest closest_brute_force(const Vec3& x) const;

  bool closed() const { return closed_; }
  double band() const { return band_; }
  std::size_t triangle_count() const { return tris_.size(); }

 private:
  /// Which part of a triangle holds the closest point: a corner k, the edge from
  /// corner k to k + 1, or the face.
  enum class Feature : unsigned char { Vertex, Edge, Face };
  struct Hit {
    double d2 = kNever;
    Vec3 point = Vec3::Zero();
    std::uint32_t triangle = 0;
    Feature feature = Feature::Face;
    int k = 0;
  };
  struct Tri {
    std::array<Index, 3> v{};
    Vec3 normal = Vec3::UnitZ();       ///< unit face normal
    std::array<Vec3, 3> edge_normal;  ///< edge k's pseudo-normal (n_f + n_g; n_f on a boundary)
    std::array<bool, 3> boundary_edge{};
  };
  struct Node {
    Vec3 lo, hi;
    std::uint32_t first = 0, count = 0;  ///< a leaf: order_[first, first + count)
    std::uint32_t left = 0, right = 0;   ///< an inner node (count == 0): children
  };

  void triangle_closest(std::uint32_t t, const Vec3& x, Hit& best) const;
  StaticCollider::Closest answer(const Vec3& x, const Hit& h) const;
  std::uint32_t build(std::uint32_t first, std::uint32_t count, int depth);
  static double box_distance2(const Node& n, const Vec3& x);

  std::vector<Vec3> x_;
  std::vector<Tri> tris_;
  std::vector<Vec3> vertex_normal_;      ///< angle-weighted pseudo-normals
  std::vector<bool> boundary_vertex_;
  std::vector<std::uint32_t> order_;     ///< triangles in leaf order
  std::vector<Node> nodes_;
  bool closed_ = false;
  double band_ = 0.0;
  double tiny_ = 0.0;  ///< below this distance the normal is the feature's pseudo-normal
};

}  // namespace clockwork
