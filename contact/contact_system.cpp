#include "contact/contact_system.hpp"

#include "engine/health.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

namespace clockwork {

namespace {

/// Adapters: the three event kinds of the contact system.
class LayerSource final : public EventSource {
 public:
  explicit LayerSource(ContactSystem& c) : c_(c) {}
  std::string_view name() const override { return "penalty"; }
  int stencil_size(EventSlot) const override { return 4; }
  std::span<const Index> stencil_vertices(EventSlot slot) const override {
    return c_.layer_stencil(slot);
  }
  double process(EventSlot slot, double t, Kernel&) override { return c_.layer_tick(slot, t); }
  double potential_energy(const VertexState& s, double t) const override {
    return c_.potential_energy(s, t);
  }

 private:
  ContactSystem& c_;
};

class SlabSource final : public EventSource {
 public:
  explicit SlabSource(ContactSystem& c) : c_(c) {}
  std::string_view name() const override { return "certificate:slab"; }
  int stencil_size(EventSlot) const override { return 4; }
  double process(EventSlot slot, double t, Kernel&) override { return c_.slab_failed(slot, t); }
  void support_changed(EventSlot slot, Kernel&) override { c_.slab_support_changed(slot); }

 private:
  ContactSystem& c_;
};

class GridSource final : public EventSource {
 public:
  explicit GridSource(ContactSystem& c) : c_(c) {}
  std::string_view name() const override { return "certificate:grid"; }
  int stencil_size(EventSlot) const override { return 3; }
  double process(EventSlot slot, double t, Kernel&) override { return c_.grid_failed(slot, t); }
  void support_changed(EventSlot slot, Kernel&) override { c_.grid_support_changed(slot); }

 private:
  ContactSystem& c_;
};

class TrianglePairSource final : public EventSource {
 public:
  explicit TrianglePairSource(ContactSystem& c) : c_(c) {}
  std::string_view name() const override { return "certificate:triangle-pair"; }
  int stencil_size(EventSlot) const override { return 6; }
  double process(EventSlot slot, double t, Kernel&) override {
    return c_.triangle_pair_event(slot, t);
  }
  void support_changed(EventSlot slot, Kernel&) override {
    c_.triangle_pair_support_changed(slot);
  }

