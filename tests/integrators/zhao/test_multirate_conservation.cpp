// Zhao et al.'s multi-rate backward Euler (integrators/zhao/multirate_solver.hpp): linear
// momentum over a large step and with impulses inside it, and the energy of the
// conservative coupling against the paper's.
#include <doctest/doctest.h>

#include <algorithm>

#include "integrators/zhao/multirate_solver.hpp"
#include "tests/support/multirate_bar.hpp"

namespace clockwork {

using namespace test;

TEST_CASE("multirate: linear momentum over one large step (nothing pinned, α = 0)") {
  // Backward Euler conserves Σ m v exactly (K 1 = 0), and so does m = 1. For m > 1 the
  // paper's coupling does not: L takes S's forces at the end of the large step (eq. 19)
  // while S takes L's interpolated ones at every substep (eq. 14, 26), so the two sides'
  // impulses differ by h_S Σ_r 1ᵀ (f^L(u_m) − f^L(u_r)). A property of the published
  // scheme, kept here so that a change to it is noticed (docs/zhao.md "Coupling"). The
  // conservative coupling integrates every tet of S and the interface at h_S on all of
  // its vertices, so each tet's forces cancel at every substep.
  for (FemKind kind : {FemKind::Linear, FemKind::Corotational})
  for (MultirateCoupling coupling : kCouplings) {
    CAPTURE(int(kind));
    CAPTURE(int(coupling));
    Bar b = make_bar(kind, 4);
    b.fixed.assign(b.fixed.size(), false);
    b.f_ext.setZero();
    const auto momentum = [&](const Eigen::VectorXd& v) {
      Vec3 p = Vec3::Zero();
      for (std::size_t a = 0; a < b.mesh.vertices.size(); ++a)
        p += b.model->lumped_mass()[a] * v.segment<3>(3 * a);
      return p;
    };
    double scale = 0.0;  // Σ m |v|: the size of the momenta that cancel
    for (std::size_t a = 0; a < b.mesh.vertices.size(); ++a)
      scale += b.model->lumped_mass()[a] * b.v0.segment<3>(3 * a).norm();
    for (const int m : {1, 4}) {
      CAPTURE(m);
      MultirateSettings s;
      s.h_L = 0.01;
      s.rayleigh_beta = 1e-4;
      s.coupling = coupling;
      MultirateSolver solver(*b.model, {{"end", end_vertices(b, 0.2), m}}, b.fixed, s);
      MultirateStep step;
      solver.step(b.x0, b.v0, b.f_ext, step);
      const double drift = (momentum(end_velocity(b, step)) - momentum(b.v0)).norm() / scale;
      if (m == 1 || coupling == MultirateCoupling::Conservative) CHECK(drift < 1e-12);
      else CHECK(drift > 1e-3);
    }
  }
}

TEST_CASE("multirate: impulses inside a large step keep momentum, S and its neighbours answering") {
  // The kernel's path after a contact impulse lands in S and on an L neighbour after
  // substep 1: the remaining substeps take the plan's increments plus the region tets'
  // response to the state's difference from the plan, solved on S and its L neighbours
  // (substep_change()). Σ m v at the end of the large step is then the start's plus the
  // impulses. Answering on S alone (substep() from the state) loses momentum; adding
  // L's rows of the same forces as explicit kicks keeps it but blows up here
  // (h_S² K / m ~ 300 at the stiff end: ×100 per substep, measured) — so the
  // neighbours are implicit too, and their velocities stay bounded.
  for (FemKind kind : {FemKind::Linear, FemKind::Corotational}) {
    CAPTURE(int(kind));
    Bar b = make_bar(kind, 6);
    b.fixed.assign(b.fixed.size(), false);
    b.f_ext.setZero();
    const std::size_t n = b.mesh.vertices.size();
    const auto momentum = [&](const Eigen::VectorXd& v) {
      Vec3 p = Vec3::Zero();
      for (std::size_t a = 0; a < n; ++a) p += b.model->lumped_mass()[a] * v.segment<3>(3 * a);
      return p;
    };
    double scale = 0.0;
    for (std::size_t a = 0; a < n; ++a)
      scale += b.model->lumped_mass()[a] * b.v0.segment<3>(3 * a).norm();
    MultirateSettings s;
    s.h_L = 0.01;
    s.rayleigh_beta = 1e-4;
    const int m = 4;
    const double hS = s.h_L / m;
    MultirateSolver solver(*b.model, {{"end", end_vertices(b, 0.2), m}}, b.fixed, s);
    const std::vector<Index>& S = solver.regions()[0].vertices;
    const std::vector<Index>& N = solver.region_interface(0);
    REQUIRE(!N.empty());
    const Index hit_S = S.front(), hit_L = N.front();
    const Vec3 J_S(0.02, -0.01, 0.03), J_L(-0.01, 0.02, 0.01);  // kg m/s
    for (const bool neighbours : {true, false}) {
      CAPTURE(neighbours);
      MultirateStep step;
      solver.step(b.x0, b.v0, b.f_ext, step);
      const Eigen::VectorXd v_plan_L = b.v0 + step.dv_L;
      Eigen::VectorXd x = b.x0, x_plan = b.x0, v = v_plan_L + step.dv_S[0][0];
      Eigen::VectorXd dv = Eigen::VectorXd::Zero(3 * n);
      double fastest = 0.0;
      for (int r = 1; r < m; ++r) {
        x += hS * v;
        x_plan += hS * (v_plan_L + step.dv_S[0][r - 1]);
        if (r == 1) {
          v.segment<3>(3 * hit_S) += J_S / b.model->lumped_mass()[hit_S];
          v.segment<3>(3 * hit_L) += J_L / b.model->lumped_mass()[hit_L];
        }
        if (neighbours) {
          CHECK(solver.substep_change(0, x - x_plan, v - (v_plan_L + step.dv_S[0][r - 1]), dv));
          for (Index a : S)
            v.segment<3>(3 * a) += (dv + step.dv_S[0][r] - step.dv_S[0][r - 1]).segment<3>(3 * a);
          for (Index a : N) v.segment<3>(3 * a) += dv.segment<3>(3 * a);
        } else {
          solver.substep(0, x, v, b.f_ext, dv);
          for (Index a : S) v.segment<3>(3 * a) += dv.segment<3>(3 * a);
        }
        for (std::size_t a = 0; a < n; ++a) fastest = std::max(fastest, v.segment<3>(3 * a).norm());
      }
      const double drift = (momentum(v) - momentum(b.v0) - J_S - J_L).norm() / scale;
      MESSAGE("drift " << drift << ", fastest vertex " << fastest << " m/s");
      if (neighbours) {
        CHECK(drift < 1e-12);  // the plan's own: 2.8e-13 without the impulses
        CHECK(fastest < 5.0);  // the impulses' own velocity change is ~1–2 m/s here
      } else {
        CHECK(drift > 1e-3);
      }
    }
  }
}

TEST_CASE("multirate: energy never grows under the conservative coupling (linear FEM, no damping)") {
  // E = ½ vᵀ M v + ½ uᵀ K u after every large step from a random state, nothing external.
  // The conservative coupling's step is a contraction in this norm (measured on spring
  // chains over h_L, m and stiffness ratios; docs/zhao.md "Coupling"); the paper's is not: its
  // per-step energy ratio exceeds 1 here.
  Bar b = make_bar(FemKind::Linear, 5);
  b.f_ext.setZero();
  const std::size_t n = b.mesh.vertices.size();
  const auto& mass = b.model->lumped_mass();
  const auto energy = [&](const Eigen::VectorXd& x, const Eigen::VectorXd& v) {
    double e = b.model->value(x);
    for (std::size_t a = 0; a < n; ++a) e += 0.5 * mass[a] * v.segment<3>(3 * a).squaredNorm();
    return e;
  };
  for (MultirateCoupling coupling : kCouplings) {
    CAPTURE(int(coupling));
    MultirateSettings s;
    s.h_L = 0.005;
    s.coupling = coupling;
    const int m = 10;
    MultirateSolver solver(*b.model, {{"end", end_vertices(b, 0.2), m}}, b.fixed, s);
    Eigen::VectorXd x = b.x0, v = b.v0;
    double worst = 0.0, e = energy(x, v);
    const double e0 = e;
    MultirateStep step;
    for (int k = 0; k < 100; ++k) {
      solver.step(x, v, b.f_ext, step);
      // Eq. 21–22: L moves with v_m over h_L, S with its substep velocities.
      Eigen::VectorXd x1 = x + s.h_L * (v + step.dv_L);
      const double hS = s.h_L / m;
      for (Index a : solver.regions()[0].vertices) {
        Vec3 u = x.segment<3>(3 * a);
        for (int r = 0; r < m; ++r) u += hS * (v + step.dv_S[0][r]).segment<3>(3 * a);
        x1.segment<3>(3 * a) = u;
      }
      v = end_velocity(Bar{b.mesh, b.model, b.fixed, x, v, b.f_ext}, step);
      x = x1;
      const double e1 = energy(x, v);
      worst = std::max(worst, e1 / e);
      e = e1;
    }
    MESSAGE("coupling ", int(coupling), ": largest per-step energy ratio ", worst,
            ", E_100 / E_0 ", e / e0);
    if (coupling == MultirateCoupling::Conservative) CHECK(worst <= 1.0 + 1e-12);
    else CHECK(worst > 1.0);
  }
}

}  // namespace clockwork
