#include "integrators/implicit/backward_euler.hpp"

#include "integrators/implicit/energy_safeguard.hpp"
#include "integrators/solvers/nonlinear.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace clockwork {

namespace {
using Sparse = TetFemModel::Sparse;

/// Newton iterations allowed to the energy safeguard's re-solve of a linearised step
/// (the default max_newton of a Newton step).
constexpr int kSafeguardNewton = 50;

/// What a step assembles, from the model and the settings.
struct StepForm {
  bool clamp;       ///< element Hessians projected to PSD (LocalClamp)
  /// Linear FEM: K is constant and PSD (projection changes nothing), so both damping
  /// forms are D = αM + βK and everything uses the one K assembled once.
  bool constant_k;
  bool at_end;      ///< damping with the tangent at the step's end (TangentAtEnd, β > 0)
};

StepForm step_form(const TetFemModel& model, const BackwardEulerSettings& s) {
  const bool constant_k = model.kind() == FemKind::Linear;
  return {s.fix == DefinitenessFix::LocalClamp, constant_k,
          s.rayleigh_beta != 0.0 && !constant_k && s.damping == RayleighDamping::TangentAtEnd};
}
}  // namespace

struct BackwardEuler::Workspace {
  explicit Workspace(const BackwardEulerSettings& s)
      : solver(s.linear, s.cg_tolerance, s.cg_max_iterations) {}

  SparseSpdSolver solver;
  /// Linear FEM: K, hence the Hessian, is constant for a given h and set of prescribed
  /// vertices, so it is assembled and factorised once: `factored_h` is the h of the
  /// factorisation held by `solver` (0: none), `factored_mu` its regularisation.
  double factored_h = 0.0;
  double factored_mu = 0.0;
  // The free unknowns: for a full dof (3n), its reduced index or −1 (prescribed).
  std::vector<bool> fixed;
  bool have_pattern = false;
  /// Vertex pairs outside the stiffness pattern that planes couple (kept in H's pattern).
  std::vector<std::pair<Index, Index>> extra;
  std::vector<int> reduced_of;
  std::vector<int> full_of;  ///< reduced → full dof
  /// For each entry of the model's stiffness pattern, its index among the reduced
  /// Hessian's values, or −1 (a prescribed row or column).
  std::vector<int> value_map;
  std::vector<int> diagonal;  ///< reduced dof → index of its diagonal value
  Sparse H;                   ///< reduced Hessian, fixed pattern
  Sparse K, K0;               ///< stiffness at the iterate, at x_n (damping)
  Vector mass;                ///< lumped mass per dof (3n)
  Vector hv, u, trial, x, f_int, g, g_free, d_free, d, Ku, Hd, d_guess;
  Vector v_prev;  ///< the last step's starting velocity (the iterative solvers' guess)
  std::span<TickPlane> planes;  ///< the current step's contact planes
  Vector fc, xc;                ///< the planes' gradient (3n); an iterate's positions
  /// Linear FEM: the held factorisation has plane blocks in it (reused only without).
  bool factored_with_planes = false;
};

BackwardEuler::BackwardEuler(const TetFemModel& model, BackwardEulerSettings settings)
    : model_(model), settings_(settings), ws_(std::make_unique<Workspace>(settings)) {
  const std::vector<double>& m = model_.lumped_mass();
  ws_->mass.resize(3 * static_cast<Eigen::Index>(m.size()));
  for (std::size_t a = 0; a < m.size(); ++a) ws_->mass.segment<3>(3 * a).setConstant(m[a]);
}

BackwardEuler::~BackwardEuler() = default;
BackwardEuler::BackwardEuler(BackwardEuler&&) noexcept = default;

