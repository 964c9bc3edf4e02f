// ContactSystem: its event sources, set-up, the geometry its certificates read, and
// bookkeeping. Layers: contact_layers.cpp; pairs and slabs: contact_pairs.cpp; the
// grid: contact_grid.cpp.
#include "contact/contact_system.hpp"

#include <algorithm>
#include <cassert>

namespace clockwork {

namespace {

/// Adapters: the four event kinds of the contact system (penalty-layer ticks, slab and
/// grid certificate failures, triangle-pair events).
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

class SlabSource final : public EventSource, public CertificateSource {
 public:
  explicit SlabSource(ContactSystem& c) : c_(c) {}
  std::string_view name() const override { return "certificate:slab"; }
  int stencil_size(EventSlot) const override { return 4; }
  double process(EventSlot slot, double t, Kernel&) override { return c_.slab_failed(slot, t); }
  void support_changed(EventSlot slot, Kernel&) override { c_.slab_support_changed(slot); }

 private:
  ContactSystem& c_;
};

class GridSource final : public EventSource, public CertificateSource {
 public:
  explicit GridSource(ContactSystem& c) : c_(c) {}
  std::string_view name() const override { return "certificate:grid"; }
  int stencil_size(EventSlot) const override { return 3; }
  double process(EventSlot slot, double t, Kernel&) override { return c_.grid_failed(slot, t); }
  void support_changed(EventSlot slot, Kernel&) override { c_.grid_support_changed(slot); }

