// Schroeder et al.'s asynchronous fully-/semi-implicit evolution
// (integrators/schroeder_*.hpp): the §5 projection's algebra, free fall (§4.2),
// momentum of the coupled steps, the reductions to the synchronous schemes, the §6
// collision response, and the bad-input messages.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>

#include "integrators/schroeder/schroeder_projection.hpp"
#include "integrators/schroeder/schroeder_scheme.hpp"
#include "io/mesh/tet_bad_element.hpp"
#include "io/mesh/tet_mesh.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/schroeder_ball.hpp"

namespace clockwork {
namespace {

using test::Ball;
using test::kGravity;
using test::make_ball;
using test::momentum;
using test::stacked;

/// Σ m_a |v_a|: the scale a momentum error is measured against.
double momentum_scale(const TetFemModel& model, const Eigen::VectorXd& v) {
  double s = 0.0;
  for (std::size_t a = 0; a < model.vertex_count(); ++a)
    s += model.lumped_mass()[a] * v.segment<3>(3 * a).norm();
  return s;
}

std::string error_of(const SchroederSettings& s) {
  return test::what_thrown([&] { validate_schroeder_settings(s); });
}

/// The dense 3k × 3k matrix of P_ε on a subset of k particles (all particles here).
Eigen::MatrixXd dense_projection(const ForceDistribution& d, std::size_t k, double eps) {
  Eigen::MatrixXd P(3 * k, 3 * k);
  for (std::size_t j = 0; j < 3 * k; ++j) {
    Eigen::VectorXd e = Eigen::VectorXd::Unit(3 * k, static_cast<Eigen::Index>(j));
    d.apply_force(e, eps);
    P.col(static_cast<Eigen::Index>(j)) = e;
  }
  return P;
}

/// Net force and net torque about the origin of stacked forces f at stacked positions x.
std::pair<Vec3, Vec3> net(const Eigen::VectorXd& x, const Eigen::VectorXd& f) {
  Vec3 F = Vec3::Zero(), T = Vec3::Zero();
  for (Eigen::Index a = 0; a < x.size() / 3; ++a) {
    F += f.segment<3>(3 * a);
    T += Vec3(x.segment<3>(3 * a)).cross(Vec3(f.segment<3>(3 * a)));
  }
  return {F, T};
}

}  // namespace

TEST_CASE(
    "schroeder §5: the force-distributing projection at eps = 1 is a rank-6 mass-symmetric "
    "projection") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0), m(0.5, 2.0);
  const std::size_t k = 17;
  std::vector<double> mass(k);
  std::vector<Index> subset(k);
  Eigen::VectorXd x(3 * k);
  for (std::size_t a = 0; a < k; ++a) {
    mass[a] = m(rng);
    subset[a] = static_cast<Index>(a);
    x.segment<3>(3 * a) = Vec3(u(rng), u(rng), u(rng)) + Vec3(5, -3, 2);
  }
  ForceDistribution d(subset, mass);
  d.update(x);
  const Eigen::MatrixXd P = dense_projection(d, k, 1.0);
  const double scale = P.norm();
  // Rank 6: six singular values of order one, the rest round-off.
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(P);
  const Eigen::VectorXd sv = svd.singularValues();
  CAPTURE(sv.transpose());
  CHECK(sv[5] > 1e-3 * sv[0]);
  CHECK(sv[6] < 1e-12 * sv[0]);
  // Idempotent, and mass-symmetric: M⁻¹ P is symmetric.
  CHECK((P * P - P).norm() < 1e-12 * scale);
  Eigen::VectorXd inv_m(3 * k);
  for (std::size_t a = 0; a < k; ++a) inv_m.segment<3>(3 * a).setConstant(1.0 / mass[a]);
  const Eigen::MatrixXd MiP = inv_m.asDiagonal() * P;
  CHECK((MiP - MiP.transpose()).norm() < 1e-12 * MiP.norm());
  // A rigid field of accelerations (m_i (a + ω × r_i)) is left unchanged.
  Eigen::VectorXd rigid(3 * k);
  const Vec3 acc(0.3, -1.0, 2.0), omega(-0.4, 0.7, 0.1);
  for (std::size_t a = 0; a < k; ++a)
    rigid.segment<3>(3 * a) = mass[a] * (acc + omega.cross(Vec3(x.segment<3>(3 * a)) - d.center()));
  CHECK((P * rigid - rigid).norm() < 1e-12 * rigid.norm());
  // Net force and torque preserved, at every ε.
  Eigen::VectorXd f(3 * k);
  for (Eigen::Index i = 0; i < f.size(); ++i) f[i] = u(rng);
  const auto [F0, T0] = net(x, f);
  for (double eps : {1.0, 0.25, 0.5, 0.75}) {
    CAPTURE(eps);
    Eigen::VectorXd g = f;
    d.apply_force(g, eps);
    const auto [F, T] = net(x, g);
    CHECK((F - F0).norm() < 1e-12 * f.norm());
    CHECK((T - T0).norm() < 1e-12 * f.norm() * x.cwiseAbs().maxCoeff());
    if (eps < 1.0) {
      // Partial: not idempotent (the paper's remark), but P_ε = (1 − ε) I + ε P.
      const Eigen::MatrixXd Pe = dense_projection(d, k, eps);
      CHECK((Pe - ((1.0 - eps) * Eigen::MatrixXd::Identity(3 * k, 3 * k) + eps * P)).norm() <
            1e-12 * scale);
      CHECK((Pe * Pe - Pe).norm() > 0.1);
    }
  }
  // The mass-scaled form used inside CG: Π = M^{-1/2} P M^{1/2}, symmetric.
  Eigen::MatrixXd Pi(3 * k, 3 * k);
  for (std::size_t j = 0; j < 3 * k; ++j) {
    Eigen::VectorXd e = Eigen::VectorXd::Unit(3 * k, static_cast<Eigen::Index>(j));
    d.apply_scaled(e, 1.0);
    Pi.col(static_cast<Eigen::Index>(j)) = e;
  }
  const Eigen::VectorXd sq = inv_m.cwiseInverse().cwiseSqrt();
  CHECK((Pi - sq.cwiseInverse().asDiagonal() * P * sq.asDiagonal()).norm() < 1e-12 * scale);
  CHECK((Pi - Pi.transpose()).norm() < 1e-12 * Pi.norm());
}

