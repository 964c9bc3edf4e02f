// SchroederStepper's angular momentum: the account of a kernel event (a velocity update
// and the next position update) and the rigid rotation that cancels its internal
// forces' torque (integrators/schroeder/schroeder_scheme.hpp, docs/schroeder.md,
// decision 13). The external impulses of each solve are recorded by record_external
// (integrators/schroeder/schroeder_scheme.cpp), the §6 responses where they are applied.
#include <algorithm>

#include "integrators/solvers/rigid_rotation.hpp"
#include "integrators/schroeder/schroeder_scheme.hpp"

namespace clockwork {

void SchroederStepper::open_event(const Vector& v) {
  // The last position update's increment is held by w only: the event takes it back,
  // with its external impulses.
  event_ext_ = -half_ext_;
  event_v_ = v;
  event_open_ = true;
  event_collided_ = std::any_of(colliding_.begin(), colliding_.end(), [](int c) { return c >= 0; });
}

bool SchroederStepper::rotation_crosses(const Vector& x, const Vector& w, const Vec3& omega,
                                        const Vec3& centre) const {
  if (settings_.colliders.empty()) return false;
  for (std::size_t a = 0; a < fixed_.size(); ++a) {
    const Vec3 end = x.segment<3>(3 * a) +
                     dt_ * (w.segment<3>(3 * a) + omega.cross(Vec3(x.segment<3>(3 * a) - centre)));
    for (const StaticCollider& body : settings_.colliders)
      if (body.closest(end).distance < kOnSurface) return true;
  }
  return false;
}

void SchroederStepper::keep_angular_momentum(const Vector& x, Vector& v, Vector& w) {
  event_open_ = false;
  // A static obstacle takes momentum (as the solves' momentum shift, which is left out
  // with contacts): an event in which the body touched one is left as stepped; so is a
  // rotation that would put a particle into one (the solve kept it out).
  event_collided_ = event_collided_ || !contacts_.empty() ||
                    std::any_of(colliding_.begin(), colliding_.end(), [](int c) { return c >= 0; });
  if (!any_fixed_ && !event_collided_) {
    const std::vector<double>& m = model_.lumped_mass();
    RigidRotation turn;
    if (turn.fit(m, x)) {
      // The kernel's change w − (v_event + half_dv_) less the external impulses: the
      // internal impulses, whose torque about C is cancelled (gravity's is zero about C).
      Vec3 excess = Vec3::Zero();
      for (std::size_t a = 0; a < m.size(); ++a) {
        const Vec3 change =
            w.segment<3>(3 * a) - event_v_.segment<3>(3 * a) - half_dv_.segment<3>(3 * a);
        const Vec3 r = turn.arm(x.segment<3>(3 * a));
        excess += r.cross(m[a] * change - Vec3(event_ext_.segment<3>(3 * a)));
      }
      // A degenerate (collinear) body: left as stepped.
      if (turn.solve(excess) && !rotation_crosses(x, w, turn.omega(), turn.centre()))
        for (std::size_t a = 0; a < m.size(); ++a) {
          const Vec3 spin = turn.velocity(x.segment<3>(3 * a));
          w.segment<3>(3 * a) += spin;
          v.segment<3>(3 * a) += spin;
        }
    }
  }
  half_ext_ = solve_ext_;
  half_dv_ = w - v;
}

}  // namespace clockwork
