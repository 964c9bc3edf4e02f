#include "integrators/energy/wind_force.hpp"

#include <unsupported/Eigen/AutoDiff>

namespace clockwork {

namespace {
template <typename Scalar>
Eigen::Matrix<Scalar, 9, 1> wind_force_t(const Eigen::Matrix<Scalar, 3, 3>& x, const Vec3& u,
                                         double drag) {
  using V3 = Eigen::Matrix<Scalar, 3, 1>;
  using std::sqrt;
  const V3 N = Scalar(0.5) * V3(x.col(1) - x.col(0)).cross(V3(x.col(2) - x.col(0)));
  const Scalar area = sqrt(N.squaredNorm());
  Eigen::Matrix<Scalar, 9, 1> f = Eigen::Matrix<Scalar, 9, 1>::Zero();
  if (!(area > Scalar(0))) return f;
  const V3 F = N * (drag * u.cast<Scalar>().dot(N) / area);
  for (int i = 0; i < 3; ++i) f.template segment<3>(3 * i) = F / Scalar(3);
  return f;
}

Vec3 relative_wind(const Vec3& w, const StencilPositions<3>& v) {
  return w - (v.col(0) + v.col(1) + v.col(2)) / 3.0;
}
}  // namespace

WindForce::Vector9 WindForce::force(const StencilPositions<3>& x,
                                    const StencilPositions<3>& v) const {
  return wind_force_t<double>(x, relative_wind(wind_velocity, v), drag);
}

WindForce::Matrix9 WindForce::force_jacobian_x(const StencilPositions<3>& x,
                                               const StencilPositions<3>& v) const {
  using AD = Eigen::AutoDiffScalar<Eigen::Matrix<double, 9, 1>>;
  Eigen::Matrix<AD, 3, 3> xa;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) xa(i, j) = AD(x(i, j), 9, 3 * j + i);
  const auto f = wind_force_t<AD>(xa, relative_wind(wind_velocity, v), drag);
  Matrix9 J;
  for (int r = 0; r < 9; ++r) J.row(r) = f[r].derivatives().transpose();
  return J;
}

WindForce::Matrix9 WindForce::force_jacobian_v(const StencilPositions<3>& x,
                                               const StencilPositions<3>&) const {
  const Vec3 N = 0.5 * (x.col(1) - x.col(0)).cross(x.col(2) - x.col(0));
  const double area = N.norm();
  Matrix9 J = Matrix9::Zero();
  if (!(area > 0.0)) return J;
  const Mat3 block = -(drag / 9.0) * N * N.transpose() / area;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) J.block<3, 3>(3 * i, 3 * j) = block;
  return J;
}

}  // namespace clockwork
