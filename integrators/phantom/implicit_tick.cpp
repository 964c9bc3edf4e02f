#include "integrators/phantom/implicit_tick.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "integrators/solvers/nonlinear.hpp"

namespace clockwork {
namespace {

/// Whether the compressed matrix stores entry (row, col).
bool has_entry(const BodyPotential::Sparse& m, Index row, Index col) {
  const auto* first = m.innerIndexPtr() + m.outerIndexPtr()[col];
  const auto* last = m.innerIndexPtr() + m.outerIndexPtr()[col + 1];
  return std::binary_search(first, last, static_cast<BodyPotential::Sparse::StorageIndex>(row));
}

}  // namespace

double ImplicitTickSolver::energy(const TickProblem& p, const Eigen::VectorXd& x) {
  double kinetic = 0.0;
  const std::size_t n = p.mass->size();
  for (std::size_t a = 0; a < n; ++a)
    if ((*p.free)[a]) kinetic += (*p.mass)[a] * (x.segment<3>(3 * a) - p.y.segment<3>(3 * a)).squaredNorm();
  double planes = 0.0;
  for (const TickPlane& c : p.planes) planes += c.value(x);
  evaluation_point(p, x);
  // The line search usually accepts its first trial, and the gradient is then wanted
  // at the same point: V's gradient is taken with its value (one pass, one atan2 per
  // hinge) and kept for gradient().
  const double v = potential_.value_and_gradient(mid_, grad_at_point_);
  gradient_point_ = x;
  gradient_cached_ = true;
  return kinetic / (2.0 * p.h * p.h) + v + damping_term(p, x, nullptr) + planes;
}

double ImplicitTickSolver::damping_term(const TickProblem& p, const Eigen::VectorXd& x,
                                        Eigen::VectorXd* g) {
  if (settings_.rayleigh_beta <= 0.0) return 0.0;
  // The gradient is taken where the line search last evaluated E: one product D δ
  // serves both (bit for bit the same numbers).
  if (!damping_cached_ || !(damping_at_.array() == x.array()).all()) {
    damping_at_ = x;
    delta_ = x - p.q_tilde;
    damping_force_ = damping_ * delta_;
    damping_value_ = delta_.dot(damping_force_) / (2.0 * p.h);
    damping_cached_ = true;
  }
  if (g) *g += damping_force_ / p.h;
  return damping_value_;
}

void ImplicitTickSolver::gradient(const TickProblem& p, const Eigen::VectorXd& x,
                                  Eigen::VectorXd& g) {
  if (!potential_gradient_at(x)) {
    evaluation_point(p, x);
    potential_.gradient(mid_, grad_at_point_);
    gradient_point_ = x;
    gradient_cached_ = true;
  }
  const Eigen::VectorXd& grad_v = grad_at_point_;
  const std::size_t n = p.mass->size();
  g.resize(3 * static_cast<Eigen::Index>(n));
  for (std::size_t a = 0; a < n; ++a) {
    if (!(*p.free)[a]) {
      g.segment<3>(3 * a).setZero();
      continue;
    }
    g.segment<3>(3 * a) = (*p.mass)[a] / (p.h * p.h) * (x.segment<3>(3 * a) - p.y.segment<3>(3 * a)) +
                          settings_.theta * grad_v.segment<3>(3 * a);
  }
  for (const TickPlane& c : p.planes) c.add_gradient(x, g, [&](Index a) { return (*p.free)[a]; });
  if (settings_.rayleigh_beta > 0.0) {
    damping_term(p, x, &g);
    for (std::size_t a = 0; a < n; ++a)
      if (!(*p.free)[a]) g.segment<3>(3 * a).setZero();
  }
}

bool ImplicitTickSolver::factor(const TickProblem& p, const Eigen::VectorXd& x) {
  evaluation_point(p, x);
  potential_.hessian(mid_, hessian_, /*project_psd=*/true);
  hessian_ *= settings_.theta * settings_.theta;
  if (settings_.rayleigh_beta > 0.0) {
    // Same elements, same assembly: D has hessian_'s compressed pattern.
    assert(damping_.nonZeros() == hessian_.nonZeros());
    Eigen::Map<Eigen::VectorXd>(hessian_.valuePtr(), hessian_.nonZeros()) +=
        Eigen::Map<const Eigen::VectorXd>(damping_.valuePtr(), damping_.nonZeros()) / p.h;
  }
  const std::vector<bool>& free = *p.free;
  // Prescribed rows and columns leave the system (filter), keeping the pattern.
  for (int k = 0; k < hessian_.outerSize(); ++k)
    for (BodyPotential::Sparse::InnerIterator it(hessian_, k); it; ++it)
      if (!free[it.row() / 3] || !free[it.col() / 3]) it.valueRef() = 0.0;
  for (std::size_t a = 0; a < p.mass->size(); ++a)
    for (int r = 0; r < 3; ++r) {
      const auto i = static_cast<Eigen::Index>(3 * a + r);
      hessian_.coeffRef(i, i) += (*p.mass)[a] / (p.h * p.h);
    }
  // A plane's blocks k w_i w_j n nᵀ. An obstacle plane's couple vertices of one
  // triangle, which its membrane element already couples; a self-contact plane's may
  // couple vertices no element does, outside the potential's pattern. Newton needs
  // them (without them its steps are those of a wrong Hessian, as stiff as the planes:
  // on the reef knot 120 iterations per tick and unconverged ticks once the ribbons
  // pressed on themselves, docs/phantom.md), so they are inserted and the pattern is
  // analysed again. NCG's preconditioner, refreshed once in many ticks, takes such a
  // plane's diagonal blocks only (a sum of PSD blocks, so the factor stays SPD; NCG's
  // gradient is exact either way).
  const bool exact = settings_.kind == ImplicitSolverKind::ProjectedNewton;
  bool extended = false;
  const auto take = [&](Index a) { return free[a]; };
  for (const TickPlane& c : p.planes) {
    bool in_pattern = true;
    c.add_hessian(x, take, [&](Index a, Index b, const Mat3&) {
      in_pattern = in_pattern && (a == b || has_entry(hessian_, 3 * a, 3 * b));
    });
    const bool diagonal_only = !in_pattern && !exact;
    extended = extended || (!in_pattern && exact);
    c.add_hessian(x, take, [&](Index a, Index b, const Mat3& H) {
      if (diagonal_only && a != b) return;
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) hessian_.coeffRef(3 * a + r, 3 * b + k) += H(r, k);
    });
  }
  // The pattern is the potential's unless Newton's planes extended it (the next
  // assembly starts from the potential's again): analyse whenever either factor's
  // pattern was extended, since equal counts would not prove equal patterns.
  hessian_.makeCompressed();
  if (extended || analyzed_extended_ || analyzed_nonzeros_ != hessian_.nonZeros()) {
    analyzed_extended_ = extended;
    analyzed_nonzeros_ = hessian_.nonZeros();
    cholesky_.reset_pattern();  // the next factorisation analyses this one
  }
  ++factorizations_;
  have_factor_ = cholesky_.try_cholesky(hessian_);
  return have_factor_;
}

