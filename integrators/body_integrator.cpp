#include "integrators/body_integrator.hpp"

#include <array>
#include <stdexcept>

#include "engine/diagnostics.hpp"
#include "engine/kernel.hpp"

namespace clockwork {

BodyEnergy measure_body(const BodyIntegrator& integrator, const VertexState& state, double t) {
  BodyEnergy e;
  for (Index a : integrator.body_vertices())
    if (!state.kinematic(a)) add_vertex_motion(state, a, t, e.linear_momentum, e.angular_momentum, e.kinetic);
  integrator.carried(state, t, e.linear_momentum, e.angular_momentum, e.kinetic);
  e.potential = integrator.owned_potential(state, t);
  return e;
}

namespace {

// Explicit stencils start first: they live in the World's shared force sources, which
// the World registers before any body integrator (ExplicitShell::start does nothing).
constexpr std::array kKinds{
    IntegratorKind{"explicit", 0, "explicit AVI stencils (integrators/avi/explicit_shell.hpp)"},
    IntegratorKind{"phantom", 1, "phantom mesh: implicit ticks of a copy (integrators/phantom/phantom_source.hpp)"},
    IntegratorKind{"backward_euler", 2, "tet solid, backward Euler coarse steps (integrators/implicit/solid_source.hpp)"},
    IntegratorKind{"zhao", 2, "tet solid, Zhao et al.'s multi-rate steps (integrators/implicit/solid_source.hpp)"},
    IntegratorKind{"schroeder", 3, "tet solid, Schroeder et al.'s schemes (integrators/schroeder/schroeder_source.hpp)"},
};

}  // namespace

std::span<const IntegratorKind> integrator_kinds() { return kKinds; }

int start_rank(std::string_view kind) {
  for (const IntegratorKind& k : kKinds)
    if (k.name == kind) return k.start_order;
  throw std::logic_error("body integrator kind '" + std::string(kind) + "' is not in integrator_kinds()");
}

BodyIntegrator* start_integrator(std::unique_ptr<BodyIntegrator> integrator, Kernel& kernel, StartFrom from,
                                 std::vector<std::unique_ptr<BodyIntegrator>>& kept) {
  BodyIntegrator* raw = integrator.get();
  EventKind kind = 0;
  if (EventSource* source = raw->source()) {
    integrator.release();  // the kernel owns it from here, through its EventSource base
    kind = kernel.add_source(std::unique_ptr<EventSource>(source));
  } else {
    kept.push_back(std::move(integrator));
  }
  raw->start(kernel, kind, from);
  return raw;
}

}  // namespace clockwork