TEST_CASE("schroeder §5: bad subsets are named") {
  const std::vector<double> mass{1.0, 0.0, 2.0};
  CHECK_THROWS_WITH_AS(ForceDistribution({0, 3}, mass),
                       "force distribution: particle 3 out of range", std::invalid_argument);
  CHECK_THROWS_WITH_AS(ForceDistribution({0, 0}, mass),
                       "force distribution: particle 0 listed twice", std::invalid_argument);
  CHECK_THROWS_WITH_AS(ForceDistribution({1}, mass),
                       "force distribution: particle 1 has mass 0.000000", std::invalid_argument);
}

TEST_CASE("schroeder §4.2: a body released at rest falls as x0 + g t²/2 with no internal force") {
  for (FemKind kind : {FemKind::Linear, FemKind::Corotational}) {
    for (SchroederScheme scheme : {SchroederScheme::SemiImplicit, SchroederScheme::FullyImplicit,
                                   SchroederScheme::Asynchronous}) {
      CAPTURE(int(kind));
      CAPTURE(int(scheme));
      const Ball b = make_ball(kind);
      SchroederSettings s;
      s.scheme = scheme;
      s.frame_dt = 1.0 / 24.0;
      s.epsilon = 0.5;
      s.rayleigh_beta = 2e-3;  // damping: every update is a CG solve
      SchroederStepper stepper(*b.model, b.materials, b.surface, {}, kGravity, s);
      const Eigen::VectorXd x0 = stacked(b.mesh.vertices);
      Eigen::VectorXd x = x0, v = Eigen::VectorXd::Zero(x.size());
      const int steps = 2 * stepper.substeps_per_frame();  // two frames
      for (int i = 0; i < steps; ++i) stepper.step(x, v);
      const double t = steps * stepper.substep();
      double err = 0.0, verr = 0.0;
      for (std::size_t a = 0; a < b.mesh.vertices.size(); ++a) {
        err = std::max(
            err,
            (Vec3(x.segment<3>(3 * a)) - (b.mesh.vertices[a] + 0.5 * t * t * kGravity)).norm());
        verr = std::max(verr, (Vec3(v.segment<3>(3 * a)) - t * kGravity).norm());
      }
      CAPTURE(stepper.substeps_per_frame());
      CAPTURE(err);
      CAPTURE(verr);
      CHECK(err < 1e-13);   // positions of order 1 m: round-off
      CHECK(verr < 1e-12);  // velocities of order 1 m/s
      CHECK(stepper.counters().solves > 0);
      CHECK(stepper.counters().max_cg_iterations <= 1);
      if (scheme == SchroederScheme::Asynchronous) {
        CHECK(stepper.substeps_per_frame() > 1);
        CHECK(stepper.counters().coupled_steps == 2);
      }
    }
  }
}

