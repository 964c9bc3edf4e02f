#include "io/world/tick_pairs.hpp"

#include <algorithm>
#include <cassert>
#include <iterator>

namespace clockwork {

TickPairFinder::TickPairFinder(const VertexState& state, const ContactSystem& contact,
                               std::vector<PairOwner> owners, std::size_t body, double look_ahead)
    : state_(&state), contact_(&contact), owners_(std::move(owners)), look_ahead_(look_ahead) {
  assert(body < owners_.size());
  first_ = owners_[body].first;
  count_ = (body + 1 < owners_.size() ? owners_[body + 1].first : static_cast<Index>(state.size())) - first_;
}

bool TickPairFinder::plans_before(const PairOwner& other) const {
  const PairOwner& self = owner_of(first_);
  if (!(self.solid && other.solid) || other.step == self.step) return other.first < first_;
  return other.step > self.step;
}

const PairOwner& TickPairFinder::owner_of(Index vertex) const {
  return *std::prev(std::upper_bound(owners_.begin(), owners_.end(), vertex,
                                     [](Index v, const PairOwner& o) { return v < o.first; }));
}

void TickPairFinder::operator()(double time, double reach, std::vector<TickContactFeature>& out) {
  const VertexState& s = *state_;
  // A solid's coarse step moves its surface further than the layers look ahead
  // (1.25 η(1)): two blocks 1 cm apart closing at 1 m/s met inside one 10 ms step with
  // no plane, the layers alone stopped them between the steps, and the pair took 3.3 J
  // of elastic energy from 0.57 J (tests/integrators/implicit/test_pair_energy.cpp).
  if (look_ahead_ > 0.0) contact_->near_pairs_within(first_, count_, time, reach, look_ahead_, near_);
  else contact_->near_pairs(first_, count_, near_);
  out.clear();
  const bool solid = owner_of(first_).solid;
  // A solid's pair with an explicit cloth (neither a solid, a phantom nor an obstacle)
  // is the layers' alone (class comment).
  const auto with_explicit_cloth = [&](const ContactSystem::NearPair& p) {
    for (const Index v : p.v) {
      if (v >= first_ && v - first_ < count_) continue;
      const PairOwner& o = owner_of(v);
      if (!o.solid && !o.phantom && !o.obstacle) return true;
    }
    return false;
  };
  for (const ContactSystem::NearPair& p : near_) {
    if (solid && with_explicit_cloth(p)) continue;
    StencilPositions<4> x;
    for (int i = 0; i < 4; ++i) x.col(i) = s.position_at(p.v[i], time);
    const PairClosest c = pair_closest(p.type, x);
    TickContactFeature f;
    f.pair = true;
    Vec3 own_velocity = Vec3::Zero(), other_velocity = Vec3::Zero();
    double own_inverse = 0.0, other_inverse = 0.0;  // Σ w²/m per side, kernel masses
    bool left_to_other = false;
    for (int i = 0; i < 4; ++i) {
      const Index v = p.v[i];
      const double inverse = c.w[i] * c.w[i] * s.inv_mass(v);
      if (v >= first_ && v - first_ < count_) {
        f.vertices[i] = v - first_;
        f.weights[i] = c.w[i];
        own_velocity += c.w[i] * s.velocity(v);
        own_inverse += inverse;
        continue;
      }
      const PairOwner& owner = owner_of(v);
      left_to_other = left_to_other || (owner.plans_pairs && plans_before(owner));
      f.others[i] = v;
      f.other_weights[i] = c.w[i];
      f.other_phantom = owner.phantom;
      f.other_solid = owner.solid;
      f.other_first = owner.first;
      f.point -= c.w[i] * x.col(i);
      other_velocity -= c.w[i] * s.velocity(v);
      other_inverse += inverse;
    }
    // Planned by the other body: reported, not planned (SolveContact::planned_by_others).
    f.planned_by_other = left_to_other;
    f.other_inverse_mass = other_inverse;
    f.other_velocity = other_velocity;
    if (other_inverse + own_inverse > 0.0)
      f.velocity = (other_inverse * own_velocity + own_inverse * other_velocity) / (other_inverse + own_inverse);
    out.push_back(f);
  }
}

}  // namespace clockwork
