#pragma once
/// Stencil states the energy tests share (test_energies, test_tet_fem,
/// test_penalty_potential, test_energy_derivatives): rest shapes of a triangle, a hinge
/// and a tet at a size, random rotations, and contact pairs in every closest-feature
/// region.
#include <Eigen/Geometry>
#include <cmath>
#include <random>
#include <vector>

#include "contact/distance/distance.hpp"
#include "engine/types.hpp"

namespace clockwork::test {

inline StencilPositions<3> rest_triangle(double s) {
  StencilPositions<3> x;
  x << 0, s, 0.3 * s, 0, 0.1 * s, 0.9 * s, 0, 0, 0.05 * s;
  return x;
}

/// Edge along x; x2 in the half-plane y > 0, x3 folded by `fold` about the edge.
inline StencilPositions<4> rest_hinge(double s, double fold) {
  StencilPositions<4> x;
  x.col(0) = Vec3(0, 0, 0);
  x.col(1) = Vec3(s, 0, 0);
  x.col(2) = Vec3(0.4 * s, 0.8 * s, 0);
  x.col(3) = Vec3(0.6 * s, -0.9 * s * std::cos(fold), 0.9 * s * std::sin(fold));
  return x;
}

/// A positively oriented, irregular tet.
inline StencilPositions<4> rest_tet(double s) {
  StencilPositions<4> x;
  x.col(0) = Vec3(0.1, -0.2, 0.05) * s;
  x.col(1) = Vec3(1.1, 0.1, -0.1) * s;
  x.col(2) = Vec3(0.2, 0.9, 0.1) * s;
  x.col(3) = Vec3(0.3, 0.2, 1.2) * s;
  return x;
}

inline Mat3 random_rotation(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n;
  return Eigen::Quaterniond(n(rng), n(rng), n(rng), n(rng)).normalized().toRotationMatrix();
}

/// A contact pair whose closest points lie in one closest-feature region, all within
/// 0.2 of each other (inside a layer of thickness 0.5 · 2^(−1/4)).
struct PairState {
  const char* region;
  PairType type;
  StencilPositions<4> x;
};

inline std::vector<PairState> pair_states() {
  std::vector<PairState> states;
  StencilPositions<4> triangle;  // vertex–triangle: the vertex over a face, an edge, a vertex
  triangle.col(1) = Vec3(0, 0, 0);
  triangle.col(2) = Vec3(0.4, 0.05, 0.02);
  triangle.col(3) = Vec3(0.1, 0.45, -0.03);
  const Vec3 vertices[] = {Vec3(0.15, 0.1, 0.2), Vec3(0.35, 0.3, 0.1), Vec3(-0.1, -0.12, 0.05)};
  const char* regions[] = {"face", "edge", "vertex"};
  for (int r = 0; r < 3; ++r) {
    states.push_back({regions[r], PairType::VertexTriangle, triangle});
    states.back().x.col(0) = vertices[r];
  }
  StencilPositions<4> x;  // edge–edge: both parameters inside, one or both clamped
  x << 0, 0.5, 0.25, 0.3, 0, 0.05, -0.3, 0.3, 0, 0.02, 0.15, 0.1;
  states.push_back({"interior", PairType::EdgeEdge, x});
  x << 0, 0.5, 0.7, 0.75, 0, 0.05, -0.3, 0.3, 0, 0.02, 0.15, 0.1;
  states.push_back({"one parameter clamped", PairType::EdgeEdge, x});
  x << 0, 0.5, 0.7, 1.0, 0, 0.05, 0.15, 0.3, 0, 0.02, 0.15, 0.1;
  states.push_back({"both clamped", PairType::EdgeEdge, x});
  return states;
}

}  // namespace clockwork::test