namespace {

/// Builds the reduced Hessian pattern (free rows and columns of the stiffness pattern,
/// plus the 3×3 blocks of the vertex pairs `extra`) and the maps into it. Runs when
/// `fixed` or `extra` changes.
void build_reduced_pattern(const Sparse& K, const std::vector<bool>& fixed, std::size_t n,
                           const std::vector<std::pair<Index, Index>>& extra,
                           std::vector<int>& reduced_of, std::vector<int>& full_of,
                           std::vector<int>& value_map, std::vector<int>& diagonal, Sparse& H) {
  reduced_of.assign(3 * n, -1);
  full_of.clear();
  for (std::size_t i = 0; i < 3 * n; ++i)
    if (fixed.empty() || !fixed[i / 3]) {
      reduced_of[i] = static_cast<int>(full_of.size());
      full_of.push_back(static_cast<int>(i));
    }
  const auto nr = static_cast<Eigen::Index>(full_of.size());
  std::vector<Eigen::Triplet<double>> t;
  value_map.assign(static_cast<std::size_t>(K.nonZeros()), -1);
  for (Eigen::Index c = 0; c < K.outerSize(); ++c)
    for (Sparse::InnerIterator it(K, c); it; ++it)
      if (reduced_of[it.row()] >= 0 && reduced_of[c] >= 0)
        t.emplace_back(reduced_of[it.row()], reduced_of[c], 0.0);
  for (const auto& [a, b] : extra)
    for (int q = 0; q < 3; ++q)
      for (int p = 0; p < 3; ++p) {
        const int r = reduced_of[3 * static_cast<std::size_t>(a) + p];
        const int c = reduced_of[3 * static_cast<std::size_t>(b) + q];
        if (r >= 0 && c >= 0) t.emplace_back(r, c, 0.0);
      }
  H.resize(nr, nr);
  H.setFromTriplets(t.begin(), t.end());
  H.makeCompressed();
  if (extra.empty()) {
    // Column-major traversal of K restricted to free entries visits H's entries in order.
    int k = 0;
    for (Eigen::Index c = 0; c < K.outerSize(); ++c)
      for (Sparse::InnerIterator it(K, c); it; ++it)
        if (reduced_of[it.row()] >= 0 && reduced_of[c] >= 0)
          value_map[static_cast<std::size_t>(&it.valueRef() - K.valuePtr())] = k++;
  } else {
    const int* outer = H.outerIndexPtr();
    const int* inner = H.innerIndexPtr();
    for (Eigen::Index c = 0; c < K.outerSize(); ++c)
      for (Sparse::InnerIterator it(K, c); it; ++it) {
        const int r = reduced_of[it.row()], rc = reduced_of[c];
        if (r < 0 || rc < 0) continue;
        const int* at = std::lower_bound(inner + outer[rc], inner + outer[rc + 1], r);
        value_map[static_cast<std::size_t>(&it.valueRef() - K.valuePtr())] = static_cast<int>(at - inner);
      }
  }
  diagonal = diagonal_positions(H);
}

/// Appends to `extra` the free vertex pairs of plane p whose block is not in H.
void add_missing_blocks(const TickPlane& p, const Sparse& H, const std::vector<int>& reduced_of,
                        std::vector<std::pair<Index, Index>>& extra) {
  const int* outer = H.outerIndexPtr();
  const int* inner = H.innerIndexPtr();
  for (int i = 0; i < TickPlane::kMaxVertices; ++i)
    for (int j = 0; j < TickPlane::kMaxVertices; ++j) {
      if (p.weights[i] == 0.0 || p.weights[j] == 0.0) continue;
      const int r = reduced_of[3 * static_cast<std::size_t>(p.vertices[i])];
      const int c = reduced_of[3 * static_cast<std::size_t>(p.vertices[j])];
      if (r < 0 || c < 0) continue;
      const int* at = std::lower_bound(inner + outer[c], inner + outer[c + 1], r);
      if (at == inner + outer[c + 1] || *at != r) extra.emplace_back(p.vertices[i], p.vertices[j]);
    }
}

}  // namespace

