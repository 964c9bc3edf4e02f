#include "contact/penalty/penalty_potential.hpp"

#include <unsupported/Eigen/AutoDiff>

#include "engine/psd.hpp"

namespace clockwork {

namespace {

/// The closest-feature region of a pair: the vertices of each side whose weight is
/// non-zero (their affine hull carries the closest point).
struct Region {
  int a[2], na = 0;  // side A
  int b[3], nb = 0;  // side B
};

Region region_of(PairType type, const Eigen::Vector4d& w) {
  Region r;
  const int split = type == PairType::VertexTriangle ? 1 : 2;
  for (int i = 0; i < 4; ++i) {
    if (w[i] == 0.0) continue;
    if (i < split) r.a[r.na++] = i;
    else r.b[r.nb++] = i;
  }
  return r;
}

/// Weights inside a region as functions of x: minimise |y_A − y_B|² over the affine
/// hulls of the region's vertices (normal equations of at most two unknowns).
template <typename S>
Eigen::Matrix<S, 4, 1> region_weights(const Region& r, const Eigen::Matrix<S, 3, 4>& x) {
  using V3 = Eigen::Matrix<S, 3, 1>;
  Eigen::Matrix<S, 3, 2> M;
  int cols[2];
  int m = 0;
  for (int k = 1; k < r.na; ++k) {
    M.col(m) = x.col(r.a[k]) - x.col(r.a[0]);
    cols[m++] = r.a[k];
  }
  for (int k = 1; k < r.nb; ++k) {
    M.col(m) = -(x.col(r.b[k]) - x.col(r.b[0]));
    cols[m++] = r.b[k];
  }
  const V3 r0 = x.col(r.a[0]) - x.col(r.b[0]);
  S z[2] = {S(0), S(0)};
  if (m == 1) {
    const S g = M.col(0).squaredNorm();
    if (g > S(0)) z[0] = -M.col(0).dot(r0) / g;
  } else if (m == 2) {
    const S g00 = M.col(0).squaredNorm(), g01 = M.col(0).dot(M.col(1)),
            g11 = M.col(1).squaredNorm();
    const S b0 = -M.col(0).dot(r0), b1 = -M.col(1).dot(r0);
    const S det = g00 * g11 - g01 * g01;
    if (det > S(1e-14) * g00 * g11) {
      z[0] = (b0 * g11 - b1 * g01) / det;
      z[1] = (g00 * b1 - g01 * b0) / det;
    }
  }
  Eigen::Matrix<S, 4, 1> w = Eigen::Matrix<S, 4, 1>::Zero();
  w[r.a[0]] = S(1);
  w[r.b[0]] = S(-1);
  for (int k = 0; k < m; ++k) {
    const bool side_a = k < r.na - 1;
    const S sign = side_a ? S(1) : S(-1);
    w[cols[k]] += sign * z[k];
    w[side_a ? r.a[0] : r.b[0]] -= sign * z[k];
  }
  return w;
}

template <typename S>
Eigen::Matrix<S, 12, 1> layer_gradient(const Region& r, const Eigen::Matrix<S, 3, 4>& x,
                                       const PenaltyLayer& layer) {
  using std::sqrt;
  const Eigen::Matrix<S, 4, 1> w = region_weights(r, x);
  const Eigen::Matrix<S, 3, 1> y = x * w;
  const S d = sqrt(y.squaredNorm());
  const Eigen::Matrix<S, 3, 1> n = y / d;
  Eigen::Matrix<S, 12, 1> g;
  const S J = layer.impulse(d, 1.0);
  for (int i = 0; i < 4; ++i) g.template segment<3>(3 * i) = (-J * w[i]) * n;
  return g;
}

}  // namespace

double PenaltyLayer::value(const StencilPositions<4>& x) const {
  return energy(pair_closest(type, x).distance);
}

StencilVector<4> PenaltyLayer::gradient(const StencilPositions<4>& x) const {
  const PairClosest c = pair_closest(type, x);
  StencilVector<4> g = StencilVector<4>::Zero();
  if (!pushes(c.distance) || c.distance == 0.0) return g;
  const Vec3 n = c.y / c.distance;
  const double J = impulse(c.distance, 1.0);
  for (int i = 0; i < 4; ++i) g.segment<3>(3 * i) = (-J * c.w[i]) * n;
  return g;
}

StencilMatrix<4> PenaltyLayer::hessian(const StencilPositions<4>& x, bool project_psd) const {
  const PairClosest c = pair_closest(type, x);
  StencilMatrix<4> H = StencilMatrix<4>::Zero();
  if (!pushes(c.distance) || c.distance == 0.0) return H;
  using AD = Eigen::AutoDiffScalar<Eigen::Matrix<double, 12, 1>>;
  Eigen::Matrix<AD, 3, 4> xa;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) xa(i, j) = AD(x(i, j), 12, 3 * j + i);
  const Eigen::Matrix<AD, 12, 1> ga = layer_gradient(region_of(type, c.w), xa, *this);
  for (int row = 0; row < 12; ++row) H.row(row) = ga[row].derivatives().transpose();
  H = 0.5 * (H + H.transpose()).eval();
  if (project_psd) project_to_psd(H);
  return H;
}

}  // namespace clockwork