TEST_CASE("schroeder §4.3: without gravity and obstacles the steps conserve linear momentum") {
  // The random velocities deform the interior: by default every substep is coupled
  // (docs/schroeder.md, decision 12); the paper's schedule projects the forces
  // of p − 1 substeps a frame.
  for (FemKind kind : {FemKind::Linear, FemKind::Corotational}) {
    for (const bool couple : {false, true}) {
      for (double eps : {0.0, 0.5, 1.0}) {
        CAPTURE(int(kind));
        CAPTURE(couple);
        CAPTURE(eps);
        const Ball b = make_ball(kind);
        SchroederSettings s;
        s.frame_dt = 1.0 / 24.0;
        s.couple_deforming_interior = couple;
        s.epsilon = eps;
        s.rayleigh_alpha = 0.0;
        s.rayleigh_beta = 1e-3;
        s.cg_tolerance = 1e-4;  // loose on purpose: momentum must not depend on CG
        SchroederStepper stepper(*b.model, b.materials, b.surface, {}, Vec3::Zero(), s);
        std::mt19937 rng(3);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        Eigen::VectorXd x = stacked(b.mesh.vertices), v(x.size());
        for (Eigen::Index i = 0; i < x.size(); ++i) {
          x[i] += 0.004 * u(rng);  // deformed: every element pushes
          v[i] = 0.5 * u(rng) + (i % 3 == 0 ? 1.0 : 0.0);
        }
        const Vec3 p0 = momentum(*b.model, v);
        const double scale = momentum_scale(*b.model, v);
        double drift = 0.0;
        for (int i = 0; i < 2 * stepper.substeps_per_frame(); ++i) {
          stepper.step(x, v);
          drift = std::max(drift, (momentum(*b.model, v) - p0).norm());
        }
        CAPTURE(drift / scale);
        CHECK(stepper.counters().coupled_steps ==
              (couple ? 2 * static_cast<std::uint64_t>(stepper.substeps_per_frame()) : 2));
        CHECK(stepper.counters().cg_iterations > 0);
        CHECK(drift < 1e-12 * scale);
      }
    }
  }
}

TEST_CASE("schroeder: the asynchronous scheme with p = 1 and every tet implicit is §3.2") {
  for (FemKind kind : {FemKind::Linear, FemKind::Corotational}) {
    CAPTURE(int(kind));
    const Ball b = make_ball(kind);
    SchroederSettings s;
    s.frame_dt = 1.0 / 100.0;
    s.substep = s.frame_dt;
    s.rayleigh_alpha = 0.3;
    s.rayleigh_beta = 1e-3;
    s.cg_tolerance = 1e-12;
    SchroederSettings f = s;
    f.scheme = SchroederScheme::FullyImplicit;
    const std::vector<bool> none(b.mesh.tets.size(), false);
    SchroederStepper async(*b.model, b.materials, none, {}, kGravity, s);
    SchroederStepper fully(*b.model, b.materials, none, {}, kGravity, f);
    CHECK(async.alpha() == 1.0);
    Eigen::VectorXd x = stacked(b.mesh.vertices), v = Eigen::VectorXd::Zero(x.size());
    for (Eigen::Index i = 0; i < x.size(); i += 3) v[i] = 0.02 * x[i + 2];  // shear
    Eigen::VectorXd xa = x, va = v;
    for (int i = 0; i < 5; ++i) {
      async.step(xa, va);
      fully.step(x, v);
    }
    CHECK((xa - x).norm() < 1e-13 * x.norm());
    CHECK((va - v).norm() < 1e-12 * v.norm());
  }
}

