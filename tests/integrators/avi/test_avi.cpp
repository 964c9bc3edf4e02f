/// Explicit AVI on the kernel: conservation laws, energy behaviour, and equality
/// with synchronous leapfrog when all periods are equal.
#include <doctest/doctest.h>

#include <random>

#include "engine/diagnostics.hpp"
#include "integrators/avi/force_source.hpp"
#include "integrators/energy/gravity_energy.hpp"
#include "integrators/energy/hinge_energy.hpp"
#include "integrators/energy/membrane_energy.hpp"
#include "integrators/energy/spring_energy.hpp"
#include "integrators/avi/stability.hpp"
#include "io/mesh/mesh.hpp"

using namespace clockwork;

namespace {

template <int N>
StencilPositions<N> gather(const std::vector<Vec3>& x, const std::array<Index, N>& ids) {
  StencilPositions<N> out;
  for (int i = 0; i < N; ++i) out.col(i) = x[ids[i]];
  return out;
}

struct Cloth {
  TriangleMesh mesh;
  std::vector<double> mass;
  ForceSource<MembraneStVK>* membrane = nullptr;
  ForceSource<HingeBending>* bending = nullptr;
  ForceSource<GravityEnergy>* gravity = nullptr;
};

/// A jittered 12x12 grid cloth (irregular triangles), membrane + bending, lumped
/// masses. `period(kind, stable)` chooses each stencil's period from its estimate.
template <typename PeriodFn>
Cloth add_cloth(Kernel& k, std::uint64_t seed, const Vec3& gravity, PeriodFn period,
                const std::vector<Vec3>& velocities = {}) {
  Cloth c;
  c.mesh = make_grid(1.0, 1.0, 12, 12, Vec3::Zero(), Vec3::UnitX(), Vec3::UnitY());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-0.02, 0.02);
  for (Vec3& x : c.mesh.vertices) x += Vec3(u(rng), u(rng), u(rng));
  c.mass.assign(c.mesh.vertices.size(), 0.0);
  for (const auto& t : c.mesh.triangles) {
    const auto X = gather<3>(c.mesh.vertices, t);
    const double area = 0.5 * (X.col(1) - X.col(0)).cross(X.col(2) - X.col(0)).norm();
    for (Index a : t) c.mass[a] += 0.2 * area / 3.0;
  }
  for (std::size_t a = 0; a < c.mesh.vertices.size(); ++a)
    k.state().add(c.mesh.vertices[a], velocities.empty() ? Vec3::Zero() : velocities[a], c.mass[a]);
  auto membrane = std::make_unique<ForceSource<MembraneStVK>>("force:membrane");
  auto bending = std::make_unique<ForceSource<HingeBending>>("force:bending");
  auto grav = std::make_unique<ForceSource<GravityEnergy>>("force:gravity");
  const auto [mu, lambda] = MembraneStVK::lame_plane_stress(200.0, 0.3);
  for (const auto& t : c.mesh.triangles) {
    const auto X = gather<3>(c.mesh.vertices, t);
    const MembraneStVK e = MembraneStVK::from_rest(X, mu, lambda);
    const double h = stable_period(e, X, {1 / c.mass[t[0]], 1 / c.mass[t[1]], 1 / c.mass[t[2]]}, 0.5);
    membrane->add(t, e, period(0, h));
  }
  for (const auto& hinge : interior_hinges(c.mesh)) {
    const auto X = gather<4>(c.mesh.vertices, hinge);
    const HingeBending e = HingeBending::from_rest(X, 1e-3);
    std::array<double, 4> w;
    for (int i = 0; i < 4; ++i) w[i] = 1 / c.mass[hinge[i]];
    bending->add(hinge, e, period(1, stable_period(e, X, w, 0.5)));
  }
  if (gravity.squaredNorm() > 0)
    for (Index a = 0; a < c.mesh.vertices.size(); ++a)
      grav->add({a}, GravityEnergy{c.mass[a], gravity}, period(2, 0.0));
  c.membrane = membrane.get();
  c.bending = bending.get();
  c.gravity = grav.get();
  const EventKind km = k.add_source(std::move(membrane));
  c.membrane->start(km, k);
  const EventKind kb = k.add_source(std::move(bending));
  c.bending->start(kb, k);
  const EventKind kg = k.add_source(std::move(grav));
  c.gravity->start(kg, k);
  return c;
}

}  // namespace

TEST_CASE("free cloth with random velocities and mixed periods conserves momenta to round-off") {
  Kernel k;
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n(0.0, 0.3);
  std::vector<Vec3> v0(13 * 13);
  for (Vec3& v : v0) v = Vec3(n(rng), n(rng), n(rng));
  std::uniform_real_distribution<double> jitter(0.3, 1.0);
  // Every stencil its own period: the stability estimate times a random factor.
  add_cloth(k, 11, Vec3::Zero(), [&](int, double h) { return h * jitter(rng); }, v0);
  const Diagnostics d0 = measure(k, 0.0);
  double p_scale = 0, L_scale = 0;
  for (Index a = 0; a < k.state().size(); ++a) {
    p_scale += k.state().mass(a) * k.state().velocity(a).norm();
    L_scale += (k.state().position(a).cross(k.state().mass(a) * k.state().velocity(a))).norm();
  }
  std::uint64_t events = 0;
  double t = 0;
  while (events < 200000) {
    t += 0.01;
    k.run_until(t);
    events = k.events_processed();
  }
  const Diagnostics d1 = measure(k, t);
  const double dp = (d1.linear_momentum - d0.linear_momentum).norm() / p_scale;
  const double dL = (d1.angular_momentum - d0.angular_momentum).norm() / L_scale;
  CAPTURE(events);
  CAPTURE(dp);
  CAPTURE(dL);
  CHECK(dp <= 1e-12);
  CHECK(dL <= 1e-12);
  // The cloth did deform: the test is not vacuous.
  CHECK(d1.potential > 1e-6 * d0.kinetic);
}

