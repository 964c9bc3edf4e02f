#pragma once
/// Contingency of certificates on vertex velocities (DESIGN §1).
///
/// A certificate's *support* is the set of vertices whose velocities determine its
/// failure time. Each vertex keeps an intrusive list of links to the certificates
/// that depend on it; after a velocity change of the vertex the kernel asks each of
/// them, once per event, for a new failure time.
///
/// An *enveloped* certificate depends on the vertex's velocity envelope instead: a
/// centre u_a and the kernel's slack δ, |v_a − u_a| ≤ δ. Its failure time must hold
/// for every velocity history inside the envelopes of its support; it is rescheduled
/// only when a velocity leaves its envelope (which then re-centres on the velocity).
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
struct Certificate {
  static constexpr int kMaxSupport = 6;  // a pair of triangles
  EventKind kind = 0;
  EventSlot slot = 0;
  std::uint64_t stamp = 0;  ///< last kernel epoch in which it was rescheduled
  std::array<ContingencyLink, kMaxSupport> links{};
  std::uint8_t support_size = 0;
  bool enveloped = false;  ///< set before attaching; see the file comment

  /// Removes the certificate from every vertex list it is in.
  void detach() {
    for (int i = 0; i < support_size; ++i) links[i].unlink();
    support_size = 0;
  }
};

}  // namespace clockwork