TEST_CASE("schroeder: the bad interior element has an edge of 0.001 x the shortest edge") {
  const Ball b = make_ball(FemKind::Linear);
  TetMesh bad = b.mesh;
  const Index moved = make_bad_interior_element(bad, 1e-3);
  const auto edges = [](const TetMesh& m, Index only) {
    std::vector<double> out;
    for (const auto& t : m.tets)
      for (int i = 0; i < 4; ++i)
        for (int j = i + 1; j < 4; ++j)
          if (only == Index(-1) || t[i] == only || t[j] == only)
            out.push_back((m.vertices[t[i]] - m.vertices[t[j]]).norm());
    return out;
  };
  const auto rest = edges(b.mesh, Index(-1)), around = edges(bad, moved);
  const double shortest = *std::min_element(rest.begin(), rest.end());
  CHECK(*std::min_element(around.begin(), around.end()) ==
        doctest::Approx(1e-3 * shortest).epsilon(1e-9));
  // Only that vertex moved, it is away from the boundary, and every tet is still valid.
  int changed = 0;
  for (std::size_t a = 0; a < bad.vertices.size(); ++a)
    changed += (bad.vertices[a] != b.mesh.vertices[a]) ? 1 : 0;
  CHECK(changed == 1);
  const auto surface = tets_touching_faces(bad.tets, boundary_faces(bad), bad.vertices.size());
  for (std::size_t t = 0; t < bad.tets.size(); ++t)
    for (Index a : bad.tets[t])
      if (a == moved) CHECK(!surface[t]);
  CHECK_NOTHROW(validate_tet_mesh(bad, "bad"));
  CHECK_THROWS_WITH_AS(make_bad_interior_element(bad, 1.0),
                       "bad element: edge ratio 1 is outside (0, 1)", std::invalid_argument);
}

TEST_CASE("schroeder: the substep comes from the surface elements' stability limit") {
  // A bad interior element limits the semi-implicit step but not the asynchronous one.
  Ball b = make_ball(FemKind::Linear);
  TetMesh bad = b.mesh;
  make_bad_interior_element(bad, 1e-3);
  TetFemModel model(bad.vertices, bad.tets, b.materials, FemKind::Linear);
  const auto surface = tets_touching_faces(bad.tets, boundary_faces(bad), bad.vertices.size());
  SchroederSettings s;
  s.frame_dt = 1.0 / 24.0;
  SchroederSettings semi = s;
  semi.scheme = SchroederScheme::SemiImplicit;
  SchroederStepper async_good(*b.model, b.materials, b.surface, {}, kGravity, s);
  SchroederStepper async_bad(model, b.materials, surface, {}, kGravity, s);
  SchroederStepper semi_good(*b.model, b.materials, b.surface, {}, kGravity, semi);
  SchroederStepper semi_bad(model, b.materials, surface, {}, kGravity, semi);
  CAPTURE(semi_bad.substep());
  CAPTURE(semi_good.substep());
  CAPTURE(async_bad.substep());
  // Same surface, same substep; the semi-implicit step shrinks by ~√(stiffness ratio).
  CHECK(async_bad.substeps_per_frame() == async_good.substeps_per_frame());
  CHECK(semi_bad.substep() < 0.1 * semi_good.substep());
  CHECK(async_bad.alpha() == doctest::Approx(2.0 * async_bad.substeps_per_frame() - 1.0));
  // The stability limit √2/ω_max is real: the semi-implicit scheme at 1.15 times it
  // blows up on the bad mesh, at its step (safety 0.8 of it) it does not.
  CHECK(semi_bad.substep() ==
        doctest::Approx(semi.safety * std::sqrt(2.0) / semi_bad.omega_max()).epsilon(0.02));
  for (double factor : {semi.safety, 1.15}) {
    SchroederSettings t = semi;
    t.substep = factor * std::sqrt(2.0) / semi_bad.omega_max();
    t.frame_dt = 0.0;
    t.safety = 1.0;
    SchroederStepper st(model, b.materials, surface, {}, Vec3::Zero(), t);
    Eigen::VectorXd x = stacked(bad.vertices), v = Eigen::VectorXd::Zero(x.size());
    for (Eigen::Index i = 0; i < x.size(); ++i) x[i] += 1e-4 * std::sin(3.0 * double(i));
    for (int i = 0; i < 400; ++i) st.step(x, v);
    CAPTURE(factor);
    const double vmax = v.cwiseAbs().maxCoeff();
    CAPTURE(vmax);
    CHECK((factor < 1.0 ? vmax < 1.0 : !(vmax < 1e3)));
  }
}

