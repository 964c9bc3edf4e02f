// Zhao et al.'s multi-rate backward Euler (integrators/zhao/multirate_solver.hpp): the
// Schur-complement path against the assembled eq. 23, the reductions to synchronous
// backward Euler the paper's construction implies, the fine events' substep against the
// plan, the accuracy at equal cost, and bad regions. Momentum and energy:
// test_multirate_conservation.cpp; the damping forms: test_multirate_damping.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "integrators/implicit/backward_euler.hpp"
#include "integrators/zhao/multirate_solver.hpp"
#include "tests/support/multirate_bar.hpp"

namespace clockwork {

using namespace test;

TEST_CASE("multirate: the Schur path equals a direct sparse LU solve of eq. 23") {
  for (FemKind kind : {FemKind::Linear, FemKind::Corotational})
  for (MultirateCoupling coupling : kCouplings) {
    CAPTURE(int(kind));
    CAPTURE(int(coupling));
    const Bar b = make_bar(kind);
    // Two regions with different ratios, separated by L: the free end and a middle slab.
    std::vector<Index> mid;
    for (Index a = 0; a < b.mesh.vertices.size(); ++a)
      if (std::abs(b.mesh.vertices[a].x() - 0.1) < 1e-9) mid.push_back(a);
    MultirateSettings s;
    s.h_L = 0.01;
    s.rayleigh_alpha = 0.2;
    s.rayleigh_beta = 1e-4;
    s.coupling = coupling;
    MultirateSolver solver(*b.model, {{"end", end_vertices(b, 0.2), 5}, {"mid", mid, 3}}, b.fixed, s);
    MultirateStep schur, direct;
    solver.step(b.x0, b.v0, b.f_ext, schur);
    CHECK(solver.interface_dofs() > 0);
    solver.step_direct(b.x0, b.v0, b.f_ext, direct);
    CHECK(relative(schur.dv_L, direct.dv_L) < 1e-10);
    for (std::size_t i = 0; i < 2; ++i)
      for (std::size_t r = 0; r < schur.dv_S[i].size(); ++r) {
        CAPTURE(i);
        CAPTURE(r);
        CHECK(relative(schur.dv_S[i][r], direct.dv_S[i][r]) < 1e-10);
      }
    // The symmetric-solver option for H^LL* (the paper's Figure 2) is exact here: with
    // lumped masses and Rayleigh damping every block of H^SS is a function of M⁻¹K^SS
    // times M, so every block of (H^SS)⁻¹ is symmetric, and H^LS, H^SL are multiples of
    // K^LS = (K^SL)ᵀ: H^LS (H^SS)⁻¹ H^SL = K^LS (Σ_qr e_q c_r T_qr) K^SL is symmetric.
    s.symmetric_schur = true;
    MultirateSolver sym(*b.model, {{"end", end_vertices(b, 0.2), 5}, {"mid", mid, 3}}, b.fixed, s);
    MultirateStep approx;
    sym.step(b.x0, b.v0, b.f_ext, approx);
    CHECK(relative(end_velocity(b, approx), end_velocity(b, schur)) < 1e-10);
    s.block_cholesky = false;  // Eigen's LDLᵀ instead of the vertex-block Cholesky
    MultirateSolver ldlt(*b.model, {{"end", end_vertices(b, 0.2), 5}, {"mid", mid, 3}}, b.fixed, s);
    ldlt.step(b.x0, b.v0, b.f_ext, approx);
    CHECK(relative(end_velocity(b, approx), end_velocity(b, schur)) < 1e-10);
  }
}

TEST_CASE("multirate: m = 1 reproduces synchronous backward Euler") {
  for (FemKind kind : {FemKind::Linear, FemKind::Corotational})
  for (MultirateCoupling coupling : kCouplings) {
    CAPTURE(int(kind));
    CAPTURE(int(coupling));
    const Bar b = make_bar(kind, 2);
    MultirateSettings s;
    s.coupling = coupling;
    s.h_L = 0.004;
    s.rayleigh_alpha = 0.5;
    s.rayleigh_beta = 2e-4;
    MultirateSolver solver(*b.model, {{"end", end_vertices(b, 0.15), 1}}, b.fixed, s);
    MultirateStep step;
    solver.step(b.x0, b.v0, b.f_ext, step);
    // Backward Euler's linearised step (Zhao eq. 5): for linear FEM the exact
    // minimiser; for corotational FEM one Newton step with the PSD-projected tangent,
    // the linearisation the multi-rate scheme uses.
    BackwardEulerSettings be;
    be.max_newton = 1;
    be.rayleigh_alpha = s.rayleigh_alpha;
    be.rayleigh_beta = s.rayleigh_beta;
    be.fix = DefinitenessFix::LocalClamp;
    BackwardEuler euler(*b.model, be);
    Eigen::VectorXd x = b.x0, v = b.v0;
    euler.step(s.h_L, x, v, b.f_ext, b.fixed);
    CHECK(relative(end_velocity(b, step), v) < 1e-10);
  }
}

TEST_CASE("multirate: S = the whole mesh reproduces backward Euler at h_S") {
  for (MultirateCoupling coupling : kCouplings) {
  CAPTURE(int(coupling));
  const Bar b = make_bar(FemKind::Linear, 3);
  const int m = 4;
  MultirateSettings s;
  s.coupling = coupling;
  s.h_L = 0.008;
  s.rayleigh_beta = 1e-4;
  std::vector<Index> all(b.mesh.vertices.size());
  for (Index a = 0; a < all.size(); ++a) all[a] = a;  // fixed ones are dropped
  MultirateSolver solver(*b.model, {{"all", all, m}}, b.fixed, s);
  CHECK(solver.large_vertices().empty());
  MultirateStep step;
  solver.step(b.x0, b.v0, b.f_ext, step);
  BackwardEulerSettings be;
  be.rayleigh_beta = s.rayleigh_beta;
  BackwardEuler euler(*b.model, be);
  Eigen::VectorXd x = b.x0, v = b.v0;
  for (int r = 0; r < m; ++r) {
    euler.step(s.h_L / m, x, v, b.f_ext, b.fixed);
    CAPTURE(r);
    CHECK(relative(b.v0 + step.dv_S[0][r], v) < 1e-10);
  }
  }
}

TEST_CASE("multirate: a substep solved from the drifted state equals the planned increment") {
  // The fine events re-solve a region's substeps from the kernel's state after an
  // outside velocity change (contact); with no such change that must be the plan.
  for (FemKind kind : {FemKind::Linear, FemKind::Corotational}) {
    CAPTURE(int(kind));
    const Bar b = make_bar(kind, 5);
    MultirateSettings s;
    s.h_L = 0.01;
    s.rayleigh_alpha = 0.5;
    s.rayleigh_beta = 1e-4;
    const int m = 5;
    MultirateSolver solver(*b.model, {{"end", end_vertices(b, 0.2), m}}, b.fixed, s);
    MultirateStep step;
    solver.step(b.x0, b.v0, b.f_ext, step);
    const double hS = s.h_L / m;
    const std::vector<Index>& S = solver.regions()[0].vertices;
    Eigen::VectorXd x = b.x0, dv = Eigen::VectorXd::Zero(b.x0.size());
    double worst = 0.0, size = 0.0;
    for (int r = 1; r < m; ++r) {
      // The kernel's state at t_n + r h_S: L on v^L_m, S on its substep velocities.
      const Eigen::VectorXd v = b.v0 + step.dv_L + step.dv_S[0][r - 1];
      x += hS * v;
      solver.substep(0, x, v, b.f_ext, dv);
      for (Index a : S) {
        const Vec3 planned = (step.dv_S[0][r] - step.dv_S[0][r - 1]).segment<3>(3 * a);
        worst = std::max(worst, (dv.segment<3>(3 * a) - planned).norm());
        size = std::max(size, planned.norm());
      }
    }
    CHECK(size > 1e-4);
    CHECK(worst < 1e-10 * size);
  }
}

TEST_CASE("multirate: at equal cost the multi-rate run beats single-rate h_L on a fast tip") {
  // The paper's Figure 4 claim on a small case: a bar whose last two cell layers are
  // 100x lighter (their own mode is fast, and it lives inside S), pulled at the tip
  // with the rest held, released. The probe (a tip vertex) over 0.3 s against single-
  // rate h_S: the multi-rate run (h_L, m = 10) must be much closer than single-rate
  // h_L, which costs about as much (measured: 0.0082 against 0.092; the paper's
  // coupling 0.0082 too — the light tip carries too little momentum to tell them apart).
  Bar b = make_bar(FemKind::Linear, 6);
  std::vector<TetMaterial> mat(b.mesh.tets.size());
  for (std::size_t t = 0; t < mat.size(); ++t) {
    double xc = 0.0;
    for (Index a : b.mesh.tets[t]) xc += 0.25 * b.mesh.vertices[a].x();
    mat[t] = {1e6, 0.3, xc > 0.2 ? 10.0 : 1000.0};
  }
  b.model = std::make_shared<TetFemModel>(b.mesh.vertices, b.mesh.tets, mat, FemKind::Linear);
  const std::size_t n = b.mesh.vertices.size();
  const std::vector<Index> tip = end_vertices(b, 0.2);
  // The pull: K^SS u^S = f^S (a downward force on the tip region), the rest held.
  Eigen::SparseMatrix<double> K;
  b.model->hessian(b.model->rest_positions(), K);
  std::vector<Eigen::Triplet<double>> sel;
  for (std::size_t i = 0; i < tip.size(); ++i)
    for (int c = 0; c < 3; ++c) sel.emplace_back(3 * i + c, 3 * tip[i] + c, 1.0);
  Eigen::SparseMatrix<double> P(3 * tip.size(), 3 * n);
  P.setFromTriplets(sel.begin(), sel.end());
  Eigen::VectorXd f = Eigen::VectorXd::Zero(3 * n);
  for (Index a : tip) f[3 * a + 2] = -1.0;
  const Eigen::SparseMatrix<double> K_SS = P * K * P.transpose();
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> K_SS_f(K_SS);
  const Eigen::VectorXd x0 = b.model->rest_positions() + P.transpose() * K_SS_f.solve(P * f);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(3 * n);
  const Index probe = tip.back();
  const double h_L = 0.01, T = 0.3;
  const int m = 10;
  // Probe z displacement every h_S (positions linear between velocity updates).
  const auto run = [&](double h, int regions_m, MultirateCoupling coupling) {
    MultirateSettings s;
    s.h_L = h;
    s.rayleigh_beta = 1e-4;
    s.coupling = coupling;
    std::vector<MultirateRegion> regions;
    if (regions_m > 1) regions.push_back({"tip", tip, regions_m});
    MultirateSolver solver(*b.model, regions, b.fixed, s);
    const int per_step = static_cast<int>(std::lround(h / (h_L / m)));
    std::vector<double> z{x0[3 * probe + 2]};
    Eigen::VectorXd x = x0, v = zero;
    MultirateStep st;
    for (int k = 0; k * h < T - 1e-12; ++k) {
      solver.step(x, v, zero, st);
      const Eigen::VectorXd v1 = end_velocity(Bar{b.mesh, b.model, b.fixed, x, v, zero}, st);
      Eigen::VectorXd x1 = x + h * v1;
      if (regions_m > 1)
        for (Index a : tip) {
          Vec3 u = x.segment<3>(3 * a);
          for (int r = 0; r < regions_m; ++r) {
            u += (h / regions_m) * (v + st.dv_S[0][r]).segment<3>(3 * a);
            if (a == probe) z.push_back(u.z());
          }
          x1.segment<3>(3 * a) = u;
        }
      else
        for (int j = 1; j <= per_step; ++j)
          z.push_back(x[3 * probe + 2] + j * (h / per_step) * v1[3 * probe + 2]);
      x = x1;
      v = v1;
    }
    return z;
  };
  const std::vector<double> ref = run(h_L / m, 1, MultirateCoupling::Conservative);
  const auto error = [&](const std::vector<double>& z) {
    REQUIRE(z.size() == ref.size());
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < z.size(); ++i) {
      num += (z[i] - ref[i]) * (z[i] - ref[i]);
      den += (ref[i] - x0[3 * probe + 2]) * (ref[i] - x0[3 * probe + 2]);
    }
    return std::sqrt(num / den);
  };
  const double multi = error(run(h_L, m, MultirateCoupling::Conservative));
  const double single = error(run(h_L, 1, MultirateCoupling::Conservative));
  MESSAGE("probe error against single-rate h_S: multi-rate ", multi, ", single-rate h_L ",
          single);
  CHECK(multi < 0.25 * single);
}

