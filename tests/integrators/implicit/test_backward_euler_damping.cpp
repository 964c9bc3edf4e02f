// Synchronous implicit Euler on a TetFemModel (issue 6): Rayleigh damping evaluated at
// the step's end solves its equation, and the default form (projected at the step's
// start) never adds energy.
#include <doctest/doctest.h>

#include "integrators/implicit/backward_euler.hpp"
#include "tests/support/backward_euler_blocks.hpp"

using namespace clockwork;
using namespace clockwork::test;

TEST_CASE("damping at the step's end: the converged step solves M dv = h (f - f_int(x1) - D(x1) v1)") {
  Squeezed b;
  const double h = 0.01, alpha = 0.3, beta = 0.004;
  for (DefinitenessFix fix : {DefinitenessFix::LocalClamp, DefinitenessFix::None}) {
    BackwardEulerSettings s;
    s.tolerance = 1e-11;
    s.rayleigh_alpha = alpha;
    s.rayleigh_beta = beta;
    s.fix = fix;
    s.damping = RayleighDamping::TangentAtEnd;
    BackwardEuler be(b.model, s);
    Vector x = b.x0, v = b.v0;
    const BackwardEulerReport r = be.step(h, x, v, b.f_ext, b.fixed);
    CAPTURE(int(fix));
    CAPTURE(r.newton_iterations);
    REQUIRE(r.converged);
    // The textbook (and VegaFEM) form: K(x1) the unprojected tangent at the step's end.
    Sparse K1;
    b.model.hessian(x, K1);
    Vector f_int;
    b.model.gradient(x, f_int);
    const Vector inertia = b.m.cwiseProduct(v - b.v0);
    const Vector residual =
        inertia - h * (b.f_ext - f_int - alpha * b.m.cwiseProduct(v) - beta * (K1 * v));
    CAPTURE(b.free_norm(residual));
    CHECK(b.free_norm(residual) <= 1e-10 * b.free_norm(inertia));
    // ... which is not the default's D = αM + βK̂(x_n): that residual is far larger.
    Sparse K0;
    b.model.hessian(b.x0, K0, true);
    const Vector other =
        inertia - h * (b.f_ext - f_int - alpha * b.m.cwiseProduct(v) - beta * (K0 * v));
    CHECK(b.free_norm(other) >= 1e-4 * b.free_norm(inertia));
  }
}

TEST_CASE("default damping (projected at the step's start): energy never grows") {
  // Total energy ½ vᵀMv + E(x) − f_extᵀx of converged steps under gravity, with mass and
  // stiffness damping, pinned vertices at rest, linear and corotational FEM.
  for (FemKind kind : {FemKind::Linear, FemKind::Corotational}) {
    Squeezed b;
    const TetFemModel model = block_model(kind, 2e5);
    BackwardEulerSettings s;
    s.tolerance = 1e-11;
    s.rayleigh_alpha = 0.2;
    s.rayleigh_beta = 0.01;
    BackwardEuler be(model, s);
    Vector x = b.x0, v = b.v0;
    const auto energy = [&] {
      return 0.5 * v.cwiseAbs2().dot(b.m) + model.value(x) - b.f_ext.dot(x);
    };
    const double e0 = energy();
    const double scale = 0.5 * b.v0.cwiseAbs2().dot(b.m) + model.value(b.x0);
    double e = e0, worst = -1.0;
    for (int step = 0; step < 100; ++step) {
      REQUIRE(be.step(0.01, x, v, b.f_ext, b.fixed).converged);
      const double next = energy();
      worst = std::max(worst, (next - e) / scale);
      e = next;
    }
    CAPTURE(int(kind));
    CAPTURE(worst);
    CAPTURE((e0 - e) / scale);
    CHECK(worst <= 1e-12);
    CHECK(e < e0 - 0.5 * scale);  // visibly damped
  }
}
