#include "integrators/fem/tet_fem.hpp"

#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <cassert>
#include <tuple>

#include "engine/psd.hpp"

namespace clockwork {

namespace {

Mat3 edge_matrix(const StencilPositions<4>& x) {
  Mat3 Ds;
  Ds << x.col(1) - x.col(0), x.col(2) - x.col(0), x.col(3) - x.col(0);
  return Ds;
}

/// Gradients of the four barycentric shape functions (columns b_0..b_3): F = Σ_a x_a b_aᵀ,
/// b_a = (row a−1 of D_m⁻¹)ᵀ for a = 1..3 and b_0 = −(b_1 + b_2 + b_3).
Eigen::Matrix<double, 3, 4> shape_gradients(const Mat3& Dm_inv) {
  Eigen::Matrix<double, 3, 4> b;
  b.rightCols<3>() = Dm_inv.transpose();
  b.col(0) = -b.rightCols<3>().rowwise().sum();
  return b;
}

/// ∂V/∂x from ∂V/∂F = vol P: the gradient at vertex a is vol P b_a.
StencilVector<4> nodal(const Mat3& P, const Eigen::Matrix<double, 3, 4>& b, double volume) {
  StencilVector<4> g;
  for (int a = 0; a < 4; ++a) g.segment<3>(3 * a) = volume * P * b.col(a);
  return g;
}

/// F = U diag(σ) Vᵀ with U, V rotations: a reflection is moved into the sign of the
/// smallest singular value, so R = U Vᵀ is a rotation even for an inverted element.
struct SignedSvd {
  Mat3 U, V;
  Vec3 sigma;
};

SignedSvd signed_svd(const Mat3& F) {
  const Eigen::JacobiSVD<Mat3> svd(F, Eigen::ComputeFullU | Eigen::ComputeFullV);
  SignedSvd s{svd.matrixU(), svd.matrixV(), svd.singularValues()};
  if (s.U.determinant() < 0.0) {
    s.U.col(2) *= -1.0;
    s.sigma[2] *= -1.0;
  }
  if (s.V.determinant() < 0.0) {
    s.V.col(2) *= -1.0;
    s.sigma[2] *= -1.0;
  }
  return s;
}

}  // namespace

std::pair<double, double> lame_3d(double young, double poisson) {
  return {young / (2.0 * (1.0 + poisson)),
          young * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson))};
}

double signed_volume(const StencilPositions<4>& x) { return edge_matrix(x).determinant() / 6.0; }

Mat3 polar_rotation(const Mat3& F) {
  const SignedSvd s = signed_svd(F);
  return s.U * s.V.transpose();
}

// ---------------------------------------------------------------------------------------
// Linear FEM. With ε = sym(F) − I and Ψ = μ ε:ε + ½ λ (tr ε)², V is quadratic in x and
// vanishes with its gradient at X, so V = ½ (x − X)ᵀ K (x − X) with
//   K_ab = vol [ μ (b_a·b_b) I + μ b_b b_aᵀ + λ b_a b_bᵀ ]   (3×3 block of vertices a, b),
// from ∂F/∂x_a^i = e_i b_aᵀ and ε:ε, tr ε differentiated twice (= vol Bᵀ C B).
LinearTet LinearTet::from_rest(const StencilPositions<4>& rest, double young, double poisson) {
  assert(signed_volume(rest) > 0.0);
  const auto [mu, lambda] = lame_3d(young, poisson);
  const Mat3 Dm_inv = edge_matrix(rest).inverse();
  const Eigen::Matrix<double, 3, 4> b = shape_gradients(Dm_inv);
  const double volume = signed_volume(rest);
  LinearTet t;
  t.rest = rest;
  for (int a = 0; a < 4; ++a)
    for (int c = 0; c < 4; ++c)
      t.K.block<3, 3>(3 * a, 3 * c) = volume * (mu * b.col(a).dot(b.col(c)) * Mat3::Identity() +
                                                mu * b.col(c) * b.col(a).transpose() +
                                                lambda * b.col(a) * b.col(c).transpose());
  return t;
}

double LinearTet::value(const StencilPositions<4>& x) const {
  const StencilVector<4> u = (x - rest).reshaped();
  return 0.5 * u.dot(K * u);
}

StencilVector<4> LinearTet::gradient(const StencilPositions<4>& x) const {
  return K * StencilVector<4>((x - rest).reshaped());
}

StencilMatrix<4> LinearTet::hessian(const StencilPositions<4>&, bool) const { return K; }