void ImplicitTickSolver::apply_inverse(const Eigen::VectorXd& b, Eigen::VectorXd& out) {
  cholesky_.solve(b, out);
}

double ImplicitTickSolver::line_search(const TickProblem& p, Eigen::VectorXd& x,
                                       const Eigen::VectorXd& g, const Eigen::VectorXd& d,
                                       double& e) {
  // Energies are sums of large terms: below this, differences are rounding.
  const double noise = 1e-13 * (std::abs(e) + 1.0);
  const LineSearchResult r = armijo_line_search(e, g.dot(d), noise, [&](double alpha) {
    trial_ = x + alpha * d;
    return energy(p, trial_);
  });
  if (r.accepted()) {
    x.swap(trial_);
    e = r.energy;
  }
  return r.step;
}

TickReport ImplicitTickSolver::solve(const TickProblem& p, Eigen::VectorXd& x) {
  TickReport report;
  const bool newton = settings_.kind == ImplicitSolverKind::ProjectedNewton;
  const bool refresh = !newton && (!have_factor_ || ticks_since_refresh_ >= settings_.refresh);
  // D = β K_mat: Newton evaluates it at each tick's start; NCG only when it refreshes
  // its preconditioner (a K_mat a few ticks old is still PSD with translations in its
  // null space, so the damping stays dissipative and exerts no net force, but it damps
  // rotations made since). Neither schedule is robust: a fresh D misses the released
  // card's instability, an old one brakes spin (docs/phantom.md, "Damping").
  damping_cached_ = false;  // a new q̃ and h, perhaps a new D and a new V (wind)
  gradient_cached_ = false;
  if (settings_.rayleigh_beta > 0.0 && (newton || refresh || damping_.nonZeros() == 0)) {
    potential_.material_stiffness(p.q_tilde, damping_);
    damping_ *= settings_.rayleigh_beta;
  }
  // Convergence scale: the two parts of the gradient at x = q̃.
  ConvergenceTest test;
  {
    double inertia = 0.0;
    for (std::size_t a = 0; a < p.mass->size(); ++a)
      if ((*p.free)[a])
        inertia += std::pow((*p.mass)[a] / (p.h * p.h), 2) *
                   (p.q_tilde.segment<3>(3 * a) - p.y.segment<3>(3 * a)).squaredNorm();
    potential_.gradient(p.q_tilde, grad_v_);
    double force = 0.0;
    for (std::size_t a = 0; a < p.mass->size(); ++a)
      if ((*p.free)[a]) force += grad_v_.segment<3>(3 * a).squaredNorm();
    test = ConvergenceTest(settings_.tolerance,
                           gradient_scale({std::sqrt(inertia), settings_.theta * std::sqrt(force)}));
    report.threshold = test.threshold;
  }
  Eigen::VectorXd g, d, z;
  NcgHistory ncg;  // Polak–Ribière+'s last z and g
  double e = energy(p, x);  // first: it takes ∇V too, which gradient() then reuses
  gradient(p, x, g);
  int since_factor = 0;        // iterations since the factor was made or the tick began
  bool factor_fresh = refresh;  // the factor was made at this tick's current iterate
  if (refresh) {
    factor(p, x);
    ticks_since_refresh_ = 0;
  }
  ++ticks_since_refresh_;
  for (; report.iterations < settings_.max_iterations; ++report.iterations) {
    report.gradient_norm = g.norm();
    if (test.met(report.gradient_norm)) {
      report.converged = true;
      break;
    }
    if (newton) {
      if (!factor(p, x)) break;
      apply_inverse(g, d);
      d = -d;
    } else {
      apply_inverse(g, z);
      ncg_direction(g, z, report.iterations == 0, ncg, d);
    }
    // A step below the rounding of the positions cannot change x: the gradient is at
    // its floating-point floor (stiff terms), which counts as converged.
    if (step_negligible(d.lpNorm<Eigen::Infinity>(), x.lpNorm<Eigen::Infinity>(), 1e-13, 1.0)) {
      report.converged = true;
      break;
    }
    const double alpha = line_search(p, x, g, d, e);
    // NCG with a stale preconditioner can stall: refactor at the current iterate (a
    // failed line search, or `stall_iterations` since the last factorisation without
    // convergence) and restart. A line search that fails on a fresh factor ends the tick.
    const bool failed_on_fresh = alpha == 0.0 && factor_fresh;
    factor_fresh = false;
    ++since_factor;
    const bool stalled = !newton && !failed_on_fresh &&
                         (alpha == 0.0 || since_factor == settings_.stall_iterations);
    if (stalled) {
      since_factor = 0;
      factor_fresh = true;
      factor(p, x);
      ticks_since_refresh_ = 1;
      gradient(p, x, g);
      apply_inverse(g, z);
      ncg_direction(g, z, /*restart=*/true, ncg, d);
      if (alpha == 0.0) {
        if (line_search(p, x, g, d, e) == 0.0) break;
        factor_fresh = false;
      }
    } else if (alpha == 0.0) {
      break;
    }
    gradient(p, x, g);
  }
  report.gradient_norm = g.norm();
  report.converged = report.converged || test.met(report.gradient_norm);
  return report;
}

}  // namespace clockwork