TEST_CASE("schroeder §6: colliding particles land on the plane and keep no approaching velocity") {
  const Ball b = make_ball(FemKind::Linear);
  SchroederSettings s;
  s.scheme = SchroederScheme::FullyImplicit;
  s.frame_dt = 1.0 / 24.0;
  s.rayleigh_beta = 1e-3;
  const double ground = 0.9 - 0.5;  // below the ball (bottom at z = 0.9)
  s.colliders.push_back(StaticCollider::plane(Vec3(0, 0, ground), Vec3::UnitZ(), 0.5));
  SchroederStepper stepper(*b.model, b.materials, b.surface, {}, kGravity, s);
  Eigen::VectorXd x = stacked(b.mesh.vertices), v = Eigen::VectorXd::Zero(x.size());
  for (Eigen::Index i = 0; i < x.size(); i += 3) {
    v[i] = 1.0;       // sliding along x
    v[i + 2] = -4.0;  // falling fast: the plane is crossed within a frame
  }
  Eigen::VectorXd w(x.size());
  std::uint64_t before = 0;
  for (int frame = 0; frame < 6; ++frame) {
    Eigen::VectorXd vn = v;
    stepper.position_update(x, v, w);
    const Eigen::VectorXd x1 = x + stepper.substep() * w;
    double lowest = kNever;
    for (Eigen::Index a = 0; a < x.size() / 3; ++a) lowest = std::min(lowest, x1[3 * a + 2]);
    x = x1;
    stepper.velocity_update(x, v);
    if (stepper.counters().collisions > before) {
      CAPTURE(frame);
      // Positions land on the surface (not above it: no gap of Δt v_rel), none below.
      CHECK(lowest == doctest::Approx(ground).epsilon(1e-12));
      for (Eigen::Index a = 0; a < x.size() / 3; ++a) {
        CHECK(x[3 * a + 2] >= ground - 1e-12);
        if (std::abs(x[3 * a + 2] - ground) < 1e-12) CHECK(v[3 * a + 2] >= -1e-12);
      }
    }
    before = stepper.counters().collisions;
  }
  CHECK(stepper.counters().collisions > 0);
  // Friction from the collision impulses slowed the slide.
  double vx = 0.0;
  for (Eigen::Index a = 0; a < x.size() / 3; ++a) vx += v[3 * a] / double(x.size() / 3);
  CHECK(vx < 0.9);
}

TEST_CASE("schroeder: bad settings are named") {
  SchroederSettings s;
  s.frame_dt = 0.04;
  s.epsilon = 1.5;
  CHECK(error_of(s) == "epsilon 1.5 is outside [0, 1]");
  s.epsilon = -0.1;
  CHECK(error_of(s) == "epsilon -0.1 is outside [0, 1]");
  s.epsilon = 0.5;
  s.substep = 0.003;
  CHECK(error_of(s) ==
        "frame time 0.04 s is not a multiple of the substep 0.003 s (ratio 13.333333333333334)");
  s.substep = 0.08;
  CHECK(error_of(s) == "frame time 0.04 s is not a multiple of the substep 0.08 s (ratio 0.5)");
  s.substep = 0.01;
  CHECK(error_of(s) == "(no error)");
  s.frame_dt = 0.0;
  CHECK(error_of(s) == "asynchronous scheme: frame time 0 s must be positive and finite");
  s.frame_dt = 0.04;
  s.safety = 1.5;
  CHECK(error_of(s) == "safety 1.5 is outside (0, 1]");
  s.safety = 0.5;
  s.colliders.push_back(StaticCollider::plane(Vec3::Zero(), Vec3(0, 0, 2), 0.1));
  CHECK(error_of(s) == "collision plane normal (0, 0, 2) is not a unit vector");
  // The stepper checks them too.
  const Ball b = make_ball(FemKind::Linear);
  s.colliders.clear();
  s.epsilon = 2.0;
  CHECK_THROWS_WITH_AS(SchroederStepper(*b.model, b.materials, b.surface, {}, kGravity, s),
                       "epsilon 2 is outside [0, 1]", std::invalid_argument);
  s.epsilon = 0.5;
  CHECK_THROWS_WITH_AS(SchroederStepper(*b.model, b.materials, {true}, {}, kGravity, s),
                       doctest::Contains("1 partition flags for"), std::invalid_argument);
}

}  // namespace clockwork
