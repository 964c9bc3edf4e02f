#pragma once
/// Spring between two vertices, with an optional quartic term for the
/// Fermi–Pasta–Ulam chain: V = ½ k (l − L)² + ¼ β (l − L)⁴, l = |x1 − x0|.
#include <cassert>

#include "engine/psd.hpp"
#include "engine/types.hpp"
#include "engine/energy_term.hpp"

namespace clockwork {

struct SpringEnergy {
  static constexpr int kVertices = 2;
  double stiffness = 0.0;    ///< k, N/m, >= 0
  double quartic = 0.0;      ///< β, N/m³, >= 0
  double rest_length = 0.0;  ///< L, m, > 0

  double value(const StencilPositions<2>& x) const {
    const double d = (x.col(1) - x.col(0)).norm() - rest_length;
    return 0.5 * stiffness * d * d + 0.25 * quartic * d * d * d * d;
  }
  StencilVector<2> gradient(const StencilPositions<2>& x) const {
    const Vec3 e = x.col(1) - x.col(0);
    const double l = e.norm();
    assert(l > 0.0);
    const double d = l - rest_length;
    const Vec3 f = ((stiffness * d + quartic * d * d * d) / l) * e;
    StencilVector<2> g;
    g << -f, f;
    return g;
  }
  StencilMatrix<2> hessian(const StencilPositions<2>& x, bool project_psd = false) const {
    const Vec3 e = x.col(1) - x.col(0);
    const double l = e.norm();
    assert(l > 0.0);
    const Vec3 u = e / l;
    const double d = l - rest_length;
    const double dV = stiffness * d + quartic * d * d * d;  // dV/dl
    const double d2V = stiffness + 3.0 * quartic * d * d;   // d²V/dl²
    const Mat3 uu = u * u.transpose();
    const Mat3 K = d2V * uu + (dV / l) * (Mat3::Identity() - uu);
    StencilMatrix<2> H;
    H << K, -K, -K, K;
    if (project_psd) project_to_psd(H);
    return H;
  }
};

static_assert(EnergyTerm<SpringEnergy>);

}  // namespace clockwork
