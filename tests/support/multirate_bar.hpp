#pragma once
/// The multi-rate tests' bar (tests/integrators/test_multirate*.cpp): a 6 × 2 × 2-cell
/// tet cantilever in a random deformed and moving state, the vertex sets and measures
/// the cases use, and eq. 21–22's advance over a large step.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include "integrators/zhao/multirate_solver.hpp"
#include "io/mesh/tet_mesh.hpp"

namespace clockwork::test {

struct Bar {
  TetMesh mesh;
  std::shared_ptr<TetFemModel> model;
  std::vector<bool> fixed;
  Eigen::VectorXd x0, v0, f_ext;
};

/// A 6 × 2 × 2-cell cantilever (0.3 × 0.1 × 0.1 m), clamped at x = 0, in a random
/// deformed and moving state; per-tet Young's modulus varies along the bar.
inline Bar make_bar(FemKind kind, unsigned seed = 1) {
  Bar b;
  b.mesh = make_tet_bar(Vec3::Zero(), 6, 2, 2, 0.05);
  std::vector<TetMaterial> mat(b.mesh.tets.size());
  for (std::size_t t = 0; t < mat.size(); ++t) {
    const double xc =
        0.25 * (b.mesh.vertices[b.mesh.tets[t][0]].x() + b.mesh.vertices[b.mesh.tets[t][1]].x() +
                b.mesh.vertices[b.mesh.tets[t][2]].x() + b.mesh.vertices[b.mesh.tets[t][3]].x());
    mat[t] = {xc > 0.2 ? 2e7 : 1e6, 0.3, xc > 0.2 ? 500.0 : 1000.0};
  }
  b.model = std::make_shared<TetFemModel>(b.mesh.vertices, b.mesh.tets, mat, kind);
  const std::size_t n = b.mesh.vertices.size();
  b.fixed.assign(n, false);
  std::srand(seed);
  b.x0.resize(3 * n);
  b.v0.resize(3 * n);
  b.f_ext.resize(3 * n);
  for (std::size_t a = 0; a < n; ++a) {
    const Vec3& X = b.mesh.vertices[a];
    b.fixed[a] = X.x() < 1e-9;
    b.x0.segment<3>(3 * a) = X + (b.fixed[a] ? Vec3::Zero() : Vec3(0.004 * Vec3::Random()));
    b.v0.segment<3>(3 * a) = b.fixed[a] ? Vec3::Zero() : Vec3(0.3 * Vec3::Random());
    b.f_ext.segment<3>(3 * a) = b.model->lumped_mass()[a] * Vec3(0, 0, -9.81);
  }
  return b;
}

/// Vertices with X.x above `x_min` (the bar's free end), not fixed.
inline std::vector<Index> end_vertices(const Bar& b, double x_min) {
  std::vector<Index> out;
  for (Index a = 0; a < b.mesh.vertices.size(); ++a)
    if (b.mesh.vertices[a].x() > x_min) out.push_back(a);
  return out;
}

inline double relative(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return (a - b).norm() / std::max(b.norm(), 1e-300);
}

/// Velocity after the large step for every vertex: v0 + Δv^L + Δv^S_{0,m}.
inline Eigen::VectorXd end_velocity(const Bar& b, const MultirateStep& s) {
  Eigen::VectorXd v = b.v0 + s.dv_L;
  for (const auto& region : s.dv_S) v += region.back();
  return v;
}

/// make_bar's corotational bar squeezed to `squeeze` of its length along x (the clamp
/// stays): every element compressed, its tangent indefinite (rotation modes 2μ +
/// 2c/(σ_i + σ_j) < 0), so K(x_n) and its projection K̂(x_n) differ.
inline Bar compressed_bar(double squeeze, unsigned seed) {
  Bar b = make_bar(FemKind::Corotational, seed);
  for (Index a = 0; a < b.mesh.vertices.size(); ++a)
    b.x0[3 * a] = b.mesh.vertices[a].x() * squeeze + (b.fixed[a] ? 0.0 : 1e-3 * b.x0[3 * a + 1]);
  return b;
}

/// Eq. 21–22 after a large step: L moves with v_m over h_L, each region with its
/// substep velocities; v becomes the end velocity.
inline void advance(const MultirateSolver& solver, const MultirateStep& step, Eigen::VectorXd& x,
                    Eigen::VectorXd& v) {
  Eigen::VectorXd x1 = x + solver.settings().h_L * (v + step.dv_L);
  for (std::size_t i = 0; i < solver.regions().size(); ++i) {
    const double hS = solver.settings().h_L / solver.regions()[i].m;
    for (Index a : solver.regions()[i].vertices) {
      Vec3 u = x.segment<3>(3 * a);
      for (const auto& dv : step.dv_S[i]) u += hS * (v + dv).segment<3>(3 * a);
      x1.segment<3>(3 * a) = u;
    }
  }
  v += step.dv_L;
  for (const auto& region : step.dv_S) v += region.back();
  x = x1;
}

inline constexpr MultirateCoupling kCouplings[] = {MultirateCoupling::Paper,
                                                   MultirateCoupling::Conservative};
inline constexpr MultirateDamping kDampings[] = {MultirateDamping::Projected,
                                                 MultirateDamping::Tangent};

}  // namespace clockwork::test
