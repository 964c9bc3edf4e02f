#include "integrators/solvers/rigid_rotation.hpp"

namespace clockwork {

namespace {
/// Calls f(a) for a = 0 .. n − 1.
auto every(std::size_t n) {
  return [n](auto&& f) {
    for (std::size_t a = 0; a < n; ++a) f(a);
  };
}
}  // namespace

bool RigidRotation::set_centre() {
  if (!(total_ > 0.0)) return false;
  centre_ = weighted_;
  centre_ /= total_;
  return true;
}

bool RigidRotation::fit(const std::vector<double>& m, const Eigen::VectorXd& x) {
  return fit(m, x, every(m.size()));
}

bool RigidRotation::solve(const Vec3& excess) {
  omega_ = inertia_.ldlt().solve(-excess);
  return omega_.allFinite();
}

bool RigidRotation::solve(const Vec3& excess, const Mat3& B) {
  omega_ = (inertia_ + B).partialPivLu().solve(-excess);
  return omega_.allFinite();
}

void RigidRotation::add_velocity(const Eigen::VectorXd& x, Eigen::VectorXd& dv) const {
  add_velocity(x, dv, every(static_cast<std::size_t>(x.size() / 3)));
}

}  // namespace clockwork
