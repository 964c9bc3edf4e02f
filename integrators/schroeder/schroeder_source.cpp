#include "integrators/schroeder/schroeder_source.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cassert>

namespace clockwork {

SchroederSource::SchroederSource(std::string body, std::vector<Index> vertices,
                                 std::shared_ptr<TetFemModel> model,
                                 const std::vector<TetMaterial>& materials,
                                 const std::vector<bool>& semi_tets, std::vector<bool> fixed,
                                 const Vec3& gravity, const SchroederSettings& settings)
    : body_(std::move(body)),
      vertices_(std::move(vertices)),
      model_(std::move(model)),
      fixed_(std::move(fixed)),
      gravity_(gravity) {
  const std::size_t n = vertices_.size();
  assert(model_->vertex_count() == n && fixed_.size() == n);
  for (std::size_t a = 0; a < n; ++a) {
    if (fixed_[a]) continue;
    free_.push_back(static_cast<Index>(a));
    free_global_.push_back(vertices_[a]);
  }
  stepper_ =
      std::make_unique<SchroederStepper>(*model_, materials, semi_tets, fixed_, gravity, settings);
  x_.resize(3 * n);
  u_.resize(3 * n);
  v_.resize(3 * n);
  w_.resize(3 * n);
}

SchroederSource::~SchroederSource() = default;

std::string_view SchroederSource::name() const {
  switch (stepper_->settings().scheme) {
    case SchroederScheme::SemiImplicit:
      return "coarse:semi_implicit";
    case SchroederScheme::FullyImplicit:
      return "coarse:fully_implicit";
    case SchroederScheme::Asynchronous:
      break;
  }
  return "coarse:schroeder";
}

double SchroederSource::coarse_step() const {
  return stepper_->settings().scheme == SchroederScheme::SemiImplicit
             ? stepper_->substep()
             : stepper_->settings().frame_dt;
}

void SchroederSource::start(EventKind kind, Kernel& kernel, double t0) {
  if (stepper_->settings().scheme == SchroederScheme::Asynchronous &&
      stepper_->substeps_per_frame() > 1) {
    fine_kind_ = kernel.add_source(std::make_unique<SchroederFineSource>(*this));
    has_fine_ = true;
  }
  clock_ = StepClock(t0, coarse_step());
  next_step_ = 0;
  kernel.schedule(kind, 0, clock_.time(0));
}

void SchroederSource::advance(double time, Kernel& kernel) {
  VertexState& state = kernel.state();
  for (std::size_t a = 0; a < vertices_.size(); ++a) {
    x_.segment<3>(3 * a) = state.position_at(vertices_[a], time);
    u_.segment<3>(3 * a) = state.velocity(vertices_[a]);
  }
  const bool safeguarded_before = stepper_->counters().safeguarded > 0;
  if (started_) {
    v_ += u_ - w_;  // kicks of other sources since the last event
    stepper_->velocity_update(x_, v_);
  } else {
    v_ = u_;
    started_ = true;
  }
  const bool cut_before = stepper_->counters().rotation_limited > 0;
  stepper_->position_update(x_, v_, w_);
  if (!cut_before && stepper_->counters().rotation_limited > 0)
    spdlog::info("{}: the rotation that keeps angular momentum was cut to {:.3g} of itself at t = {} s: "
                 "all of it would have created energy (docs/schroeder.md, decision 14); such "
                 "events do not keep L exactly",
                 body_, stepper_->counters().first_cut_share, time);
  if (!safeguarded_before && stepper_->counters().safeguarded > 0)
    spdlog::info("{}: a fully-implicit update gained energy at t = {} s and was re-solved by Newton "
                 "(energy safeguard, docs/schroeder.md, decision 15)",
                 body_, time);
  for (Index a : free_) {
    const Index g = vertices_[a];
    state.sync(g, time);
    state.velocity_ref(g) += w_.segment<3>(3 * a) - u_.segment<3>(3 * a);
    kernel.velocity_changed(g);
  }
}

double SchroederSource::process(EventSlot, double time, Kernel& kernel) {
  current_ = next_step_++;
  advance(time, kernel);
  if (has_fine_) kernel.schedule(fine_kind_, 0, clock_.time(current_, 1, stepper_->substeps_per_frame()));
  return clock_.time(next_step_);
}

double SchroederSource::potential_energy(const VertexState& state, double t) const {
  Eigen::VectorXd x(3 * vertices_.size());
  double gravity = 0.0;
  for (std::size_t a = 0; a < vertices_.size(); ++a) {
    x.segment<3>(3 * a) = state.position_at(vertices_[a], t);
    if (!fixed_[a]) gravity -= model_->lumped_mass()[a] * gravity_.dot(x.segment<3>(3 * a));
  }
  return stepper_->elastic_energy(x) + gravity;
}

std::vector<std::string> SchroederSource::run_log() const {
  const SchroederCounters& c = stepper_->counters();
  std::vector<std::string> lines;
  if (c.safeguarded > 0)
    lines.push_back(fmt::format("{}: {} of {} fully-implicit updates gained energy and were re-solved by "
                                "Newton ({} iterations, {} not converged; energy safeguard, "
                                "docs/schroeder.md, decision 15)",
                                body_, c.safeguarded, c.safeguard_checks, c.safeguard_newton_iterations,
                                c.safeguard_unconverged));
  if (c.rotation_limited > 0)
    lines.push_back(fmt::format("{}: in {} of {} substeps the angular-momentum rotation was cut to keep the "
                                "energy (docs/schroeder.md, decision 14)",
                                body_, c.rotation_limited, c.steps));
  return lines;
}

// Begins substep k of the frame (1 ≤ k ≤ p − 1); the event after substep p − 1 is the
// next frame's coarse event.
double SchroederFineSource::process(EventSlot, double time, Kernel& kernel) {
  coarse_.advance(time, kernel);
  const int next = coarse_.stepper_->step_in_frame() + 1;
  if (next >= coarse_.stepper_->substeps_per_frame()) return kNever;
  return coarse_.clock_.time(coarse_.current_, next, coarse_.stepper_->substeps_per_frame());
}

}  // namespace clockwork
