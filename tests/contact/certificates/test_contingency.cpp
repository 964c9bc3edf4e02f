#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <random>

#include "contact/certificates/contingency.hpp"
#include "engine/kernel.hpp"

using namespace clockwork;

namespace {

/// The contingency installed on k (Contingency::install).
Contingency& C(Kernel& k) { return static_cast<Contingency&>(*k.velocity_watch()); }
const Contingency& C(const Kernel& k) { return static_cast<const Contingency&>(*k.velocity_watch()); }

/// Dummy certificate on two vertices: "x_b(t) − x_a(t) < c" (x-coordinates), whose
/// failure time under linear trajectories is the root of a linear function.
struct GapCertificate {
  Certificate header;
  Index a, b;
  double c;
  int failures = 0;
  int reschedules = 0;
};

class GapSource final : public EventSource, public CertificateSource {
 public:
  std::string_view name() const override { return "certificate:gap"; }
  EventKind kind = 0;
  std::deque<GapCertificate> certs;  // deque: addresses stay valid (intrusive links)
  double worst_violation_at_failure = 0.0;

  static double gap(const VertexState& s, const GapCertificate& c, double t) {
    return s.position_at(c.b, t).x() - s.position_at(c.a, t).x() - c.c;
  }
  bool enveloped = false;  ///< certify against velocity envelopes (centre, slack)
  double failure_time(const Kernel& k, const GapCertificate& c) const {
    const VertexState& s = k.state();
    const double t = k.now();
    // Enveloped: a vertex in a position envelope is anywhere in its ball.
    const double f = enveloped ? C(k).envelope_position(1, c.b, t).x() + C(k).envelope_radius(1, c.b) -
                                     (C(k).envelope_position(1, c.a, t).x() - C(k).envelope_radius(1, c.a)) - c.c
                               : gap(s, c, t);
    const double rate =
        enveloped ? C(k).envelope_velocity(1, c.b).x() - C(k).envelope_velocity(1, c.a).x() +
                        C(k).velocity_slack(1, c.a) + C(k).velocity_slack(1, c.b)
                  : s.velocity(c.b).x() - s.velocity(c.a).x();
    if (f >= 0.0) return t;  // a ball's bound may reach the threshold at once
    if (rate <= 0.0) return kNever;
    return t - f / rate;
  }
  void add(Kernel& k, Index a, Index b, double c) {
    certs.push_back(GapCertificate{{}, a, b, c});
    GapCertificate& cert = certs.back();
    cert.header.kind = kind;
    cert.header.slot = static_cast<EventSlot>(certs.size() - 1);
    cert.header.envelope = enveloped ? 1 : 0;
    C(k).attach(cert.header, a);
    C(k).attach(cert.header, b);
    update(k, cert);
  }
  void update(Kernel& k, GapCertificate& c) {
    const double t = failure_time(k, c);
    if (t < kNever) k.reschedule(kind, c.header.slot, t);
    else k.cancel(kind, c.header.slot);
  }
  double process(EventSlot slot, double time, Kernel& k) override {
    GapCertificate& c = certs[slot];
    ++c.failures;
    worst_violation_at_failure =
        std::max(worst_violation_at_failure, std::abs(gap(k.state(), c, time)));
    c.c += 1.0;  // "recompute": certify a larger gap
    const double t = failure_time(k, c);
    return t;
  }
  void support_changed(EventSlot slot, Kernel& k) override {
    ++certs[slot].reschedules;
    update(k, certs[slot]);
  }
};

/// Changes the velocity of two random vertices every `period`.
class Kicker final : public EventSource {
 public:
  explicit Kicker(std::uint64_t seed, GapSource* gaps) : rng_(seed), gaps_(gaps) {}
  std::string_view name() const override { return "kicker"; }
  double period = 0.01;
  /// 0: new random velocities; > 0: random changes of at most `nudge` per component.
  double nudge = 0.0;
  double worst_gap = -kNever;  // max over kicks of gap(t) on live certificates
  double process(EventSlot, double time, Kernel& k) override {
    for (const auto& c : gaps_->certs) worst_gap = std::max(worst_gap, GapSource::gap(k.state(), c, time));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int i = 0; i < 2; ++i) {
      const Index a = static_cast<Index>(rng_() % k.state().size());
      k.state().sync(a, time);
      const Vec3 r(u(rng_), u(rng_), u(rng_));
      if (nudge > 0.0) k.state().velocity_ref(a) += nudge * r;
      else k.state().velocity_ref(a) = r;
      k.velocity_changed(a);
      k.velocity_changed(a);  // reported twice: still one reschedule per certificate
    }
    return time + period;
  }

