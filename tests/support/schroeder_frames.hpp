#pragma once
/// A Schroeder body's state in a scene, recomputed from the kernel at a frame: kinetic
/// energy of the kernel's velocities, the source's potential (gravity + elastic), the
/// elastic energy of both element sets, inverted tets, finiteness; the demo scene with
/// another scheme; the static backward-Euler reference of a ball at rest on a plane
/// (tests/integrators/schroeder/test_schroeder_energy_runs.cpp, tests/integrators/schroeder/test_schroeder_drops.cpp).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "integrators/implicit/backward_euler.hpp"
#include "io/scene/scene.hpp"
#include "io/mesh/tet_mesh.hpp"

namespace clockwork::test {

/// demos/schroeder_sphere.json, its integrator switched to `scheme` with the same frame,
/// ε (for "schroeder"), collisions and friction.
inline nlohmann::json schroeder_demo_with(const std::string& scheme) {
  std::ifstream in(std::string(CLOCKWORK_SOURCE_DIR) + "/demos/schroeder_sphere.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  nlohmann::json& body = doc["bodies"][0];
  nlohmann::json settings = body["schroeder"];
  if (scheme != "schroeder") {
    body.erase("schroeder");
    settings.erase("epsilon");
    body["integrator"] = scheme;
    body[scheme] = settings;
  }
  return doc;
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
