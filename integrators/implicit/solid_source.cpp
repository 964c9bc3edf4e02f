#include "integrators/implicit/solid_source.hpp"

#include "integrators/implicit/joint_solids.hpp"

#include "integrators/solvers/rigid_rotation.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cassert>

namespace clockwork {

SolidSource::SolidSource(std::string body, std::vector<Index> vertices,
                         std::shared_ptr<TetFemModel> model, std::vector<bool> fixed,
                         const Vec3& gravity)
    : body_(std::move(body)),
      vertices_(std::move(vertices)),
      model_(std::move(model)),
      fixed_(std::move(fixed)) {
  const std::size_t n = vertices_.size();
  assert(model_->vertex_count() == n && fixed_.size() == n);
  f_ext_.setZero(3 * n);
  for (std::size_t a = 0; a < n; ++a) {
    if (fixed_[a]) continue;
    free_.push_back(static_cast<Index>(a));
    free_global_.push_back(vertices_[a]);
    f_ext_.segment<3>(3 * a) = model_->lumped_mass()[a] * gravity;
  }
  x_.resize(3 * n);
  v_.resize(3 * n);
  // The planes' floor stiffness: each vertex's diagonal block of K at rest.
  TetFemModel::Sparse K;
  model_->hessian(model_->rest_positions(), K, true);
  std::vector<double> k(n, 0.0);
  for (std::size_t a = 0; a < n; ++a)
    k[a] = (K.coeff(3 * a, 3 * a) + K.coeff(3 * a + 1, 3 * a + 1) + K.coeff(3 * a + 2, 3 * a + 2)) / 3.0;
  contact_.set_material_stiffness(std::move(k));
}

void SolidSource::use_backward_euler(double h, const BackwardEulerSettings& settings) {
  h_ = h;
  euler_ = std::make_unique<BackwardEuler>(*model_, settings);
  multirate_.reset();
}

void SolidSource::use_multirate(std::vector<MultirateRegion> regions,
                                const MultirateSettings& settings) {
  h_ = settings.h_L;
  multirate_ = std::make_unique<MultirateSolver>(*model_, std::move(regions), fixed_, settings);
  euler_.reset();
  region_global_.clear();
  for (const MultirateRegion& r : multirate_->regions()) {
    region_global_.emplace_back();
    for (Index a : r.vertices) region_global_.back().push_back(vertices_[a]);
  }
}

std::string_view SolidSource::name() const {
  return multirate_ ? "coarse:zhao" : "coarse:backward_euler";
}

void SolidSource::start(EventKind kind, Kernel& kernel, double t0) {
  assert(h_ > 0.0);
  if (multirate_) {
    auto fine = std::make_unique<SolidFineSource>(*this);
    fine->next_.assign(multirate_->regions().size(), 1);
    fine_ = fine.get();
    fine_kind_ = kernel.add_source(std::move(fine));
  }
  clock_ = StepClock(t0, h_);
  next_step_ = 0;
  kernel.schedule(kind, 0, clock_.time(0));
}

void SolidSource::gather(const VertexState& state, double t) {
  for (std::size_t a = 0; a < vertices_.size(); ++a) {
    x_.segment<3>(3 * a) = state.position_at(vertices_[a], t);
    v_.segment<3>(3 * a) = state.velocity(vertices_[a]);
  }
}

void SolidSource::kick(Kernel& kernel, double t, const Eigen::VectorXd& dv,
                       const std::vector<Index>& local) {
  VertexState& state = kernel.state();
  for (Index a : local) {
    const Index g = vertices_[a];
    state.sync(g, t);
    state.velocity_ref(g) += dv.segment<3>(3 * a);
    kernel.velocity_changed(g);
  }
}

double SolidSource::process(EventSlot, double time, Kernel& kernel) {
  if (joint_step_ == next_step_) {  // taken with another solid's step (JointSolids)
    ++counters_.coarse_steps;
    ++counters_.joint_steps;
    current_ = next_step_++;
    return clock_.time(next_step_);
  }
  ++counters_.coarse_steps;
  if (euler_) {
    current_ = next_step_++;
    std::span<TickPlane> planes;
    find_planes(kernel, time);
    if (contact_.any()) {
      if (joint_ && joint_->step(*this, time, kernel)) {
        ++counters_.joint_steps;
        return clock_.time(next_step_);
      }
      planes = contact_.planes();
    }
    const BackwardEulerReport r = euler_->step(h_, x_, v_new_, f_ext_, fixed_, planes);
    counters_.newton_iterations += r.newton_iterations;
    counters_.linear_iterations += r.linear_iterations;
    if (r.safeguarded) ++counters_.safeguarded;
    if (!r.converged && (euler_->settings().max_newton > 1 || r.safeguarded))  // 1: linearised by design
      warn_unconverged("backward Euler step", time, r);
    // x_ now holds the landing positions x_{n+1}: each plane's impulse h k v there.
    record_plane_impulses(x_, planes);
    v_new_ -= v_;
    // BackwardEuler's own safeguard checked the solve; the rotation spends no more
    // energy than the body dissipated (keep_angular_momentum).
    keep_angular_momentum(x_start_, v_new_, euler_->settings().rayleigh_alpha, h_);
    kick(kernel, time, v_new_, free_);
    if (!contact_.planes().empty()) counters_.pushing_pairs += contact_.apply_impulses(kernel, time, impulses_);
    return clock_.time(next_step_);
  }
  current_ = next_step_++;
  if (joint_ && contact_.any()) {
    // In contact with solids it can step with, a Zhao body takes that step as backward
    // Euler (JointSolids; joint_settings()).
    find_planes(kernel, time);
    if (joint_->step(*this, time, kernel)) {
      ++counters_.joint_steps;
      return clock_.time(next_step_);
    }
  } else {
    gather(kernel.state(), time);
  }
  if (contact_.any()) plan_multirate_contact(time);
  multirate_->step(x_, v_, f_ext_, step_);
  // One linear solve holds its planes as two-sided springs (plan_multirate_contact), but
  // a pair plane with another body may only push (its reaction pulls the other body's
  // face in): the step is solved again with the pair planes that pushed over it and
  // those left out that its landing now violates, until that set stays the same (an
  // active set; at most kMaxPlanePasses solves). A phantom cloth's pairs too: held
  // two-sided, a Zhao m = 1 block at 3 m/s pulled the cloth's light vertices into it,
  // 5.1 J -> 103 J, 515 layers deep (test_zhao_cloth_contact). Obstacle planes
  // stay two-sided: dropping the ground's pulling planes too, a fast stiff bar landing
  // at m = 1 gained 2.74 J of 3.30 J with the energy safeguard
  // (test_linearised_safeguard; not diagnosed). An obstacle plane the step was planned
  // without (plan_multirate_contact: first_substep 0) joins the set when the plan lands
  // behind it, acting from the first substep its point is behind it, and stays: a
  // region's point resting on the ground (v_n ≈ 0, its prediction over h_S short of the
  // plane) otherwise fell through it in every large step, and the energy safeguard
  // re-solved each such step by backward Euler at h_L (the dragon drop's jaw on the
  // ground: 73 of 201 steps, the plan 1.5-2.3 mm behind the planes, 115-249 J in them).
  if (!contact_.planes().empty()) {
    std::vector<TickPlane>& all = contact_.planes();
    solved_with_.assign(all.size(), 1);
    for (std::size_t k = 0; k < all.size(); ++k)
      solved_with_[k] = all[k].friction ? (k > 0 ? solved_with_[k - 1] : 0) : all[k].first_substep > 0;
    for (int solves = 1;; ++solves) {
      multirate_plane_impulses();  // every plane's, the left-out ones' as if they acted
      next_with_.assign(all.size(), 0);
      bool same = true;
      for (std::size_t k = 0; k < all.size(); ++k) {
        // A friction anchor follows its normal plane, which precedes it.
        if (all[k].friction) next_with_[k] = k > 0 ? next_with_[k - 1] : 0;
        else if (contact_.pair_with_solid_or_phantom(k)) next_with_[k] = impulses_[k] > 0.0 ? 1 : 0;
        else if (solved_with_[k]) next_with_[k] = 1;
        else if (const int q = first_substep_behind(all[k]); q > 0) {
          all[k].first_substep = q;
          next_with_[k] = 1;
        }
        same = same && next_with_[k] == solved_with_[k];
      }
      if (same || solves >= kMaxPlanePasses) break;
      solved_with_ = next_with_;
      acting_.clear();
      for (std::size_t k = 0; k < all.size(); ++k)
        if (solved_with_[k]) acting_.push_back(all[k]);
      multirate_->set_planes(acting_);
      multirate_->step(x_, v_, f_ext_, step_);
    }
    // The safeguard checks the plan's landing against the planes still left out, as
    // the one-sided planes they are (unheld_plane_energy skips two-sided ones).
    unheld_.clear();
    for (std::size_t k = 0; k < all.size(); ++k)
      if (!solved_with_[k] && contact_.obstacle(k)) {
        unheld_.push_back(all[k]);
        unheld_.back().two_sided = false;
      }
    for (char& c : solved_with_) c = !c;
    contact_.drop(solved_with_);
    multirate_plane_impulses();
  }
  const auto& regions = multirate_->regions();
  // Single rate: the whole step is one kick at t_n, whose angular momentum is kept; at
  // m > 1 the plan's rotation (keep_angular_momentum_multirate).
  const bool single = std::all_of(regions.begin(), regions.end(), [](const MultirateRegion& r) { return r.m == 1; }) &&
      free_.size() == vertices_.size();
  const double alpha = multirate_->settings().rayleigh_alpha;
  if (single) {
    v_new_ = step_.dv_L;
    for (std::size_t i = 0; i < regions.size(); ++i) v_new_ += step_.dv_S[i][0];
  }
  // The energy safeguard checks the plan as the kernel will follow it; the rotation
  // after it spends no more energy than the body dissipated (keep_angular_momentum).
  if (energy_safeguard_ && ((!single && region_meets_solid()) ||
                            (single ? kick_gained_energy(x_) : multirate_step_gained_energy())) &&
      resolve_with_newton(time, x_)) {
    ++counters_.safeguarded;
    for (Index a : multirate_->large_vertices()) step_.dv_L.segment<3>(3 * a) = v_new_.segment<3>(3 * a);
    for (std::size_t i = 0; i < regions.size(); ++i)
      for (Index a : regions[i].vertices)
        for (Eigen::VectorXd& dv : step_.dv_S[i]) dv.segment<3>(3 * a) = v_new_.segment<3>(3 * a);
  }
  if (single) keep_angular_momentum(x_, v_new_, alpha, h_);
  else if (free_.size() == vertices_.size()) keep_angular_momentum_multirate(alpha);
  if (contact_.any() && contact_.planes().empty()) contact_.record_loads(h_, impulses_, vertices_.size());
  if (!contact_.planes().empty()) {
    counters_.pushing_pairs += contact_.apply_impulses(kernel, time, impulses_);
    contact_.record_loads(h_, impulses_, vertices_.size());
  }
  v_start_ = v_;
  x_start_ = x_;
  off_plan_.assign(multirate_->regions().size(), 0);
  if (single) {
    kick(kernel, time, v_new_, free_);
    return clock_.time(next_step_);
  }
  kick(kernel, time, step_.dv_L, multirate_->large_vertices());
  for (std::size_t i = 0; i < regions.size(); ++i) {
    kick(kernel, time, step_.dv_S[i][0], regions[i].vertices);
    if (regions[i].m > 1) {
      fine_->begin(static_cast<EventSlot>(i));
      kernel.schedule(fine_kind_, static_cast<EventSlot>(i), clock_.time(current_, 1, regions[i].m));
    }
  }
  return clock_.time(next_step_);
}

int SolidSource::plane_group(const TickPlane& p) const {
  int group = -3;
  for (int i = 0; i < TickPlane::kMaxVertices; ++i) {
    if (p.weights[i] == 0.0) continue;
    const int g = multirate_->group(p.vertices[i]);
    if (g == -2) continue;  // prescribed: moves with its own velocity in both
    if (group != -3 && g != group) return -3;
    group = g;
  }
  return group;
}

void SolidSource::plan_multirate_contact(double time) {
  double speed = 0.0;
  for (Index a : free_) speed = std::max(speed, v_.segment<3>(3 * a).norm());
  contact_.find(time, h_, speed, x_, fixed_, model_->lumped_mass(), &v_);
  // A plane is held as a spring, so it must not pull the point towards itself before
  // the point gets there (that turned a 15 cm drop's 2.2 J into 5 J at m = 10): it is
  // taken if x_n is behind it, or if the point crosses it within its own first step —
  // h_L on L, h_S on a region, whose substeps each feel the spring at their end. A
  // region's pair plane with another solid is also taken if the prediction
  // x_n + r h_S v_n crosses it at a later substep r ≤ m, and acts from that substep on
  // (TickPlane::first_substep, MultirateSolver::set_planes): with only the first
  // substep's, a block at m = 4 (h_S 2.5 ms) closing 10 mm at 1 m/s kept none, the
  // layers alone stopped the pair and 0.57 J went to 0.94 J (issue 41; held in all
  // substeps instead, the planes pulled before the point arrived and the active set
  // dropped them all). A point further off reaches the plane later in the large step
  // through the layers, and meets it at the next. Obstacle planes keep the first
  // substep's rule (their scenes were measured with it).
  const auto& regions = multirate_->regions();
  unheld_.clear();  // process() fills it
  contact_.keep([&](TickPlane& p) {
    const int g = plane_group(p);
    if (g == -3) return false;
    const int m = g < 0 ? 1 : regions[static_cast<std::size_t>(g)].m;
    const double h = h_ / m;
    // keep() hands planes_[k] before anything at or after k is written.
    const auto k = static_cast<std::size_t>(&p - contact_.planes().data());
    const bool later = m > 1 && contact_.solid_pair(k);
    // The violation at the prediction x_n + r h v_n, on the plane's own vertices only.
    const auto violated = [&](int r) {
      double height = 0.0;
      for (int i = 0; i < TickPlane::kMaxVertices; ++i)
        if (p.weights[i] != 0.0) {
          const Eigen::Index o = 3 * static_cast<Eigen::Index>(p.vertices[i]);
          height += p.weights[i] * p.normal.dot(Vec3(x_.segment<3>(o) + (r * h) * v_.segment<3>(o)));
        }
      return p.offset - height > 0.0;
    };
    int first = p.violation(x_) > 0.0 ? 1 : 0;
    for (int r = 1; first == 0 && r <= (later ? m : 1); ++r)
      if (violated(r)) first = r;
    if (first == 0) {
      // An obstacle plane stays, not held (first_substep 0): process() takes it into
      // the solve if the plan lands behind it, else the safeguard checks the landing
      // against it (unheld_plane_energy).
      if (!contact_.obstacle(k)) return false;
      p.first_substep = 0;
      p.two_sided = true;
      return true;
    }
    p.first_substep = first;
    // Acting over the step's last substeps only, at the stiffness of a plane held over
    // h_L (κ against the inertia at h_L, SolveContact::add_planes) it is κ/m² against a
    // substep's: at m = 4 the 149 planes of the case above gave 0.14 N s of the
    // ~0.5 N s that stops the pair, and the layers did the rest (0.57 J -> 0.97 J).
    // Scaled by m (κ/m against a substep's inertia) the pair keeps its energy; measured
    // on pair_be_zhao_m4(_spin): ×2 +17 %, ×4 and ×8 pass, ×16 +2.9 % (spin), and the
    // same ×m on the planes from the first substep broke Zhao m = 4 against m = 4
    // (0.57 J -> 1.63 J), so it is for the later substeps' planes only.
    if (first > 1) p.stiffness *= m;
    p.two_sided = true;  // one linear solve: held for the step (MultirateSolver)
    return true;
  });
  // A friction anchor is meant to give the step the impulse k_t h_L² u of a slide at u
  // (SolveContact::add_friction). Held as a spring in K it is also damped by βK and, on a
  // region, anchored at x_n across m substeps: over the large step its impulse is
  // k u (h_L² + β h_L) on L and k u (h_L² (m+1)/(2m) + β h_L) on a region
  // (multirate_plane_impulses), so its stiffness is scaled to match. Unscaled, a block
  // landing while sliding stopped in a third of backward Euler's distance at β = h_L.
  const double beta = multirate_->settings().rayleigh_beta;
  for (TickPlane& p : contact_.planes()) {
    if (!p.friction) continue;
    const int g = plane_group(p);
    const double m = g < 0 ? 1.0 : regions[static_cast<std::size_t>(g)].m;
    p.stiffness *= h_ / (h_ * (m + 1.0) / (2.0 * m) + beta);
  }
  // A plane held in K is also damped by βK: its impulse over a step of h is
  // h k [(o − y(x_end)) − β ẏ] = h k [(o − y_n) − (h + β) ẏ] against backward Euler's
  // h k [(o − y_n) − h ẏ]. That dashpot holds the body's own side against a fixed point,
  // while a pair plane's other point moves (SolveContact::add_planes): with a solid
  // (its offset the other point's own landing) it let the gap close to a third of the
  // clearance in one 10 ms step at β = h, and the layers stopped the rest between the
  // steps: two m = 1 blocks meeting at 1 m/s went 0.57 J -> 11 J. With a cloth (the
  // point moving with the two sides' common velocity, about the block's own) the
  // dashpot's force β k ẏ on the block's approach speed was 99 % of the planes' impulse
  // and its reaction went to the cloth's light vertices: a phantom cloth under an
  // m = 1 block at 1 m/s was kicked to 7 m/s in one step, 0.57 J -> 59 J, and the run
  // stalled in 300 layers (issue 41). Scaled to k' = k h/(h + β) and
  // o' = y_n + (o − y_n)(h + β)/h, such a plane's impulse (and its force in the solve)
  // is backward Euler's, as a function of ẏ. Obstacle planes keep the dashpot (their
  // other side is at rest), and so do pairs with an explicit cloth (its sweep runs read
  // the same either way). A Schroeder solid counts as a solid here (its own velocity and
  // recoil in the plane, SolveContact::add_planes): Zhao m = 1 and m = 4 blocks against
  // it keep their initial energy (test_pair_energy).
  std::vector<TickPlane>& planes = contact_.planes();
  for (std::size_t k = 0; k < planes.size(); ++k) {
    TickPlane& p = planes[k];
    if (p.friction || !contact_.pair_with_solid_or_phantom(k)) continue;
    const int g = plane_group(p);
    const double h = g < 0 ? h_ : h_ / regions[static_cast<std::size_t>(g)].m;
    // y at the start of the plane's first substep, predicted as x_n + (q − 1) h v_n.
    double y = 0.0;
    for (int i = 0; i < TickPlane::kMaxVertices; ++i)
      if (p.weights[i] != 0.0) {
        const Eigen::Index o = 3 * static_cast<Eigen::Index>(p.vertices[i]);
        y += p.weights[i] * p.normal.dot(Vec3(x_.segment<3>(o) + ((p.first_substep - 1) * h) * v_.segment<3>(o)));
      }
    p.offset = y + (p.offset - y) * (h + beta) / h;
    p.stiffness *= h / (h + beta);
  }
  // The solve holds the planes taken above (an obstacle plane left out, with its
  // friction anchors, waits for process()'s active set).
  acting_.clear();
  bool held = false;
  for (const TickPlane& p : planes)
    if (p.friction ? held : (held = p.first_substep > 0)) acting_.push_back(p);
  multirate_->set_planes(acting_);
}

int SolidSource::first_substep_behind(const TickPlane& p) const {
  // The plan's positions (eq. 21-22): L drifts h_L with v^L_m; a region's point is at
  // x_n + h_S Σ_{q ≤ r} v_q after substep r.
  const int g = plane_group(p);
  if (g == -3) return 0;
  const auto along = [&](const auto& value) {
    double s = 0.0;
    for (int i = 0; i < TickPlane::kMaxVertices; ++i)
      if (p.weights[i] != 0.0) s += p.weights[i] * p.normal.dot(value(p.vertices[i]));
    return s;
  };
  double y = along([&](Index a) { return Vec3(x_.segment<3>(3 * a)); });
  if (g < 0) {
    y += h_ * along([&](Index a) { return Vec3(v_.segment<3>(3 * a) + step_.dv_L.segment<3>(3 * a)); });
    return p.offset - y > 0.0 ? 1 : 0;
  }
  const int m = multirate_->regions()[static_cast<std::size_t>(g)].m;
  const auto& dv_S = step_.dv_S[static_cast<std::size_t>(g)];
  for (int r = 1; r <= m; ++r) {
    y += (h_ / m) * along([&](Index a) { return Vec3(v_.segment<3>(3 * a) + dv_S[r - 1].segment<3>(3 * a)); });
    if (p.offset - y > 0.0) return r;
  }
  return 0;
}

void SolidSource::multirate_plane_impulses() {
  const std::vector<TickPlane>& planes = contact_.planes();
  const double beta = multirate_->settings().rayleigh_beta;
  impulses_.assign(planes.size(), 0.0);
  for (std::size_t k = 0; k < planes.size(); ++k) {
    const TickPlane& p = planes[k];
    const int g = plane_group(p);
    // y(x) and y(v) of the plane's combination over its vertices.
    const auto along = [&](const auto& value) {
      double s = 0.0;
      for (int i = 0; i < TickPlane::kMaxVertices; ++i)
        if (p.weights[i] != 0.0) s += p.weights[i] * p.normal.dot(value(p.vertices[i]));
      return s;
    };
    const auto x0 = [&](Index a) { return Vec3(x_.segment<3>(3 * a)); };
    if (g == -1) {
      const auto v_end = [&](Index a) {
        return Vec3(v_.segment<3>(3 * a) + step_.dv_L.segment<3>(3 * a));
      };
      const double y_end = along([&](Index a) { return Vec3(x0(a) + h_ * v_end(a)); });
      impulses_[k] = h_ * p.stiffness * ((p.offset - y_end) - beta * along(v_end));
      continue;
    }
    const int m = multirate_->regions()[static_cast<std::size_t>(g)].m;
    const double hS = h_ / m;
    const auto& dv_S = step_.dv_S[static_cast<std::size_t>(g)];
    double y = along(x0), total = 0.0;
    for (int r = 1; r <= m; ++r) {
      const auto v_r = [&](Index a) {
        return Vec3(v_.segment<3>(3 * a) + dv_S[r - 1].segment<3>(3 * a));
      };
      const double yv = along(v_r);
      y += hS * yv;  // x_r = x_{r−1} + h_S v_r
      if (r >= p.first_substep) total += hS * p.stiffness * ((p.offset - y) - beta * yv);
    }
    impulses_[k] = total;
  }
}

void SolidSource::keep_angular_momentum(const Eigen::VectorXd& x_n, Eigen::VectorXd& dv, double alpha,
                                        double h) {
  if (free_.size() != vertices_.size()) return;  // pins take torques of their own
  const std::vector<double>& m = model_->lumped_mass();
  RigidRotation turn;
  if (!turn.fit(m, x_n)) return;
  // excess = Σ r × (m Δv − h f_ext + h α m v_{n+1}) − Σ_planes Σ_i r_i × Λ w_i n (the
  // friction anchors among the planes).
  Vec3 excess = Vec3::Zero();
  for (std::size_t a = 0; a < m.size(); ++a) {
    const Vec3 r = turn.arm(x_n.segment<3>(3 * a));
    const Vec3 next = v_.segment<3>(3 * a) + dv.segment<3>(3 * a);
    excess += r.cross(m[a] * Vec3(dv.segment<3>(3 * a)) - h * Vec3(f_ext_.segment<3>(3 * a)) +
                      (h * alpha * m[a]) * next);
  }
  const std::vector<TickPlane>& planes = contact_.planes();
  for (std::size_t k = 0; k < planes.size() && k < impulses_.size(); ++k)
    for (int i = 0; i < TickPlane::kMaxVertices; ++i)
      if (planes[k].weights[i] != 0.0) {
        const Vec3 r = turn.arm(x_n.segment<3>(3 * planes[k].vertices[i]));
        excess -= r.cross((impulses_[k] * planes[k].weights[i]) * planes[k].normal);
      }
  if (material_torque_is_external()) {
    torque_x_ = x_n + h * (v_ + dv);
    excess -= material_torque(torque_x_, h);
  }
  if (!turn.solve(excess)) return;  // a degenerate (collinear) body: left as solved
  rotation_.setZero(dv.size());
  turn.add_velocity(x_n, rotation_);
  double share = 1.0;
  if (energy_safeguard_) {
    v_end_ = v_ + dv;
    x_end_ = x_n + h * v_end_;
    share = rotation_share(x_n, h);
  }
  dv += share * rotation_;
}

bool SolidSource::material_torque_is_external() const {
  // A rotation-invariant material's forces carry no torque: nothing to count.
  if (model_->kind() != FemKind::Linear) return false;
  const std::vector<TickPlane>& planes = contact_.planes();
  for (std::size_t k = 0; k < planes.size(); ++k)
    if (contact_.obstacle(k)) return true;
  return false;
}

Vec3 SolidSource::material_torque(const Eigen::VectorXd& x1, double h) {
  model_->gradient(x1, torque_g_);  // ∇E = −f_int
  Vec3 torque = Vec3::Zero();
  for (Eigen::Index o = 0; o < x1.size(); o += 3)  // Σ f_int = 0: about any point
    torque -= Vec3(x1.segment<3>(o)).cross(Vec3(torque_g_.segment<3>(o)));
  return h * torque;
}

void SolidSource::keep_angular_momentum_multirate(double alpha) {
  const std::vector<double>& m = model_->lumped_mass();
  RigidRotation turn;
  if (!turn.fit(m, x_)) return;
  const auto r_of = [&](Index a) { return turn.arm(x_.segment<3>(3 * a)); };
  // excess = ΔL_plan − Σ r × (h f_ext − h α m v_{n+1}) − Σ_planes Σ_i r_i × Λ w_i n, all
  // about C with the planes' and external torques at x_n (as backward Euler's).
  Vec3 excess = Vec3::Zero();
  Mat3 B = Mat3::Zero();
  const auto external = [&](Index a, const Vec3& v_end) {
    return Vec3(h_ * f_ext_.segment<3>(3 * a) - (h_ * alpha * m[a]) * v_end);
  };
  for (Index a : multirate_->large_vertices()) {
    const Vec3 r = r_of(a), dv = step_.dv_L.segment<3>(3 * a);
    excess += r.cross(m[a] * dv - external(a, Vec3(v_.segment<3>(3 * a)) + dv));
  }
  const auto& regions = multirate_->regions();
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const auto& dv = step_.dv_S[i];
    const int steps = regions[i].m;
    const double hS = h_ / steps;
    for (Index a : regions[i].vertices) {
      const auto o = 3 * static_cast<Eigen::Index>(a);
      const Vec3 r0 = r_of(a);
      Vec3 r = r0;
      excess += r0.cross(m[a] * Vec3(dv[0].segment<3>(o)));
      for (int q = 1; q < steps; ++q) {
        r += hS * Vec3(v_.segment<3>(o) + dv[q - 1].segment<3>(o));  // x_a(t_q)
        const Vec3 u = dv[q].segment<3>(o) - dv[q - 1].segment<3>(o);
        excess += r.cross(m[a] * u);
        // (ω × r0) q h_S × m u = m q h_S (r0 uᵀ − (u·r0) I) ω
        B += (m[a] * q * hS) * (r0 * u.transpose() - u.dot(r0) * Mat3::Identity());
      }
      excess -= r0.cross(external(a, Vec3(v_.segment<3>(o) + dv[steps - 1].segment<3>(o))));
    }
  }
  const std::vector<TickPlane>& planes = contact_.planes();
  for (std::size_t k = 0; k < planes.size() && k < impulses_.size(); ++k)
    for (int i = 0; i < TickPlane::kMaxVertices; ++i)
      if (planes[k].weights[i] != 0.0)
        excess -= r_of(planes[k].vertices[i]).cross((impulses_[k] * planes[k].weights[i]) * planes[k].normal);
  if (material_torque_is_external()) {
    plan_end_state();
    excess -= material_torque(x_end_, h_);
  }
  if (!turn.solve(excess, B)) return;  // a degenerate body: left as planned
  // The share the plan's energy allows (keep_angular_momentum): ω × r joins every
  // increment, so the plan ends at (x_end + s h u, v_end + s u) as for a single kick.
  rotation_.setZero(x_.size());
  turn.add_velocity(x_, rotation_);
  double share = 1.0;
  if (energy_safeguard_) {
    plan_end_state();
    share = rotation_share(x_, h_);
  }
  const auto add = [&](Eigen::VectorXd& dv, Index a) {
    const auto o = 3 * static_cast<Eigen::Index>(a);
    dv.segment<3>(o) += share * rotation_.segment<3>(o);
  };
  for (Index a : multirate_->large_vertices()) add(step_.dv_L, a);
  for (std::size_t i = 0; i < regions.size(); ++i)
    for (Eigen::VectorXd& dv : step_.dv_S[i])
      for (Index a : regions[i].vertices) add(dv, a);
}

