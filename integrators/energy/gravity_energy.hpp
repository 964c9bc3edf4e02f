#pragma once
/// Uniform gravity on one vertex: V = −m g·x.
#include "engine/types.hpp"
#include "engine/energy_term.hpp"

namespace clockwork {

struct GravityEnergy {
  static constexpr int kVertices = 1;
  double mass = 0.0;         ///< kg, > 0
  Vec3 g = Vec3::Zero();     ///< m/s²

  double value(const StencilPositions<1>& x) const { return -mass * g.dot(x.col(0)); }
  StencilVector<1> gradient(const StencilPositions<1>&) const { return -mass * g; }
  StencilMatrix<1> hessian(const StencilPositions<1>&, bool = false) const {
    return StencilMatrix<1>::Zero();
  }
};

static_assert(EnergyTerm<GravityEnergy>);

}  // namespace clockwork
