#pragma once
/// The contingency of kinetic certificates on vertex velocities (DESIGN §1): per
/// vertex and envelope level, the certificates whose failure times depend on it; the
/// velocity envelopes of levels ≥ 1 with their adaptive slacks; the position envelopes
/// (balls). Installed on the kernel as its velocity watch (engine/velocity_watch.hpp):
/// the kernel reports each velocity change, and after each event the contingency asks
/// every certificate whose support changed — once — for a new failure time
/// (CertificateSource::support_changed). docs/contact.md "Velocity envelopes", "Adaptive
/// slack", "Position envelopes".
#include <array>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <vector>

#include "contact/certificates/certificate.hpp"
#include "engine/kernel.hpp"
#include "engine/velocity_watch.hpp"

namespace clockwork {

class Contingency final : public VelocityWatch {
 public:
  /// Installs a contingency on `kernel` (which owns it) for the vertices it has now;
  /// add every vertex first. Envelopes start centred on the velocities, slack 0.
  static Contingency& install(Kernel& kernel);
  explicit Contingency(Kernel& kernel);
  /// Certificates may outlive the contingency (a scene destroys its contact system
  /// after the kernel that owns this): their supports are emptied here, so that
  /// destroying them later touches no list.
  ~Contingency() override;
  Contingency(const Contingency&) = delete;
  Contingency& operator=(const Contingency&) = delete;

  /// Names the source that recomputes the certificates of event kind `kind` (the
  /// kernel's source of that kind, registered before any of its certificates attaches).
  void add_certificate_source(EventKind kind, CertificateSource& source) {
    if (certificate_sources_.size() <= kind) certificate_sources_.resize(kind + 1u, nullptr);
    certificate_sources_[kind] = &source;
  }
  /// Adds vertex `a` to the support of `c` (c.kind, c.slot identify its event;
  /// c.envelope chooses the list).
  void attach(Certificate& c, Index a);
  /// Dependent certificates of a changed velocity are rescheduled once each at the end
  /// of the current event: exact ones always, enveloped ones only if the velocity left
  /// their level's envelope.
  void velocity_changed(Index a) override {
    const VertexState& state = kernel_.state();
    if (!dependents_[0][a].empty()) touched_[0].push_back(a);
    for (int l = 1; l < kEnvelopeLevels; ++l) {
      // A ball holds whatever the velocity: only its exit time moves (even with no
      // dependents, so that the ball is still valid when one attaches).
      if (l == ball_level_ && in_ball(envelope_[l][a])) [[unlikely]] {
        ball_velocity_changed(l, a);
        continue;
      }
      if (dependents_[l][a].empty()) continue;
      Envelope& e = envelope_[l][a];
      if (leaves_envelope(l, e, state.velocity(a))) {
        e.centre = state.velocity(a);
        touched_[l].push_back(a);
        if (saturated_exit_ && l == ball_level_) enter_ball(l, a);
      }
    }
  }
  /// Reschedules the certificates of all vertices touched so far (the kernel calls it
  /// after each event: Kernel::flush_velocity_watch).
  void flush() override;
  const DependentList& dependents(Index a, int level = 0) const { return dependents_[level][a]; }

  /// Slack δ (m/s) of envelope level `level` (1 ≤ level < kEnvelopeLevels); 0 makes it
  /// exact. Set before any certificate of that level is attached.
  void set_velocity_slack(int level, double slack) {
    assert(level > 0 && level < kEnvelopeLevels && slack >= 0.0);
    slack_[level] = double(float(slack));  // the per-vertex slacks are floats (Envelope)
    for (Envelope& e : envelope_[level]) e.slack = float(slack);
  }
  /// Per-vertex adaptive slack at `level` (off while reach is 0). A vertex whose
  /// velocity leaves its envelope again before the slack could cover reach/4 (time
  /// since the last exit × δ_a) doubles its δ_a, up to max_factor × the level's δ: a
  /// velocity that jitters (a vertex in a jam, kicked by penalties and by the phantom
  /// tick in turn) stops rescheduling its certificates, which pay with earlier failure
  /// times instead. Once the slack has covered `reach` without an exit, δ_a halves
  /// back towards the level's δ at its next velocity change; certificates computed with
  /// the wider envelope stay valid inside the narrower one, so relaxing reschedules
  /// nothing. `reach` is the length a certificate's margin is made of (η1 for contact).
  void set_adaptive_slack(int level, double reach, double max_factor) {
    assert(level > 0 && level < kEnvelopeLevels && reach >= 0.0 && max_factor >= 1.0);
    reach_[level] = reach;
    max_factor_[level] = max_factor;
  }
  /// Position envelopes at `level` (docs/contact.md "Position envelopes"; needs the
  /// adaptive slack). A vertex whose velocity leaves even the widest envelope again
  /// and again (a vertex rattling in a jam: kicked by layers and by the phantom tick
  /// in turn) is bounded by position instead: while in its *ball* it stays within
  /// `radius` of an anchor p_a, whatever its velocity. Its certificates see the
  /// anchor (envelope_position), the radius (envelope_radius) and a zero velocity
  /// envelope (centre 0, slack 0), and are rescheduled only when the vertex leaves
  /// the ball — an event of kind "certificate:ball" at the exit time of its linear
  /// path, moved earlier as its velocity changes. On an exit the ball re-centres on
  /// the vertex if its velocity would have left the widest envelope at least twice
  /// meanwhile (the ball saved reschedules), else the vertex returns to its velocity
  /// envelope. Call after set_velocity_slack() and set_adaptive_slack() of the level,
  /// before certificates attach.
  void enable_position_envelopes(int level, double radius);
  /// Where a certificate of `level` takes vertex a to be from time t on: the anchor
  /// of its ball, or its position at t.
  Vec3 envelope_position(int level, Index a, double t) const {
    return in_ball(envelope_[level][a]) ? balls_[a].anchor : kernel_.state().position_at(a, t);
  }
  /// The ball's radius for a vertex in one, else 0.
  double envelope_radius(int level, Index a) const {
    return in_ball(envelope_[level][a]) ? ball_radius_ : 0.0;
  }
  bool in_ball(int level, Index a) const { return level > 0 && in_ball(envelope_[level][a]); }
  /// Entries into balls and exits from them so far.
  std::uint64_t ball_entries() const { return ball_entries_; }
  std::uint64_t ball_exits() const { return ball_exits_; }
  /// Processes vertex a's ball event at t (the "certificate:ball" source).
  double ball_event(Index a, double t);
  /// The level's slack δ (the base of the adaptive per-vertex slacks).
  double velocity_slack(int level) const { return slack_[level]; }
  /// Vertex a's slack δ_a at `level` (the level's δ unless adaptive).
  double velocity_slack(int level, Index a) const { return double(envelope_[level][a].slack); }
  /// Centre u_a of vertex a's envelope at `level` (level 0: the velocity itself).
  const Vec3& envelope_velocity(int level, Index a) const {
    return level == 0 ? kernel_.state().velocity(a) : envelope_[level][a].centre;
  }
  /// Envelope exits so far at levels >= 1 (each reschedules that level's certificates
  /// of the vertex).
  std::uint64_t envelope_exits() const { return envelope_exits_; }

