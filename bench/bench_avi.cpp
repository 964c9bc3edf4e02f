/// Explicit AVI throughput (issue: kernel benchmarks).
///
///  - BM_KernelMembrane/100: the kernel on a 100x100-cell cloth with membrane stencils
///    only, events per second;
///  - BM_BareLimit/100: the same stencils driven by a bare loop — one heap pop + push
///    and one membrane gradient per event, no syncs, no impulses, no kernel — the
///    upper bound the kernel is compared against;
///  - BM_KernelCloth/n: membrane + bending + gravity at n = 31, 100, 316 cells a side
///    (about 1k, 10k and 100k vertices) for the cost-per-event scaling;
///  - BM_KernelClothCounted: BM_KernelCloth/100 with the per-vertex event counts and
///    period histograms observing it (io/run/event_counts.hpp, the viewer's heat map);
///  - BM_KernelClothTraced: BM_KernelCloth/100 with the JSON-lines trace written to
///    /dev/null (tracing on).
/// The cost of the observer hook with no observer attached is measured by
/// bench/trace_overhead.sh against a bench_avi built before the hook.
#include <benchmark/benchmark.h>

#include <memory>

#include "bench/cloth_fixture.hpp"
#include "engine/event_queue.hpp"
#include "engine/trace.hpp"
#include "io/run/event_counts.hpp"
#include "integrators/avi/force_source.hpp"
#include "integrators/energy/membrane_energy.hpp"

using namespace clockwork;

namespace {

constexpr int kBatch = 10000;  // events per benchmark iteration

void run_kernel(benchmark::State& state, Scene& scene) {
  Kernel& k = *scene.kernel;
  for (int i = 0; i < 20 * kBatch; ++i) k.step();  // warm-up: all stencils ticked
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) k.step();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["vertices"] = static_cast<double>(k.state().size());
  state.counters["queue"] = static_cast<double>(k.queue_size());
}

void BM_KernelMembrane(benchmark::State& state) {
  Scene scene = bench::make_cloth_scene(static_cast<int>(state.range(0)), false, false);
  run_kernel(state, scene);
}

void BM_KernelCloth(benchmark::State& state) {
  Scene scene = bench::make_cloth_scene(static_cast<int>(state.range(0)));
  run_kernel(state, scene);
}

void BM_KernelClothTraced(benchmark::State& state) {
  Scene scene = bench::make_cloth_scene(static_cast<int>(state.range(0)));
  Trace trace("/dev/null", TraceFormat::kJsonLines);
  const ScopedObserver tracing(*scene.kernel, trace);
  run_kernel(state, scene);
}

void BM_KernelClothCounted(benchmark::State& state) {
  Scene scene = bench::make_cloth_scene(static_cast<int>(state.range(0)));
  EventCounts counts(scene.kernel->state().size());
  const ScopedObserver counting(*scene.kernel, counts);
  run_kernel(state, scene);
}

void BM_BareLimit(benchmark::State& state) {
  Scene scene = bench::make_cloth_scene(static_cast<int>(state.range(0)), false, false);
  Kernel& k = *scene.kernel;
  // The membrane source is the only force source of this scene.
  const auto* membrane = dynamic_cast<const ForceSource<MembraneStVK>*>(&k.source(0));
  if (!membrane) membrane = dynamic_cast<const ForceSource<MembraneStVK>*>(&k.source(1));
  if (!membrane) {
    state.SkipWithError("no membrane source");
    return;
  }
  std::vector<Vec3> x(k.state().size());
  for (Index a = 0; a < x.size(); ++a) x[a] = k.state().position(a);
  EventQueue queue;
  for (EventSlot s = 0; s < membrane->size(); ++s) queue.push(0.0, 0, s);
  double sink = 0;
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) {
      const EventNode e = queue.top();
      queue.pop();
      const auto& st = membrane->stencil(e.slot);
      StencilPositions<3> X;
      for (int j = 0; j < 3; ++j) X.col(j) = x[st.vertices[j]];
      sink += st.term.gradient(X)[0];
      queue.push(e.time + st.period, 0, e.slot);
    }
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(state.iterations() * kBatch);
}

}  // namespace

BENCHMARK(BM_BareLimit)->Arg(100)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KernelMembrane)->Arg(100)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KernelCloth)->Arg(31)->Arg(100)->Arg(316)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KernelClothCounted)->Arg(100)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KernelClothTraced)->Arg(100)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
