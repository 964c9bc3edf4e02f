// ContactSystem's penalty layers (Harmon et al. 2009): the layer events' impulses,
// friction and retirement, layer activation and periods, and the layers' energy. The
// layer itself — η(l), r(l), its energy and impulse — is PenaltyLayer
// (contact/penalty/penalty_potential.hpp), the term the derivative tests check.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "contact/contact_system.hpp"
#include "contact/penalty/penalty_potential.hpp"
#include "engine/health.hpp"

namespace clockwork {

double ContactSystem::eta(int l) const { return layer_thickness(params_.eta1, l); }
double ContactSystem::stiffness(int l) const { return layer_stiffness(params_.r1, l); }
PenaltyLayer ContactSystem::layer(const Pair& p, int l) const {
  return PenaltyLayer::of(p.type, params_.eta1, params_.r1, l);
}
double ContactSystem::period(int l) const { return params_.h1 * std::pow(double(l), -1.5); }

// Stacked layers (docs/contact.md): h(l) is stable for layer l alone, r(l) h(l)² being
// constant. A vertex that several layers push at once (pressed from both sides, or a
// sheet folded onto itself) moves at the frequency of their sum, ω² <= K_a / m_a by
// Gershgorin over the rows of M⁻¹H, and a layer sampling that motion at its own,
// longer h(l) pumps energy into it (multi-rate resonance). So every layer touching the
// vertex fires at most at sqrt(period_scale2_ m_a / K_a), the period that keeps
// h ω <= 2 · safety as h1 does for one layer on the lightest vertex.
double ContactSystem::layer_period(const Pair& p, int l) const {
  double h = period(l);
  if (!params_.vertex_periods) return h;
  for (Index a : p.v) {
    const double k = vertex_load_[a] * impulse_inverse_mass(a);
    if (k > 0.0) h = std::min(h, std::sqrt(period_scale2_ / k));
  }
  return h;
}

void ContactSystem::set_layer_load(EventSlot slot, const Pair& p, const PairClosest* pushing) {
  std::array<double, 4>& load = layer_events_[slot].load;
  const double r = pushing ? 2.0 * stiffness(layer_events_[slot].layer) : 0.0;
  for (int i = 0; i < 4; ++i) {
    const double next = pushing ? r * std::abs(pushing->w[i]) : 0.0;
    vertex_load_[p.v[i]] = std::max(0.0, vertex_load_[p.v[i]] + (next - load[i]));
    load[i] = next;
  }
}

// --- penalty layers ------------------------------------------------------------------

double ContactSystem::impulse_inverse_mass(Index a) const {
  // A vertex whose mass the kernel shares (a phantom body with "contact_mass": "whole")
  // holds m/2 here: the impulse moves the whole m.
  const double w = kernel_.state().inv_mass(a);
  return shared_mass(a).share ? 0.5 * w : w;
}

void ContactSystem::add_impulse(Index a, const Vec3& impulse, double t) {
  const double w = impulse_inverse_mass(a);
  if (w == 0.0) return;
  const Vec3 dv = w * impulse;
  kernel_.state().velocity_ref(a) += dv;
  // Reported after the friction impulse too: the envelope test is made at the call, and
  // friction alone can take a velocity out of its envelope (until 2026-11-25 it was not
  // reported, so a certificate could rest on an envelope its vertex had left).
  kernel_.velocity_changed(a);
  if (const SharedMass m = shared_mass(a); m.share) m.share->share_velocity_change(m.local, dv, t);
}

double ContactSystem::layer_tick(EventSlot slot, double t) {
  const LayerEvent e = layer_events_[slot];
  Pair& p = pairs_[e.pair];
  VertexState& s = kernel_.state();
  StencilPositions<4> x;
  for (int i = 0; i < 4; ++i) {
    s.sync(p.v[i], t);
    x.col(i) = s.position(p.v[i]);
  }
  const PairClosest c = pair_closest(p.type, x);
  const PenaltyLayer layer = this->layer(p, e.layer);
  // Direction from side B to side A; at zero distance fall back to the slab normal
  // (which points from A to B).
  const Vec3 n = c.distance > 0 ? Vec3(c.y / c.distance) : Vec3(-p.slab.normal);
  // One contact, one impulse: a vertex over a mesh vertex is the closest pair of
  // every triangle around it (and of every edge pair through it); letting all of
  // them push multiplies the stiffness by the valence and breaks the layer's
  // stability bound (observed: energy injection at the FPU walls, blow-up in the
  // squeeze). Non-owners keep their layers and certificates but push nothing.
  // The tick's window [t − h/2, t + h/2] at the pair's normal speed ḋ = Σ w_i v_i · n:
  // a window the layer's edge cuts pushes with the force integrated over its part
  // inside (PenaltyLayer::window_impulse), which may be a window whose tick is still
  // outside.
  double ddot = 0.0;
  for (int i = 0; i < 4; ++i) ddot += c.w[i] * s.velocity(p.v[i]).dot(n);
  const double h_now = layer_period(p, e.layer);
  const double J_now = layer.window_impulse(c.distance, ddot, h_now);
  const bool pushes = J_now > 0.0 && owns_contact(p, c);
  if (params_.vertex_periods) set_layer_load(slot, p, pushes ? &c : nullptr);
  const double h = layer_period(p, e.layer);
  if (pushes) {
    // Impulse −h ∇V_l = J w_i n (Harmon et al. 2009), h the interval to this layer's
    // next tick (at the window's edge, the force integrated over the window's part
    // inside). At d = 0, where ∇V_l has no direction, n is the slab's.
    const double J = h == h_now ? J_now : layer.window_impulse(c.distance, ddot, h);
    for (int i = 0; i < 4; ++i) add_impulse(p.v[i], (J * c.w[i]) * n, t);
    if (params_.friction > 0.0) {
      // Coulomb: tangential impulse opposing the relative sliding velocity of the
      // closest points, at most μ J, and at most what stops the sliding.
      Vec3 vrel = Vec3::Zero();
      double k = 0.0;
      for (int i = 0; i < 4; ++i) {
        vrel += c.w[i] * s.velocity(p.v[i]);
        k += c.w[i] * c.w[i] * impulse_inverse_mass(p.v[i]);
      }
      const Vec3 vt = vrel - vrel.dot(n) * n;
      const double speed = vt.norm();
      if (speed > 0.0 && k > 0.0) {
        const double jt = std::min(params_.friction * J, speed / k);
        const Vec3 dir = vt / speed;
        for (int i = 0; i < 4; ++i) add_impulse(p.v[i], (-jt * c.w[i]) * dir, t);
      }
    }
    return t + h;
  }
  // No impulse. The deepest layer retires once the pair is outside it by a margin
  // and separates. The margin is hysteresis: a vertex resting on a surface hovers
  // within micrometres of the layer's edge, and a certificate for that gap — divided
  // by the envelope slack — lasts ~1e-7 s; retiring at the edge made a hat resting on
  // the ground fail 1.3e5 slab certificates per pair per second. In the margin the
  // layer only ticks (at its period, no impulse).
  if (e.layer == p.depth && c.distance >= layer.thickness * (1.0 + kRetireMargin) && ddot >= 0.0) {
    p.layers.pop_back();
    --p.depth;
    free_layer_events_.push_back(slot);
    --counters_.active_layers;
    if (p.refs == 0 && p.depth == 0) destroy_pair(e.pair);
    else certify(e.pair, t);  // falls back to certifying η(old depth)
    return kNever;
  }
  return t + h;
}

void ContactSystem::activate_layer(EventSlot slot, double t) {
  Pair& p = pairs_[slot];
  if (p.depth >= params_.max_layers) {
    const std::string problem = fmt::format(
        "the contact pair of vertices ({}, {}, {}, {}) reached {} penalty layers: the primitives touch "
        "(distance {:.3g} m); the input intersects or r1 is far too small",
        p.v[0], p.v[1], p.v[2], p.v[3], p.depth, pair_closest(p.type, positions(p, t)).distance);
    throw NumericalFailure(problem, "", t, p.v[0], problem);  // the kernel names the event
  }
  ++p.depth;
  EventSlot le;
  if (!free_layer_events_.empty()) {
    le = free_layer_events_.back();
    free_layer_events_.pop_back();
    layer_events_[le] = LayerEvent{slot, p.depth};
  } else {
    le = static_cast<EventSlot>(layer_events_.size());
    layer_events_.push_back(LayerEvent{slot, p.depth});
  }
  p.layers.push_back(le);
  kernel_.schedule(layer_kind_, le, t);
  ++counters_.active_layers;
  ++counters_.layer_activations;
  const VertexState& st = kernel_.state();
  if (std::none_of(p.v.begin(), p.v.end(), [&](Index a) { return st.kinematic(a); }))
    ++counters_.deformable_activations;
  counters_.deepest_layer_ever = std::max(counters_.deepest_layer_ever, p.depth);
}

std::uint64_t ContactSystem::edge_key(Index a, Index b) {
  if (a > b) std::swap(a, b);
  return (std::uint64_t(a) << 32) | b;
}

bool ContactSystem::owns_contact(const Pair& p, const PairClosest& c) const {
  if (p.type == PairType::EdgeEdge) {
    // Interior–interior only: a closest point at an endpoint is a vertex–edge or
    // vertex–vertex contact, which the vertex–triangle pairs of that vertex carry.
    return c.w[0] > 0.0 && c.w[1] > 0.0 && c.w[2] < 0.0 && c.w[3] < 0.0;
  }
  Index on[3];
  int n = 0;
  for (int i = 1; i < 4; ++i)
    if (c.w[i] != 0.0) on[n++] = p.v[i];
  if (n == 3) return true;  // vertex–face
  // The feature's lowest-index triangle owns it. If the globally closest feature
  // is this one, that triangle's closest point is on it too, so it always has an
  // owner that pushes.
  const std::uint32_t owner = n == 2 ? edge_owner_.at(edge_key(on[0], on[1])) : vertex_owner_[on[0]];
  return owner == p.triangle;
}

double ContactSystem::potential_energy(const VertexState&, double t) const {
  double sum = 0.0;
  for (const Pair& p : pairs_) {
    if (!p.alive || p.depth == 0) continue;
    const double d = pair_closest(p.type, positions(p, t)).distance;
    for (int l = 1; l <= p.depth; ++l) sum += layer(p, l).energy(d);
  }
  return sum;
}

}  // namespace clockwork
