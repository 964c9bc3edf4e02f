#include "contact/certificates/contingency.hpp"

#include <algorithm>
#include <memory>

namespace clockwork {

namespace {

/// The exits of vertices from their position envelopes (slot: the vertex).
class BallSource final : public EventSource {
 public:
  explicit BallSource(Contingency& contingency) : contingency_(contingency) {}
  std::string_view name() const override { return "certificate:ball"; }
  double process(EventSlot slot, double t, Kernel& /*kernel*/) override {
    return contingency_.ball_event(static_cast<Index>(slot), t);
  }

 private:
  Contingency& contingency_;
};

}  // namespace

Contingency& Contingency::install(Kernel& kernel) {
  auto owned = std::make_unique<Contingency>(kernel);
  Contingency& contingency = *owned;
  kernel.set_velocity_watch(std::move(owned));
  return contingency;
}

Contingency::Contingency(Kernel& kernel) : kernel_(kernel) {
  const VertexState& state = kernel_.state();
  const std::size_t n = state.size();
  for (int l = 0; l < kEnvelopeLevels; ++l) {
    dependents_[l] = std::vector<DependentList>(n);
    if (l > 0) {
      envelope_[l].resize(n);
      for (Index a = 0; a < n; ++a) envelope_[l][a] = {state.velocity(a), float(slack_[l]), float(kernel_.now())};
    }
    touched_[l].reserve(n);
  }
}

Contingency::~Contingency() {
  for (const auto& lists : dependents_)
    for (const DependentList& list : lists)
      for (const DependentList::Entry& e : list.entries())
        if (e.owner) e.owner->support_size = 0;
}

void Contingency::attach(Certificate& c, Index a) {
  assert(c.support_size < Certificate::kMaxSupport);
  assert(a < dependents_[0].size() && "add every vertex before installing the contingency");
  assert(c.envelope < kEnvelopeLevels);
  const int l = c.envelope;
  // A velocity set without velocity_changed (scene set-up) may lie outside the
  // envelope: re-centre it, and let the others who rely on it reschedule.
  if (l > 0 && !in_ball(envelope_[l][a]) && leaves_envelope(l, envelope_[l][a], kernel_.state().velocity(a))) {
    envelope_[l][a].centre = kernel_.state().velocity(a);
    if (!dependents_[l][a].empty()) touched_[l].push_back(a);
  }
  ContingencyLink& link = c.links[c.support_size];
  link.list = &dependents_[l][a];
  link.pos = link.list->push(&c, c.support_size);
  ++c.support_size;
}

void Contingency::flush() {
  bool any = false;
  for (const auto& t : touched_) any = any || !t.empty();
  if (!any) return;
  ++epoch_;
  // Collect first: a certificate's handler may re-link its support. The owners are
  // scattered in their sources' pools: their stamps are prefetched a few entries ahead.
  constexpr std::size_t kAhead = 8;
  const auto collect = [&](std::vector<Index>& touched, std::vector<DependentList>& lists) {
    for (Index a : touched) {
      const std::vector<DependentList::Entry>& entries = lists[a].entries();
      const std::size_t n = entries.size();
      for (std::size_t i = 0; i < std::min(kAhead, n); ++i)
        if (entries[i].owner) __builtin_prefetch(&entries[i].owner->stamp, 1);
      for (std::size_t i = 0; i < n; ++i) {
        if (i + kAhead < n && entries[i + kAhead].owner)
          __builtin_prefetch(&entries[i + kAhead].owner->stamp, 1);
        Certificate* c = entries[i].owner;
        if (c == nullptr || c->stamp == epoch_) continue;
        c->stamp = epoch_;
        pending_.push_back(c);
      }
    }
    touched.clear();
  };
  for (int l = 1; l < kEnvelopeLevels; ++l) envelope_exits_ += touched_[l].size();
  for (int l = 0; l < kEnvelopeLevels; ++l) collect(touched_[l], dependents_[l]);
  // The handlers read each certificate's pool entry and then its queue handle: both
  // are prefetched, the handle once the entry (which names it) has arrived. (Staged
  // prefetches of the support's vertices through the sources were slower, measured
  // while the pools were still deques: bench/results/history_contact.md "Contingency lists
  // and pools".)
  const std::size_t n = pending_.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + 2 * kAhead < n) __builtin_prefetch(pending_[i + 2 * kAhead]);
    if (i + kAhead < n) {
      const Certificate* ahead = pending_[i + kAhead];
      kernel_.prefetch_slot(ahead->kind, ahead->slot);
    }
    const Certificate* c = pending_[i];
    assert(c->kind < certificate_sources_.size() && certificate_sources_[c->kind] != nullptr);
    certificate_sources_[c->kind]->support_changed(c->slot, kernel_);
  }
  pending_.clear();
}