 private:
  std::mt19937_64 rng_;
  GapSource* gaps_;
};

/// 20 vertices on a line, a gap certificate for every ordered pair, a kicker changing
/// two velocities every 0.01 s, run for 20 s. `nudge` > 0 with `enveloped`: small
/// velocity changes against envelope-level-1 certificates of slack `slack`.
struct KickedGaps {
  Kernel k;
  GapSource* gaps = nullptr;
  Kicker* kicker = nullptr;
  EventKind kicker_kind = 0;

  KickedGaps(std::uint64_t seed, std::uint64_t kick_seed, bool enveloped = false,
             double slack = 0.0, double nudge = 0.0, double reach = 0.0) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    // |x_b − x_a| <= 1 < 1.5: every certificate holds when it is created.
    for (int i = 0; i < 20; ++i) k.state().add(Vec3(0.5 * u(rng), 0, 0), Vec3(u(rng), 0, 0), 1.0);
    Contingency::install(k);
    if (enveloped) C(k).set_velocity_slack(1, slack);
    if (reach > 0.0) C(k).set_adaptive_slack(1, reach, 16.0);
    auto gaps_owned = std::make_unique<GapSource>();
    gaps = gaps_owned.get();
    gaps->enveloped = enveloped;
    gaps->kind = k.add_source(std::move(gaps_owned));
    C(k).add_certificate_source(gaps->kind, *gaps);
    auto kicker_owned = std::make_unique<Kicker>(kick_seed, gaps);
    kicker = kicker_owned.get();
    kicker->nudge = nudge;
    kicker_kind = k.add_source(std::move(kicker_owned));
    for (Index a = 0; a < 20; ++a)
      for (Index b = 0; b < 20; ++b)
        if (a != b) gaps->add(k, a, b, 1.5);
    k.schedule(kicker_kind, 0, 0.0);
    k.run_until(20.0);
  }
};

}  // namespace

TEST_CASE("certificates are rescheduled when a support vertex changes velocity") {
  KickedGaps run(42, 7);
  Kernel& k = run.k;
  GapSource& gaps = *run.gaps;
  Kicker& kicker = *run.kicker;
  const EventKind kicker_kind = run.kicker_kind;

  int failures = 0, reschedules = 0;
  for (const auto& c : gaps.certs) {
    failures += c.failures;
    reschedules += c.reschedules;
  }
  CHECK(failures > 100);
  CHECK(reschedules > 1000);
  // Each certificate fires exactly when its gap reaches the threshold ...
  CHECK(gaps.worst_violation_at_failure < 1e-9);
  // ... and no certificate ever was violated while it was scheduled later.
  CHECK(kicker.worst_gap < 1e-9);
  // Two vertices per kick, each with 2·19 certificates, one of them shared: at most
  // 75 reschedules per kick though each vertex was reported twice.
  const double kicks = static_cast<double>(k.stats(kicker_kind).processed);
  CHECK(reschedules <= 75 * kicks);
}

TEST_CASE("enveloped certificates: rescheduled only when a velocity leaves its envelope, never late") {
  // Velocities drift by small nudges; each certificate assumes every support vertex
  // stays within δ of its envelope centre. Only envelope exits may reschedule.
  for (const double slack : {0.0, 0.05, 0.2}) {
    CAPTURE(slack);
    KickedGaps run(5, 9, /*enveloped=*/true, slack, /*nudge=*/0.02);
    Kernel& k = run.k;
    GapSource& gaps = *run.gaps;
    Kicker& kicker = *run.kicker;
    const EventKind kicker_kind = run.kicker_kind;
    int reschedules = 0, failures = 0;
    for (const auto& c : gaps.certs) reschedules += c.reschedules, failures += c.failures;
    const double kicks = static_cast<double>(k.stats(kicker_kind).processed);
    CHECK(kicker.worst_gap < 1e-9);  // never violated while scheduled later
    CHECK(failures > 100);
    // Each exit reschedules the vertex's 38 certificates (at most).
    CHECK(reschedules <= 38 * double(C(k).envelope_exits()));
    // Two vertices per kick, each reported twice: with δ = 0 every change exits once.
    if (slack == 0.0) CHECK(double(C(k).envelope_exits()) == 2 * kicks);
    if (slack == 0.2) CHECK(double(C(k).envelope_exits()) < 0.5 * kicks);
  }
}

