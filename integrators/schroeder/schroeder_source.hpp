#pragma once
/// Schroeder et al.'s schemes in the kernel (DESIGN §4; integrators/schroeder/schroeder_scheme.hpp).
///
/// Every event at a substep boundary t finishes the substep that ends at t (its velocity
/// update, at the positions the kernel drifted to) and begins the next one (its position
/// update): it sets each free vertex's kernel velocity to v^{n+½}, so the kernel's
/// drift over the substep is exactly x^{n+1} = x^n + Δt v^{n+½} ("everything is kick +
/// drift"). The source keeps v^n itself. Velocity changes other sources made in between
/// (penalty contact kicks) are carried into v^n before the velocity update, so they are
/// kept, as the coarse steps of DESIGN §1 keep them.
///
/// - Asynchronous (kinds "coarse:schroeder" and "fine:schroeder"): the coarse event at
///   every frame boundary does the coupled step's velocity update (the backward Euler
///   solve with every force, §4.3) and begins the frame's first substep; the fine events
///   at t_F + k Δt, k = 1..p−1, do the semi-implicit substeps (the one at k = p − 1
///   begins the coupled step: its position update solves with the α-scaled I forces).
/// - Synchronous semi-implicit ("coarse:semi_implicit", every Δt) and fully-implicit
///   ("coarse:fully_implicit", every frame): one event kind.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/kernel.hpp"
#include "engine/step_clock.hpp"
#include "integrators/body_integrator.hpp"
#include "integrators/schroeder/schroeder_scheme.hpp"

namespace clockwork {

class SchroederFineSource;

class SchroederSource final : public EventSource, public BodyIntegrator {
 public:
  /// `vertices`: global indices of the model's vertices (local index = position);
  /// `materials`, `semi_tets`, `fixed`, `settings`: as SchroederStepper (which throws
  /// std::invalid_argument for bad settings).
  SchroederSource(std::string body, std::vector<Index> vertices, std::shared_ptr<TetFemModel> model,
                  const std::vector<TetMaterial>& materials, const std::vector<bool>& semi_tets,
                  std::vector<bool> fixed, const Vec3& gravity, const SchroederSettings& settings);
  ~SchroederSource() override;

  /// Registers the fine source (asynchronous with p > 1) and schedules the first event
  /// at t0. Call after every vertex is in the kernel.
  void start(EventKind kind, Kernel& kernel, double t0 = 0.0);

  std::string_view name() const override;
  int stencil_size(EventSlot) const override { return static_cast<int>(free_global_.size()); }
  std::span<const Index> stencil_vertices(EventSlot) const override { return free_global_; }
  double process(EventSlot slot, double time, Kernel& kernel) override;
  double potential_energy(const VertexState& state, double t) const override;

  // BodyIntegrator (body_integrator.hpp). The kernel's velocities are v^{n+½} (header);
  // the diagnostics read them, as before this interface: no carried momentum.
  std::string_view kind() const override { return "schroeder"; }
  const std::string& body() const override { return body_; }
  std::span<const Index> body_vertices() const override { return vertices_; }
  EventSource* source() override { return this; }
  void start(Kernel& kernel, EventKind kind, StartFrom) override { start(kind, kernel, kernel.now()); }
  double owned_potential(const VertexState& state, double t) const override { return potential_energy(state, t); }
  /// Once per run: the fully-implicit updates the energy safeguard re-solved (decision 15)
  /// and the events whose angular-momentum rotation was cut to keep the energy.
  std::vector<std::string> run_log() const override;

  const SchroederStepper& stepper() const { return *stepper_; }
  /// The scene's static obstacles as §6 colliders of the solves (World::build).
  void add_colliders(const std::vector<StaticCollider>& colliders) { stepper_->add_colliders(colliders); }
  const TetFemModel& model() const { return *model_; }
  const std::vector<Index>& vertices() const { return vertices_; }
  /// Period of the coarse event, s (the frame; semi-implicit: the step).
  double coarse_step() const;

 private:
  friend class SchroederFineSource;
  /// Finishes the substep ending at `time` and begins the next one.
  void advance(double time, Kernel& kernel);

  std::string body_;
  std::vector<Index> vertices_;
  std::shared_ptr<TetFemModel> model_;
  std::vector<bool> fixed_;
  std::vector<Index> free_, free_global_;
  Vec3 gravity_;
  std::unique_ptr<SchroederStepper> stepper_;
  Eigen::VectorXd x_, u_, v_, w_;  ///< positions, kernel velocities, vⁿ, v^{n+½}
  bool started_ = false;
  StepClock clock_;             ///< coarse event times t0 + n Δt (engine/step_clock.hpp)
  std::uint64_t next_step_ = 0;  ///< n of the next coarse event
  std::uint64_t current_ = 0;    ///< n of the current one
  EventKind fine_kind_ = 0;
  bool has_fine_ = false;
};

/// The semi-implicit substeps inside a frame of an asynchronous body (one slot).
class SchroederFineSource final : public EventSource {
 public:
  explicit SchroederFineSource(SchroederSource& coarse) : coarse_(coarse) {}
  std::string_view name() const override { return "fine:schroeder"; }
  int stencil_size(EventSlot slot) const override { return coarse_.stencil_size(slot); }
  std::span<const Index> stencil_vertices(EventSlot slot) const override {
    return coarse_.stencil_vertices(slot);
  }
  double process(EventSlot slot, double time, Kernel& kernel) override;

 private:
  SchroederSource& coarse_;
};

}  // namespace clockwork
