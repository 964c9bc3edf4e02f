/// Contact benchmarks (issue: contact), the phantom-mesh paper's Table 1 columns.
///
///  - BM_SlabFailureTime: certificate failure-time evaluations per second (the work
///    of every reschedule), on 4096 random vertex–triangle and edge–edge trajectories;
///  - BM_MakeSlab: building a slab and its first failure time (a certificate failure);
///  - BM_ClothDrop: the demos/cloth_drop.json scene (24 x 24 cloth; built with the World,
///    bench/cloth_fixture.hpp) run to t = 1 s
///    (onto the ball, off it, folding on the ground), once per iteration, with kernel
///    profiling on (io/run/profile.hpp): kds_share is the share of the wall time spent
///    maintaining certificates (grid, triangle-pair and element-pair slabs: failures
///    and reschedules), layer_share the share spent in penalty layer events.
#include <benchmark/benchmark.h>

#include <chrono>
#include <random>

#include "contact/certificates/slab.hpp"
#include "bench/cloth_fixture.hpp"
#include "io/run/profile.hpp"

using namespace clockwork;

namespace {

struct Sample {
  PairType type;
  StencilPositions<4> x, v;
  Slab slab;
};

std::vector<Sample> make_samples() {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Sample> out;
  while (out.size() < 4096) {
    Sample s;
    s.type = out.size() % 2 ? PairType::EdgeEdge : PairType::VertexTriangle;
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 3; ++i) {
        s.x(i, j) = u(rng);
        s.v(i, j) = u(rng);
      }
    const auto slab = make_slab(s.type, s.x, s.v, 0.0, 0.05);
    if (!slab) continue;
    s.slab = *slab;
    out.push_back(s);
  }
  return out;
}

void BM_SlabFailureTime(benchmark::State& state) {
  const std::vector<Sample> samples = make_samples();
  std::size_t i = 0;
  for (auto _ : state) {
    const Sample& s = samples[i++ & 4095];
    benchmark::DoNotOptimize(slab_failure_time(s.slab, s.type, s.x, s.v, 0.0));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SlabFailureTime);

void BM_MakeSlab(benchmark::State& state) {
  const std::vector<Sample> samples = make_samples();
  std::size_t i = 0;
  for (auto _ : state) {
    const Sample& s = samples[i++ & 4095];
    const auto slab = make_slab(s.type, s.x, s.v, 0.0, 0.05);
    benchmark::DoNotOptimize(slab_failure_time(*slab, s.type, s.x, s.v, 0.0));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MakeSlab);

void BM_ClothDrop(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    Scene scene = bench::make_cloth_drop_scene();
    EventProfiler profiler;
    const ScopedObserver profiling(*scene.kernel, profiler);
    state.ResumeTiming();
    const auto start = std::chrono::steady_clock::now();
    scene.kernel->run_until(1.0);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const ContactCounters c = scene.contact->counters();
    state.counters["events"] = double(scene.kernel->events_processed());
    state.counters["events_per_s"] = double(scene.kernel->events_processed()) / wall;
    const TimeShares shares = time_shares(*scene.kernel, profiler, wall);
    state.counters["kds_share"] = shares.certificates();
    state.counters["layer_share"] = shares.penalties;
    state.counters["slab_evals"] = double(c.slab_evaluations);
    state.counters["reschedules"] = double(c.certificate_reschedules);
    state.counters["deepest"] = c.deepest_layer_ever;
    state.counters["triangles"] = double(scene.contact->triangle_count());
    state.counters["triangle_pairs"] = double(c.triangle_pairs);
    state.counters["expansions"] = double(c.expansions);
    state.counters["envelope_exits"] = double(scene.contact->contingency().envelope_exits());
    for (std::size_t k = 0; k < scene.kernel->source_count(); ++k) {
      const auto kind = static_cast<EventKind>(k);
      const std::string name(scene.kernel->source(kind).name());
      state.counters["processed:" + name] += double(scene.kernel->stats(kind).processed);
      state.counters["rescheduled:" + name] += double(scene.kernel->stats(kind).rescheduled);
    }
  }
}
BENCHMARK(BM_ClothDrop)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
