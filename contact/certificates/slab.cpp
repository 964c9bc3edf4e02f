#include "contact/certificates/slab.hpp"

namespace clockwork {

std::optional<Slab> make_slab(PairType type, const StencilPositions<4>& x,
                              const StencilPositions<4>& v, double t0, double threshold) {
  return make_slab(type, x, pair_closest(type, x), v, t0, threshold);
}

std::optional<Slab> make_slab(PairType type, const StencilPositions<4>& x, const PairClosest& c,
                              const StencilPositions<4>& v, double t0, double threshold) {
  if (!(c.distance > threshold) || c.distance == 0.0) return std::nullopt;
  const Vec3 n = (-c.y / c.distance).normalized();
  return separation_slab<4>(x, side_a_count(type), n, v, t0, threshold);
}

}  // namespace clockwork
