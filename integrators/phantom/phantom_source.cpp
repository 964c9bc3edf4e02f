#include "integrators/phantom/phantom_source.hpp"

#include "integrators/solvers/rigid_rotation.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <cmath>
#include <stdexcept>

namespace clockwork {

PhantomSource::PhantomSource(std::string body, std::vector<Index> vertices,
                             std::vector<double> mass, double h_imp,
                             ImplicitSolverSettings settings)
    : body_(std::move(body)),
      vertices_(std::move(vertices)),
      mass_(std::move(mass)),
      h_(h_imp),
      h_tick_(h_imp),
      h_prev_(h_imp),
      potential_(std::make_unique<BodyPotential>(vertices_.size())) {
  if (!(h_imp > 0.0 && std::isfinite(h_imp)))
    throw std::invalid_argument("phantom: h_imp must be a positive time");
  if (!(settings.theta == 0.5 || settings.theta == 1.0))
    throw std::invalid_argument("phantom: the tick rule is the midpoint (θ = ½) or backward Euler (θ = 1)");
  solver_ = std::make_unique<ImplicitTickSolver>(*potential_, settings);
}

void PhantomSource::start(EventKind kind, Kernel& kernel, double t0, StartFrom from) {
  const VertexState& s = kernel.state();
  const std::size_t n = vertices_.size();
  q_tilde_.resize(3 * static_cast<Eigen::Index>(n));
  v_tilde_.resize(q_tilde_.size());
  free_.assign(n, true);
  for (std::size_t a = 0; a < n; ++a) {
    q_tilde_.segment<3>(3 * a) = s.position_at(vertices_[a], t0);
    v_tilde_.segment<3>(3 * a) = s.velocity(vertices_[a]);
    free_[a] = !s.kinematic(vertices_[a]);
  }
  t_tick_ = t0_ = t_next_ = t0;
  reaction_torque_.setZero();
  spurious_torque_.setZero();
  from_ = from;
  tick_ = 0;
  grid_ = 0;
  level_ = calm_ = 0;
  calm_needed_ = halving_.calm_ticks;
  h_tick_ = h_prev_ = h_;
  problem_.h = h_;
  problem_.mass = &mass_;
  problem_.free = &free_;
  kernel.schedule(kind, 0, t0);
}

void PhantomSource::restore_copy(const std::vector<Vec3>& q, const std::vector<Vec3>& v) {
  assert(q.size() == vertices_.size() && v.size() == vertices_.size() && tick_ == 0);
  for (std::size_t a = 0; a < vertices_.size(); ++a) {
    q_tilde_.segment<3>(3 * a) = q[a];
    v_tilde_.segment<3>(3 * a) = v[a];
  }
}

double PhantomSource::process(EventSlot, double time, Kernel& kernel) {
  VertexState& s = kernel.state();
  const std::size_t n = vertices_.size();
  // The phantom is at its tick position: time = t_tick_ + h (or t0 at the first).
  q_tilde_ += (time - t_tick_) * v_tilde_;
  t_tick_ = time;
  // Wind on the phantom, held constant through the solve (§4: gravity and wind in
  // the implicit solve).
  if (!wind_.empty()) {
    wind_force_.setZero(q_tilde_.size());
    for (const WindTriangle& w : wind_) {
      StencilPositions<3> x, v;
      for (int i = 0; i < 3; ++i) {
        x.col(i) = q_tilde_.segment<3>(3 * w.v[i]);
        v.col(i) = v_tilde_.segment<3>(3 * w.v[i]);
      }
      const auto f = w.force.force(x, v);
      for (int i = 0; i < 3; ++i) wind_force_.segment<3>(3 * w.v[i]) += f.segment<3>(3 * i);
    }
    potential_->set_external_force(wind_force_);
  }
  // First tick: the previous midpoint is the start state (its share is used only by a
  // resumed run, set_up_tick; the released pins below write into it).
  if (!g_prev_valid_) {
    potential_->gradient(q_tilde_, g_prev_);
    g_prev_valid_ = true;
  }
  // Pins released since the last tick (KinematicScriptSource): the vertex joins the
  // unknowns with its phantom where the script left it (the phantom of a prescribed
  // vertex follows the script), and gravity acts on it from now on. In this tick's
  // midpoint impulse −(h/2)(g_prev + g) its g_prev is gravity alone: the elastic force
  // of the previous interval was the pin's reaction. (Kept, on a bent stiff card's
  // clamped rows it is ~0.4 N on 1e-5 kg, a 20 m/s kick at h = 1e-3 s that crumpled
  // the card.) Unlike a body's first tick (StartFrom) the release keeps the previous
  // half of gravity's impulse, as the explicit stencils give it a whole first kick.
  bool released = false;
  for (std::size_t a = 0; a < n; ++a) {
    if (free_[a] || s.kinematic(vertices_[a])) continue;
    free_[a] = true;
    potential_->set_gravity_mass(static_cast<Index>(a), mass_[a]);
    g_prev_.segment<3>(3 * a) = -mass_[a] * potential_->gravity();
    released = true;
  }
  if (released) solver_->invalidate_factor();
  const TickReport report = solve_tick(s, time, released);
  const double h = h_tick_;
  if (!std::isfinite(report.gradient_norm)) {
    const std::string problem = fmt::format("phantom body '{}': the implicit solve produced a non-finite gradient; "
                                            "h_imp = {} s is too large for this scene or the mesh inverted",
                                            body_, h_);
    throw NumericalFailure(problem, "", time, NumericalFailure::kNoVertex, problem);
  }
  if (!report.converged) {
    // Documented fallback: keep the lowest-energy iterate (every accepted step
    // decreased E), count it, and say so.
    ++counters_.unconverged;
    if (counters_.unconverged <= 10 || (counters_.unconverged & (counters_.unconverged - 1)) == 0)
      spdlog::warn("phantom body '{}': implicit solve at t = {:.6g} s (step {:.3g} s) stopped after {} "
                   "iterations with |grad E| = {:.3g} > {:.3g}; keeping the best iterate ({} such ticks)",
                   body_, time, h, report.iterations, report.gradient_norm, report.threshold,
                   counters_.unconverged);
  }
  // Momentum: Σ_a m_a (x_a − y_a)/h² must vanish (Σ ∇V = 0); a partial solve leaves a
  // residual, removed by a uniform shift of the free vertices, which changes no
  // elastic force.
  Vec3 residual = Vec3::Zero();
  double free_mass = 0.0;
  bool all_free = true;
  for (std::size_t a = 0; a < n; ++a) {
    if (!free_[a]) {
      all_free = false;
      continue;
    }
    residual += mass_[a] * (x_.segment<3>(3 * a) - problem_.y.segment<3>(3 * a));
    free_mass += mass_[a];
  }
  const double theta = solver_->settings().theta;
  // ∇V where the tick evaluated it: the midpoint (q̃ + x)/2, or x for backward Euler.
  // Right after the solve the solver usually holds it already (bit for bit the same).
  const auto tick_gradient = [&] {
    if (const Eigen::VectorXd* cached = solver_->potential_gradient_at(x_)) {
      g_prev_ = *cached;
      return;
    }
    ImplicitTickSolver::tick_point(q_tilde_, x_, theta, tick_point_);
    potential_->gradient(tick_point_, g_prev_);
  };
  tick_gradient();
  std::size_t pushing = 0;
  for (const TickPlane& c : problem_.planes) pushing += c.violation(x_) > 0.0;
  counters_.pushing_planes += pushing;
  if (pushing > 0) apply_plane_reactions(kernel, time);
  if (all_free) {
    Vec3 g_sum = Vec3::Zero();
    for (std::size_t a = 0; a < n; ++a) g_sum += g_prev_.segment<3>(3 * a);
    // Exact condition: Σ m (x − y) = −θ h² Σ g + h² Σ f_planes.
    const Vec3 shift = (-(theta * h * h) * g_sum + h * h * plane_force() - residual) / free_mass;
    for (std::size_t a = 0; a < n; ++a) x_.segment<3>(3 * a) += shift;
    // Angular momentum likewise (header): the rotation moves the interval midpoint, so
    // ∇V is re-evaluated there and the (second-order) remainder cancelled again. Not
    // through an obstacle contact, which exerts a torque of its own.
    // Backward Euler conserves no angular momentum of its own: not there either.
    const bool turn = torque_correction_ && pushing == 0 && theta == 0.5;
    for (int pass = 0; pass < 3 && turn && cancel_constraint_torque(s); ++pass) {
      tick_gradient();
      if (pass == 0) ++counters_.torque_corrections;
    }
  }
  for (std::size_t a = 0; a < n; ++a) {
    // The phantom of a prescribed vertex follows its script too.
    v_tilde_.segment<3>(3 * a) = (x_.segment<3>(3 * a) - q_tilde_.segment<3>(3 * a)) / h;
    if (!free_[a]) continue;
    const Index ga = vertices_[a];
    s.velocity_ref(ga) = (x_.segment<3>(3 * a) - s.position(ga)) / h;
    kernel.velocity_changed(ga);
  }
  if (theta == 0.5 && energy_guard_.damping > 0.0) {  // the next tick's ε starts here
    ImplicitTickSolver::tick_point(q_tilde_, x_, theta, mid_prev_);
    v_mid_prev_ = potential_->value(mid_prev_);
    mid_prev_valid_ = true;
  }
  outside_impulse_ = false;
  if (energy_guard_.damping > 0.0) {
    v_primary_.resize(q_tilde_.size());
    for (std::size_t a = 0; a < n; ++a) v_primary_.segment<3>(3 * a) = s.velocity(vertices_[a]);
  }
  ++tick_;
  // The new interval's midpoint is where x_ puts it; received impulses move it anew.
  reaction_torque_.setZero();
  spurious_torque_.setZero();
  t_next_ = next_tick_time(report.converged);
  return t_next_;
}

void PhantomSource::set_halving(TickHalving halving) {
  if (halving.max_halvings < 0 || halving.max_halvings > 30 || halving.calm_ticks < 1)
    throw std::invalid_argument("phantom: halvings must be in 0..30 and calm ticks at least 1");
  halving_ = halving;
  calm_needed_ = halving.calm_ticks;
}

void PhantomSource::set_up_tick(VertexState& s, double time, double h) {
  problem_.h = h;
  // The first tick: from a scene's initial state the previous interval does not exist
  // (its share is zero: a half kick, StartFrom); a resumed run's first tick takes the
  // previous half with its own step, at the copy's positions.
  const double h_prev = counters_.ticks > 0 ? h_prev_ : from_ == StartFrom::initial_state ? 0.0 : h;
  const double carried = 1.0 - solver_->settings().theta;  // the previous interval's share
  problem_.q_tilde = q_tilde_;
  problem_.y.resize(q_tilde_.size());
  x_.resize(q_tilde_.size());
  for (std::size_t a = 0; a < vertices_.size(); ++a) {
    const Index ga = vertices_[a];
    s.sync(ga, time);
    const Vec3 q = s.position(ga), v = s.velocity(ga);
    if (!free_[a]) {  // prescribed: the primary's scripted motion
      x_.segment<3>(3 * a) = q + h * v;
      problem_.y.segment<3>(3 * a) = x_.segment<3>(3 * a);
      continue;
    }
    // The previous interval's share of its impulse, (1 − θ) h_prev g_prev (the
    // midpoint's other half; none for backward Euler), moves the landing point by h/m
    // times it (with one period: the header's (h²/2) M⁻¹ g_prev).
    const Vec3 qt = q_tilde_.segment<3>(3 * a), vt = v_tilde_.segment<3>(3 * a);
    problem_.y.segment<3>(3 * a) = 0.5 * (q + qt) + 0.5 * h * (v + vt) -
                                   (carried * h * h_prev / mass_[a]) * g_prev_.segment<3>(3 * a);
    x_.segment<3>(3 * a) = qt + h * vt;  // the phantom's free flight: the initial guess
  }
  find_contact_planes(s, time);
}

void PhantomSource::set_energy_guard(TickEnergyGuard guard) {
  if (!(guard.damping >= 0.0 && std::isfinite(guard.damping)) || !(guard.tolerance > 0.0))
    throw std::invalid_argument("phantom: the energy guard's damping must be at least 0 and its tolerance positive");
  energy_guard_ = guard;
}

double PhantomSource::tick_energy(const VertexState& s, bool released) {
  // Measured only where E is the midpoint rule's interval energy with one step: a
  // changed step adds ¼ (h⁺ − h⁻)(g⁻·ṽ⁺ − g⁺·ṽ⁻) even for a quadratic V (TickEnergyGuard);
  // and on free bodies without wind: a pin's script and the wind do work the rule's
  // error cannot be told from (the pinned cards, cape and stiff cloth of demos/ made
  // "energy" at 42, 10 and 11 of their first 51 ticks that way).
  if (solver_->settings().theta != 0.5 || !mid_prev_valid_ || released || h_tick_ != h_prev_ ||
      counters_.ticks == 0 || !wind_.empty() || std::find(free_.begin(), free_.end(), false) != free_.end() ||
      outside_impulse_)
    return 0.0;
  // And only in free flight: ε is the energy the tick made only if nothing else acted in
  // the interval (in contact a damped tick changed what the contact did next: the sweep's
  // pair_phantom_be_spin, damped at 8 ticks in contact, climbed to +1.0e-2 of E0). A
  // layer impulse on the primary changed its velocity from the one the last tick set.
  if (v_primary_.size() != q_tilde_.size()) return 0.0;
  for (std::size_t a = 0; a < vertices_.size(); ++a)
    if (s.velocity(vertices_[a]) != Vec3(v_primary_.segment<3>(3 * a))) return 0.0;
  ImplicitTickSolver::tick_point(q_tilde_, x_, 0.5, tick_point_);
  const Eigen::VectorXd* cached = solver_->potential_gradient_at(x_);
  if (!cached) potential_->gradient(tick_point_, g_tick_);
  const Eigen::VectorXd& g_now = cached ? *cached : g_tick_;
  const double v_now = potential_->value(tick_point_);
  // The trapezoidal rule's error of ∫ ∇V along m⁻ → m⁺.
  const double created = v_now - v_mid_prev_ - 0.5 * (g_prev_ + g_now).dot(tick_point_ - mid_prev_);
  double kinetic = 0.0;
  for (std::size_t a = 0; a < vertices_.size(); ++a)
    if (free_[a])
      kinetic += 0.5 * mass_[a] * ((x_.segment<3>(3 * a) - q_tilde_.segment<3>(3 * a)) / h_tick_).squaredNorm();
  // Below the rounding of V (gravity's share is exact in the rule but large): nothing.
  const double floor = 1e-12 * (std::abs(v_now) + std::abs(v_mid_prev_));
  if (created <= floor) return 0.0;
  return kinetic > 0.0 ? created / kinetic : std::numeric_limits<double>::infinity();
}

TickReport PhantomSource::solve_tick(VertexState& s, double time, bool released) {
  const double scene_beta = solver_->settings().rayleigh_beta;
  bool damped = false;
  for (;;) {
    h_tick_ = std::ldexp(h_, -level_);
    set_up_tick(s, time, h_tick_);
    const auto start = std::chrono::steady_clock::now();
    const TickReport report = solver_->solve(problem_, x_);
    counters_.solve_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    counters_.factorizations = solver_->factorizations();
    counters_.iterations += static_cast<std::uint64_t>(report.iterations);
    counters_.max_iterations = std::max(counters_.max_iterations, report.iterations);
    if (report.converged || level_ >= halving_.max_halvings || !std::isfinite(report.gradient_norm)) {
      // A midpoint tick that made energy is solved again, damped (TickEnergyGuard).
      const double made = std::isfinite(report.gradient_norm) && energy_guard_.damping > 0.0 && !damped
                              ? tick_energy(s, released) : 0.0;
      if (made > energy_guard_.tolerance) {
        damped = true;
        ++counters_.damped_ticks;
        solver_->set_rayleigh_beta(std::max(scene_beta, energy_guard_.damping * h_tick_));
        continue;
      }
      if (!damped) counters_.max_tick_energy = std::max(counters_.max_tick_energy, made);
      if (damped) solver_->set_rayleigh_beta(scene_beta);
      ++counters_.ticks;
      counters_.last_iterations = report.iterations;
      if (level_ > 0) ++counters_.short_ticks;
      return report;
    }
    // Solve again from the same state with half the step; the factor holds M/h².
    // A failure right after the step doubled: wait twice as long before the next try.
    if (calm_ < 0) calm_needed_ = std::min(2 * calm_needed_, 1 << 20);
    ++level_;
    calm_ = 0;
    ++counters_.halvings;
    counters_.deepest_halving = std::max(counters_.deepest_halving, level_);
    solver_->invalidate_factor();
    spdlog::debug("phantom body '{}': tick at t = {:.6g} s did not converge in {} iterations "
                  "(|grad E| = {:.3g} > {:.3g}); solving it again with step {:.3g} s",
                  body_, time, report.iterations, report.gradient_norm, report.threshold,
                  std::ldexp(h_, -level_));
  }
}

double PhantomSource::next_tick_time(bool converged) {
  h_prev_ = h_tick_;
  const int finest = halving_.max_halvings;
  grid_ += std::int64_t{1} << (finest - level_);
  if (calm_ < 0) {  // the first tick after the step doubled converged
    calm_ = 0;
    calm_needed_ = halving_.calm_ticks;
  }
  if (level_ > 0 && converged && ++calm_ >= calm_needed_ &&
      grid_ % (std::int64_t{1} << (finest - level_ + 1)) == 0) {
    --level_;
    calm_ = -1;  // marks the trial of the doubled step
    solver_->invalidate_factor();
  }
  // (k 2^L) (h 2^-L) rounds as k h: without halvings the ticks are at t0 + k h_imp.
  return t0_ + static_cast<double>(grid_) * std::ldexp(h_, -finest);
}

void PhantomSource::find_contact_planes(const VertexState& s, double time) {
  problem_.planes.clear();
  if (!contact_.any()) return;
  // How far a surface point can get from where it is: both copies' velocities over a
  // tick, doubled.
  double speed = 0.0;
  for (std::size_t a = 0; a < vertices_.size(); ++a)
    if (free_[a])
      speed = std::max({speed, s.velocity(vertices_[a]).norm(), v_tilde_.segment<3>(3 * a).norm()});
  primary_.resize(3 * static_cast<Eigen::Index>(vertices_.size()));
  fixed_.resize(vertices_.size());
  for (std::size_t a = 0; a < vertices_.size(); ++a) {
    primary_.segment<3>(3 * a) = s.position(vertices_[a]);
    fixed_[a] = !free_[a];
  }
  contact_.find(time, problem_.h, speed, primary_, fixed_, mass_);
  problem_.planes = contact_.planes();
  counters_.obstacle_planes = contact_.obstacle_planes;
  counters_.pair_planes = contact_.pair_planes;
}

void PhantomSource::apply_plane_reactions(Kernel& kernel, double time) {
  contact_.apply_reactions(kernel, time, h_tick_, x_);
}

void PhantomSource::receive_impulse(Index a, const Vec3& impulse, double time, Kernel& kernel) {
  if (!free_[a]) return;
  // The phantom drifts linearly from its tick: re-anchor it at `time` first.
  if (time > t_tick_) {
    q_tilde_ += (time - t_tick_) * v_tilde_;
    t_tick_ = time;
  }
  const Vec3 dv = impulse / mass_[a];
  VertexState& s = kernel.state();
  const Index g = vertices_[a];
  s.sync(g, time);
  // Angular momentum (header). The plane that sent J took this vertex at its primary
  // q, where the reaction balances its torque; J on both copies moves the momentum at
  // their centre (q + q̃)/2: an excess (q̃ − q)/2 × J. (A plane taken at the centre
  // lay behind the solid's surface wherever the phantom, which learns of contact only
  // through the constraint, had sunk in: a cloth draped on a solid,
  // demos/mixed_schemes.json, went from 2.7 J to 15.7 J in 0.3 s.) And the
  // next tick applies this interval's elastic impulse (h/2) g at the phantom's
  // position then, which J moves by (t_next_ − time) Δv off the midpoint about which g
  // is torque-free (the Noether term −(h²/4) ṽ × g of add_carried assumes it there):
  // that term changes by −(h²/4) Δv × g now, with no torque acting, and the tick's
  // impulse exerts −(h/2)(t_next_ − time) Δv × g. The tick's rigid rotation cancels
  // the excess and the tick's torque with the constraint torque (spurious_torque_);
  // until then add_carried keeps the reading continuous (reaction_torque_). Left out,
  // they took 1.5e-7 and 3.6e-6 of Σ |x × m v| in the contact matrix's solid–phantom
  // pairs. Midpoint ticks only (backward-Euler ticks keep no angular momentum).
  if (solver_->settings().theta == 0.5) {
    const Vec3 excess = (0.5 * (q_tilde_.segment<3>(3 * a) - s.position(g))).cross(impulse);
    spurious_torque_ += excess;
    reaction_torque_ -= excess;
    if (counters_.ticks > 0) {  // the first tick has no previous interval's share
      const double h = h_tick_;
      const Vec3 arm = dv.cross(Vec3(g_prev_.segment<3>(3 * a)));
      reaction_torque_ += (0.25 * h * h) * arm;
      spurious_torque_ += (-0.5 * h * (t_next_ - time)) * arm;
    }
  }
  v_tilde_.segment<3>(3 * a) += dv;
  outside_impulse_ = true;
  s.velocity_ref(g) += dv;
  kernel.velocity_changed(g);
}

void PhantomSource::share_velocity_change(Index a, const Vec3& dv, double t) {
  // The phantom flies linearly from its tick: q̃_a(t') = q̃_a + (t' − t_tick) ṽ_a. A
  // velocity change at t keeps the path continuous there.
  v_tilde_.segment<3>(3 * a) += dv;
  q_tilde_.segment<3>(3 * a) -= (t - t_tick_) * dv;
  outside_impulse_ = true;
}

Vec3 PhantomSource::plane_force() const {
  Vec3 f = Vec3::Zero();
  for (const TickPlane& c : problem_.planes) {
    double free_weight = 0.0;  // the share of the force on unknowns (pins take the rest)
    for (int i = 0; i < TickPlane::kMaxVertices; ++i)
      if (c.weights[i] != 0.0 && free_[c.vertices[i]]) free_weight += c.weights[i];
    f += free_weight * c.stiffness * c.violation(x_) * c.normal;
  }
  return f;
}

bool PhantomSource::cancel_constraint_torque(const VertexState& s) {
  // d_a = q_a − q̃_a, P_a = (m_a/2)(v⁺_a − v⁻_a) the primary's impulse; the tick's
  // spurious torque is Σ d × P (header). A rigid velocity change ω × r_a of both
  // copies, r_a = c_a − C about the mass centre C of the pair centres
  // c_a = (q_a + q̃_a)/2, adds Σ m c × (ω × r) = I ω (I the inertia tensor of the c_a)
  // and no linear momentum; with the primary's share of it in P the condition
  // Σ d × P + Σ m q̃ × (ω × r) = 0 is linear in ω: I ω = −Σ d × P.
  const std::size_t n = vertices_.size();
  RigidRotation turn;
  Vec3 torque = Vec3::Zero();
  for (std::size_t a = 0; a < n; ++a) {
    const Vec3 q = s.position(vertices_[a]);
    const Vec3 d = q - q_tilde_.segment<3>(3 * a);
    const Vec3 v_plus = (x_.segment<3>(3 * a) - q) / h_tick_;
    torque += d.cross(0.5 * mass_[a] * (v_plus - s.velocity(vertices_[a])));
    // The solver's residual ρ = M(x − y)/h² + ½ g⁺ (Σ ρ = 0 after the shift) adds the
    // torque h Σ q̃ × ρ; cancelled too, as the shift cancels its force.
    const Vec3 rho = (mass_[a] / (h_tick_ * h_tick_)) * (x_.segment<3>(3 * a) - problem_.y.segment<3>(3 * a)) +
                     0.5 * g_prev_.segment<3>(3 * a);  // midpoint ticks only
    torque += h_tick_ * Vec3(q_tilde_.segment<3>(3 * a)).cross(rho);
    turn.add_mass(mass_[a], q - 0.5 * d);
  }
  if (!turn.set_centre()) return false;
  if (!spurious_torque_.isZero(0.0)) torque += spurious_torque_;  // receive_impulse's
  const auto pair_centre = [&](std::size_t a) {
    return Vec3(0.5 * (s.position(vertices_[a]) + q_tilde_.segment<3>(3 * a)));
  };
  for (std::size_t a = 0; a < n; ++a) turn.add_inertia(mass_[a], turn.arm(pair_centre(a)));
  // Degenerate (collinear) body, or a rotation below the rounding of the positions.
  if (!turn.solve(torque) || h_tick_ * turn.omega().norm() <= 1e-15) return false;
  const double speed = turn.omega().norm() * std::sqrt(turn.inertia().trace() / turn.total_mass());
  double fastest = 0.0;
  for (std::size_t a = 0; a < n; ++a)
    fastest = std::max(fastest, (x_.segment<3>(3 * a) - q_tilde_.segment<3>(3 * a)).norm() / h_tick_);
  if (speed > kMaxCorrection * fastest) {
    ++counters_.torque_skipped;
    return false;
  }
  for (std::size_t a = 0; a < n; ++a)
    x_.segment<3>(3 * a) += h_tick_ * turn.velocity(pair_centre(a));
  counters_.max_correction_speed = std::max(counters_.max_correction_speed, speed);
  return true;
}

double PhantomSource::potential_energy(const VertexState&, double t) const {
  Eigen::VectorXd q(q_tilde_.size());
  for (std::size_t a = 0; a < vertices_.size(); ++a)
    q.segment<3>(3 * a) = phantom_position(static_cast<Index>(a), t);
  return potential_->value(q);
}

void PhantomSource::add_carried(const VertexState&, double t, Vec3& p, Vec3& L,
                                double& kinetic) const {
  // The midpoint impulse −(h/2)(g⁻ + g⁺) is applied at the tick positions q̃^i, but
  // g± are torque-free about the interval midpoints q̃^{i∓1/2} = q̃^i ∓ (h/2) ṽ^{i∓1/2}.
  // Σ q̃ × p̃ therefore jumps by (h²/4) Σ (ṽ⁺ × g⁺ − ṽ⁻ × g⁻) at a tick; the discrete
  // Noether momentum adds −(h²/4) Σ ṽ × g of the current interval, which cancels it.
  const bool ticked = counters_.ticks > 0;
  for (std::size_t a = 0; a < vertices_.size(); ++a) {
    if (!free_[a]) continue;
    const Vec3 va = v_tilde_.segment<3>(3 * a);
    const Vec3 pa = 0.5 * mass_[a] * va;
    p += pa;
    L += phantom_position(static_cast<Index>(a), t).cross(pa);
    if (ticked && solver_->settings().theta == 0.5) L -= (0.25 * h_tick_ * h_tick_) * va.cross(g_prev_.segment<3>(3 * a));
    kinetic += 0.25 * mass_[a] * va.squaredNorm();
  }
  if (!reaction_torque_.isZero(0.0)) L += reaction_torque_;  // receive_impulse
}

double PhantomSource::mismatch(const VertexState& state, double t) const {
  double worst = 0.0;
  for (std::size_t a = 0; a < vertices_.size(); ++a)
    worst = std::max(worst, (phantom_position(static_cast<Index>(a), t) -
                             state.position_at(vertices_[a], t)).norm());
  return worst;
}

}  // namespace clockwork