TEST_CASE("adaptive slack: fewer exits under jitter, never late, capped at 16x") {
  // Nudges of up to 0.1 per component every 0.01 s against δ = 0.02: nearly every
  // change exits a fixed envelope. Reach 1: a vertex that exits again before its
  // slack covered 0.25 doubles it.
  KickedGaps fixed(5, 9, /*enveloped=*/true, 0.02, /*nudge=*/0.1);
  KickedGaps adaptive(5, 9, /*enveloped=*/true, 0.02, /*nudge=*/0.1, /*reach=*/1.0);
  CHECK(adaptive.kicker->worst_gap < 1e-9);  // never violated while scheduled later
  CHECK(fixed.kicker->worst_gap < 1e-9);
  CHECK(double(C(adaptive.k).envelope_exits()) < 0.5 * double(C(fixed.k).envelope_exits()));
  double widest = 0.0;
  for (Index a = 0; a < 20; ++a) widest = std::max(widest, C(adaptive.k).velocity_slack(1, a));
  const double base = C(adaptive.k).velocity_slack(1);  // 0.02 rounded to a float
  CHECK(base == doctest::Approx(0.02));
  CHECK(widest > base);
  CHECK(widest <= 16 * base);
  for (Index a = 0; a < 20; ++a) CHECK(C(fixed.k).velocity_slack(1, a) == base);
}

namespace {
/// Sets vertex 0's x-velocity to v[i] at time t[i] (slot i).
class VelocityScript final : public EventSource {
 public:
  std::vector<double> t, v;
  std::string_view name() const override { return "script"; }
  double process(EventSlot slot, double time, Kernel& k) override {
    k.state().sync(0, time);
    k.state().velocity_ref(0) = Vec3(v[slot], 0, 0);
    k.velocity_changed(0);
    return kNever;
  }
};
}  // namespace

TEST_CASE("adaptive slack doubles on quick exits up to its cap and relaxes after quiet") {
  Kernel k;
  k.state().add(Vec3::Zero(), Vec3::Zero(), 1.0);
  k.state().add(Vec3(1, 0, 0), Vec3::Zero(), 1.0);
  Contingency::install(k);
  C(k).set_velocity_slack(1, 0.1);
  C(k).set_adaptive_slack(1, /*reach=*/1.0, /*max_factor=*/4.0);
  auto gaps_owned = std::make_unique<GapSource>();
  GapSource& gaps = *gaps_owned;
  gaps.enveloped = true;
  gaps.kind = k.add_source(std::move(gaps_owned));
  C(k).add_certificate_source(gaps.kind, gaps);
  gaps.add(k, 0, 1, 10.0);
  auto script_owned = std::make_unique<VelocityScript>();
  VelocityScript& script = *script_owned;
  // Exits at 0.1, 0.2, 0.3 (slack covered 0.01, 0.02, 0.04 < reach / 4): 0.1 -> 0.2 ->
  // 0.4 -> 0.4 (cap 4 x 0.1). At 20 the slack has covered 7.9 > reach: relax to 0.2,
  // no exit (0.01 from the centre); at 30 it covered 2: relax to 0.1.
  script.t = {0.1, 0.2, 0.3, 20.0, 30.0};
  script.v = {0.2, 0.5, 1.0, 1.01, 1.02};
  const EventKind kind = k.add_source(std::move(script_owned));
  for (EventSlot i = 0; i < 5; ++i) k.schedule(kind, i, script.t[i]);
  const std::vector<double> expected = {0.2, 0.4, 0.4, 0.2, 0.1};
  for (int i = 0; i < 5; ++i) {
    k.run_until(script.t[i]);
    CAPTURE(i);
    CHECK(C(k).velocity_slack(1, 0) == doctest::Approx(expected[i]));
  }
  CHECK(C(k).envelope_exits() == 3);
  CHECK(C(k).velocity_slack(1, 1) == C(k).velocity_slack(1));  // vertex 1 never changed
  CHECK(gaps.certs[0].reschedules == 3);
}

