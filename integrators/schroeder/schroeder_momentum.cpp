// SchroederStepper's angular momentum: the account of a kernel event (a velocity update
// and the next position update) and the rigid rotation that cancels its internal
// forces' torque (integrators/schroeder/schroeder_scheme.hpp, docs/schroeder.md,
// decision 13). The external impulses of each solve are recorded by record_external
// (integrators/schroeder/schroeder_scheme.cpp), the §6 responses where they are applied.
#include <algorithm>

#include "integrators/implicit/energy_safeguard.hpp"
#include "integrators/solvers/rigid_rotation.hpp"
#include "integrators/schroeder/schroeder_scheme.hpp"

namespace clockwork {

void SchroederStepper::open_event(const Vector& v) {
  // The last position update's increment is held by w only: the event takes it back,
  // with its external impulses.
  event_ext_ = -half_ext_;
  event_v_ = v;
  event_open_ = true;
  event_collided_ = any_colliding();
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
  event_collided_ = event_collided_ || !contacts_.empty() || any_colliding();
  if (settings_.keep_angular_momentum && !any_fixed_) {
    const std::vector<double>& m = model_.lumped_mass();
    // The event's energy balance from the last event's state (its vⁿ with the kicks of
    // other bodies since, event_v_: their work is not the body's) to (x, v + s u), with
    // gravity's work; the positions do not depend on s (u joins the drift after x).
    const double elastic = model_.value(x);
    if (!have_event_) {
      x_event_ = x;
      elastic_event_ = elastic;
      have_event_ = true;
    }
    const auto balance = [&](double s) {
      v_share_ = v + s * rotation_;
      return step_energy_balance(m, elastic_event_, elastic, x_event_, event_v_, x, v_share_, f_ext_,
                                 0.0, {});
    };
    RigidRotation turn;
    bool turned = false;
    if (!event_collided_ && turn.fit(m, x)) {
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
      turned = turn.solve(excess) && !rotation_crosses(x, w, turn.omega(), turn.centre());
    }
    if (turned) {
      rotation_.setZero(x.size());
      turn.add_velocity(x, rotation_);
      const RotationShare r = limited_share(balance, energy_credit_, false);
      energy_credit_ -= r.gain;
      if (r.share < 1.0 && counters_.rotation_limited++ == 0) counters_.first_cut_share = r.share;
      for (std::size_t a = 0; a < m.size(); ++a) {
        const Vec3 spin = r.share * turn.velocity(x.segment<3>(3 * a));  // 1 · u: bit for bit u
        w.segment<3>(3 * a) += spin;
        v.segment<3>(3 * a) += spin;
      }
    } else {
      // No rotation: a collider's work is not in the balance, so the event may spend
      // the credit but never earn it.
      energy_credit_ -= std::max(0.0, balance(0.0).gain);
    }
    x_event_ = x;
    elastic_event_ = elastic;
  }
  half_ext_ = solve_ext_;
  half_dv_ = w - v;
}

}  // namespace clockwork