void Contingency::enable_position_envelopes(int level, double radius) {
  assert(level > 0 && level < kEnvelopeLevels && radius > 0.0 && ball_level_ == 0);
  assert(reach_[level] > 0.0 && slack_[level] > 0.0 && "position envelopes need the adaptive slack");
  ball_level_ = level;
  ball_radius_ = radius;
  balls_.assign(kernel_.state().size(), Ball{});
  ball_kind_ = kernel_.add_source(std::make_unique<BallSource>(*this));
}

void Contingency::enter_ball(int l, Index a) {
  const VertexState& state = kernel_.state();
  const double now = kernel_.now();
  Envelope& e = envelope_[l][a];
  Ball& b = balls_[a];
  b.anchor = state.position_at(a, now);
  b.shadow = state.velocity(a);
  b.shadow_exits = 0;
  e.centre = Vec3::Zero();
  e.slack = -0.0f;
  e.since = float(now);
  ++ball_entries_;
  kernel_.reschedule(ball_kind_, a, ball_exit_time(a, now));
}

void Contingency::ball_velocity_changed(int l, Index a) {
  Ball& b = balls_[a];
  const Vec3& v = kernel_.state().velocity(a);
  const double cap = slack_cap(l);
  if ((v - b.shadow).squaredNorm() > cap * cap) {
    b.shadow = v;
    ++b.shadow_exits;
  }
  kernel_.reschedule_no_later(ball_kind_, a, ball_exit_time(a, kernel_.now()));
}

double Contingency::ball_exit_time(Index a, double t) const {
  const VertexState& state = kernel_.state();
  const Vec3 d = state.position_at(a, t) - balls_[a].anchor;
  const Vec3& v = state.velocity(a);
  const double r = ball_radius_ * (1.0 - 1e-6);
  const double c = d.squaredNorm() - r * r;
  if (c >= 0.0) return t;
  const double vv = v.squaredNorm();
  if (vv == 0.0) return kNever;
  // |d + v s| = r at the positive root (c < 0: the discriminant is positive).
  const double b = d.dot(v);
  return t + (std::sqrt(b * b - vv * c) - b) / vv;
}

double Contingency::ball_event(Index a, double t) {
  const VertexState& state = kernel_.state();
  const int l = ball_level_;
  const double r = ball_radius_ * (1.0 - 2e-6);
  if ((state.position_at(a, t) - balls_[a].anchor).squaredNorm() < r * r)
    return ball_exit_time(a, t);  // moved earlier by a velocity since changed again
  ++ball_exits_;
  if (!dependents_[l][a].empty()) touched_[l].push_back(a);
  Ball& b = balls_[a];
  if (b.shadow_exits >= 2) {
    b.anchor = state.position_at(a, t);
    b.shadow = state.velocity(a);
    b.shadow_exits = 0;
    return ball_exit_time(a, t);
  }
  // The vertex went through its ball with (nearly) one velocity: the velocity
  // envelope, at its widest, serves it better.
  Envelope& e = envelope_[l][a];
  e.centre = state.velocity(a);
  e.slack = float(slack_cap(l));
  e.since = float(t);
  return kNever;
}

}  // namespace clockwork