// ---------------------------------------------------------------------------------------
// Corotational FEM. F = R S, and in the signed SVD F = U Σ Vᵀ: R = U Vᵀ, S = V Σ Vᵀ, so
//   Ψ = μ Σ_i (σ_i − 1)² + ½ λ (Σ_i σ_i − 3)²  (= μ ||F − R||² + ½ λ (tr(RᵀF) − 3)²).
// First Piola stress: P = 2μ (F − R) + λ (tr(RᵀF) − 3) R = R [2μ (S − I) + λ tr(S − I) I]
// = U diag(p) Vᵀ with p_i = 2μ (σ_i − 1) + λ (Σσ − 3). The dR terms drop out: RᵀdR is
// skew and multiplies the symmetric S − I. Hence ∂V/∂x_a = vol R σ_lin(S − I) b_a, the
// warped force R K (Rᵀx − X) of [MG04].
//
// Exact tangent: dP = 2μ dF + c dR + λ tr(RᵀdF) R with c = λ (tr S − 3) − 2μ (using
// d tr(RᵀF) = tr(RᵀdF), again because RᵀdR is skew). For dR write M = Uᵀ dF V and
// W̃ = Uᵀ dR V (skew, since dR = R Ω and Uᵀ R Ω V = Vᵀ Ω V). Differentiating F = R S,
// Rᵀ dF = Ω S + dS; its skew part gives Ω S + S Ω = Rᵀ dF − dFᵀ R, which in the SVD frame
// reads W̃ Σ + Σ W̃ = M − Mᵀ, i.e. W̃_ij = (M_ij − M_ji) / (σ_i + σ_j) (equivalently
// w = (tr(S) I − S)⁻¹ axial(Rᵀ dF − dFᵀ R)), and dR = U W̃ Vᵀ. So
//   Uᵀ dP V = 2μ M + c W̃ + λ tr(M) I.
// σ_i + σ_j ≥ 0 with the signed SVD (σ_1 ≥ σ_2 ≥ |σ_3|); it vanishes only for a
// flattened element, where R jumps: the denominator is floored there (no crash).
CorotationalTet CorotationalTet::from_rest(const StencilPositions<4>& rest, double young,
                                           double poisson) {
  assert(signed_volume(rest) > 0.0);
  CorotationalTet t;
  t.Dm_inv = edge_matrix(rest).inverse();
  t.volume = signed_volume(rest);
  std::tie(t.mu, t.lambda) = lame_3d(young, poisson);
  const Eigen::Matrix<double, 4, 3> bt = shape_gradients(t.Dm_inv).transpose();
  const Eigen::HouseholderQR<Eigen::Matrix<double, 4, 3>> qr(bt);
  t.Q = qr.householderQ() * Eigen::Matrix<double, 4, 3>::Identity();
  t.R = qr.matrixQR().topRows<3>().triangularView<Eigen::Upper>();
  return t;
}

double CorotationalTet::value(const StencilPositions<4>& x) const {
  const SignedSvd s = signed_svd(edge_matrix(x) * Dm_inv);
  const double tr = s.sigma.sum() - 3.0;
  return volume * (mu * (s.sigma.array() - 1.0).square().sum() + 0.5 * lambda * tr * tr);
}

StencilVector<4> CorotationalTet::gradient(const StencilPositions<4>& x) const {
  const SignedSvd s = signed_svd(edge_matrix(x) * Dm_inv);
  const double tr = s.sigma.sum() - 3.0;
  const Vec3 p = 2.0 * mu * (s.sigma.array() - 1.0).matrix() + Vec3::Constant(lambda * tr);
  const Mat3 P = s.U * p.asDiagonal() * s.V.transpose();
  return nodal(P, shape_gradients(Dm_inv), volume);
}

namespace {

/// The tangent dP/dF of the corotational stress in the SVD frame: for M = Uᵀ dF V,
/// Uᵀ dP V = 2μ M + λ tr(M) I + c W̃(M) (see above), with the floored 1 / (σ_i + σ_j).
struct CorotationalTangent {
  SignedSvd s;
  double mu, lambda, c;
  Mat3 inv_sum;  ///< 1 / (σ_i + σ_j), off-diagonal only

