#pragma once
/// A Schroeder body's state in a scene, recomputed from the kernel at a frame: kinetic
/// energy of the kernel's velocities, the source's potential (gravity + elastic), the
/// elastic energy of both element sets, inverted tets, finiteness; the demo's ball
/// built with the World in any scheme; the static backward-Euler reference of a ball at
/// rest on a plane (tests/integrators/schroeder/test_schroeder_energy_runs.cpp, tests/integrators/schroeder/test_schroeder_drops.cpp).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "integrators/implicit/backward_euler.hpp"
#include "io/scene/scene.hpp"
#include "io/mesh/tet_mesh.hpp"
#include "io/world/world.hpp"
#include "tests/support/world_specs.hpp"

namespace clockwork::test {

/// demos/schroeder_sphere.json's ball written with the API: a corotational tet sphere
/// (r = 0.1 m, 10 cells across, E = 1e5 Pa, ν = 0.3, ρ = 1000 kg/m³, Rayleigh β =
/// `beta`) centred on `center`, thrown at `velocity`, on a §6 ground plane (μ = 0.3),
/// frames of 1/24 s, in `scheme` ("schroeder": asynchronous with the default ε = ½,
/// "semi_implicit" or "fully_implicit").
inline SolidSpec schroeder_sphere_spec(const std::string& scheme, const Vec3& center = Vec3(0, 0, 0.3),
                                       const Vec3& velocity = Vec3(0.3, 0, 0), double beta = 0.002) {
  SolidSpec b = solid_spec("sphere", make_tet_sphere(center, 0.1, 10), {1e5, 0.3, 1000}, FemKind::Corotational);
  b.material.rayleigh_beta = beta;
  if (velocity != Vec3::Zero()) b.velocity = test::velocity(velocity);
  SchroederSpec integrator;
  integrator.settings.frame_dt = 1.0 / 24.0;
  if (scheme == "semi_implicit") integrator.settings.scheme = SchroederScheme::SemiImplicit;
  if (scheme == "fully_implicit") integrator.settings.scheme = SchroederScheme::FullyImplicit;
  integrator.settings.colliders.push_back(StaticCollider::plane(Vec3::Zero(), Vec3::UnitZ(), 0.3));
  b.integrator = std::move(integrator);
  return b;
}

/// The demo's world (1.5 s under gravity) holding `ball`.
inline World schroeder_sphere_world(SolidSpec ball) {
  World w({.name = "schroeder_sphere", .end_time = 1.5, .frame_rate = 24, .gravity = {0, 0, -9.81}});
  w.add_solid(std::move(ball));
  return w;
}

struct FrameState {
  double kinetic = 0.0, potential = 0.0, elastic = 0.0;
  double lowest = 0.0;  ///< lowest z of a particle
  int inverted = 0;
  bool finite_normal = true;            ///< every coordinate finite and not subnormal
  Vec3 centre_velocity = Vec3::Zero();  ///< of the centre of mass
  Eigen::VectorXd x;
};

/// The first Schroeder body of `s` (the scene's only vertices) at time t.
inline FrameState measure_frame(const Scene& s, double t) {
  const VertexState& st = s.kernel->state();
  const SchroederSource& src = *s.bodies_of<SchroederSource>()[0];
  FrameState f;
  f.x.resize(3 * static_cast<Eigen::Index>(st.size()));
  f.lowest = kNever;
  double mass = 0.0;
  for (Index a = 0; a < st.size(); ++a) {
    const Vec3 xa = st.position_at(a, t), va = st.velocity(a);
    f.x.segment<3>(3 * a) = xa;
    f.kinetic += 0.5 * st.mass(a) * va.squaredNorm();
    f.centre_velocity += st.mass(a) * va;
    mass += st.mass(a);
    f.lowest = std::min(f.lowest, xa.z());
    for (int k = 0; k < 3; ++k)
      for (double c : {xa[k], va[k]})
        f.finite_normal = f.finite_normal && std::isfinite(c) && std::fpclassify(c) != FP_SUBNORMAL;
  }
  f.centre_velocity /= mass;
  f.potential = src.potential_energy(st, t);
  f.elastic = src.stepper().elastic_energy(f.x);
  for (const auto& tet : src.model().tets())
    if (tet_signed_volume(f.x.segment<3>(3 * tet[0]), f.x.segment<3>(3 * tet[1]),
                          f.x.segment<3>(3 * tet[2]), f.x.segment<3>(3 * tet[3])) <= 0.0)
      ++f.inverted;
  return f;
}

/// The state a frame at t holds: every event before t processed, the step at t not yet
/// (the run's observer comes first at equal times), the positions drifted to t.
inline void run_to_frame(Scene& s, double t) { s.kernel->run_until(std::nextafter(t, 0.0)); }

/// Elastic energy of the ball at static equilibrium under gravity with the particles on
/// the plane at `rest` held where they are (sticking friction): backward Euler with a
/// step (1 s) far beyond every elastic period and the velocity reset to zero each step,
/// started from `rest`, until it no longer moves.
inline double static_elastic_energy(const TetFemModel& model, const Eigen::VectorXd& rest,
                                    const Vec3& gravity) {
  const std::size_t n = model.vertex_count();
  std::vector<bool> fixed(n, false);
  Eigen::VectorXd f_ext(3 * n);
  for (std::size_t a = 0; a < n; ++a) {
    fixed[a] = rest[3 * a + 2] < 1e-9;
    f_ext.segment<3>(3 * a) = model.lumped_mass()[a] * gravity;
  }
  BackwardEuler be(model, {});
  Eigen::VectorXd x = rest, v(3 * n);
  for (int k = 0; k < 40; ++k) {
    v.setZero();
    const Eigen::VectorXd before = x;
    be.step(1.0, x, v, f_ext, fixed);
    if ((x - before).cwiseAbs().maxCoeff() < 1e-10) break;
  }
  return model.value(x);
}

}  // namespace clockwork::test