 private:
  /// 32 bytes, aligned: a cache line holds two and none straddles two. Floats suffice:
  /// δ_a is read as the same float by the exit test and by the failure times, and
  /// `since` only steers the heuristic.
  struct alignas(32) Envelope {
    Vec3 centre = Vec3::Zero();
    float slack = 0.0f;  ///< δ_a
    float since = 0.0f;  ///< time of the last exit or change of δ_a
  };
  /// A vertex in a ball has centre 0 and slack −0: certificates read a zero envelope,
  /// and the sign bit tells the ball apart from a level whose slack is 0.
  static bool in_ball(const Envelope& e) { return std::signbit(e.slack); }
  /// Whether velocity v leaves e (adapting δ_a first: set_adaptive_slack). An exit
  /// that comes quickly with δ_a already at its cap sets saturated_exit_.
  bool leaves_envelope(int l, Envelope& e, const Vec3& v) {
    const double d2 = (v - e.centre).squaredNorm();
    if (reach_[l] > 0.0) {
      const double now = kernel_.now();
      saturated_exit_ = false;
      const double slack = e.slack;
      const double covered = (now - double(e.since)) * slack;
      if (d2 > slack * slack) {
        const double cap = max_factor_[l] * slack_[l];
        saturated_exit_ = covered < 0.25 * reach_[l] && slack >= double(float(cap));
        if (covered < 0.25 * reach_[l]) e.slack = float(std::min(2.0 * slack, cap));
        e.since = float(now);
        return true;
      }
      if (covered > reach_[l] && slack > slack_[l]) {
        e.slack = float(std::max(0.5 * slack, slack_[l]));
        e.since = float(now);
        return d2 > double(e.slack) * double(e.slack);
      }
      return false;
    }
    return d2 > double(e.slack) * double(e.slack);
  }
  /// A vertex's position envelope (enable_position_envelopes).
  struct Ball {
    Vec3 anchor = Vec3::Zero();
    Vec3 shadow = Vec3::Zero();  ///< the widest velocity envelope's centre, followed
    int shadow_exits = 0;        ///< its exits since the ball was anchored
  };
  void enter_ball(int l, Index a);
  void ball_velocity_changed(int l, Index a);
  /// When vertex a's linear path from time t leaves its ball (shrunk by a millionth,
  /// so that rounding never puts it outside the radius its certificates assume).
  double ball_exit_time(Index a, double t) const;
  /// The widest slack of level l (its cap).
  double slack_cap(int l) const { return double(float(max_factor_[l] * slack_[l])); }

  Kernel& kernel_;

  std::vector<CertificateSource*> certificate_sources_;  ///< by event kind
  std::array<std::vector<DependentList>, kEnvelopeLevels> dependents_;
  std::array<std::vector<Envelope>, kEnvelopeLevels> envelope_;  ///< [0] unused
  std::array<double, kEnvelopeLevels> slack_{}, reach_{}, max_factor_{};
  std::uint64_t envelope_exits_ = 0;
  bool saturated_exit_ = false;  ///< set by leaves_envelope
  int ball_level_ = 0;           ///< 0: no position envelopes
  double ball_radius_ = 0.0;
  EventKind ball_kind_ = 0;
  std::vector<Ball> balls_;
  std::uint64_t ball_entries_ = 0, ball_exits_ = 0;
  std::array<std::vector<Index>, kEnvelopeLevels> touched_;
  std::vector<Certificate*> pending_;
  std::uint64_t epoch_ = 0;
};

}  // namespace clockwork
