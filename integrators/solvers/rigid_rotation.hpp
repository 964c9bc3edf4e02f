#pragma once
/// The rigid rotation that cancels an excess angular momentum of a set of point masses.
///
/// A velocity field u_a = ω × (x_a − C) about the mass centre C = Σ m x / Σ m carries no
/// linear momentum (Σ m ω × (x − C) = ω × 0) and the angular momentum about C
///     Σ m (x − C) × (ω × (x − C)) = I ω,   I = Σ m (|r|² 1 − r rᵀ),  r = x − C,
/// so the ω with I ω = −excess added to a step's velocity change removes `excess` from
/// the change of angular momentum; where the rotation also moves the points at which
/// later increments land (a multi-rate plan), their torque adds a linear B ω and
/// (I + B) ω = −excess. Used by every integrator that keeps angular momentum this way:
/// SolidSource (backward Euler and multi-rate steps, off-plan substeps),
/// SchroederStepper's kernel events and PhantomSource's tick (docs/backward-euler.md). What the
/// excess is differs between them and stays with the caller.
///
/// Use, in this order: the mass centre (add_mass for each point, then set_centre), the
/// inertia about it (add_inertia with arm(x)), the solve, then velocity(x) added where
/// the caller applies it — or fit() and add_velocity() for the usual case of masses m
/// (n) and points x (3n). Each sum runs in the caller's point order, term by term as
/// written here, so a caller's results do not depend on this code being shared.
#include <Eigen/Dense>
#include <vector>

#include "engine/types.hpp"

namespace clockwork {

class RigidRotation {
 public:
  /// Adds a point mass m (kg, ≥ 0) at x to the mass centre's sums.
  void add_mass(double m, const Vec3& x) {
    weighted_ += m * x;
    total_ += m;
  }
  /// C = Σ m x / Σ m from the add_mass calls; false for a massless set (nothing to turn).
  bool set_centre();
  const Vec3& centre() const { return centre_; }
  /// Σ m of the add_mass calls, kg.
  double total_mass() const { return total_; }
  /// r = x − C.
  Vec3 arm(const Vec3& x) const { return x - centre_; }

  /// Adds m (|r|² 1 − r rᵀ) to the inertia tensor about C (r = arm(x)).
  void add_inertia(double m, const Vec3& r) {
    inertia_ += m * (r.squaredNorm() * Mat3::Identity() - r * r.transpose());
  }
  /// I about C, kg m², from the add_inertia calls.
  const Mat3& inertia() const { return inertia_; }

  /// The mass centre and the inertia about it of the points x (3n) with masses m (n):
  /// every a < m.size(), or each a that `each(f)` passes to f. False for a massless set.
  bool fit(const std::vector<double>& m, const Eigen::VectorXd& x);
  template <class ForEach>
  bool fit(const std::vector<double>& m, const Eigen::VectorXd& x, ForEach&& each) {
    each([&](auto a) { add_mass(m[a], x.template segment<3>(3 * a)); });
    if (!set_centre()) return false;
    each([&](auto a) { add_inertia(m[a], arm(x.template segment<3>(3 * a))); });
    return true;
  }

  /// ω with I ω = −excess (LDLᵀ: I is symmetric positive semi-definite); false if ω is
  /// not finite (a degenerate, collinear set: the caller leaves its step as it is).
  bool solve(const Vec3& excess);
  /// ω with (I + B) ω = −excess (partial-pivot LU: B need not be symmetric).
  bool solve(const Vec3& excess, const Mat3& B);
  /// rad/s, after solve().
  const Vec3& omega() const { return omega_; }

  /// The rotation's velocity at x: ω × (x − C).
  Vec3 velocity(const Vec3& x) const { return omega_.cross(arm(x)); }
  /// dv_a += ω × (x_a − C) for every a < x.size() / 3, or each a that `each` passes.
  void add_velocity(const Eigen::VectorXd& x, Eigen::VectorXd& dv) const;
  template <class ForEach>
  void add_velocity(const Eigen::VectorXd& x, Eigen::VectorXd& dv, ForEach&& each) const {
    each([&](auto a) { dv.template segment<3>(3 * a) += velocity(x.template segment<3>(3 * a)); });
  }

 private:
  Vec3 weighted_ = Vec3::Zero();  ///< Σ m x
  double total_ = 0.0;            ///< Σ m
  Vec3 centre_ = Vec3::Zero();
  Mat3 inertia_ = Mat3::Zero();
  Vec3 omega_ = Vec3::Zero();
};

}  // namespace clockwork
