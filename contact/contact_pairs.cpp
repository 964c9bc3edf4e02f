// ContactSystem's pairs: the slab certificates of element pairs, element pairs, and
// triangle pairs (collapsed under one slab, or expanded into their element pairs).
#include <algorithm>
#include <cassert>
#include <utility>

#include "contact/contact_system.hpp"

namespace clockwork {

namespace {

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
  for (Index a : v) contingency_.attach(p.cert, a);
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
    for (int k = 0; k < (tri.point ? 1 : 3); ++k) contingency_.attach(tp.cert, tri.v[k]);
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
    return add_element_pair(PairType::EdgeEdge, canonical_edge_pair(a, b, c, d), 0);
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

}  // namespace clockwork