TEST_CASE("a detached certificate is no longer rescheduled") {
  Kernel k;
  k.state().add(Vec3::Zero(), Vec3::Zero(), 1.0);
  k.state().add(Vec3(1, 0, 0), Vec3::Zero(), 1.0);
  Contingency::install(k);
  auto owned = std::make_unique<GapSource>();
  GapSource& gaps = *owned;
  gaps.kind = k.add_source(std::move(owned));
  C(k).add_certificate_source(gaps.kind, gaps);
  gaps.add(k, 0, 1, 2.0);
  CHECK(!C(k).dependents(0).empty());
  gaps.certs[0].header.detach();
  CHECK(C(k).dependents(0).empty());
  CHECK(C(k).dependents(1).empty());
  k.state().velocity_ref(1) = Vec3(1, 0, 0);
  k.velocity_changed(1);
  k.flush_velocity_watch();
  CHECK(gaps.certs[0].reschedules == 0);
}

namespace {
/// Records the order in which its certificates are asked for new failure times.
class OrderSource final : public EventSource, public CertificateSource {
 public:
  std::string_view name() const override { return "certificate:order"; }
  double process(EventSlot, double, Kernel&) override { return kNever; }
  void support_changed(EventSlot slot, Kernel&) override { order.push_back(slot); }
  std::vector<EventSlot> order;
};
}  // namespace

TEST_CASE("dependents are rescheduled in attachment order, through detaches and compaction") {
  // The order decides the order of reschedules and so the queue's tie-breaking: the
  // array with holes (engine/contingency.hpp) must keep a linked list's order.
  Kernel k;
  k.state().add(Vec3::Zero(), Vec3::Zero(), 1.0);
  k.state().add(Vec3(1, 0, 0), Vec3::Zero(), 1.0);
  Contingency::install(k);
  auto owned = std::make_unique<OrderSource>();
  OrderSource& source = *owned;
  const EventKind kind = k.add_source(std::move(owned));
  C(k).add_certificate_source(kind, source);
  std::deque<Certificate> certs(60);
  std::vector<EventSlot> expected;
  for (EventSlot i = 0; i < 40; ++i) {
    certs[i].kind = kind;
    certs[i].slot = i;
    C(k).attach(certs[i], 0);
    C(k).attach(certs[i], 1);
  }
  // Detach all but every fourth, from the back and the middle: holes, trailing holes
  // popped, and compactions (holes outnumber the live entries twice over).
  for (EventSlot i = 0; i < 40; ++i)
    if (i % 4 != 0) certs[i].detach();
  for (EventSlot i = 0; i < 40; i += 4) expected.push_back(i);
  CHECK(C(k).dependents(0).size() == 10);
  CHECK(C(k).dependents(0).entries().size() < 40);  // compacted
  for (EventSlot i = 40; i < 60; ++i) {
    certs[i].kind = kind;
    certs[i].slot = i;
    C(k).attach(certs[i], 0);
    expected.push_back(i);
  }
  certs[8].detach();  // a hole after compaction
  expected.erase(std::find(expected.begin(), expected.end(), 8));
  k.state().velocity_ref(0) = Vec3(1, 0, 0);
  k.velocity_changed(0);
  k.flush_velocity_watch();
  CHECK(source.order == expected);
  // Positions stayed consistent: every remaining certificate detaches cleanly.
  for (Certificate& c : certs) c.detach();
  CHECK(C(k).dependents(0).empty());
  CHECK(C(k).dependents(1).empty());
  CHECK(C(k).dependents(0).entries().empty());
}

TEST_CASE("a destroyed certificate leaves its lists, and one may outlive the kernel") {
  auto k = std::make_unique<Kernel>();
  k->state().add(Vec3::Zero(), Vec3::Zero(), 1.0);
  Contingency::install(*k);
  Certificate outlives;
  {
    std::deque<Certificate> certs(3);
    for (Certificate& c : certs) C(*k).attach(c, 0);
    C(*k).attach(outlives, 0);
    certs.pop_back();
    CHECK(C(*k).dependents(0).size() == 3);
    const Certificate copy = certs.front();  // a copy is unlinked
    CHECK(copy.support_size == 0);
    CHECK(C(*k).dependents(0).size() == 3);
  }
  CHECK(C(*k).dependents(0).size() == 1);
  k.reset();  // empties the supports of the certificates still attached
  CHECK(outlives.support_size == 0);
}

