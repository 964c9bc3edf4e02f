#pragma once
// The total energy of a scene's first backward-Euler/Zhao solid, recomputed from the
// kernel's state: what the solid-drop tests assert against (issue 41).
#include <Eigen/Core>

#include "contact/contact_system.hpp"
#include "integrators/implicit/solid_source.hpp"
#include "io/scene/scene.hpp"

namespace clockwork::test {

/// Kinetic + gravity (field g) + elastic + layers of the scene's first SolidSource at t.
inline double solid_total_energy(const Scene& s, double t, const Vec3& g) {
  const VertexState& st = s.kernel->state();
  const SolidSource& src = *s.bodies_of<SolidSource>()[0];
  Eigen::VectorXd x(3 * static_cast<Eigen::Index>(src.vertices().size()));
  double e = 0.0;
  for (std::size_t i = 0; i < src.vertices().size(); ++i) {
    const Index a = src.vertices()[i];
    const Vec3 xa = st.position_at(a, t);
    x.segment<3>(3 * static_cast<Eigen::Index>(i)) = xa;
    e += 0.5 * st.mass(a) * st.velocity(a).squaredNorm() - st.mass(a) * g.dot(xa);
  }
  e += src.model().value(x);
  if (s.contact) e += s.contact->potential_energy(st, t);
  return e;
}

}  // namespace clockwork::test
