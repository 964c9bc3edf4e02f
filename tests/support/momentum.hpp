#pragma once
// The scales that momentum drifts are measured against in tests: Σ m|v| and
// Σ |x × m v| over the free vertices of a state (kinematic ones carry no momentum).
#include "engine/vertex_state.hpp"

namespace clockwork::test {

struct MomentumScale {
  double linear = 0.0;   ///< Σ m|v|, kg m/s
  double angular = 0.0;  ///< Σ |x × m v| about the origin, kg m²/s
};

inline MomentumScale momentum_scale(const VertexState& st) {
  MomentumScale s;
  for (Index a = 0; a < st.size(); ++a) {
    if (st.kinematic(a)) continue;
    const Vec3 p = st.mass(a) * st.velocity(a);
    s.linear += p.norm();
    s.angular += st.position(a).cross(p).norm();
  }
  return s;
}

}  // namespace clockwork::test
