#include "integrators/energy/hinge_energy.hpp"

#include <unsupported/Eigen/AutoDiff>

#include <cmath>
#include <numbers>

#include "engine/psd.hpp"

namespace clockwork {

namespace {

/// θ − θ̄ wrapped to (−π, π]: a hinge folding through ±π is not a jump of 2π.
template <typename Scalar>
Scalar wrapped(Scalar delta) {
  using std::floor;
  constexpr double two_pi = 2.0 * std::numbers::pi;
  return delta - two_pi * floor((delta + std::numbers::pi) / two_pi);
}

/// What the angle and its gradient share: the edge e = x1 − x0, the two triangles'
/// normals and |e|² and |e|, for any scalar type (double, or AutoDiff for the Hessian).
template <typename Scalar>
struct HingeFrame {
  using V3 = Eigen::Matrix<Scalar, 3, 1>;
  V3 e, nA, nB;
  Scalar e2, elen;
  explicit HingeFrame(const Eigen::Matrix<Scalar, 3, 4>& x)
      : e(x.col(1) - x.col(0)),
        nA(e.cross(V3(x.col(2) - x.col(0)))),
        nB(V3(x.col(0) - x.col(1)).cross(V3(x.col(3) - x.col(1)))),
        e2(e.squaredNorm()),
        elen(sqrt_of(e2)) {}
  static Scalar sqrt_of(const Scalar& s) {
    using std::sqrt;
    return sqrt(s);
  }
  /// θ, with e normalised as Eigen's normalized() does (e itself when it vanishes).
  Scalar angle() const {
    using std::atan2;
    const V3 e_hat = e2 > Scalar(0) ? V3(e / elen) : e;
    return atan2(nA.cross(nB).dot(e_hat), nA.dot(nB));
  }
  /// ∂θ/∂x. The gradient with respect to an opposite vertex is −|e| n / |n|² (n its
  /// triangle's normal, |n| / |e| its height); the edge vertices take the negated sum
  /// weighted by the opposite vertices' projections on the edge, which keeps
  /// Σ ∂θ/∂x_i = 0.
  Eigen::Matrix<Scalar, 12, 1> gradient(const Eigen::Matrix<Scalar, 3, 4>& x) const {
    const V3 g2 = nA * (-elen / nA.squaredNorm());
    const V3 g3 = nB * (-elen / nB.squaredNorm());
    const Scalar a2 = V3(x.col(2) - x.col(0)).dot(e) / e2;
    const Scalar a3 = V3(x.col(3) - x.col(0)).dot(e) / e2;
    Eigen::Matrix<Scalar, 12, 1> g;
    g.template segment<3>(0) = -(Scalar(1) - a2) * g2 - (Scalar(1) - a3) * g3;
    g.template segment<3>(3) = -a2 * g2 - a3 * g3;
    g.template segment<3>(6) = g2;
    g.template segment<3>(9) = g3;
    return g;
  }
};

}  // namespace

HingeBending HingeBending::from_rest(const StencilPositions<4>& rest, double k_bending) {
  const Vec3 e = rest.col(1) - rest.col(0);
  const double area_a = 0.5 * e.cross(Vec3(rest.col(2) - rest.col(0))).norm();
  const double area_b = 0.5 * e.cross(Vec3(rest.col(3) - rest.col(0))).norm();
  HingeBending h;
  h.stiffness = k_bending;
  h.weight = 3.0 * e.squaredNorm() / (area_a + area_b);
  h.rest_angle = angle(rest);
  return h;
}

double HingeBending::angle(const StencilPositions<4>& x) { return HingeFrame<double>(x).angle(); }

StencilVector<4> HingeBending::angle_gradient(const StencilPositions<4>& x) {
  return HingeFrame<double>(x).gradient(x);
}

double HingeBending::angle_and_gradient(const StencilPositions<4>& x, StencilVector<4>& g) {
  const HingeFrame<double> frame(x);
  g = frame.gradient(x);
  return frame.angle();
}

double HingeBending::value(const StencilPositions<4>& x) const {
  const double d = wrapped(angle(x) - rest_angle);
  return stiffness * weight * d * d;
}

StencilVector<4> HingeBending::gradient(const StencilPositions<4>& x) const {
  StencilVector<4> g;
  value_and_gradient(x, g);
  return g;
}

double HingeBending::value_and_gradient(const StencilPositions<4>& x, StencilVector<4>& g) const {
  const double d = wrapped(angle_and_gradient(x, g) - rest_angle);
  g *= 2.0 * stiffness * weight * d;
  return stiffness * weight * d * d;
}

StencilMatrix<4> HingeBending::hessian(const StencilPositions<4>& x, bool project_psd) const {
  // H = 2 k w (∇θ ∇θᵀ + (θ − θ̄) ∇²θ); ∇²θ by forward-mode differentiation of ∇θ.
  using AD = Eigen::AutoDiffScalar<Eigen::Matrix<double, 12, 1>>;
  Eigen::Matrix<AD, 3, 4> xa;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i)
      xa(i, j) = AD(x(i, j), 12, 3 * j + i);
  const Eigen::Matrix<AD, 12, 1> ga = HingeFrame<AD>(xa).gradient(xa);
  StencilMatrix<4> hess_theta;
  StencilVector<4> g;
  for (int r = 0; r < 12; ++r) {
    g[r] = ga[r].value();
    hess_theta.row(r) = ga[r].derivatives().transpose();
  }
  hess_theta = 0.5 * (hess_theta + hess_theta.transpose()).eval();
  const double d = wrapped(angle(x) - rest_angle);
  StencilMatrix<4> H = (2.0 * stiffness * weight) * (g * g.transpose() + d * hess_theta);
  if (project_psd) project_to_psd(H);
  return H;
}

StencilMatrix<4> HingeBending::material_stiffness(const StencilPositions<4>& x) const {
  const StencilVector<4> g = angle_gradient(x);
  return (2.0 * stiffness * weight) * (g * g.transpose());
}

}  // namespace clockwork
