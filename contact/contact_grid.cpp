// ContactSystem's kinetic hash grid: every collision triangle's cell range, grown by
// η(1)/2, certified until a vertex leaves it; triangles sharing a cell form pairs.
#include <algorithm>
#include <cmath>

#include "contact/contact_system.hpp"

namespace clockwork {

// --- kinetic hash grid ---------------------------------------------------------------

std::uint64_t ContactSystem::cell_key(int i, int j, int k) {
  constexpr std::uint64_t kOffset = 1u << 20, kMask = (1u << 21) - 1;
  return ((std::uint64_t(i + kOffset) & kMask) << 42) | ((std::uint64_t(j + kOffset) & kMask) << 21) |
         (std::uint64_t(k + kOffset) & kMask);
}

ContactSystem::CellRange ContactSystem::cells_of(const Triangle& tri, double t) const {
  // Box grown by η(1)/2 (two triangles within η(1) then overlap) plus an eighth of a
  // cell of hysteresis, so that a range just recomputed does not fail at once. A
  // vertex in a position envelope counts as its whole ball.
  const double grow = 0.5 * params_.eta1 + 0.125 * params_.cell_size;
  Vec3 lo = Vec3::Constant(kNever), hi = Vec3::Constant(-kNever);
  for (Index a : tri.v) {
    const Vec3 x = contingency_.envelope_position(kFar, a, t);
    const double r = contingency_.envelope_radius(kFar, a);
    lo = lo.cwiseMin(x - Vec3::Constant(r));
    hi = hi.cwiseMax(x + Vec3::Constant(r));
  }
  CellRange r;
  for (int k = 0; k < 3; ++k) {
    r.lo[k] = static_cast<int>(std::floor((lo[k] - grow) / params_.cell_size));
    r.hi[k] = static_cast<int>(std::floor((hi[k] + grow) / params_.cell_size));
  }
  return r;
}

double ContactSystem::grid_failure_time(const Triangle& tri, double t) const {
  // The certificate: every vertex, grown by η(1)/2, stays inside the range's box,
  // for any velocity within the vertex's envelope (centre u, slack δ), or for any
  // position in its ball (grown by the radius too; u and δ are then 0).
  const double c = params_.cell_size;
  double tf = kNever;
  for (Index a : tri.v) {
    const double radius = contingency_.envelope_radius(kFar, a);
    const double grow = 0.5 * params_.eta1 + radius;
    const double slack = contingency_.velocity_slack(kFar, a);
    const Vec3 x = contingency_.envelope_position(kFar, a, t);
    const Vec3& u = contingency_.envelope_velocity(kFar, a);
    for (int k = 0; k < 3; ++k) {
      const double below = x[k] - grow - tri.range.lo[k] * c;
      const double above = (tri.range.hi[k] + 1) * c - (x[k] + grow);
      if (radius > 0.0) {
        // A ball holds or fails at once: it does not move.
        if (below < 0.0 || above < 0.0) return t;
        continue;
      }
      if (u[k] - slack < 0.0) tf = std::min(tf, t + std::max(0.0, below) / (slack - u[k]));
      if (u[k] + slack > 0.0) tf = std::min(tf, t + std::max(0.0, above) / (u[k] + slack));
    }
  }
  return tf;
}

void ContactSystem::move_triangle(std::uint32_t id, const CellRange& from, const CellRange& to,
                                  bool fresh) {
  const auto inside = [](const CellRange& r, int i, int j, int k) {
    return i >= r.lo[0] && i <= r.hi[0] && j >= r.lo[1] && j <= r.hi[1] && k >= r.lo[2] &&
           k <= r.hi[2];
  };
  // Leave first, then enter: a pair that only moves between shared cells keeps a
  // positive count only if it still shares one, so it is never destroyed and
  // recreated in one update — the counts are updated per cell below.
  if (!fresh) {
    for (int i = from.lo[0]; i <= from.hi[0]; ++i)
      for (int j = from.lo[1]; j <= from.hi[1]; ++j)
        for (int k = from.lo[2]; k <= from.hi[2]; ++k) {
          if (inside(to, i, j, k)) continue;
          auto it = cells_.find(cell_key(i, j, k));
          if (it == cells_.end()) continue;
          auto& list = it->second;
          list.erase(std::find(list.begin(), list.end(), id));
          for (std::uint32_t other : list) triangle_pair_overlap(id, other, -1);
          if (list.empty()) cells_.erase(it);
        }
  }
  for (int i = to.lo[0]; i <= to.hi[0]; ++i)
    for (int j = to.lo[1]; j <= to.hi[1]; ++j)
      for (int k = to.lo[2]; k <= to.hi[2]; ++k) {
        if (!fresh && inside(from, i, j, k)) continue;
        auto& list = cells_[cell_key(i, j, k)];
        for (std::uint32_t other : list) triangle_pair_overlap(id, other, +1);
        list.push_back(id);
      }
}

double ContactSystem::grid_failed(EventSlot slot, double t) {
  ++counters_.grid_failures;
  Triangle& tri = triangles_[slot];
  const CellRange to = cells_of(tri, t);
  const CellRange from = tri.range;
  tri.range = to;
  move_triangle(slot, from, to, /*fresh=*/false);
  return grid_failure_time(triangles_[slot], t);
}

void ContactSystem::grid_support_changed(EventSlot slot) {
  const double t = kernel_.now();
  const double tf = grid_failure_time(triangles_[slot], t);
  if (tf < kNever) kernel_.reschedule_no_later(grid_kind_, slot, tf);
  else kernel_.cancel(grid_kind_, slot);
}

}  // namespace clockwork
