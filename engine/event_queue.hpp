#pragma once
/// The one mutable priority queue of the kernel (DESIGN §1).
///
/// A node is `(time, seq, kind, slot)`: `kind` names the event source, `slot` the
/// payload in that source's pool. `seq` is a monotone counter assigned on every push
/// and update, so events with equal times pop in first-scheduled-first-out order and
/// a run is bit-reproducible.
#include <boost/heap/d_ary_heap.hpp>
#include <boost/heap/pairing_heap.hpp>
#include <cassert>
#include <cstdint>

namespace clockwork {

using EventKind = std::uint16_t;
using EventSlot = std::uint32_t;

struct EventNode {
  double time;
  std::uint64_t seq;
  EventKind kind;
  EventSlot slot;
};

/// Boost.Heap is a max-heap: "less" means "later", so the top is the earliest event.
struct LaterEvent {
  bool operator()(const EventNode& a, const EventNode& b) const {
    if (a.time != b.time) return a.time > b.time;
    return a.seq > b.seq;
  }
};

using DaryEventHeap = boost::heap::d_ary_heap<EventNode, boost::heap::arity<4>,
                                              boost::heap::mutable_<true>,
                                              boost::heap::compare<LaterEvent>>;
using PairingEventHeap =
    boost::heap::pairing_heap<EventNode, boost::heap::compare<LaterEvent>>;

/// Mutable event queue over a Boost.Heap with handles: push, top, pop, update, erase,
/// all O(log n) (amortised for the pairing heap).
template <typename Heap>
class BasicEventQueue {
 public:
  using Handle = typename Heap::handle_type;

  Handle push(double time, EventKind kind, EventSlot slot) {
    return heap_.push(EventNode{time, next_seq_++, kind, slot});
  }
  /// Moves the event to `time` (earlier or later); it gets a fresh sequence number.
  void update(Handle h, double time) {
    EventNode node = *h;
    node.time = time;
    node.seq = next_seq_++;
    heap_.update(h, node);
  }
  void erase(Handle h) { heap_.erase(h); }
  const EventNode& top() const {
    assert(!heap_.empty());
    return heap_.top();
  }
  void pop() { heap_.pop(); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  void clear() { heap_.clear(); }

 private:
  Heap heap_;
  std::uint64_t next_seq_ = 0;
};

/// The heap the kernel uses: the faster of the two in bench/bench_queue.cpp
/// (results in docs/performance.md).
using EventQueue = BasicEventQueue<DaryEventHeap>;

}  // namespace clockwork
