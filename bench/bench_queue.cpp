/// The kernel's indexed 4-ary heap vs Boost's d-ary (arity 4) and pairing heaps under
/// the kernel's access patterns.
///
/// A queue of n events, each slot with its own period drawn from [h, 4h] and a
/// random phase. Patterns: "UpdateTop" (the kernel: move the top to time + period),
/// "PopPush" (pop, then push at time + period) and "Churn" (UpdateTop plus, 10% of
/// the time, erase a random event and push it back — certificate churn) and
/// "Reschedule" (UpdateTop plus four updates of random events to a random time ahead —
/// what the certificates of a vertex do after its velocity changes). Items: queue
/// operations.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "engine/event_queue.hpp"

using namespace clockwork;

namespace {

template <typename Queue>
struct Fixture {
  Queue queue;
  std::vector<typename Queue::Handle> handles;
  std::vector<double> period;
  explicit Fixture(std::size_t n) {
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> u(1.0, 4.0), phase(0.0, 1.0);
    for (std::size_t i = 0; i < n; ++i) {
      period.push_back(1e-4 * u(rng));
      handles.push_back(queue.push(phase(rng) * period.back(), 0, static_cast<EventSlot>(i)));
    }
  }
};

template <typename Queue>
void BM_UpdateTop(benchmark::State& state) {
  Fixture<Queue> f(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    const EventNode& e = f.queue.top();
    f.queue.update(f.handles[e.slot], e.time + f.period[e.slot]);
  }
  state.SetItemsProcessed(state.iterations());
}

template <typename Queue>
void BM_PopPush(benchmark::State& state) {
  Fixture<Queue> f(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    const EventNode e = f.queue.top();
    f.queue.pop();
    f.handles[e.slot] = f.queue.push(e.time + f.period[e.slot], 0, e.slot);
  }
  state.SetItemsProcessed(state.iterations());
}

template <typename Queue>
void BM_Churn(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Fixture<Queue> f(n);
  std::mt19937_64 rng(2);
  for (auto _ : state) {
    const EventNode& e = f.queue.top();
    const double now = e.time;
    f.queue.update(f.handles[e.slot], e.time + f.period[e.slot]);
    if (rng() % 10 == 0) {
      const auto s = static_cast<EventSlot>(rng() % n);
      f.queue.erase(f.handles[s]);
      f.handles[s] = f.queue.push(now + f.period[s], 0, s);
    }
  }
  state.SetItemsProcessed(state.iterations());
}

template <typename Queue>
void BM_Reschedule(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Fixture<Queue> f(n);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> ahead(0.0, 4e-4);
  for (auto _ : state) {
    const EventNode& e = f.queue.top();
    const double now = e.time;
    f.queue.update(f.handles[e.slot], e.time + f.period[e.slot]);
    for (int k = 0; k < 4; ++k) f.queue.update(f.handles[rng() % n], now + ahead(rng));
  }
  state.SetItemsProcessed(5 * state.iterations());
}

}  // namespace

#define CLOCKWORK_QUEUE_BENCH(pattern)                                                       \
  BENCHMARK_TEMPLATE(pattern, IndexedEventQueue)->RangeMultiplier(10)->Range(1000, 1000000);  \
  BENCHMARK_TEMPLATE(pattern, BasicEventQueue<DaryEventHeap>)                                  \
      ->RangeMultiplier(10)->Range(1000, 1000000);                                             \
  BENCHMARK_TEMPLATE(pattern, BasicEventQueue<PairingEventHeap>)                               \
      ->RangeMultiplier(10)->Range(1000, 1000000);
CLOCKWORK_QUEUE_BENCH(BM_UpdateTop)
CLOCKWORK_QUEUE_BENCH(BM_PopPush)
CLOCKWORK_QUEUE_BENCH(BM_Churn)
CLOCKWORK_QUEUE_BENCH(BM_Reschedule)
BENCHMARK_MAIN();