namespace {
/// Every 0.01 s sets every velocity to ±(1, 0.5, 0.2) (the sign alternating: a rattle
/// of amplitude 0.01) plus a slow drift of 0.2 per vertex; from `calm` on, the drift
/// alone. Checks at each kick that no live certificate is violated and that every
/// vertex in a ball is inside it.
class Rattler final : public EventSource {
 public:
  Rattler(GapSource* gaps, double calm) : gaps_(gaps), calm_(calm) {}
  std::string_view name() const override { return "rattler"; }
  double worst_gap = -kNever;
  double worst_ball = 0.0;  ///< max of |x − anchor| / radius over vertices in balls
  int in_balls_before_calm = 0, in_balls_at_end = 0;
  double process(EventSlot, double time, Kernel& k) override {
    for (const auto& c : gaps_->certs) worst_gap = std::max(worst_gap, GapSource::gap(k.state(), c, time));
    int in_balls = 0;
    for (Index a = 0; a < k.state().size(); ++a) {
      if (!C(k).in_ball(1, a)) continue;
      ++in_balls;
      const Vec3 d = k.state().position_at(a, time) - C(k).envelope_position(1, a, time);
      worst_ball = std::max(worst_ball, d.norm() / C(k).envelope_radius(1, a));
    }
    if (time < calm_) in_balls_before_calm = in_balls;
    in_balls_at_end = in_balls;
    sign_ = -sign_;
    for (Index a = 0; a < k.state().size(); ++a) {
      k.state().sync(a, time);
      const Vec3 drift = 0.2 * Vec3(std::cos(a), std::sin(a), 0.0);
      k.state().velocity_ref(a) = time < calm_ ? Vec3(sign_ * Vec3(1.0, 0.5, 0.2) + drift) : drift;
      k.velocity_changed(a);
    }
    return time + 0.01;
  }

 private:
  GapSource* gaps_;
  double calm_;
  double sign_ = 1.0;
};

struct RattledGaps {
  Kernel k;
  GapSource* gaps = nullptr;
  Rattler* rattler = nullptr;
  int reschedules = 0;
  explicit RattledGaps(double ball_radius) {
    for (int i = 0; i < 20; ++i) k.state().add(Vec3(0.05 * i, 0, 0), Vec3::Zero(), 1.0);
    Contingency::install(k);
    C(k).set_velocity_slack(1, 0.02);
    C(k).set_adaptive_slack(1, /*reach=*/0.1, /*max_factor=*/16.0);
    if (ball_radius > 0.0) C(k).enable_position_envelopes(1, ball_radius);
    auto gaps_owned = std::make_unique<GapSource>();
    gaps = gaps_owned.get();
    gaps->enveloped = true;
    gaps->kind = k.add_source(std::move(gaps_owned));
    C(k).add_certificate_source(gaps->kind, *gaps);
    auto rattler_owned = std::make_unique<Rattler>(gaps, 10.0);
    rattler = rattler_owned.get();
    const EventKind kind = k.add_source(std::move(rattler_owned));
    // x_b − x_a < 1.5: 0.55 of margin at the start, 0.4 per second of drift at most.
    for (Index a = 0; a < 20; ++a)
      for (Index b = 0; b < 20; ++b)
        if (a != b) gaps->add(k, a, b, 1.5);
    k.schedule(kind, 0, 0.0);
    k.run_until(12.0);
    for (const auto& c : gaps->certs) reschedules += c.reschedules;
  }
};
}  // namespace

TEST_CASE("position envelopes: rattling vertices go into balls, never late, and leave them when calm") {
  RattledGaps plain(0.0), balls(0.05);
  // The rattle changes each velocity by 2.2 per kick, beyond the widest slack (0.32):
  // with velocity envelopes alone every kick exits for every vertex.
  CHECK(C(plain.k).envelope_exits() >= 20 * 999);
  CHECK(plain.rattler->worst_gap < 1e-9);
  // With balls of 0.05 (the rattle's amplitude is 0.01, the drift 0.002 per kick)
  // each vertex enters one after its slack saturates, and re-anchors as it drifts.
  CHECK(balls.rattler->worst_gap < 1e-9);  // no certificate violated while scheduled later
  CHECK(balls.rattler->worst_ball <= 1.0);  // and no vertex outside its ball
  CHECK(balls.rattler->in_balls_before_calm == 20);
  CHECK(C(balls.k).ball_entries() >= 20);
  CHECK(C(balls.k).ball_exits() > 20);
  CHECK(double(C(balls.k).envelope_exits()) < 0.05 * double(C(plain.k).envelope_exits()));
  CHECK(balls.reschedules < 0.2 * plain.reschedules);
  // Calm, each vertex drifts through its ball at one velocity and returns to its
  // velocity envelope.
  CHECK(balls.rattler->in_balls_at_end == 0);
}
