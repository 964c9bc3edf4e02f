#pragma once
/// One interface for the integrator of a body (issue 43): what a scene, the run loop,
/// the diagnostics, frames, resume and the run summary need of an integrator, whatever
/// its scheme. Explicit AVI stencils (ExplicitShell), phantom meshes (PhantomSource),
/// backward Euler and Zhao's multi-rate scheme (SolidSource) and Schroeder et al.'s
/// schemes (SchroederSource) implement it; a Scene holds one list of them
/// (io/scene/scene.hpp), and the World starts them in the order of the registry below
/// (docs/api.md "Adding an integrator").
///
/// An integrator that runs its own events is an EventSource too (source() returns it)
/// and is owned by the kernel once started; one whose events belong to shared sources
/// (an explicit shell's stencils, in the World's force sources) has no source and is
/// owned by the scene.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/event_source.hpp"

namespace clockwork {

/// Totals over a run's integrators that the run summary reports (io/run/run.hpp).
struct IntegratorTotals {
  /// Linearised steps re-solved by the energy safeguard (energy_safeguard.hpp).
  std::uint64_t safeguarded_steps = 0;
};

/// A body's share of the diagnostics (engine/diagnostics.hpp), measured at time t.
struct BodyEnergy {
  Vec3 linear_momentum = Vec3::Zero();   ///< kg·m/s, its vertices' and what it carries
  Vec3 angular_momentum = Vec3::Zero();  ///< kg·m²/s, about the origin
  double kinetic = 0.0;                  ///< J, its vertices' and what it carries
  double potential = 0.0;                ///< J, of the terms it owns
  double total() const { return kinetic + potential; }
};

class BodyIntegrator {
 public:
  virtual ~BodyIntegrator() = default;

  /// Its registry name (integrator_kinds()): "explicit", "phantom", "backward_euler",
  /// "zhao", "schroeder".
  virtual std::string_view kind() const = 0;
  /// The body's name (frames, messages).
  virtual const std::string& body() const = 0;
  /// The global vertices it owns, in the body's local order.
  virtual std::span<const Index> body_vertices() const = 0;

  /// The event source that runs its events, registered with the kernel (which then
  /// owns it) before start(); null when its events belong to shared sources.
  virtual EventSource* source() { return nullptr; }
  /// Schedules its first events at the kernel's clock (kernel.now()). `kind` is the
  /// kind the kernel gave source() (unused without one); `from` says whether the state
  /// is a scene's initial one or a resumed frame's (engine/event_source.hpp).
  virtual void start(Kernel& kernel, EventKind kind, StartFrom from) = 0;

  /// Potential energy of the terms it owns at time t (positions read, not synced).
  virtual double owned_potential(const VertexState& state, double t) const = 0;
  /// Momentum, angular momentum and kinetic energy it carries outside the kernel's
  /// vertex state (a phantom mesh's share), added in (EventSource::add_carried).
  virtual void carried(const VertexState& /*state*/, double /*t*/, Vec3& /*p*/, Vec3& /*L*/,
                       double& /*kinetic*/) const {}

  /// A state per vertex beside the kernel's, written into frames and read back on
  /// resume (a phantom mesh's copy: position and velocity). Without one, the three
  /// below are not called.
  virtual bool has_vertex_copy() const { return false; }
  /// The copy of local vertex a at time t.
  virtual void vertex_copy(Index /*a*/, double /*t*/, Vec3& /*x*/, Vec3& /*v*/) const {}
  /// Restores every vertex's copy from a resumed frame (after start(), before the
  /// first event).
  virtual void restore_vertex_copy(const std::vector<Vec3>& /*x*/, const std::vector<Vec3>& /*v*/) {}

  /// Adds its counters to the run's totals.
  virtual void add_totals(IntegratorTotals& /*totals*/) const {}
  /// Lines logged once at the end of a run (e.g. the energy safeguard's re-solves).
  virtual std::vector<std::string> run_log() const { return {}; }
  /// Lines of the command line's run summary ("  phantom: ... ticks ...").
  virtual std::vector<std::string> summary_lines() const { return {}; }
};

/// Its vertices' kinetic energy and momenta in `state` at t (kinematic vertices
/// excluded, as in the diagnostics), plus what it carries and the potential it owns.
BodyEnergy measure_body(const BodyIntegrator& integrator, const VertexState& state, double t);

/// The registry of integrator kinds. A new integrator is a folder with its class and
/// one row here; the World starts the integrators of a scene by increasing
/// start_order, bodies of equal order in the order added. Event kinds are numbered in
/// that order (event_periods.csv, the run summary) and the first events are queued in
/// it (the queue breaks time ties by the order of scheduling), so the order is part of
/// every trajectory: a new kind takes a new, highest order.
struct IntegratorKind {
  std::string_view name;  ///< BodyIntegrator::kind()
  int start_order;        ///< backward Euler and Zhao solids share one (started as added)
  std::string_view what;  ///< one line for docs and messages
};
std::span<const IntegratorKind> integrator_kinds();
/// The start_order of `kind`; throws std::logic_error for a kind that is not
/// registered (an integrator class without its row).
int start_rank(std::string_view kind);

/// Registers `integrator` with the kernel (its source, if any) and starts it; returns
/// it. An integrator without a source is moved into `kept` (the scene owns it).
BodyIntegrator* start_integrator(std::unique_ptr<BodyIntegrator> integrator, Kernel& kernel, StartFrom from,
                                 std::vector<std::unique_ptr<BodyIntegrator>>& kept);

}  // namespace clockwork
