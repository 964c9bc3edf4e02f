#pragma once
/// The one mutable priority queue of the kernel (DESIGN §1).
///
/// A node is `(time, seq, kind, slot)`: `kind` names the event source, `slot` the
/// payload in that source's pool. `seq` is a monotone counter assigned on every push
/// and update, so events with equal times pop in first-scheduled-first-out order and
/// a run is bit-reproducible.
#include <boost/heap/d_ary_heap.hpp>
#include <boost/heap/pairing_heap.hpp>
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <vector>

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
  double time_of(Handle h) const { return (*h).time; }
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

/// A 4-ary min-heap over a flat array of (time, seq, handle) keys, with each handle's
/// kind and slot in a side table, and its heap position in another: a sift compares
/// keys stored in the heap array itself, where a Boost mutable heap follows a list
/// iterator per comparison (a cache miss each once the queue outgrows the cache).
/// Same order as BasicEventQueue, so a run is bit-identical with either.
class IndexedEventQueue {
 public:
  using Handle = std::uint32_t;

  Handle push(double time, EventKind kind, EventSlot slot) {
    Handle id;
    if (free_.empty()) {
      id = static_cast<Handle>(nodes_.size());
      nodes_.emplace_back();
      position_.push_back(0);
    } else {
      id = free_.back();
      free_.pop_back();
    }
    nodes_[id] = EventNode{time, next_seq_++, kind, slot};
    heap_.push_back(Key{time, nodes_[id].seq, id});
    sift_up(heap_.size() - 1);
    return id;
  }
  /// Moves the event to `time` (earlier or later); it gets a fresh sequence number.
  void update(Handle h, double time) {
    EventNode& node = nodes_[h];
    const bool earlier = time < node.time;
    node.time = time;
    node.seq = next_seq_++;
    const std::size_t i = position_[h];
    heap_[i].time = time;
    heap_[i].seq = node.seq;
    if (earlier) sift_up(i);
    else sift_down(i);
  }
  void erase(Handle h) {
    const std::size_t i = position_[h];
    const Key last = heap_.back();
    heap_.pop_back();
    free_.push_back(h);
    if (i == heap_.size()) return;
    const bool earlier = before(last, heap_[i]);
    heap_[i] = last;
    position_[last.id] = static_cast<std::uint32_t>(i);
    if (earlier) sift_up(i);
    else sift_down(i);
  }
  double time_of(Handle h) const { return nodes_[h].time; }
  const EventNode& top() const {
    assert(!heap_.empty());
    return nodes_[heap_.front().id];
  }
  void pop() { erase(heap_.front().id); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  void clear() {
    heap_.clear();
    nodes_.clear();
    position_.clear();
    free_.clear();
  }

 private:
  struct Key {
    double time;
    std::uint64_t seq;
    Handle id;
  };
  static constexpr std::size_t kArity = 4;
  static bool before(const Key& a, const Key& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  // Both sifts move a hole rather than swapping, writing each moved key's position once.
  void sift_up(std::size_t i) {
    const Key key = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!before(key, heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, key);
  }
  void sift_down(std::size_t i) {
    const Key key = heap_[i];
    const std::size_t n = heap_.size();
    for (;;) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      const std::size_t end = std::min(first + kArity, n);
      std::size_t best = first;
      for (std::size_t c = first + 1; c < end; ++c)
        if (before(heap_[c], heap_[best])) best = c;
      if (!before(heap_[best], key)) break;
      place(i, heap_[best]);
      i = best;
    }
    place(i, key);
  }
  void place(std::size_t i, const Key& key) {
    heap_[i] = key;
    position_[key.id] = static_cast<std::uint32_t>(i);
  }

  std::vector<Key> heap_;
  std::vector<EventNode> nodes_;         ///< by handle
  std::vector<std::uint32_t> position_;  ///< by handle: index in heap_
  std::vector<Handle> free_;             ///< handles to reuse
  std::uint64_t next_seq_ = 0;
};

/// The queue the kernel uses: the fastest in bench/bench_queue.cpp (results in
/// docs/performance.md).
using EventQueue = IndexedEventQueue;

}  // namespace clockwork
