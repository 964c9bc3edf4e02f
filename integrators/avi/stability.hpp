#pragma once
/// Stability estimate for the period of an explicit stencil.
///
/// A stencil's linearised dynamics about x has angular frequencies ω² = eigenvalues
/// of M^{-1/2} H M^{-1/2} (H the PSD-projected stencil Hessian, M the lumped masses of
/// its vertices). Leapfrog is stable for h ω < 2, so we take
///     h = safety · 2 / ω_max,
/// with safety in (0, 1] (default 0.5) absorbing the coupling between stencils that
/// share vertices. Kinematic vertices drop out. Returns +infinity for a term with no
/// stiffness (e.g. gravity), NaN for one whose Hessian is not finite (a material so
/// stiff that it overflows: the caller must not take that for "no stiffness").
#include <Eigen/Eigenvalues>
#include <array>
#include <cmath>
#include <limits>

#include "engine/types.hpp"

namespace clockwork {

template <typename Term>
double stable_period(const Term& term, const StencilPositions<Term::kVertices>& x,
                     const std::array<double, Term::kVertices>& inv_masses, double safety) {
  constexpr int N = Term::kVertices;
  StencilMatrix<N> H = term.hessian(x, /*project_psd=*/true);
  StencilVector<N> s;
  for (int i = 0; i < N; ++i) s.template segment<3>(3 * i).setConstant(std::sqrt(inv_masses[i]));
  H = s.asDiagonal() * H * s.asDiagonal();
  if (!H.allFinite()) return std::numeric_limits<double>::quiet_NaN();
  Eigen::SelfAdjointEigenSolver<StencilMatrix<N>> eig(H, Eigen::EigenvaluesOnly);
  const double omega2 = eig.eigenvalues().maxCoeff();
  if (std::isnan(omega2)) return std::numeric_limits<double>::quiet_NaN();
  if (!(omega2 > 0.0)) return kNever;
  return safety * 2.0 / std::sqrt(omega2);
}

}  // namespace clockwork
