#include "integrators/energy/membrane_energy.hpp"

#include <cassert>

#include "engine/psd.hpp"

namespace clockwork {

namespace {
using Mat32 = Eigen::Matrix<double, 3, 2>;

Mat32 edges(const StencilPositions<3>& x) {
  Mat32 Ds;
  Ds << x.col(1) - x.col(0), x.col(2) - x.col(0);
  return Ds;
}
}  // namespace

MembraneStVK MembraneStVK::from_rest(const StencilPositions<3>& rest, double mu, double lambda) {
  assert(!is_degenerate(rest));
  const Vec3 e1 = rest.col(1) - rest.col(0), e2 = rest.col(2) - rest.col(0);
  const Vec3 t1 = e1.normalized();
  const Vec3 n = e1.cross(e2).normalized();
  const Vec3 t2 = n.cross(t1);
  Eigen::Matrix2d Dm;
  Dm << e1.dot(t1), e2.dot(t1), e1.dot(t2), e2.dot(t2);
  MembraneStVK m;
  m.Dm_inv = Dm.inverse();
  m.area = 0.5 * e1.cross(e2).norm();
  m.mu = mu;
  m.lambda = lambda;
  return m;
}

std::pair<double, double> MembraneStVK::lame_plane_stress(double young, double poisson) {
  return {young / (2.0 * (1.0 + poisson)), young * poisson / (1.0 - poisson * poisson)};
}

bool MembraneStVK::is_degenerate(const StencilPositions<3>& rest) {
  const Vec3 e1 = rest.col(1) - rest.col(0), e2 = rest.col(2) - rest.col(0);
  const double longest = std::max({e1.squaredNorm(), e2.squaredNorm(), (e2 - e1).squaredNorm()});
  const double area2 = e1.cross(e2).norm();
  return !(longest > 0.0) || !(area2 > 1e-12 * longest);
}

double MembraneStVK::value(const StencilPositions<3>& x) const {
  const Mat32 F = edges(x) * Dm_inv;
  const Eigen::Matrix2d E = 0.5 * (F.transpose() * F - Eigen::Matrix2d::Identity());
  const double tr = E.trace();
  return area * (mu * E.squaredNorm() + 0.5 * lambda * tr * tr);
}

StencilVector<3> MembraneStVK::gradient(const StencilPositions<3>& x) const {
  const Mat32 F = edges(x) * Dm_inv;
  const Eigen::Matrix2d E = 0.5 * (F.transpose() * F - Eigen::Matrix2d::Identity());
  const Eigen::Matrix2d S = 2.0 * mu * E + lambda * E.trace() * Eigen::Matrix2d::Identity();
  const Mat32 G = area * (F * S) * Dm_inv.transpose();  // ∂V/∂[x1 − x0, x2 − x0]
  StencilVector<3> g;
  g << -G.col(0) - G.col(1), G.col(0), G.col(1);
  return g;
}

double MembraneStVK::value_and_gradient(const StencilPositions<3>& x, StencilVector<3>& g) const {
  const Mat32 F = edges(x) * Dm_inv;
  const Eigen::Matrix2d E = 0.5 * (F.transpose() * F - Eigen::Matrix2d::Identity());
  const double tr = E.trace();
  const Eigen::Matrix2d S = 2.0 * mu * E + lambda * tr * Eigen::Matrix2d::Identity();
  const Mat32 G = area * (F * S) * Dm_inv.transpose();
  g << -G.col(0) - G.col(1), G.col(0), G.col(1);
  return area * (mu * E.squaredNorm() + 0.5 * lambda * tr * tr);
}

StencilMatrix<3> MembraneStVK::hessian(const StencilPositions<3>& x, bool project_psd) const {
  StencilMatrix<3> H = second_derivative(x, true);
  if (project_psd) project_to_psd(H);
  return H;
}

StencilMatrix<3> MembraneStVK::material_stiffness(const StencilPositions<3>& x) const {
  return second_derivative(x, false);
}

StencilMatrix<3> MembraneStVK::second_derivative(const StencilPositions<3>& x, bool with_stress) const {
  const Mat32 F = edges(x) * Dm_inv;
  const Eigen::Matrix2d E = 0.5 * (F.transpose() * F - Eigen::Matrix2d::Identity());
  const Eigen::Matrix2d S = 2.0 * mu * E + lambda * E.trace() * Eigen::Matrix2d::Identity();
  StencilMatrix<3> H;
  // Differentiate G = A P D_m^{-T}, P = F S, along each edge-vector coordinate: the
  // dF S part is the stress (geometric) term, F dS the material one.
  for (int a = 0; a < 2; ++a)
    for (int i = 0; i < 3; ++i) {
      Mat32 dDs = Mat32::Zero();
      dDs(i, a) = 1.0;
      const Mat32 dF = dDs * Dm_inv;
      const Eigen::Matrix2d dE = 0.5 * (dF.transpose() * F + F.transpose() * dF);
      const Eigen::Matrix2d dS = 2.0 * mu * dE + lambda * dE.trace() * Eigen::Matrix2d::Identity();
      const Mat32 dP = with_stress ? Mat32(dF * S + F * dS) : Mat32(F * dS);
      const Mat32 dG = area * dP * Dm_inv.transpose();
      StencilVector<3> col;
      col << -dG.col(0) - dG.col(1), dG.col(0), dG.col(1);
      H.col(3 * (a + 1) + i) = col;
    }
  for (int i = 0; i < 3; ++i) H.col(i) = -H.col(3 + i) - H.col(6 + i);
  return H;
}

}  // namespace clockwork
