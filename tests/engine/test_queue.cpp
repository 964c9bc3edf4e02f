#include <doctest/doctest.h>

#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "engine/event_queue.hpp"

using namespace clockwork;

namespace {

/// Random push/update/erase/pop against a sorted reference (std::set ordered by
/// (time, seq)): every pop must return exactly the reference's first element.
template <typename Queue>
void check_against_reference(std::uint64_t seed, int operations) {
  Queue queue;
  using Key = std::tuple<double, std::uint64_t, EventSlot>;  // time, seq, slot
  std::set<Key> reference;
  std::vector<typename Queue::Handle> handles;
  std::vector<Key> key_of;
  std::vector<bool> live;
  std::uint64_t seq = 0;  // mirrors the queue's own counter
  std::mt19937_64 rng(seed);
  // Coarse times so that ties are frequent and the seq tie-break is exercised.
  auto random_time = [&] { return std::floor(std::uniform_real_distribution<>(0, 50)(rng)); };
  auto random_live = [&]() -> int {
    if (reference.empty()) return -1;
    for (;;) {
      const int s = static_cast<int>(rng() % live.size());
      if (live[s]) return s;
    }
  };
  for (int op = 0; op < operations; ++op) {
    const int choice = static_cast<int>(rng() % 4);
    if (choice == 0 || reference.empty()) {
      const double t = random_time();
      const auto slot = static_cast<EventSlot>(handles.size());
      handles.push_back(queue.push(t, 7, slot));
      key_of.push_back({t, seq++, slot});
      live.push_back(true);
      reference.insert(key_of.back());
    } else if (choice == 1) {
      const int s = random_live();
      const double t = random_time();
      reference.erase(key_of[s]);
      queue.update(handles[s], t);
      REQUIRE(queue.time_of(handles[s]) == t);
      key_of[s] = {t, seq++, static_cast<EventSlot>(s)};
      reference.insert(key_of[s]);
    } else if (choice == 2) {
      const int s = random_live();
      reference.erase(key_of[s]);
      queue.erase(handles[s]);
      live[s] = false;
    } else {
      const Key expected = *reference.begin();
      const EventNode& top = queue.top();
      CAPTURE(op);
      REQUIRE(top.time == std::get<0>(expected));
      REQUIRE(top.seq == std::get<1>(expected));
      REQUIRE(top.slot == std::get<2>(expected));
      REQUIRE(top.kind == 7);
      live[top.slot] = false;
      reference.erase(reference.begin());
      queue.pop();
    }
    REQUIRE(queue.size() == reference.size());
  }
  while (!reference.empty()) {
    REQUIRE(queue.top().seq == std::get<1>(*reference.begin()));
    reference.erase(reference.begin());
    queue.pop();
  }
  CHECK(queue.empty());
}

}  // namespace

TEST_CASE("indexed event queue (the kernel's) matches a sorted reference under random operations") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) check_against_reference<IndexedEventQueue>(seed, 20000);
}

TEST_CASE("d-ary event heap matches a sorted reference under random operations") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed)
    check_against_reference<BasicEventQueue<DaryEventHeap>>(seed, 20000);
}

TEST_CASE("pairing event heap matches a sorted reference under random operations") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed)
    check_against_reference<BasicEventQueue<PairingEventHeap>>(seed, 20000);
}

TEST_CASE("equal times pop in scheduling order, updates go to the back of their time") {
  EventQueue q;
  auto h0 = q.push(1.0, 0, 0);
  q.push(1.0, 0, 1);
  q.push(1.0, 0, 2);
  q.update(h0, 1.0);  // same time, new sequence number: now last among equals
  std::vector<EventSlot> order;
  while (!q.empty()) {
    order.push_back(q.top().slot);
    q.pop();
  }
  CHECK(order == std::vector<EventSlot>{1, 2, 0});
}
