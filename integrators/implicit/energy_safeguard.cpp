#include "integrators/implicit/energy_safeguard.hpp"

#include <algorithm>
#include <cmath>

namespace clockwork {

EnergyBalance step_energy_balance(const TetFemModel& model, const std::vector<double>& mass,
                                  const Eigen::VectorXd& x0, const Eigen::VectorXd& v0,
                                  const Eigen::VectorXd& x1, const Eigen::VectorXd& v1,
                                  const Eigen::VectorXd& f_ext, double h,
                                  std::span<const TickPlane> planes,
                                  std::span<const double> impulses) {
  return step_energy_balance(mass, model.value(x0), model.value(x1), x0, v0, x1, v1, f_ext, h,
                             planes, impulses);
}

EnergyBalance step_energy_balance(const std::vector<double>& mass, double elastic0, double elastic1,
                                  const Eigen::VectorXd& x0, const Eigen::VectorXd& v0,
                                  const Eigen::VectorXd& x1, const Eigen::VectorXd& v1,
                                  const Eigen::VectorXd& f_ext, double h,
                                  std::span<const TickPlane> planes,
                                  std::span<const double> impulses) {
  double kinetic0 = 0.0, kinetic1 = 0.0;
  for (std::size_t a = 0; a < mass.size(); ++a) {
    const auto o = 3 * static_cast<Eigen::Index>(a);
    kinetic0 += 0.5 * mass[a] * v0.segment<3>(o).squaredNorm();
    kinetic1 += 0.5 * mass[a] * v1.segment<3>(o).squaredNorm();
  }
  const double gravity = f_ext.dot(x1 - x0);
  double contact = 0.0;
  for (std::size_t k = 0; k < planes.size(); ++k) {
    TickPlane p = planes[k];
    p.two_sided = true;
    const double along = p.violation(x0) - p.violation(x1);  // n · (y₁ − y₀)
    double force = impulses.empty() ? p.stiffness * p.violation(x1) : impulses[k] / h;
    if (!planes[k].friction) force = std::max(0.0, force);  // a pull is not contact's
    contact += force * along;
  }
  EnergyBalance b;
  b.gain = (kinetic1 + elastic1) - (kinetic0 + elastic0) - gravity - contact;
  const double scale = kinetic0 + kinetic1 + std::abs(elastic0) + std::abs(elastic1) +
                       std::abs(gravity) + std::abs(contact);
  b.tolerance = kEnergySafeguardTolerance * scale;
  if (!std::isfinite(b.gain)) b.gain = HUGE_VAL;  // a step gone non-finite: re-solve it
  return b;
}

double unheld_plane_energy(std::span<const TickPlane> planes, const Eigen::VectorXd& x1) {
  double e = 0.0;
  for (const TickPlane& p : planes) {
    if (p.two_sided || p.friction) continue;
    const double v = p.violation(x1);
    if (v > 0.0) e += 0.5 * p.stiffness * v * v;
  }
  return e;
}

RotationShare energy_limited_share(const TetFemModel& model, const std::vector<double>& mass,
                                   const Eigen::VectorXd& x0, const Eigen::VectorXd& v0,
                                   const Eigen::VectorXd& x1, const Eigen::VectorXd& v1,
                                   const Eigen::VectorXd& u, const Eigen::VectorXd& f_ext, double h,
                                   std::span<const TickPlane> planes, std::span<const double> impulses,
                                   double credit, Eigen::VectorXd& x_s, Eigen::VectorXd& v_s) {
  return limited_share(
      [&](double s) {
        x_s = x1 + (s * h) * u;
        v_s = v1 + s * u;
        return step_energy_balance(model, mass, x0, v0, x_s, v_s, f_ext, h, planes, impulses);
      },
      credit);
}

}  // namespace clockwork
