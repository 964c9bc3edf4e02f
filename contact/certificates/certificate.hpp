#pragma once
/// Certificates and their contingency lists (DESIGN §1); the lists' owner and the
/// envelopes are contact/certificates/contingency.hpp.
///
/// A certificate's *support* is the set of vertices whose velocities determine its
/// failure time. Each vertex keeps a list of the certificates that depend on it;
/// after a velocity change of the vertex the contingency asks each of them, once per event,
/// for a new failure time.
///
/// A certificate of envelope level L > 0 depends on the vertex's level-L velocity
/// envelope instead: a centre u_a and the level's slack δ_L, |v_a − u_a| ≤ δ_L. Its
/// failure time must hold for every velocity history inside the envelopes of its
/// support; it is rescheduled only when a velocity leaves its envelope (which then
/// re-centres on the velocity). Level 0 is exact: every change reschedules. Levels
/// let near certificates (small gaps) use a tight envelope and far ones a wide one.
#include <array>
#include <cassert>
#include <cstdint>
#include <vector>

#include "engine/event_queue.hpp"

namespace clockwork {

struct Certificate;
class Kernel;

/// The event source of a kind of certificate, as the contingency sees it
/// (Contingency::add_certificate_source): a certificate of it lost its failure time
/// because the velocity of a vertex of its support changed (beyond its envelope), and
/// must recompute it and reschedule its event (Kernel::reschedule).
class CertificateSource {
 public:
  virtual ~CertificateSource() = default;
  virtual void support_changed(EventSlot slot, Kernel& kernel) = 0;
};

/// A vertex's dependents, in the order they were attached. An array, not an intrusive
/// linked list: the contingency walks a vertex's list after each of its envelope exits, and
/// in a tight knot that is ~140 triangle-pair certificates per exit, scattered in
/// memory; a list's walk is a chain of dependent cache misses, an array's can be
/// prefetched ahead (bench/results/history_contact.md "Contingency lists and pools").
/// Removal leaves a hole (nullptr owner) so that the order — which decides the order of
/// reschedules, and so the queue's tie-breaking — stays that of a linked list; holes are
/// compacted, in order, once they outnumber the live entries.
class DependentList {
 public:
  struct Entry {
    Certificate* owner;
    std::uint32_t link;  ///< index into owner->links
  };
  bool empty() const { return live_ == 0; }
  std::size_t size() const { return live_; }
  /// Entries with holes (owner nullptr), in attachment order.
  const std::vector<Entry>& entries() const { return entries_; }
  /// Appends `owner`'s link `link`; returns its position.
  std::uint32_t push(Certificate* owner, std::uint32_t link) {
    entries_.push_back({owner, link});
    ++live_;
    return static_cast<std::uint32_t>(entries_.size() - 1);
  }
  /// Removes the entry at `pos` (Certificate::detach).
  inline void remove(std::uint32_t pos);

 private:
  inline void compact();
  std::vector<Entry> entries_;
  std::uint32_t live_ = 0;
};

/// One edge of the support graph, kept by the certificate: where its entry is.
struct ContingencyLink {
  DependentList* list = nullptr;
  std::uint32_t pos = 0;
};

/// Number of envelope levels (0: exact).
inline constexpr int kEnvelopeLevels = 3;

/// Header of a certificate, embedded in the owning source's (address-stable) pool.
/// Copying yields an unlinked certificate; destroying one detaches it.
struct Certificate {
  static constexpr int kMaxSupport = 6;  // a pair of triangles
  EventKind kind = 0;
  EventSlot slot = 0;
  std::uint64_t stamp = 0;  ///< last contingency epoch in which it was rescheduled
  std::array<ContingencyLink, kMaxSupport> links{};
  std::uint8_t support_size = 0;
  std::uint8_t envelope = 0;  ///< envelope level, set before attaching (file comment)

  Certificate() = default;
  Certificate(const Certificate& o) : kind(o.kind), slot(o.slot), stamp(o.stamp), envelope(o.envelope) {}
  /// Copies the header's fields; the support stays this certificate's own.
  Certificate& operator=(const Certificate& o) {
    kind = o.kind;
    slot = o.slot;
    stamp = o.stamp;
    envelope = o.envelope;
    return *this;
  }
  ~Certificate() { detach(); }

  /// Removes the certificate from every vertex list it is in.
  void detach() {
    for (int i = 0; i < support_size; ++i) links[i].list->remove(links[i].pos);
    support_size = 0;
  }
};

void DependentList::remove(std::uint32_t pos) {
  assert(pos < entries_.size() && entries_[pos].owner != nullptr && live_ > 0);
  entries_[pos].owner = nullptr;
  --live_;
  while (!entries_.empty() && entries_.back().owner == nullptr) entries_.pop_back();
  if (entries_.size() > 2 * std::size_t(live_) + 8) compact();
}

void DependentList::compact() {
  std::uint32_t w = 0;
  for (const Entry& e : entries_) {
    if (e.owner == nullptr) continue;
    e.owner->links[e.link].pos = w;
    entries_[w++] = e;
  }
  entries_.resize(w);
}

}  // namespace clockwork