 private:
  ContactSystem& c_;
};

/// A recycled slot of an address-stable pool, or a new one at its end.
template <typename T>
EventSlot acquire_slot(StablePool<T>& pool, std::vector<EventSlot>& free) {
  if (!free.empty()) {
    const EventSlot slot = free.back();
    free.pop_back();
    return slot;
  }
  pool.emplace_back();
  return static_cast<EventSlot>(pool.size() - 1);
}

bool shares_vertex(const std::array<Index, 3>& a, const std::array<Index, 3>& b) {
  for (Index x : a)
    for (Index y : b)
      if (x == y) return true;
  return false;
}

}  // namespace

std::size_t ContactSystem::PairKeyHash::operator()(const PairKey& k) const {
  std::uint64_t h = k.type;
  for (Index v : k.v) h = (h ^ v) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
  return static_cast<std::size_t>(h ^ (h >> 29));
}

ContactSystem::ContactSystem(Kernel& kernel, const ContactParameters& params)
    : kernel_(kernel), params_(params) {
  assert(params.eta1 > 0 && params.r1 > 0 && params.h1 > 0 && params.cell_size > params.eta1);
  assert(!params.vertex_periods || params.min_mass > 0);
  assert((params.position_slack == 0.0 || params.adaptive_slack) && "position envelopes need the adaptive slack");
}

double ContactSystem::eta(int l) const { return params_.eta1 * std::pow(double(l), -0.25); }
double ContactSystem::stiffness(int l) const { return params_.r1 * double(l) * l * l; }
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

void ContactSystem::add_triangle(const std::array<Index, 3>& v, std::uint32_t group) {
  Triangle& tri = triangles_.emplace_back();
  tri.v = v;
  tri.group = group;
  tri.kinematic = fixed(v[0]) && fixed(v[1]) && fixed(v[2]);
}

void ContactSystem::mark_releasable(Index vertex) {
  if (releasable_.size() <= vertex) releasable_.resize(vertex + 1, false);
  releasable_[vertex] = true;
}

bool ContactSystem::fixed(Index a) const {
  return kernel_.state().kinematic(a) && !(a < releasable_.size() && releasable_[a]);
}

void ContactSystem::add_point(Index vertex) {
  add_triangle({vertex, vertex, vertex});
  triangles_.back().point = true;
}

void ContactSystem::start() {
  layer_kind_ = kernel_.add_source(std::make_unique<LayerSource>(*this));
  slab_kind_ = kernel_.add_source(std::make_unique<SlabSource>(*this));
  grid_kind_ = kernel_.add_source(std::make_unique<GridSource>(*this));
  triangle_pair_kind_ = kernel_.add_source(std::make_unique<TrianglePairSource>(*this));
  kernel_.set_velocity_slack(kNear, params_.slack_near);
  kernel_.set_velocity_slack(kFar, params_.slack_far);
  if (params_.adaptive_slack) {
    // The margins of both levels' certificates are made of thicknesses η1.
    kernel_.set_adaptive_slack(kNear, params_.eta1, kMaxSlackFactor);
    kernel_.set_adaptive_slack(kFar, params_.eta1, kMaxSlackFactor);
    // A triangle pair renewed at its clearance keeps room for a ball on each side.
    static_assert(ContactParameters::kMaxPositionSlack <= 0.5 * (kExpandClearance - 1.0));
    if (params_.position_slack > 0.0) kernel_.enable_position_envelopes(kFar, params_.position_slack);
  }
  const double t = kernel_.now();
  vertex_owner_.assign(kernel_.state().size(), UINT32_MAX);
  if (params_.vertex_periods) {
    vertex_load_.assign(kernel_.state().size(), 0.0);
    period_scale2_ = params_.h1 * params_.h1 * 2.0 * params_.r1 / params_.min_mass;
  }
  for (std::uint32_t i = 0; i < triangles_.size(); ++i) {
    const Triangle& tri = triangles_[i];
    if (tri.point) continue;
    for (int k = 0; k < 3; ++k) {
      vertex_owner_[tri.v[k]] = std::min(vertex_owner_[tri.v[k]], i);
      edge_owner_.try_emplace(edge_key(tri.v[k], tri.v[(k + 1) % 3]), i);  // i ascends
    }
  }
  for (std::uint32_t i = 0; i < triangles_.size(); ++i) {
    Triangle& tri = triangles_[i];
    tri.cert.kind = grid_kind_;
    tri.cert.slot = i;
    tri.cert.envelope = kFar;
    for (Index a : tri.v) kernel_.attach(tri.cert, a);
    const CellRange range = cells_of(tri, t);
    move_triangle(i, CellRange{}, range, /*fresh=*/true);
    tri.range = range;
    grid_support_changed(i);
  }
}

// --- geometry at a time --------------------------------------------------------------

StencilPositions<4> ContactSystem::positions(const Pair& p, double t) const {
  StencilPositions<4> x;
  for (int i = 0; i < 4; ++i) x.col(i) = kernel_.state().position_at(p.v[i], t);
  return x;
}

StencilPositions<6> ContactSystem::positions(const TrianglePair& tp, double t) const {
  StencilPositions<6> x;
  for_each_of_six(tp, [&](int i, Index a) { x.col(i) = kernel_.state().position_at(a, t); });
  return x;
}

StencilPositions<6> ContactSystem::envelope_positions(const TrianglePair& tp, double t) const {
  StencilPositions<6> x;
  for_each_of_six(tp, [&](int i, Index a) { x.col(i) = kernel_.envelope_position(kFar, a, t); });
  return x;
}

StencilSlack<6> ContactSystem::envelope_radii(const TrianglePair& tp) const {
  StencilSlack<6> r;
  for_each_of_six(tp, [&](int i, Index a) { r[i] = kernel_.envelope_radius(kFar, a); });
  return r;
}

StencilPositions<6> ContactSystem::envelope_velocities(const TrianglePair& tp) const {
  StencilPositions<6> v;
  for_each_of_six(tp, [&](int i, Index a) { v.col(i) = kernel_.envelope_velocity(kFar, a); });
  return v;
}

StencilPositions<4> ContactSystem::envelope_velocities(const Pair& p) const {
  StencilPositions<4> v;
  for (int i = 0; i < 4; ++i) v.col(i) = kernel_.envelope_velocity(kNear, p.v[i]);
  return v;
}

StencilSlack<6> ContactSystem::envelope_slacks(const TrianglePair& tp) const {
  StencilSlack<6> d;
  for_each_of_six(tp, [&](int i, Index a) { d[i] = kernel_.velocity_slack(kFar, a); });
  return d;
}

StencilSlack<4> ContactSystem::envelope_slacks(const Pair& p) const {
  StencilSlack<4> d;
  for (int i = 0; i < 4; ++i) d[i] = kernel_.velocity_slack(kNear, p.v[i]);
  return d;
}

// --- penalty layers ------------------------------------------------------------------

double ContactSystem::impulse_inverse_mass(Index a) const {
  // A vertex whose mass the kernel shares (a phantom body with "contact_mass": "whole")
  // holds m/2 here: the impulse moves the whole m.
  const double w = kernel_.state().inv_mass(a);
  return kernel_.shared_mass(a).share ? 0.5 * w : w;
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
  if (const SharedMass m = kernel_.shared_mass(a); m.share) m.share->share_velocity_change(m.local, dv, t);
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
  const double thickness = eta(e.layer);
  // Direction from side B to side A; at zero distance fall back to the slab normal
  // (which points from A to B).
  const Vec3 n = c.distance > 0 ? Vec3(c.y / c.distance) : Vec3(-p.slab.normal);
  // One contact, one impulse: a vertex over a mesh vertex is the closest pair of
  // every triangle around it (and of every edge pair through it); letting all of
  // them push multiplies the stiffness by the valence and breaks the layer's
  // stability bound (observed: energy injection at the FPU walls, blow-up in the
  // squeeze). Non-owners keep their layers and certificates but push nothing.
  const bool pushes = c.distance < thickness && owns_contact(p, c);
  if (params_.vertex_periods) set_layer_load(slot, p, pushes ? &c : nullptr);
  const double h = layer_period(p, e.layer);
  if (pushes) {
    // Impulse −h ∇V_l with ∇_i V_l = r(l) (d − η(l)) w_i n (Harmon et al. 2009), h the
    // interval to this layer's next tick.
    const double J = h * stiffness(e.layer) * (thickness - c.distance);
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
  double normal_speed = 0.0;
  for (int i = 0; i < 4; ++i) normal_speed += c.w[i] * s.velocity(p.v[i]).dot(n);
  if (e.layer == p.depth && c.distance >= thickness * (1.0 + kRetireMargin) && normal_speed >= 0.0) {
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

// --- slab certificates ---------------------------------------------------------------

void ContactSystem::certify(EventSlot slot, double t) {
  for (;;) {
    Pair& p = pairs_[slot];
    const StencilPositions<4> x = positions(p, t);
    const PairClosest c = pair_closest(p.type, x);
    // Layer L+1 activates a little before the pair reaches η(L+1): a pair hovering just
    // outside it (a card resting on the one below) would otherwise fail slab after slab,
    // each certifying the hair's breadth left (measured on the stiff riffle: two thirds
    // of its 31 M slab failures came within 1 % of the threshold, each lasting ~1e-7 s).
    // An active layer pushes only inside η (layer_tick), so this costs layer ticks and
    // changes no impulse: Harmon et al. 2009's layers all tick, activation is only an
    // economy. kActivateMargin < kRetireMargin, so activation and retirement cannot chatter.
    while (wants_layer(pairs_[slot], c.distance)) activate_layer(slot, t);
    Pair& q = pairs_[slot];
    const StencilPositions<4> v = envelope_velocities(q);
    const auto slab = make_slab(q.type, x, c, v, t, eta(q.depth + 1));
    if (slab) {
      q.slab = *slab;
      const double tf = slab_failure_time(q.slab, q.type, x, v, t, envelope_slacks(q));
      ++counters_.slab_evaluations;
      // A certificate that fails at once cannot certify anything: go one layer deeper.
      if (tf > t) {
        if (tf < kNever) kernel_.reschedule(slab_kind_, slot, tf);
        else kernel_.cancel(slab_kind_, slot);
        return;
      }
    }
    activate_layer(slot, t);
  }
}

bool ContactSystem::wants_layer(const Pair& p, double distance) const {
  const double next = eta(p.depth + 1);
  if (distance < next) return true;
  return p.depth < params_.max_layers && distance < next * (1.0 + kActivateMargin);
}

void ContactSystem::reschedule_slab(EventSlot slot) {
  Pair& p = pairs_[slot];
  const double t = kernel_.now();
  const double tf = slab_failure_time(p.slab, p.type, positions(p, t), envelope_velocities(p), t,
                                      envelope_slacks(p));
  ++counters_.slab_evaluations;
  if (tf < kNever) kernel_.reschedule_no_later(slab_kind_, slot, std::max(tf, t));
  else kernel_.cancel(slab_kind_, slot);
}

double ContactSystem::slab_failed(EventSlot slot, double t) {
  ++counters_.slab_failures;
  certify(slot, t);
  return kNever;  // certify rescheduled or cancelled the event itself
}

void ContactSystem::slab_support_changed(EventSlot slot) {
  if (pairs_[slot].alive) reschedule_slab(slot);
}

// --- element pairs -------------------------------------------------------------------

EventSlot ContactSystem::add_element_pair(PairType type, const std::array<Index, 4>& v,
                                          std::uint32_t triangle) {
  if (fixed(v[0]) && fixed(v[1]) && fixed(v[2]) && fixed(v[3])) return kNoPair;
  const PairKey key{static_cast<std::uint8_t>(type), v};
  auto [it, inserted] = pair_index_.try_emplace(key, 0);
  if (!inserted) {
    ++pairs_[it->second].refs;
    return it->second;
  }
  const EventSlot slot = acquire_slot(pairs_, free_pairs_);
  it->second = slot;
  Pair& p = pairs_[slot];
  p.type = type;
  p.v = v;
  p.refs = 1;
  p.depth = 0;
  p.triangle = triangle;
  p.alive = true;
  p.layers.clear();
  p.cert.kind = slab_kind_;
  p.cert.slot = slot;
  p.cert.stamp = 0;
  p.cert.envelope = kNear;
  for (Index a : v) kernel_.attach(p.cert, a);
  ++counters_.live_pairs;
  certify(slot, kernel_.now());
  return slot;
}

void ContactSystem::release_element_pair(EventSlot slot) {
  if (slot == kNoPair) return;
  Pair& p = pairs_[slot];
  if (--p.refs == 0 && p.depth == 0) destroy_pair(slot);
}

void ContactSystem::destroy_pair(EventSlot slot) {
  Pair& p = pairs_[slot];
  assert(p.depth == 0 && p.refs == 0);
  kernel_.cancel(slab_kind_, slot);
  p.cert.detach();
  pair_index_.erase(PairKey{static_cast<std::uint8_t>(p.type), p.v});
  p.alive = false;
  free_pairs_.push_back(slot);
  --counters_.live_pairs;
}

void ContactSystem::triangle_pair_overlap(std::uint32_t t0, std::uint32_t t1, int delta) {
  const Triangle& A = triangles_[t0];
  const Triangle& B = triangles_[t1];
  if ((A.kinematic && B.kinematic) || (A.point && B.point) || shares_vertex(A.v, B.v)) return;
  if (A.group != kSelfContact && A.group == B.group) return;
  const std::uint32_t a = std::min(t0, t1), b = std::max(t0, t1);
  const std::uint64_t key = (std::uint64_t(a) << 32) | b;
  if (delta > 0) {
    auto [it, inserted] = triangle_pair_index_.try_emplace(key, 0);
    if (!inserted) {
      ++triangle_pairs_[it->second].cells;
      return;
    }
    const EventSlot slot = acquire_slot(triangle_pairs_, free_triangle_pairs_);
    it->second = slot;
    TrianglePair& tp = triangle_pairs_[slot];
    // A point is always side A, so that its vertex–triangle pair has the point as
    // the vertex.
    const bool swap = triangles_[b].point;
    tp.a = swap ? b : a;
    tp.b = swap ? a : b;
    tp.cells = 1;
    tp.alive = true;
    tp.expanded = false;
    tp.failed_polls = 0;
    tp.elements.clear();
    tp.cert.kind = triangle_pair_kind_;
    tp.cert.slot = slot;
    tp.cert.stamp = 0;
    tp.cert.envelope = kFar;
    attach_support(tp);
    ++counters_.triangle_pairs;
    certify_triangle_pair(slot, kernel_.now(), kExpandClearance * params_.eta1);
    return;
  }
  auto it = triangle_pair_index_.find(key);
  assert(it != triangle_pair_index_.end());
  const EventSlot slot = it->second;
  if (--triangle_pairs_[slot].cells > 0) return;
  triangle_pair_index_.erase(it);
  destroy_triangle_pair(slot);
}

void ContactSystem::attach_support(TrianglePair& tp) {
  for (const std::uint32_t id : {tp.a, tp.b}) {
    const Triangle& tri = triangles_[id];
    for (int k = 0; k < (tri.point ? 1 : 3); ++k) kernel_.attach(tp.cert, tri.v[k]);
  }
}

void ContactSystem::destroy_triangle_pair(EventSlot slot) {
  TrianglePair& tp = triangle_pairs_[slot];
  kernel_.cancel(triangle_pair_kind_, slot);
  if (tp.expanded) release_elements(tp);
  else tp.cert.detach();
  tp.alive = false;
  free_triangle_pairs_.push_back(slot);
  --counters_.triangle_pairs;
}

void ContactSystem::certify_triangle_pair(EventSlot slot, double t, double clearance) {
  TrianglePair& tp = triangle_pairs_[slot];
  assert(!tp.expanded);
  const StencilPositions<6> x = positions(tp, t);
  const TriangleGap gap = triangle_pair_gap(x);
  if (gap.distance > clearance) {
    // The slab is made for the envelopes: a vertex in a ball counts as all of it.
    const StencilPositions<6> xe = envelope_positions(tp, t);
    const StencilSlack<6> radii = envelope_radii(tp);
    const StencilPositions<6> v = envelope_velocities(tp);
    const Vec3 n = (-gap.y / gap.distance).normalized();
    const std::optional<Slab> slab = separation_slab<6>(xe, 3, n, v, t, params_.eta1, radii);
    if (slab) {
      const double tf = slab_failure_time<6>(*slab, 3, xe, v, t, envelope_slacks(tp), radii);
      ++counters_.slab_evaluations;
      if (tf > t) {
        tp.slab = *slab;
        if (tf < kNever) kernel_.reschedule(triangle_pair_kind_, slot, tf);
        else kernel_.cancel(triangle_pair_kind_, slot);
        return;
      }
    }
  }
  expand(slot);
}

void ContactSystem::expand(EventSlot slot) {
  TrianglePair& tp = triangle_pairs_[slot];
  tp.cert.detach();
  tp.expanded = true;
  tp.failed_polls = 0;
  ++counters_.expanded_pairs;
  ++counters_.expansions;
  // The 6 vertex–triangle and 9 edge–edge pairs, in a canonical vertex order so that
  // pairs shared by neighbouring triangle pairs coincide. Creating them may activate
  // layers; the references keep them alive while this pair is expanded.
  const auto vt = [&](Index x, std::uint32_t id) {
    std::array<Index, 3> s = triangles_[id].v;
    std::sort(s.begin(), s.end());
    return add_element_pair(PairType::VertexTriangle, {x, s[0], s[1], s[2]}, id);
  };
  const auto ee = [&](Index a, Index b, Index c, Index d) {
    if (a > b) std::swap(a, b);
    if (c > d) std::swap(c, d);
    if (std::make_pair(a, b) > std::make_pair(c, d)) {
      std::swap(a, c);
      std::swap(b, d);
    }
    return add_element_pair(PairType::EdgeEdge, {a, b, c, d}, 0);
  };
  const std::uint32_t ia = tp.a, ib = tp.b;
  const std::array<Index, 3> a = triangles_[ia].v, b = triangles_[ib].v;
  boost::container::small_vector<EventSlot, 15> elements;
  if (triangles_[ia].point) {
    elements.push_back(vt(a[0], ib));
  } else {
    for (Index x : a) elements.push_back(vt(x, ib));
    for (Index x : b) elements.push_back(vt(x, ia));
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        elements.push_back(ee(a[i], a[(i + 1) % 3], b[j], b[(j + 1) % 3]));
  }
  // add_element_pair may grow pairs_ but never triangle_pairs_: tp is still valid.
  tp.elements = elements;
  kernel_.reschedule(triangle_pair_kind_, slot, kernel_.now() + poll_period(tp));
}

void ContactSystem::release_elements(TrianglePair& tp) {
  for (EventSlot e : tp.elements) release_element_pair(e);
  tp.elements.clear();
  tp.expanded = false;
  --counters_.expanded_pairs;
}

double ContactSystem::poll_period(const TrianglePair& tp) const {
  // Collapsing late costs only time, never safety: back off exponentially from
  // 8 layer-1 periods while the pair stays in contact.
  return params_.h1 * double(8 << std::min(tp.failed_polls, 7));
}

double ContactSystem::triangle_pair_event(EventSlot slot, double t) {
  TrianglePair& tp = triangle_pairs_[slot];
  if (!tp.expanded) {
    ++counters_.slab_failures;
    certify_triangle_pair(slot, t, kExpandClearance * params_.eta1);
    return kNever;  // rescheduled, cancelled or turned into a poll
  }
  ++counters_.collapse_polls;
  bool quiet = true;
  for (EventSlot e : tp.elements) quiet = quiet && (e == kNoPair || pairs_[e].depth == 0);
  if (quiet && triangle_pair_gap(positions(tp, t)).distance > kCollapseClearance * params_.eta1) {
    release_elements(tp);
    attach_support(tp);
    certify_triangle_pair(slot, t, kCollapseClearance * params_.eta1);
    return kNever;
  }
  ++tp.failed_polls;
  return t + poll_period(tp);
}

void ContactSystem::triangle_pair_support_changed(EventSlot slot) {
  TrianglePair& tp = triangle_pairs_[slot];
  if (!tp.alive || tp.expanded) return;
  const double t = kernel_.now();
  const double tf = slab_failure_time<6>(tp.slab, 3, envelope_positions(tp, t), envelope_velocities(tp),
                                         t, envelope_slacks(tp), envelope_radii(tp));
  ++counters_.slab_evaluations;
  if (tf < kNever) kernel_.reschedule_no_later(triangle_pair_kind_, slot, std::max(tf, t));
  else kernel_.cancel(triangle_pair_kind_, slot);
}

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
    const Vec3 x = kernel_.envelope_position(kFar, a, t);
    const double r = kernel_.envelope_radius(kFar, a);
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
    const double radius = kernel_.envelope_radius(kFar, a);
    const double grow = 0.5 * params_.eta1 + radius;
    const double slack = kernel_.velocity_slack(kFar, a);
    const Vec3 x = kernel_.envelope_position(kFar, a, t);
    const Vec3& u = kernel_.envelope_velocity(kFar, a);
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

// --- bookkeeping ---------------------------------------------------------------------

double ContactSystem::far_certificate_violation(double t) const {
  double worst = -kNever;
  for (const TrianglePair& tp : triangle_pairs_) {
    if (!tp.alive || tp.expanded) continue;
    const Slab& slab = tp.slab;
    const double m = slab.m0 + slab.m_rate * (t - slab.t0);
    const StencilPositions<6> x = positions(tp, t);
    for (int i = 0; i < 6; ++i) {
      const double s = slab.normal.dot(x.col(i));
      worst = std::max(worst, i < 3 ? s - (m - slab.half_width) : (m + slab.half_width) - s);
    }
  }
  const double c = params_.cell_size, grow = 0.5 * params_.eta1;
  for (const Triangle& tri : triangles_)
    for (Index a : tri.v) {
      const Vec3 x = kernel_.state().position_at(a, t);
      for (int k = 0; k < 3; ++k)
        worst = std::max({worst, tri.range.lo[k] * c - (x[k] - grow), (x[k] + grow) - (tri.range.hi[k] + 1) * c});
    }
  return worst;
}

double ContactSystem::potential_energy(const VertexState&, double t) const {
  double sum = 0.0;
  for (const Pair& p : pairs_) {
    if (!p.alive || p.depth == 0) continue;
    const double d = pair_closest(p.type, positions(p, t)).distance;
    for (int l = 1; l <= p.depth; ++l)
      if (d < eta(l)) sum += 0.5 * stiffness(l) * (d - eta(l)) * (d - eta(l));
  }
  return sum;
}

void ContactSystem::near_pairs(Index first, Index count, std::vector<NearPair>& out) const {
  out.clear();
  for (const Pair& p : pairs_) {
    if (!p.alive) continue;
    for (const Index a : p.v)
      if (a >= first && a - first < count) {
        out.push_back({p.type, p.v});
        break;
      }
  }
}

ContactCounters ContactSystem::counters() const {
  ContactCounters c = counters_;
  c.certificate_reschedules =
      kernel_.stats(slab_kind_).rescheduled + kernel_.stats(grid_kind_).rescheduled +
      kernel_.stats(triangle_pair_kind_).rescheduled;
  c.certificates = c.live_pairs + triangles_.size() + c.triangle_pairs - c.expanded_pairs;
  c.deepest_layer = 0;
  for (const Pair& p : pairs_)
    if (p.alive) c.deepest_layer = std::max(c.deepest_layer, p.depth);
  return c;
}

}  // namespace clockwork