  CorotationalTangent(const Mat3& F, double mu_, double lambda_)
      : s(signed_svd(F)), mu(mu_), lambda(lambda_) {
    c = lambda * (s.sigma.sum() - 3.0) - 2.0 * mu;
    const double floor = 1e-12 * std::max(std::abs(s.sigma[0]), 1e-300);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) inv_sum(i, j) = 1.0 / std::max(s.sigma[i] + s.sigma[j], floor);
  }
  Mat3 apply(const Mat3& M) const {  // Uᵀ dP V from M = Uᵀ dF V
    Mat3 dP = 2.0 * mu * M + lambda * M.trace() * Mat3::Identity();
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q)
        if (r != q) dP(r, q) += c * (M(r, q) - M(q, r)) * inv_sum(r, q);
    return dP;
  }
  /// Whether dP/dF is PSD. Its eigenvectors in the SVD frame are explicit: the diagonal
  /// entries M_ii (block 2μ I + λ 11ᵀ: eigenvalues 2μ, 2μ + 3λ) and, per pair i < j,
  /// M_ij = M_ji (2μ) and M_ij = −M_ji (2μ + 2c / (σ_i + σ_j), the rotation's mode:
  /// negative under compression). The element Hessian vol Gᵀ (dP/dF) G, G the map
  /// from nodal displacements onto all of dF, is PSD exactly when dP/dF is.
  bool psd() const {
    if (!(mu >= 0.0 && 2.0 * mu + 3.0 * lambda >= 0.0)) return false;
    for (int i = 0; i < 3; ++i)
      for (int j = i + 1; j < 3; ++j)
        if (!(mu + c * inv_sum(i, j) >= 0.0)) return false;
    return true;
  }
};

}  // namespace

StencilMatrix<4> CorotationalTet::hessian(const StencilPositions<4>& x, bool project_psd) const {
  const CorotationalTangent t(edge_matrix(x) * Dm_inv, mu, lambda);
  const SignedSvd& s = t.s;
  StencilMatrix<4> H;
  if (!project_psd || t.psd()) {
    // Column by column: dF = e_i b_aᵀ, so M = Uᵀ dF V = (row i of U)ᵀ (Vᵀ b_a)ᵀ. A PSD
    // tangent needs no projection (the eigenvalue clamp would return it unchanged).
    const Eigen::Matrix<double, 3, 4> b = shape_gradients(Dm_inv);
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) {
        const Mat3 M = s.U.row(i).transpose() * (s.V.transpose() * b.col(a)).transpose();
        H.col(3 * a + i) = nodal(s.U * t.apply(M) * s.V.transpose(), b, volume);
      }
    H = (0.5 * (H + H.transpose())).eval();  // exact tangent is symmetric; remove rounding
    return H;
  }
  // Indefinite: clamp H's negative eigenvalues on the 9 coordinates y = vec([dx_a] Q)
  // that carry dF = Y R; translations are H's null space and stay there. With vec(dF) =
  // (Rᵀ ⊗ I) y and vec(U M Vᵀ) = (V ⊗ U) vec(M), H = (Q ⊗ I) S (Q ⊗ I)ᵀ for
  //   S = vol T Â Tᵀ,  T = (R V) ⊗ U,  Â the 9 × 9 tangent in the SVD frame;
  // Q ⊗ I has orthonormal columns, so clamping S's eigenvalues clamps H's: the
  // 12 × 12 eigenproblem of project_to_psd becomes a 9 × 9 one (~2.5× cheaper).
  Eigen::Matrix<double, 9, 9> A;
  for (int l = 0; l < 3; ++l)
    for (int k = 0; k < 3; ++k) {
      Mat3 E = Mat3::Zero();
      E(k, l) = 1.0;
      A.col(k + 3 * l) = t.apply(E).reshaped();
    }
  const Mat3 RV = R * s.V;
  Eigen::Matrix<double, 9, 9> T;
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 3; ++q) T.block<3, 3>(3 * p, 3 * q) = RV(p, q) * s.U;
  Eigen::Matrix<double, 9, 9> S = volume * T * A * T.transpose();
  S = (0.5 * (S + S.transpose())).eval();
  project_to_psd(S);
  // H = (Q ⊗ I) S (Q ⊗ I)ᵀ: block (a, b) = Σ_pq Q(a, p) Q(b, q) S_pq.
  Eigen::Matrix<double, 12, 9> QS;
  for (int a = 0; a < 4; ++a)
    for (int q = 0; q < 3; ++q) {
      Mat3 sum = Mat3::Zero();
      for (int p = 0; p < 3; ++p) sum += Q(a, p) * S.block<3, 3>(3 * p, 3 * q);
      QS.block<3, 3>(3 * a, 3 * q) = sum;
    }
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      Mat3 sum = Mat3::Zero();
      for (int q = 0; q < 3; ++q) sum += Q(b, q) * QS.block<3, 3>(3 * a, 3 * q);
      H.block<3, 3>(3 * a, 3 * b) = sum;
    }
  return H;
}

StencilVector<4> CorotationalTet::hessian_product(const StencilPositions<4>& x,
                                                  const StencilVector<4>& u) const {
  const CorotationalTangent t(edge_matrix(x) * Dm_inv, mu, lambda);
  const Eigen::Matrix<double, 3, 4> b = shape_gradients(Dm_inv);
  const Mat3 dF = u.reshaped(3, 4) * b.transpose();
  const Mat3 dP = t.s.U * t.apply(t.s.U.transpose() * dF * t.s.V) * t.s.V.transpose();
  return nodal(dP, b, volume);
}

}  // namespace clockwork
