#pragma once
/// Contingency of certificates on vertex velocities (DESIGN §1).
///
/// A certificate's *support* is the set of vertices whose velocities determine its
/// failure time. Each vertex keeps an intrusive list of links to the certificates
/// that depend on it; after a velocity change of the vertex the kernel asks each of
/// them, once per event, for a new failure time.
///
/// A certificate of envelope level L > 0 depends on the vertex's level-L velocity
/// envelope instead: a centre u_a and the level's slack δ_L, |v_a − u_a| ≤ δ_L. Its
/// failure time must hold for every velocity history inside the envelopes of its
/// support; it is rescheduled only when a velocity leaves its envelope (which then
/// re-centres on the velocity). Level 0 is exact: every change reschedules. Levels
/// let near certificates (small gaps) use a tight envelope and far ones a wide one.
#include <array>
#include <boost/intrusive/list.hpp>
#include <cstdint>

#include "engine/event_queue.hpp"

namespace clockwork {

struct Certificate;

namespace bi = boost::intrusive;

/// One edge of the support graph: sits in a vertex's list, points at its certificate.
struct ContingencyLink : bi::list_base_hook<bi::link_mode<bi::auto_unlink>> {
  Certificate* owner = nullptr;
};

using DependentList = bi::list<ContingencyLink, bi::constant_time_size<false>>;

/// Header of a certificate, embedded in the owning source's (address-stable) pool.
/// Copying yields an unlinked certificate (Boost.Intrusive hooks do not copy links).
/// Number of envelope levels (0: exact).
inline constexpr int kEnvelopeLevels = 3;

struct Certificate {
  static constexpr int kMaxSupport = 6;  // a pair of triangles
  EventKind kind = 0;
  EventSlot slot = 0;
  std::uint64_t stamp = 0;  ///< last kernel epoch in which it was rescheduled
  std::array<ContingencyLink, kMaxSupport> links{};
  std::uint8_t support_size = 0;
  std::uint8_t envelope = 0;  ///< envelope level, set before attaching (file comment)

  /// Removes the certificate from every vertex list it is in.
  void detach() {
    for (int i = 0; i < support_size; ++i) links[i].unlink();
    support_size = 0;
  }
};

}  // namespace clockwork