 private:
  ContactSystem& c_;
};

class TrianglePairSource final : public EventSource, public CertificateSource {
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

}  // namespace

template <class Source>
EventKind ContactSystem::add_certificate_source(std::unique_ptr<Source> source) {
  Source& s = *source;
  const EventKind kind = kernel_.add_source(std::move(source));
  contingency_.add_certificate_source(kind, s);
  return kind;
}

std::size_t ContactSystem::PairKeyHash::operator()(const PairKey& k) const {
  std::uint64_t h = k.type;
  for (Index v : k.v) h = (h ^ v) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
  return static_cast<std::size_t>(h ^ (h >> 29));
}

ContactSystem::ContactSystem(Kernel& kernel, Contingency& contingency, const ContactParameters& params)
    : kernel_(kernel), contingency_(contingency), params_(params) {
  assert(kernel.velocity_watch() == &contingency);
  assert(params.eta1 > 0 && params.r1 > 0 && params.h1 > 0 && params.cell_size > params.eta1);
  assert(!params.vertex_periods || params.min_mass > 0);
  assert((params.position_slack == 0.0 || params.adaptive_slack) && "position envelopes need the adaptive slack");
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
  slab_kind_ = add_certificate_source(std::make_unique<SlabSource>(*this));
  grid_kind_ = add_certificate_source(std::make_unique<GridSource>(*this));
  triangle_pair_kind_ = add_certificate_source(std::make_unique<TrianglePairSource>(*this));
  contingency_.set_velocity_slack(kNear, params_.slack_near);
  contingency_.set_velocity_slack(kFar, params_.slack_far);
  if (params_.adaptive_slack) {
    // The margins of both levels' certificates are made of thicknesses η1.
    contingency_.set_adaptive_slack(kNear, params_.eta1, kMaxSlackFactor);
    contingency_.set_adaptive_slack(kFar, params_.eta1, kMaxSlackFactor);
    // A triangle pair renewed at its clearance keeps room for a ball on each side.
    static_assert(ContactParameters::kMaxPositionSlack <= 0.5 * (kExpandClearance - 1.0));
    if (params_.position_slack > 0.0) contingency_.enable_position_envelopes(kFar, params_.position_slack);
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
    for (Index a : tri.v) contingency_.attach(tri.cert, a);
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
  for_each_of_six(tp, [&](int i, Index a) { x.col(i) = contingency_.envelope_position(kFar, a, t); });
  return x;
}

StencilSlack<6> ContactSystem::envelope_radii(const TrianglePair& tp) const {
  StencilSlack<6> r;
  for_each_of_six(tp, [&](int i, Index a) { r[i] = contingency_.envelope_radius(kFar, a); });
  return r;
}

StencilPositions<6> ContactSystem::envelope_velocities(const TrianglePair& tp) const {
  StencilPositions<6> v;
  for_each_of_six(tp, [&](int i, Index a) { v.col(i) = contingency_.envelope_velocity(kFar, a); });
  return v;
}

StencilPositions<4> ContactSystem::envelope_velocities(const Pair& p) const {
  StencilPositions<4> v;
  for (int i = 0; i < 4; ++i) v.col(i) = contingency_.envelope_velocity(kNear, p.v[i]);
  return v;
}

StencilSlack<6> ContactSystem::envelope_slacks(const TrianglePair& tp) const {
  StencilSlack<6> d;
  for_each_of_six(tp, [&](int i, Index a) { d[i] = contingency_.velocity_slack(kFar, a); });
  return d;
}

StencilSlack<4> ContactSystem::envelope_slacks(const Pair& p) const {
  StencilSlack<4> d;
  for (int i = 0; i < 4; ++i) d[i] = contingency_.velocity_slack(kNear, p.v[i]);
  return d;
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

void ContactSystem::near_pairs_within(Index first, Index count, double t, double reach, double h,
                                      std::vector<NearPair>& out) const {
  near_pairs(first, count, out);
  const VertexState& s = kernel_.state();
  const auto inside = [&](Index a) { return a >= first && a - first < count; };
  for (const TrianglePair& tp : triangle_pairs_) {
    if (!tp.alive || tp.expanded) continue;
    const Triangle& ta = triangles_[tp.a];
    const Triangle& tb = triangles_[tp.b];
    // One triangle of the body and one of another: a solid's step leaves its self
    // pairs to the layers (SolveContact), and a body has many.
    const bool in_a = std::all_of(ta.v.begin(), ta.v.end(), inside);
    const bool in_b = std::all_of(tb.v.begin(), tb.v.end(), inside);
    if (in_a == in_b) continue;
    Vec3 lo_a = Vec3::Constant(kNever), hi_a = -lo_a, lo_b = lo_a, hi_b = hi_a;
    double speed = 0.0;
    for (int i = 0; i < 3; ++i) {
      const Vec3 xa = s.position_at(ta.v[i], t), xb = s.position_at(tb.v[i], t);
      lo_a = lo_a.cwiseMin(xa), hi_a = hi_a.cwiseMax(xa);
      lo_b = lo_b.cwiseMin(xb), hi_b = hi_b.cwiseMax(xb);
      speed = std::max({speed, s.velocity(ta.v[i]).norm(), s.velocity(tb.v[i]).norm()});
    }
    const double gap = std::max((lo_b - hi_a).maxCoeff(), (lo_a - hi_b).maxCoeff());
    if (gap > reach + 2.0 * h * speed) continue;
    // expand()'s 6 vertex–triangle and 9 edge–edge pairs, in its canonical order.
    const auto vt = [&](Index x, const Triangle& tri) {
      std::array<Index, 3> v = tri.v;
      std::sort(v.begin(), v.end());
      out.push_back({PairType::VertexTriangle, {x, v[0], v[1], v[2]}});
    };
    const auto ee = [&](Index a, Index b, Index c, Index d) {
      out.push_back({PairType::EdgeEdge, canonical_edge_pair(a, b, c, d)});
    };
    if (ta.point) {
      vt(ta.v[0], tb);
      continue;
    }
    for (Index x : ta.v) vt(x, tb);
    for (Index x : tb.v) vt(x, ta);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) ee(ta.v[i], ta.v[(i + 1) % 3], tb.v[j], tb.v[(j + 1) % 3]);
  }
  // Neighbouring triangle pairs share element pairs, and an expanded pair's are listed
  // already: each once.
  const auto key = [](const NearPair& p) { return std::make_pair(static_cast<int>(p.type), p.v); };
  std::sort(out.begin(), out.end(), [&](const NearPair& a, const NearPair& b) { return key(a) < key(b); });
  out.erase(std::unique(out.begin(), out.end(), [&](const NearPair& a, const NearPair& b) { return key(a) == key(b); }),
            out.end());
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