BackwardEulerReport BackwardEuler::step(double h, Vector& x_io, Vector& v_io, const Vector& f_ext,
                                        const std::vector<bool>& fixed, std::span<TickPlane> planes) {
  const std::size_t n = model_.vertex_count();
  const auto N = static_cast<Eigen::Index>(3 * n);
  if (!(h > 0.0) || !std::isfinite(h))
    throw std::invalid_argument("BackwardEuler::step: timestep h = " + std::to_string(h) +
                                " is not positive");
  if (x_io.size() != N || v_io.size() != N || f_ext.size() != N ||
      (!fixed.empty() && fixed.size() != n))
    throw std::invalid_argument("BackwardEuler::step: x, v, f_ext must have 3n = " +
                                std::to_string(N) + " entries and fixed n or none");
  Workspace& w = *ws_;
  const BackwardEulerSettings& s = settings_;
  const double alpha = s.rayleigh_alpha, beta = s.rayleigh_beta;
  const StepForm form = step_form(model_, s);
  const bool clamp = form.clamp, constant_k = form.constant_k, at_end = form.at_end;
  const bool at_start = beta != 0.0 && !at_end;

  if (constant_k && w.K.nonZeros() == 0) model_.hessian(x_io, w.K, clamp);
  // Planes between vertices no tet couples (bodies stepped together, joint_solids.hpp)
  // widen the pattern, which then keeps those blocks: Newton without them converges
  // like a Jacobi iteration over the stiff plane.
  bool rebuilt = false;
  if (!w.have_pattern || w.fixed != fixed) {
    // The reduced indices change: the planes' blocks are looked for anew.
    if (w.K.nonZeros() == 0) model_.hessian(x_io, w.K, clamp);
    w.extra.clear();
    build_reduced_pattern(w.K, fixed, n, w.extra, w.reduced_of, w.full_of, w.value_map, w.diagonal, w.H);
    rebuilt = true;
  }
  const std::size_t had_extra = w.extra.size();
  for (const TickPlane& p : planes) add_missing_blocks(p, w.H, w.reduced_of, w.extra);
  if (w.extra.size() != had_extra)
    build_reduced_pattern(w.K, fixed, n, w.extra, w.reduced_of, w.full_of, w.value_map, w.diagonal, w.H);
  if (rebuilt || w.extra.size() != had_extra) {
    w.solver.reset_pattern();
    w.fixed = fixed;
    w.have_pattern = true;
    w.factored_h = 0.0;
  }
  // Damping stiffness at x_n, projected (D stays PSD: damping never adds energy).
  const Sparse& K0 = constant_k ? w.K : w.K0;
  if (at_start && !constant_k) model_.hessian(x_io, w.K0, true);
  const Eigen::Index nr = w.H.rows();
  const auto is_free = [&](std::size_t a) { return fixed.empty() || !fixed[a]; };

  w.planes = planes;
  w.hv = h * v_io;
  w.u.setZero(N);
  bool moved = false;  // a prescribed vertex moves: x_n + u₀ ≠ x_n
  for (std::size_t a = 0; a < n; ++a)
    if (!is_free(a)) {
      w.u.segment<3>(3 * a) = w.hv.segment<3>(3 * a);
      moved = moved || !w.hv.segment<3>(3 * a).isZero(0.0);
    }

  if (s.max_newton == 1 && !planes.empty()) {
    // The one solve keeps the planes its prediction lands behind (header).
    w.xc = x_io + w.hv;
    for (TickPlane& p : planes)
      if (!p.friction) p.two_sided = p.violation(x_io) > 0.0 || p.violation(w.xc) > 0.0;
  }
  const auto plane_energy = [&](const Vector& x) {
    double e = 0.0;
    for (const TickPlane& p : planes) e += p.value(x);
    return e;
  };
  const auto everywhere = [](Index) { return true; };
  // Whether a plane pushes at the iterate x_n + u (its blocks then join the Hessian).
  const auto pushing = [&](const Vector& x_n) {
    if (planes.empty()) return false;
    w.xc = x_n + w.u;
    return std::any_of(planes.begin(), planes.end(),
                       [&](const TickPlane& p) { return p.two_sided || p.violation(w.xc) > 0.0; });
  };

  // g(u) and its gradient M (u − h v_n) + h² (f_int(x_n + u) − f_ext) + h D u; with the
  // damping at the step's end there is no g, only this residual with D(x_n + u).
  double magnitude = 0.0;  // Σ |parts| of the last objective: the scale of its rounding
  const auto objective = [&](const Vector& u) {
    w.x = x_io + u;
    const double inertia = 0.5 * (u - w.hv).cwiseAbs2().dot(w.mass);
    const double elastic = h * h * model_.value(w.x);
    const double external = -h * h * f_ext.dot(u);
    double damping = 0.5 * h * alpha * u.cwiseAbs2().dot(w.mass);
    if (at_start) {
      w.Ku.noalias() = K0 * u;
      damping += 0.5 * h * beta * u.dot(w.Ku);
    }
    magnitude = std::abs(inertia) + std::abs(elastic) + std::abs(external) + std::abs(damping);
    if (planes.empty()) return inertia + elastic + external + damping;
    const double contact = h * h * plane_energy(w.x);
    magnitude += contact;
    return inertia + elastic + external + damping + contact;
  };
  double reference = 0.0;
  const auto gradient = [&](const Vector& u, bool measure) {
    w.x = x_io + u;
    model_.gradient(w.x, w.f_int);
    if (at_start) w.Ku.noalias() = K0 * u;
    if (at_end) model_.stiffness_product(w.x, u, w.Ku);
    w.g_free.resize(nr);
    if (!planes.empty()) {
      w.fc.setZero(N);
      for (const TickPlane& p : planes) p.add_gradient(w.x, w.fc, everywhere);
    }
    double parts[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
    for (Eigen::Index r = 0; r < nr; ++r) {
      const int i = w.full_of[r];
      const double inertia = w.mass[i] * (u[i] - w.hv[i]);
      const double damping = h * (alpha * w.mass[i] * u[i] + (beta != 0.0 ? beta * w.Ku[i] : 0.0));
      w.g_free[r] = inertia + h * h * (w.f_int[i] - f_ext[i]) + damping;
      if (!planes.empty()) {
        w.g_free[r] += h * h * w.fc[i];
        if (measure) parts[4] += w.fc[i] * w.fc[i];
      }
      if (measure) {
        parts[0] += inertia * inertia;
        parts[1] += w.f_int[i] * w.f_int[i];
        parts[2] += f_ext[i] * f_ext[i];
        parts[3] += damping * damping;
      }
    }
    if (measure)
      reference = gradient_scale({std::sqrt(parts[0]), h * h * (std::sqrt(parts[1]) + std::sqrt(parts[2])),
                                  std::sqrt(parts[3]), h * h * std::sqrt(parts[4])});
    return w.g_free.norm();
  };

  BackwardEulerReport report;
  double g_norm = gradient(w.u, true);
  const ConvergenceTest test(s.tolerance, reference);
  report.threshold = test.threshold;
  double e = at_end ? 0.0 : objective(w.u);
  // Newton's iterations from w.u: `linearised`, the one full step of max_newton = 1;
  // otherwise with line search, up to `cap` solves in all. False: a factorisation failed.
  const auto newton = [&](int cap, bool linearised) {
    while (report.newton_iterations < cap && !test.met(g_norm)) {
      if (constant_k && w.factored_h == h && !w.factored_with_planes && !pushing(x_io)) {
        report.regularization = std::max(report.regularization, w.factored_mu);
      } else if (!factor_hessian(h, x_io, moved, report)) {
        return false;
      }
      w.g_free *= -1.0;
      report.linear_iterations += solve_newton_system(h, g_norm, reference, report);
      ++report.newton_iterations;
      w.d.setZero(N);
      for (Eigen::Index r = 0; r < nr; ++r) w.d[w.full_of[r]] = w.d_free[r];

      if (linearised) {  // Zhao eq. (5): the full linearised step
        w.u += w.d;
        g_norm = gradient(w.u, false);
        break;
      }
      double t = 0.0;
      if (at_end) {
        // No objective: backtrack on the residual's norm. The Jacobian leaves out the
        // third-derivative term β (∂K/∂x · d) u, so a full step is not always a descent.
        double g_trial = 0.0;
        t = backtrack([&](double step) {
          w.trial = w.u + step * w.d;
          g_trial = gradient(w.trial, false);
          return g_trial < g_norm;
        });
        if (t == 0.0) {
          report.at_rounding_floor = true;
          break;
        }
        w.u.swap(w.trial);
        g_norm = g_trial;
      } else {
        // Backtracking line search, Armijo condition g(u + t d) ≤ g(u) + c t ∇gᵀd.
        const double slope = -w.g_free.dot(w.d_free);  // g_free holds −∇g here
        const LineSearchResult ls = armijo_line_search(e, slope, 1e-13 * magnitude, [&](double step) {
          w.trial = w.u + step * w.d;
          return objective(w.trial);
        });
        if (!ls.descent) break;  // not a descent direction (fix None)
        if (ls.accepted()) {
          w.u.swap(w.trial);
          e = ls.energy;
        }
        t = ls.step;
        g_norm = gradient(w.u, false);
        if (!ls.accepted()) {
          report.at_rounding_floor = true;
          break;
        }
      }
      // A step below the rounding of the displacement cannot change u any more.
      if (step_negligible(t * w.d.lpNorm<Eigen::Infinity>(), w.u.lpNorm<Eigen::Infinity>(), 1e-15)) {
        report.at_rounding_floor = true;
        break;
      }
    }
    return true;
  };
  bool factored = newton(s.max_newton, s.max_newton == 1);
  if (factored && s.max_newton == 1 && s.energy_safeguard && !moved) {
    // The energy safeguard (energy_safeguard.hpp): the linearised step's landing state
    // against its start; prescribed vertices are at rest (!moved), so do no work.
    w.x = x_io + w.u;
    w.trial = v_io;
    for (std::size_t a = 0; a < n; ++a)
      if (is_free(a)) w.trial.segment<3>(3 * a) = w.u.segment<3>(3 * a) / h;
    const EnergyBalance balance = step_energy_balance(model_, model_.lumped_mass(), x_io, v_io, w.x,
                                                      w.trial, f_ext, h, planes);
    // A landing behind a plane the one solve did not hold is re-solved too
    // (unheld_plane_energy): Newton's planes are one-sided and act where it lands.
    if (balance.gained() || unheld_plane_energy(planes, w.x) > balance.tolerance) {
      // Re-solve the step properly: Newton with line search, the planes one-sided as in
      // a Newton step, from the better of the linearised iterate and Newton's own start
      // u₀ (= 0, nothing prescribed moves): the linearised iterate of a blown-up step
      // can lie far beyond the minimiser.
      report.safeguarded = true;
      for (TickPlane& p : planes)
        if (!p.friction) p.two_sided = false;
      w.trial.setZero(N);
      if (at_end) {
        const double g_linear = gradient(w.u, false);
        if (!(g_linear <= gradient(w.trial, false))) w.u.swap(w.trial);
      } else if (!(objective(w.u) <= objective(w.trial))) {
        w.u.swap(w.trial);
      }
      g_norm = gradient(w.u, false);
      e = at_end ? 0.0 : objective(w.u);
      factored = newton(report.newton_iterations + kSafeguardNewton, false);
    }
  }
  if (!factored) {
    report.factorization_failed = true;
    report.gradient_norm = g_norm;
    return report;  // x, v untouched
  }
  report.gradient_norm = g_norm;
  report.converged = test.met(g_norm);
  if (std::none_of(fixed.begin(), fixed.end(), [](bool f) { return f; }))
    shift_to_exact_momentum(h, x_io, v_io, f_ext);
  if (s.linear != LinearSolverKind::Cholesky) w.v_prev = v_io;
  for (std::size_t a = 0; a < n; ++a)
    if (is_free(a)) v_io.segment<3>(3 * a) = w.u.segment<3>(3 * a) / h;
  x_io += w.u;
  return report;
}

int BackwardEuler::solve_newton_system(double h, double g_norm, double scale,
                                       const BackwardEulerReport& report) {
  Workspace& w = *ws_;
  const BackwardEulerSettings& s = settings_;
  if (s.linear == LinearSolverKind::Cholesky) return w.solver.solve(w.g_free, w.d_free);
  // Inexact Newton (Dembo, Eisenstat & Steihaug 1982): a Newton step needs its linear
  // solve only to a relative residual η ~ ||∇g|| / scale (which keeps the convergence
  // quadratic; capped at 1e-2) — for linear FEM, where one exact step is the answer,
  // to 0 — and never beyond the point where this step alone passes the convergence
  // test (η ≥ 0.1 threshold / ||∇g||). cg_tolerance is the floor, and the whole
  // requirement of the linearised step (max_newton = 1).
  double eta = s.cg_tolerance;
  if (s.max_newton > 1) {
    const double quadratic = model_.kind() == FemKind::Linear ? 0.0 : std::min(1e-2, g_norm / scale);
    eta = std::max({eta, quadratic, 0.1 * report.threshold / g_norm});
  }
  // The first iteration starts from a guess of u's free rows — the velocity extrapolated
  // from the last step, h (2 v_n − v_{n−1}), or held, h v_n — whichever lowers the
  // quadratic model q(d) = ½ dᵀHd − bᵀd more, if below q(0) = 0: then every CG iterate
  // is a descent direction, as it is from 0.
  bool guess = false;
  if (report.newton_iterations == 0) {
    const Eigen::Index nr = w.H.rows();
    const auto model_value = [&](const Vector& d) {
      w.Hd.noalias() = w.H * d;
      return 0.5 * d.dot(w.Hd) - w.g_free.dot(d);
    };
    w.d_free.resize(nr);
    for (Eigen::Index r = 0; r < nr; ++r) w.d_free[r] = w.hv[w.full_of[r]] - w.u[w.full_of[r]];
    double q = model_value(w.d_free);
    if (w.v_prev.size() == w.hv.size()) {
      w.d_guess.resize(nr);
      for (Eigen::Index r = 0; r < nr; ++r) {
        const int i = w.full_of[r];
        w.d_guess[r] = 2.0 * w.hv[i] - h * w.v_prev[i] - w.u[i];
      }
      const double q_extrapolated = model_value(w.d_guess);
      if (q_extrapolated < q) {
        w.d_free.swap(w.d_guess);
        q = q_extrapolated;
      }
    }
    guess = q < 0.0;
  }
  return w.solver.solve(w.g_free, w.d_free, eta, guess);
}

bool BackwardEuler::factor_hessian(double h, const Vector& x_n, bool moved,
                                   BackwardEulerReport& report) {
  Workspace& w = *ws_;
  const BackwardEulerSettings& s = settings_;
  const double alpha = s.rayleigh_alpha, beta = s.rayleigh_beta;
  const StepForm form = step_form(model_, s);
  const bool clamp = form.clamp, constant_k = form.constant_k, at_end = form.at_end;
  // Stiffness at the iterate. At the first iterate x_n (nothing prescribed moves) the
  // projected K is the damping's K₀, already assembled.
  const Sparse* K = &w.K;
  if (constant_k) {
    // assembled once
  } else if (report.newton_iterations == 0 && !moved && clamp && beta != 0.0 && !at_end) {
    K = &w.K0;
  } else {
    w.x = x_n + w.u;
    model_.hessian(w.x, w.K, clamp);
  }
  const Sparse& Kd = constant_k || at_end ? *K : w.K0;
  // Hessian (1 + hα) M + h β K_d + h² K(x) on the free unknowns; with the damping at the
  // step's end K_d = K(x) too (the Jacobian without the derivative of K(x) in D(x) v).
  const Eigen::Index nr = w.H.rows();
  double* H = w.H.valuePtr();
  std::fill(H, H + w.H.nonZeros(), 0.0);
  const double* kv = K->valuePtr();
  const double* dv = Kd.valuePtr();
  for (std::size_t k = 0; k < w.value_map.size(); ++k)
    if (w.value_map[k] >= 0)
      H[w.value_map[k]] = h * h * kv[k] + (beta != 0.0 ? h * beta * dv[k] : 0.0);
  for (Eigen::Index r = 0; r < nr; ++r) H[w.diagonal[r]] += (1.0 + h * alpha) * w.mass[w.full_of[r]];
  const bool with_planes = add_plane_hessian(h, x_n);

  // The incomplete-Cholesky preconditioner is refreshed once per step, at its first
  // iteration; the later iterations' matrices are close to that one.
  const bool refresh = report.newton_iterations == 0;
  bool factored = false;
  double mu = 0.0;
  if (s.fix == DefinitenessFix::GlobalRegularization) {
    // Lecture notes, "Definiteness-fix, Opt 1": H + μI, μ ×10 until Cholesky succeeds.
    const Regularization fix = regularize_until_factored(
        w.H, w.diagonal, [&](const Sparse& A) { return w.solver.try_cholesky(A); });
    factored = fix.factored;
    mu = fix.mu;
    report.regularizations += fix.increases;
    report.regularization = std::max(report.regularization, mu);
    if (factored && s.linear != LinearSolverKind::Cholesky) factored = w.solver.factorize(w.H, refresh);
  } else {
    factored = w.solver.factorize(w.H, refresh);
  }
  if (factored && constant_k) {
    w.factored_h = h;
    w.factored_mu = mu;
    w.factored_with_planes = with_planes;
  }
  return factored;
}

bool BackwardEuler::add_plane_hessian(double h, const Vector& x_n) {
  Workspace& w = *ws_;
  if (w.planes.empty()) return false;
  w.xc = x_n + w.u;
  double* H = w.H.valuePtr();
  const int* outer = w.H.outerIndexPtr();
  const int* inner = w.H.innerIndexPtr();
  bool any = false;
  const auto is_free = [&](Index a) { return w.reduced_of[3 * static_cast<std::size_t>(a)] >= 0; };
  const auto add = [&](Index a, Index b, const Mat3& block) {
    for (int q = 0; q < 3; ++q) {
      const int c = w.reduced_of[3 * static_cast<std::size_t>(b) + q];
      for (int p = 0; p < 3; ++p) {
        const int r = w.reduced_of[3 * static_cast<std::size_t>(a) + p];
        const int* at = std::lower_bound(inner + outer[c], inner + outer[c + 1], r);
        // A pair of vertices no tet couples: left out (the gradient stays exact).
        if (at != inner + outer[c + 1] && *at == r) H[at - inner] += h * h * block(p, q);
      }
    }
  };
  for (const TickPlane& p : w.planes) {
    if (!p.two_sided && !(p.violation(w.xc) > 0.0)) continue;
    any = true;
    p.add_hessian(w.xc, is_free, add);
  }
  return any;
}

void BackwardEuler::shift_to_exact_momentum(double h, const Vector& x_n, const Vector& v_n,
                                            const Vector& f_ext) {
  Workspace& w = *ws_;
  const double alpha = settings_.rayleigh_alpha;
  const std::size_t n = model_.vertex_count();
  // R = Σ m ((1 + hα) u − h v_n) − h² Σ (f_ext + f_planes); A δ = −R with
  // A = (1 + hα) Σ m I + h² Σ_pushing k s² n nᵀ, s the plane's weight on the body.
  Vec3 residual = Vec3::Zero();
  double total = 0.0;
  for (std::size_t a = 0; a < n; ++a) {
    const double m = w.mass[static_cast<Eigen::Index>(3 * a)];
    residual += m * ((1.0 + h * alpha) * w.u.segment<3>(3 * a) - h * v_n.segment<3>(3 * a)) -
                h * h * f_ext.segment<3>(3 * a);
    total += m;
  }
  Mat3 A = (1.0 + h * alpha) * total * Mat3::Identity();
  if (!w.planes.empty()) {
    w.xc = x_n + w.u;
    for (const TickPlane& p : w.planes) {
      const double v = p.violation(w.xc);
      if (v == 0.0 && !p.two_sided) continue;
      const double weight = p.weights.sum();
      // f_planes on the body: k v s n; its change under a shift δ: −k s² n nᵀ δ.
      residual -= h * h * p.stiffness * v * weight * p.normal;
      A += h * h * p.stiffness * weight * weight * p.normal * p.normal.transpose();
    }
  }
  if (!(total > 0.0)) return;
  const Vec3 delta = A.ldlt().solve(-residual);
  if (!delta.allFinite()) return;
  for (std::size_t a = 0; a < n; ++a) w.u.segment<3>(3 * a) += delta;
}

}  // namespace clockwork