namespace clockwork {

std::vector<std::string> PhantomSource::summary_lines() const {
  const PhantomCounters& c = counters_;
  std::vector<std::string> lines;
  lines.push_back(fmt::format("  phantom: {} ticks, {:.2f} solver iterations per tick (max {}), {} unconverged, "
                              "{:.3f} s in solves ({} factorisations), {} torque corrections (largest {:.3g} m/s, "
                              "{} too large, skipped)",
                              c.ticks, c.ticks ? double(c.iterations) / double(c.ticks) : 0.0, c.max_iterations,
                              c.unconverged, c.solve_seconds, c.factorizations, c.torque_corrections,
                              c.max_correction_speed, c.torque_skipped));
  if (c.halvings > 0)
    lines.push_back(fmt::format("  phantom: {} solves retried with half the step, {} ticks shorter than h_imp "
                                "(shortest h_imp / {})",
                                c.halvings, c.short_ticks, 1 << c.deepest_halving));
  if (c.damped_ticks > 0)
    lines.push_back(fmt::format("  phantom: {} ticks made energy and were solved again, damped (largest kept: {:.3g} of "
                                "the kinetic energy)",
                                c.damped_ticks, c.max_tick_energy));
  if (c.obstacle_planes + c.pair_planes > 0)
    lines.push_back(fmt::format("  phantom: {:.1f} obstacle and {:.1f} pair planes per tick, {:.1f} of them pushing",
                                double(c.obstacle_planes) / double(c.ticks), double(c.pair_planes) / double(c.ticks),
                                double(c.pushing_planes) / double(c.ticks)));
  return lines;
}

}  // namespace clockwork