TEST_CASE("with all periods equal, AVI equals a synchronous leapfrog to round-off") {
  const double h = 2e-4;
  const Vec3 g(0, 0, -9.81);
  Kernel k;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> n(0.0, 0.2);
  std::vector<Vec3> v0(13 * 13);
  for (Vec3& v : v0) v = Vec3(n(rng), n(rng), n(rng));
  Cloth c = add_cloth(k, 17, g, [&](int, double) { return h; }, v0);
  const int steps = 400;
  k.run_until((steps - 0.5) * h);  // ticks 0 .. steps-1 processed

  // Leapfrog (kick-drift), written independently of the kernel:
  //   v_{n+1/2} = v_{n-1/2} − h M^{-1} ∇V(x_n),  x_{n+1} = x_n + h v_{n+1/2},
  // started from the velocities at t = 0 by a half kick, v_{1/2} = v_0 − (h/2) M^{-1} ∇V(x_0).
  std::vector<Vec3> x = c.mesh.vertices, v = v0;
  const std::size_t nv = x.size();
  std::vector<Vec3> grad(nv);
  for (int s = 0; s < steps; ++s) {
    std::fill(grad.begin(), grad.end(), Vec3::Zero());
    for (EventSlot i = 0; i < c.membrane->size(); ++i) {
      const auto& st = c.membrane->stencil(i);
      const auto gi = st.term.gradient(gather<3>(x, st.vertices));
      for (int j = 0; j < 3; ++j) grad[st.vertices[j]] += gi.segment<3>(3 * j);
    }
    for (EventSlot i = 0; i < c.bending->size(); ++i) {
      const auto& st = c.bending->stencil(i);
      const auto gi = st.term.gradient(gather<4>(x, st.vertices));
      for (int j = 0; j < 4; ++j) grad[st.vertices[j]] += gi.segment<3>(3 * j);
    }
    const double kick = s == 0 ? 0.5 * h : h;
    for (std::size_t a = 0; a < nv; ++a) {
      v[a] += kick * (g - grad[a] / c.mass[a]);
      x[a] += h * v[a];
    }
  }
  double worst = 0, travel = 0;
  for (Index a = 0; a < nv; ++a) {
    worst = std::max(worst, (k.state().position_at(a, steps * h) - x[a]).norm());
    worst = std::max(worst, (k.state().velocity(a) - v[a]).norm() * h);
    travel = std::max(travel, (x[a] - c.mesh.vertices[a]).norm());
  }
  CAPTURE(worst);
  CAPTURE(travel);
  CHECK(travel > 1e-3);
  CHECK(worst <= 1e-13);
}

TEST_CASE("Fermi-Pasta-Ulam chain: total energy oscillates without drift over 1e6 events") {
  // Alternating stiff harmonic and soft quartic springs (Hairer, Lubich, Wanner,
  // "Geometric Numerical Integration" §I.5), ends fixed, unit masses.
  Kernel k;
  const int springs = 6;
  for (int i = 0; i <= springs; ++i)
    k.state().add(Vec3(i, 0, 0), Vec3::Zero(), (i == 0 || i == springs) ? kNever : 1.0);
  k.state().velocity_ref(1) = Vec3(1.0, 0.3, 0);
  k.state().velocity_ref(4) = Vec3(-0.5, 0, 0.2);
  auto src = std::make_unique<ForceSource<SpringEnergy>>("force:spring");
  for (int i = 0; i < springs; ++i) {
    const bool stiff = i % 2 == 0;
    SpringEnergy s{};
    s.stiffness = stiff ? 2500.0 : 1.0;  // ω = 50 on the stiff springs
    s.quartic = stiff ? 0.0 : 4.0;
    s.rest_length = 1.0;
    src->add({Index(i), Index(i + 1)}, s, stiff ? 1e-3 : 3.1e-3);
  }
  auto& springs_src = *src;
  const EventKind kind = k.add_source(std::move(src));
  springs_src.start(kind, k);
  std::vector<double> energy;
  double t = 0;
  while (k.events_processed() < 1000000) {
    t += 0.05;
    k.run_until(t);
    energy.push_back(measure(k, t).total());
  }
  const std::size_t tenth = energy.size() / 10;
  double first = 0, last = 0, lo = energy[0], hi = energy[0];
  for (std::size_t i = 0; i < tenth; ++i) {
    first += energy[i] / tenth;
    last += energy[energy.size() - 1 - i] / tenth;
  }
  for (double e : energy) lo = std::min(lo, e), hi = std::max(hi, e);
  CAPTURE(first);
  CAPTURE(last);
  CAPTURE(lo);
  CAPTURE(hi);
  CAPTURE(k.events_processed());
  CHECK(std::abs(last - first) <= 0.005 * first);
  CHECK(hi - lo <= 0.05 * first);  // bounded oscillation
}