TEST_CASE("multirate: bad regions are named") {
  const Bar b = make_bar(FemKind::Linear);
  MultirateSettings s;
  s.h_L = 0.01;
  const auto end = end_vertices(b, 0.2);
  const auto message = [&](std::vector<MultirateRegion> regions) {
    try {
      MultirateSolver solver(*b.model, std::move(regions), b.fixed, s);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message({{"end", end, 0}}) == "region 'end': m must be a positive integer, got 0");
  CHECK(message({{"a", end, 2}, {"b", {end[0]}, 2}}) ==
        "vertex " + std::to_string(end[0]) + " is in two regions: 'a' and 'b'");
  CHECK(message({{"a", end_vertices(b, 0.2), 2}, {"b", end_vertices(b, 0.12), 2}})
            .find("is in two regions") != std::string::npos);
  // Adjacent regions share tets.
  std::vector<Index> next;
  for (Index a = 0; a < b.mesh.vertices.size(); ++a)
    if (std::abs(b.mesh.vertices[a].x() - 0.2) < 1e-9) next.push_back(a);
  CHECK(message({{"a", end, 2}, {"b", next, 3}}).find("regions 'b' and 'a' share tet 24: regions must be separated") == 0);
  CHECK(message({{"far", {100000}, 2}}).find("vertex 100000 out of range") != std::string::npos);
  std::vector<Index> clamp;
  for (Index a = 0; a < b.mesh.vertices.size(); ++a)
    if (b.fixed[a]) clamp.push_back(a);
  CHECK(message({{"clamp", clamp, 2}}) == "region 'clamp' has no free vertex");
}

}  // namespace clockwork
