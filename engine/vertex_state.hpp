#pragma once
/// Per-vertex state with per-vertex clocks (DESIGN §1).
///
/// Vertex `a` stores its position `x_a` at its own clock `t_a` and a velocity `v_a`
/// that stays constant until the next velocity change, so its position at any
/// `t >= t_a` is `x_a + (t - t_a) v_a`. Reading a position never needs a sync; writing
/// a velocity always does, first. Kinematic vertices have infinite mass (inverse mass
/// 0): impulses do not move them, only scripts set their velocity.
#include <cassert>
#include <cmath>
#include <vector>

#include "engine/types.hpp"

namespace clockwork {

class VertexState {
 public:
  /// Adds a vertex at clock `t`; `mass` in kg, > 0, or +infinity for a kinematic vertex.
  Index add(const Vec3& x, const Vec3& v, double mass, double t = 0.0) {
    assert(mass > 0.0);
    x_.push_back(x);
    v_.push_back(v);
    t_.push_back(t);
    mass_.push_back(mass);
    inv_mass_.push_back(std::isinf(mass) ? 0.0 : 1.0 / mass);
    return static_cast<Index>(x_.size() - 1);
  }

  std::size_t size() const { return x_.size(); }

  /// Folds the drift since the vertex's clock into its position: x += (t - t_a) v.
  void sync(Index a, double t) {
    assert(t >= t_[a]);
    x_[a] += (t - t_[a]) * v_[a];
    t_[a] = t;
  }
  /// Position at time `t`, without changing the state.
  Vec3 position_at(Index a, double t) const { return x_[a] + (t - t_[a]) * v_[a]; }

  /// Position at the vertex's own clock.
  const Vec3& position(Index a) const { return x_[a]; }
  double clock(Index a) const { return t_[a]; }
  const Vec3& velocity(Index a) const { return v_[a]; }
  /// Velocity for writing: the caller synced the vertex first and reports the
  /// change to the kernel (Kernel::velocity_changed) so certificates are rescheduled.
  Vec3& velocity_ref(Index a) { return v_[a]; }
  double mass(Index a) const { return mass_[a]; }
  double inv_mass(Index a) const { return inv_mass_[a]; }
  bool kinematic(Index a) const { return inv_mass_[a] == 0.0; }

  /// Sets the position and clock of a vertex directly (scripted keyframes, set-up).
  void place(Index a, const Vec3& x, double t) {
    x_[a] = x;
    t_[a] = t;
  }
  void set_mass(Index a, double mass) {
    assert(mass > 0.0);
    mass_[a] = mass;
    inv_mass_[a] = std::isinf(mass) ? 0.0 : 1.0 / mass;
  }

 private:
  std::vector<Vec3> x_, v_;
  std::vector<double> t_, mass_, inv_mass_;
};

}  // namespace clockwork