void SolidSource::cancel_response_torque(const std::vector<Index>& region,
                                         const std::vector<Index>* interface,
                                         Eigen::VectorXd& dv, const Vec3& extra) const {
  if (free_.size() != vertices_.size()) return;
  const std::vector<double>& m = model_->lumped_mass();
  const auto each = [&](auto f) {
    for (Index a : region) f(a);
    if (interface)
      for (Index a : *interface) f(a);
  };
  RigidRotation turn;
  if (!turn.fit(m, x_, each)) return;
  Vec3 torque = extra;
  each([&](Index a) {
    const Vec3 r = turn.arm(x_.segment<3>(3 * a));
    torque += r.cross(m[a] * Vec3(dv.segment<3>(3 * a)));
  });
  if (!turn.solve(torque)) return;
  turn.add_velocity(x_, dv, each);
}

double SolidSource::potential_energy(const VertexState& state, double t) const {
  Eigen::VectorXd x(3 * vertices_.size());
  double gravity = 0.0;
  for (std::size_t a = 0; a < vertices_.size(); ++a) {
    x.segment<3>(3 * a) = state.position_at(vertices_[a], t);
    gravity -= f_ext_.segment<3>(3 * a).dot(x.segment<3>(3 * a));
  }
  return model_->value(x) + gravity;
}

void SolidSource::warn_unconverged(const char* what, double time, const BackwardEulerReport& r) {
  ++counters_.unconverged;
  spdlog::warn("{}: {} at t = {} s not converged after {} Newton iterations (|grad| {:.3g} above {:.3g}{}); "
               "the last iterate is used",
               body_, what, time, r.newton_iterations, r.gradient_norm, r.threshold,
               r.at_rounding_floor ? ", at the rounding floor of its objective: no step lowers it further" : "");
}

}  // namespace clockwork
