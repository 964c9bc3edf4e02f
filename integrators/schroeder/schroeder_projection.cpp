#include "integrators/schroeder/schroeder_projection.hpp"

#include <cassert>
#include <cmath>
#include <stdexcept>
#include <string>

namespace clockwork {

ForceDistribution::ForceDistribution(std::vector<Index> subset, const std::vector<double>& mass)
    : subset_(std::move(subset)) {
  std::vector<bool> seen(mass.size(), false);
  for (Index a : subset_) {
    if (a >= mass.size())
      throw std::invalid_argument("force distribution: particle " + std::to_string(a) +
                                  " out of range");
    if (seen[a])
      throw std::invalid_argument("force distribution: particle " + std::to_string(a) +
                                  " listed twice");
    seen[a] = true;
    if (!(mass[a] > 0.0))
      throw std::invalid_argument("force distribution: particle " + std::to_string(a) +
                                  " has mass " + std::to_string(mass[a]));
    mass_.push_back(mass[a]);
    sqrt_mass_.push_back(std::sqrt(mass[a]));
    total_mass_ += mass[a];
  }
  ones_.assign(subset_.size(), 1.0);
  r_.assign(subset_.size(), Vec3::Zero());
}

void ForceDistribution::update(const Vector& x) {
  if (subset_.empty()) return;
  c_.setZero();
  for (std::size_t i = 0; i < subset_.size(); ++i) c_ += mass_[i] * x.segment<3>(3 * subset_[i]);
  c_ /= total_mass_;
  // Î = Σ m_i r*_i r*_iᵀ = Σ m_i (|r_i|² I − r_i r_iᵀ).
  Mat3 inertia = Mat3::Zero();
  for (std::size_t i = 0; i < subset_.size(); ++i) {
    r_[i] = x.segment<3>(3 * subset_[i]) - c_;
    inertia += mass_[i] * (r_[i].squaredNorm() * Mat3::Identity() - r_[i] * r_[i].transpose());
  }
  // Symmetric pseudo-inverse: a collinear subset has no inertia about its axis.
  Eigen::SelfAdjointEigenSolver<Mat3> eig(inertia);
  const Vec3 lambda = eig.eigenvalues();
  const double cutoff = 1e-12 * std::max(lambda.cwiseAbs().maxCoeff(), 1e-300);
  Vec3 inv = Vec3::Zero();
  for (int k = 0; k < 3; ++k)
    if (lambda[k] > cutoff) inv[k] = 1.0 / lambda[k];
  inertia_inv_ = eig.eigenvectors() * inv.asDiagonal() * eig.eigenvectors().transpose();
}

void ForceDistribution::rigid_response(const Vector& y, const std::vector<double>& weight, Vec3& dv,
                                       Vec3& dw) const {
  Vec3 force = Vec3::Zero(), torque = Vec3::Zero();
  for (std::size_t i = 0; i < subset_.size(); ++i) {
    const Vec3 f = weight[i] * y.segment<3>(3 * subset_[i]);
    force += f;
    torque += r_[i].cross(f);
  }
  dv = force / total_mass_;
  dw = inertia_inv_ * torque;
}

// Schroeder et al. §5: f̄_i = m_i (Δv̂ + Δω̂ × r_i), blended with ε.
void ForceDistribution::apply_force(Vector& f, double epsilon) const {
  assert(epsilon >= 0.0 && epsilon <= 1.0);
  if (subset_.empty() || epsilon == 0.0) return;
  Vec3 dv, dw;
  rigid_response(f, ones_, dv, dw);
  for (std::size_t i = 0; i < subset_.size(); ++i) {
    auto fi = f.segment<3>(3 * subset_[i]);
    fi = (1.0 - epsilon) * fi + epsilon * mass_[i] * (dv + dw.cross(r_[i]));
  }
}

void ForceDistribution::apply_scaled(Vector& y, double epsilon) const {
  assert(epsilon >= 0.0 && epsilon <= 1.0);
  if (subset_.empty() || epsilon == 0.0) return;
  Vec3 dv, dw;
  rigid_response(y, sqrt_mass_, dv, dw);
  for (std::size_t i = 0; i < subset_.size(); ++i) {
    auto yi = y.segment<3>(3 * subset_[i]);
    yi = (1.0 - epsilon) * yi + epsilon * sqrt_mass_[i] * (dv + dw.cross(r_[i]));
  }
}

double ForceDistribution::deformation_kinetic_energy(const Vector& v) const {
  if (subset_.empty()) return 0.0;
  // With weights m_i, the "force" m_i v_i gives v̂ = p / m̂ and ω̂ = Î⁻¹ L.
  Vec3 dv, dw;
  rigid_response(v, mass_, dv, dw);
  double e = 0.0;
  for (std::size_t i = 0; i < subset_.size(); ++i)
    e += 0.5 * mass_[i] * (v.segment<3>(3 * subset_[i]) - dv - dw.cross(r_[i])).squaredNorm();
  return e;
}

}  // namespace clockwork
