#include "integrators/schroeder/schroeder_scheme.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

namespace clockwork {

namespace {

const char* scheme_name(SchroederScheme s) {
  return s == SchroederScheme::SemiImplicit    ? "semi-implicit"
         : s == SchroederScheme::FullyImplicit ? "fully-implicit"
                                               : "asynchronous";
}

std::vector<std::size_t> select(const std::vector<bool>& flags, bool want) {
  std::vector<std::size_t> out;
  for (std::size_t t = 0; t < flags.size(); ++t)
    if (flags[t] == want) out.push_back(t);
  return out;
}

}  // namespace

void validate_schroeder_settings(const SchroederSettings& s) {
  const auto bad = [](const std::string& what) { throw std::invalid_argument(what); };
  const bool needs_frame = s.scheme != SchroederScheme::SemiImplicit;
  if (needs_frame && !(s.frame_dt > 0.0 && std::isfinite(s.frame_dt)))
    bad(fmt::format("{} scheme: frame time {} s must be positive and finite", scheme_name(s.scheme),
                    s.frame_dt));
  if (!needs_frame && !(s.frame_dt >= 0.0 && std::isfinite(s.frame_dt)))
    bad(fmt::format("semi-implicit scheme: frame time {} s must be non-negative and finite",
                    s.frame_dt));
  if (!(s.substep >= 0.0 && std::isfinite(s.substep)))
    bad(fmt::format("substep {} s must be positive (or 0 for automatic)", s.substep));
  if (!(s.safety > 0.0 && s.safety <= 1.0))
    bad(fmt::format("safety {} is outside (0, 1]", s.safety));
  if (!(s.epsilon >= 0.0 && s.epsilon <= 1.0))
    bad(fmt::format("epsilon {} is outside [0, 1]", s.epsilon));
  if (!(s.rayleigh_alpha >= 0.0) || !(s.rayleigh_beta >= 0.0))
    bad(fmt::format("Rayleigh damping ({}, {}) must be non-negative", s.rayleigh_alpha,
                    s.rayleigh_beta));
  if (!(s.cg_tolerance > 0.0) || s.cg_max_iterations < 1)
    bad(fmt::format("CG tolerance {} must be positive and max iterations {} at least 1",
                    s.cg_tolerance, s.cg_max_iterations));
  if (s.scheme == SchroederScheme::Asynchronous && s.substep > 0.0) {
    const double ratio = s.frame_dt / s.substep;
    if (ratio < 1.0 - 1e-9 || std::abs(ratio - std::round(ratio)) > 1e-9 * ratio)
      bad(fmt::format("frame time {} s is not a multiple of the substep {} s (ratio {})",
                      s.frame_dt, s.substep, ratio));
  }
  for (const StaticCollider& c : s.colliders) validate_static_collider(c);
}

void SchroederStepper::add_colliders(const std::vector<StaticCollider>& colliders) {
  for (const StaticCollider& c : colliders) validate_static_collider(c);
  settings_.colliders.insert(settings_.colliders.end(), colliders.begin(), colliders.end());
}

std::vector<bool> tets_touching_faces(const std::vector<std::array<Index, 4>>& tets,
                                      const std::vector<std::array<Index, 3>>& faces,
                                      std::size_t vertex_count) {
  std::vector<bool> on_face(vertex_count, false);
  for (const auto& f : faces)
    for (Index a : f) on_face[a] = true;
  std::vector<bool> out(tets.size(), false);
  for (std::size_t t = 0; t < tets.size(); ++t)
    for (Index a : tets[t]) out[t] = out[t] || on_face[a];
  return out;
}

/// One linear system of a position or velocity update:
///   M Δv + P_ε B Δv = P_ε (t_E f_E(x) + t_I f_I(x) − B v) + t_g f_g,
///   B = m_damp α_R M + k_E K_E + k_I K_I.
SchroederStepper::SchroederStepper(const TetFemModel& model,
                                   const std::vector<TetMaterial>& materials,
                                   const std::vector<bool>& semi_tets, std::vector<bool> fixed,
                                   const Vec3& gravity, SchroederSettings settings)
    : model_(model), settings_(std::move(settings)), fixed_(std::move(fixed)), gravity_(gravity) {
  validate_schroeder_settings(settings_);
  const std::size_t n = model_.vertex_count(), m = model_.tet_count();
  if (fixed_.empty()) fixed_.assign(n, false);
  if (fixed_.size() != n)
    throw std::invalid_argument(fmt::format("{} fixed flags for {} vertices", fixed_.size(), n));
  std::vector<bool> semi(m, settings_.scheme == SchroederScheme::SemiImplicit);
  if (settings_.scheme == SchroederScheme::Asynchronous) {
    if (semi_tets.size() != m)
      throw std::invalid_argument(
          fmt::format("{} partition flags for {} tets", semi_tets.size(), m));
    semi = semi_tets;
  }
  if (materials.size() != m)
    throw std::invalid_argument(fmt::format("{} materials for {} tets", materials.size(), m));
  // The element sets reuse the model's element code: two TetFemModels over the same
  // vertices, each with its tets (their own lumped masses are unused; M is the body's).
  std::vector<Vec3> rest(n);
  for (std::size_t a = 0; a < n; ++a) rest[a] = model_.rest_positions().segment<3>(3 * a);
  const auto build = [&](bool want) -> std::unique_ptr<TetFemModel> {
    const std::vector<std::size_t> ids = select(semi, want);
    if (ids.empty()) return nullptr;
    std::vector<std::array<Index, 4>> tets;
    std::vector<TetMaterial> mats;
    for (std::size_t t : ids) {
      tets.push_back(model_.tets()[t]);
      mats.push_back(materials[t]);
    }
    return std::make_unique<TetFemModel>(rest, std::move(tets), mats, model_.kind());
  };
  model_E_ = build(true);
  model_I_ = build(false);
  n_semi_tets_ = model_E_ ? model_E_->tet_count() : 0;

  mass3_.resize(3 * n);
  inv_sqrt_mass3_.resize(3 * n);
  free3_.resize(3 * n);
  for (std::size_t a = 0; a < n; ++a) {
    const double ma = model_.lumped_mass()[a];
    mass3_.segment<3>(3 * a).setConstant(ma);
    free3_.segment<3>(3 * a).setConstant(fixed_[a] ? 0.0 : 1.0);
    inv_sqrt_mass3_.segment<3>(3 * a).setConstant(fixed_[a] ? 0.0 : 1.0 / std::sqrt(ma));
  }
  colliding_.assign(n, -1);
  solve_ext_.setZero(3 * n);
  half_ext_.setZero(3 * n);
  event_ext_.setZero(3 * n);
  half_dv_.setZero(3 * n);
  event_v_.setZero(3 * n);
  f_ext_.resize(3 * n);
  rotation_.setZero(3 * n);
  for (std::size_t a = 0; a < n; ++a)
    f_ext_.segment<3>(3 * a) = fixed_[a] ? Vec3::Zero() : Vec3(model_.lumped_mass()[a] * gravity_);
  any_fixed_ = std::find(fixed_.begin(), fixed_.end(), true) != fixed_.end();

  // Stiffness at rest: constant for linear FEM; the stability estimate for both.
  const Vector& X = model_.rest_positions();
  if (model_E_) model_E_->hessian(X, K_E_, true);
  if (model_I_) model_I_->hessian(X, K_I_, true);
  x_KE_ = X;
  x_KI_ = X;

  // ω_max² = λ_max(M^{-1/2} K_E M^{-1/2}) over the free DOFs, by power iteration
  // (deterministic start; 200 iterations give a few digits, the safety factor covers
  // the rest).
  if (model_E_) {
    Vector y(3 * n), z(3 * n);
    for (Eigen::Index i = 0; i < y.size(); ++i) y[i] = std::sin(0.7 * double(i) + 0.3);
    y = y.cwiseProduct(free3_);
    double lambda = 0.0;
    for (int it = 0; it < 200 && y.norm() > 0.0; ++it) {
      y /= y.norm();
      z = inv_sqrt_mass3_.cwiseProduct(K_E_ * inv_sqrt_mass3_.cwiseProduct(y));
      lambda = y.dot(z);
      y = z;
    }
    omega_max_ = std::sqrt(std::max(lambda, 0.0));
  }
  // §3.1's scheme on ẍ = −ω² x has the amplification matrix (in x, Δt v)
  // [[1 − θ²/2, 1], [−θ²(1 − θ²/2), 1 − θ²]], θ = ω Δt: det 1 − θ²/2, trace 2 − 3θ²/2,
  // an eigenvalue below −1 once θ > √2. So Δt = safety · √2 / ω_max (not leapfrog's 2/ω).
  const double stable = omega_max_ > 0.0 ? settings_.safety * std::sqrt(2.0) / omega_max_ : kNever;
  if (settings_.substep * settings_.safety > stable &&
      settings_.scheme != SchroederScheme::FullyImplicit)
    spdlog::warn(
        "{} scheme: the substep {} s exceeds the semi-implicit elements' stability "
        "limit √2/ω_max = {} s; expect blow-up",
        scheme_name(settings_.scheme), settings_.substep, stable / settings_.safety);
  switch (settings_.scheme) {
    case SchroederScheme::SemiImplicit:
      dt_ = settings_.substep > 0.0 ? settings_.substep : stable;
      if (!std::isfinite(dt_))
        throw std::invalid_argument(
            "semi-implicit scheme: no elastic element to set the step; give a substep");
      if (settings_.frame_dt > 0.0) {
        p_ = std::max(1, static_cast<int>(std::ceil(settings_.frame_dt / dt_ - 1e-9)));
        dt_ = settings_.frame_dt / p_;
      }
      break;
    case SchroederScheme::FullyImplicit:
      dt_ = settings_.frame_dt;
      p_ = 1;
      break;
    case SchroederScheme::Asynchronous:
      if (settings_.substep > 0.0) {
        p_ = static_cast<int>(std::lround(settings_.frame_dt / settings_.substep));
      } else {
        p_ = std::isfinite(stable)
                 ? std::max(1, static_cast<int>(std::ceil(settings_.frame_dt / stable - 1e-9)))
                 : 1;
      }
      dt_ = settings_.frame_dt / p_;
      break;
  }
  // §4.3: the fully-implicit forces are evolved over Δt_frame − Δt/2 in the coupled
  // half step, i.e. α (Δt/2).
  alpha_ = settings_.scheme == SchroederScheme::Asynchronous
               ? (2.0 * settings_.frame_dt - dt_) / dt_
               : 1.0;
  if (settings_.scheme == SchroederScheme::Asynchronous && model_I_) {
    std::vector<bool> in(n, false);
    double edges = 0.0;
    for (const auto& t : model_I_->tets())
      for (int i = 0; i < 4; ++i) {
        in[t[i]] = !fixed_[t[i]];
        for (int j = i + 1; j < 4; ++j)
          edges += (X.segment<3>(3 * t[i]) - X.segment<3>(3 * t[j])).norm();
      }
    interior_edge_ = edges / (6.0 * static_cast<double>(model_I_->tet_count()));
    std::vector<Index> subset;
    for (Index a = 0; a < n; ++a)
      if (in[a]) subset.push_back(a);
    interior_ = ForceDistribution(std::move(subset), model_.lumped_mass());
    if (settings_.epsilon > 0.0) dist_ = interior_;
  }
}

SchroederStepper::~SchroederStepper() = default;

bool SchroederStepper::next_step_coupled() const {
  return settings_.scheme != SchroederScheme::SemiImplicit && k_ == p_ - 1;
}

double SchroederStepper::elastic_energy(const Vector& x) const {
  return (model_E_ ? model_E_->value(x) : 0.0) + (model_I_ ? model_I_->value(x) : 0.0);
}

void SchroederStepper::ensure_stiffness(const Vector& x, bool need_E, bool need_I, bool refresh) {
  if (model_.kind() == FemKind::Linear) return;  // K constant, assembled at rest
  // Corotational: the PSD-projected tangent at x when asked to refresh (the coupled
  // step's elastic solves; the first substep of a frame), else the last one — the
  // damping-only solves of the other substeps keep the frame's K (an assembly with
  // 12×12 eigen-decompositions per tet costs more than the rest of a substep).
  if (need_E && model_E_ && (refresh || x_KE_.size() == 0) && x_KE_ != x) {
    model_E_->hessian(x, K_E_, true);
    x_KE_ = x;
  }
  if (need_I && model_I_ && (refresh || x_KI_.size() == 0) && x_KI_ != x) {
    model_I_->hessian(x, K_I_, true);
    x_KI_ = x;
  }
}

void SchroederStepper::apply_B(const Coefficients& c, const Vector& y, Vector& out) {
  out = (c.m_damp * settings_.rayleigh_alpha) * mass3_.cwiseProduct(y);
  if (c.k_E != 0.0 && model_E_) {
    kb_.noalias() = K_E_ * y;
    out += c.k_E * kb_;
  }
  if (c.k_I != 0.0 && model_I_) {
    kb_.noalias() = K_I_ * y;
    out += c.k_I * kb_;
  }
}

void SchroederStepper::solve(const Vector& x, const Vector& v, const Coefficients& c, Vector& dv) {
  const Eigen::Index N = x.size();
  const double eps = c.project ? settings_.epsilon : 0.0;
  const bool use_E = model_E_ && (c.t_E != 0.0 || c.k_E != 0.0);
  const bool use_I = model_I_ && (c.t_I != 0.0 || c.k_I != 0.0);
  const bool implicit = (use_E && c.k_E != 0.0) || (use_I && c.k_I != 0.0) ||
                        c.m_damp * settings_.rayleigh_alpha != 0.0;
  if (c.project) dist_.update(x);
  if (implicit)
    ensure_stiffness(x, use_E && c.k_E != 0.0, use_I && c.k_I != 0.0,
                     k_ == 0 || next_step_coupled());

  // r = t_E f_E(x) + t_I f_I(x) − B v (the non-gravity forces × time), f = −∇E.
  r_.setZero(N);
  if (use_E && c.t_E != 0.0) {
    model_E_->gradient(x, f_E_);
    r_ -= c.t_E * f_E_;
  }
  if (use_I && c.t_I != 0.0) {
    model_I_->gradient(x, f_I_);
    r_ -= c.t_I * f_I_;
  }
  if (implicit) {
    apply_B(c, v, tmp_);
    r_ -= tmp_;
  }
  r_ = r_.cwiseProduct(free3_);

  if (implicit) {
    // CG on (Π_ε + Π_ε B̃ Π_ε) u = Π_ε r̃ in mass-scaled unknowns, from the free-fall
    // answer u₀ = t_g M^{1/2} g (B annihilates it but for round-off and α_R).
    b_ = inv_sqrt_mass3_.cwiseProduct(r_);
    for (Eigen::Index i = 0; i < N; ++i)
      b_[i] += free3_[i] * c.t_g * gravity_[i % 3] * mass3_[i] * inv_sqrt_mass3_[i];
    for (const Contact& k : contacts_)
      b_.segment<3>(3 * k.vertex) += k.friction / std::sqrt(mass3_[3 * k.vertex]);
    dist_.apply_scaled(b_, eps);
    u_.resize(N);
    for (Eigen::Index i = 0; i < N; ++i)
      u_[i] = free3_[i] * c.t_g * gravity_[i % 3] * mass3_[i] * inv_sqrt_mass3_[i];
    // §6 contacts: the normal component of u_a = √m_a Δv_a is prescribed; CG runs in
    // the complement (filtered residuals and directions, [BW98] §5.3).
    for (const Contact& k : contacts_) {
      auto ua = u_.segment<3>(3 * k.vertex);
      const double sqrt_m = std::sqrt(mass3_[3 * k.vertex]);
      if (k.stick)
        ua = sqrt_m * k.target;
      else
        ua += (sqrt_m * k.normal.dot(k.target) - k.normal.dot(ua)) * k.normal;
    }
    // Jacobi preconditioner when nothing is projected (Π_ε = I): diag of I + B̃.
    diag_.setOnes(N);
    if (!c.project || dist_.empty() || eps == 0.0) {
      diag_.array() += c.m_damp * settings_.rayleigh_alpha;
      if (c.k_E != 0.0 && model_E_)
        diag_ +=
            c.k_E * K_E_.diagonal().cwiseProduct(inv_sqrt_mass3_).cwiseProduct(inv_sqrt_mass3_);
      if (c.k_I != 0.0 && model_I_)
        diag_ +=
            c.k_I * K_I_.diagonal().cwiseProduct(inv_sqrt_mass3_).cwiseProduct(inv_sqrt_mass3_);
    }
    const auto op = [&](const Vector& in, Vector& out) {
      tmp2_ = in;
      dist_.apply_scaled(tmp2_, eps);  // Π_ε u
      z_ = inv_sqrt_mass3_.cwiseProduct(tmp2_);
      apply_B(c, z_, tmp_);  // B M^{-1/2} Π_ε u
      out = inv_sqrt_mass3_.cwiseProduct(tmp_);
      dist_.apply_scaled(out, eps);  // Π_ε B̃ Π_ε u
      out += tmp2_;
    };
    // [BW98]'s modified PCG (nonlinear.hpp), the §6 contacts its filter.
    const PcgReport cg = pcg(
        op, [&](const Vector& r, Vector& z) { z = r.cwiseQuotient(diag_); },
        [&](Vector& y) { filter_contacts(y); }, b_, u_,
        PcgSettings{settings_.cg_tolerance, settings_.cg_max_iterations, PcgRule::Filtered}, pcg_);
    if (!cg.converged) ++counters_.unconverged;
    const int it = cg.iterations;
    ++counters_.solves;
    counters_.cg_iterations += static_cast<std::uint64_t>(it);
    counters_.max_cg_iterations = std::max(counters_.max_cg_iterations, it);
    // The constraint impulses: the system with them is A u = b + Σ n_a J_a/√m_a.
    if (!contacts_.empty()) {
      op(u_, q_);
      for (Contact& k : contacts_) {
        const Vec3 J = std::sqrt(mass3_[3 * k.vertex]) *
                       (q_.segment<3>(3 * k.vertex) - b_.segment<3>(3 * k.vertex));
        k.impulse = k.normal.dot(J);
        k.tangential = tangential_part(J, k.normal);
        k.applied = J + k.friction;
      }
    }
    // Δv = M^{-1/2} Π_ε u, shifted rigidly so that its momentum is exactly that of the
    // forces: the K terms of B have no net force (translation invariance) and P_ε keeps
    // the net force, so (1 + m_damp α_R) Σ m Δv = Σ r + t_g Σ f_g; CG's residual may
    // carry a net force, the shift removes it. (Re-evaluating the forces with the
    // solution instead, §4.2.2, amplifies the residual by (ω Δt)² at frame-size steps.)
    dist_.apply_scaled(u_, eps);
    dv.resize(N);
    dv = inv_sqrt_mass3_.cwiseProduct(u_);
    // The constrained components exactly as prescribed (M^{-1/2} M^{1/2} rounds): a
    // particle held at rest must keep exactly v + (−v) = 0, not −v δ, which would shrink
    // geometrically into subnormal velocities over the steps it rests.
    for (const Contact& k : contacts_) {
      auto da = dv.segment<3>(3 * k.vertex);
      if (k.stick)
        da = k.target;
      else
        da += (k.normal.dot(k.target) - k.normal.dot(da)) * k.normal;
    }
    if (!any_fixed_ && contacts_.empty()) {  // (obstacles take momentum)
      Vec3 target = Vec3::Zero(), have = Vec3::Zero();
      double total = 0.0;
      for (Eigen::Index a = 0; a < N / 3; ++a) {
        const double ma = mass3_[3 * a];
        target += r_.segment<3>(3 * a) + c.t_g * ma * gravity_;
        have += ma * dv.segment<3>(3 * a);
        total += ma;
      }
      target /= 1.0 + c.m_damp * settings_.rayleigh_alpha;
      const Vec3 shift = (target - have) / total;
      for (Eigen::Index a = 0; a < N / 3; ++a) dv.segment<3>(3 * a) += shift;
    }
    record_external(v, c, dv);
    return;
  }
  // Explicit: Δv = M⁻¹ (P_ε r + t_g f_g), the distributed forces plus gravity on every
  // particle.
  dist_.apply_force(r_, eps);
  dv.resize(N);
  for (Eigen::Index i = 0; i < N; ++i)
    dv[i] = free3_[i] * (r_[i] / mass3_[i] + c.t_g * gravity_[i % 3]);
  for (Contact& k : contacts_) {  // M is diagonal: each constraint on its own
    auto da = dv.segment<3>(3 * k.vertex);
    da += k.friction / mass3_[3 * k.vertex];
    const Vec3 change = k.stick ? Vec3(k.target - da) : Vec3(k.normal.dot(k.target - da) * k.normal);
    da += change;
    const Vec3 J = mass3_[3 * k.vertex] * change;
    k.impulse = k.normal.dot(J);
    k.tangential = tangential_part(J, k.normal);
    k.applied = J + k.friction;
  }
  record_external(v, c, dv);
}

void SchroederStepper::record_external(const Vector& v, const Coefficients& c, const Vector& dv) {
  const double damp = c.m_damp * settings_.rayleigh_alpha;
  for (Eigen::Index i = 0; i < v.size(); ++i)
    solve_ext_[i] = free3_[i] * mass3_[i] * (c.t_g * gravity_[i % 3] - damp * (v[i] + dv[i]));
  for (const Contact& k : contacts_) solve_ext_.segment<3>(3 * k.vertex) += k.applied;
}

void SchroederStepper::position_update(const Vector& x, Vector& v, Vector& w) {
  if (!event_open_) open_event(v);  // the first step: no velocity update before it
  touched_ = touched_ || (settings_.scheme == SchroederScheme::Asynchronous && model_I_ &&
                          (near_collider(x, v) || interior_deforming(x, v)));
  coupled_ = next_step_coupled() || touched_;
  // §4.3's α for a coupled step after m − 1 uncoupled substeps: the I forces were
  // ignored for (m − ½) Δt when v½ is reached, α = (2 m Δt − Δt)/Δt (m = p: the frame's).
  alpha_now_ = settings_.scheme == SchroederScheme::Asynchronous ? 2.0 * (uncoupled_ + 1) - 1.0 : 1.0;
  const Coefficients c = update_coefficients(true, coupled_, dt_);
  if (constrain_contacts()) {
    // The particles held at the end of the last step seed the contact set, aimed at
    // the surface again.
    for (Contact& k : contacts_) {
      const Vec3 xa = x.segment<3>(3 * k.vertex);
      const auto cl = settings_.colliders[k.collider].closest(xa);
      k = new_contact(k.vertex, k.collider, cl.normal,
                      landing(xa, v.segment<3>(3 * k.vertex), cl.normal, cl.point));
    }
    solve_with_contacts(x, v, c, true);
  } else {
    contacts_.clear();
    solve(x, v, c, dv_);
  }
  safeguard_update(x, v, c, 0.5 * dt_);  // decision 15 (fully implicit, no contacts)
  w = v + dv_;
  event_ext_ += solve_ext_;  // (held in w only: taken back by the next event)
  // The constrained particles land on the surface, friction part of their solve (vⁿ is
  // left as it was: the constrained velocity update sets their final contact).
  for (const Contact& k : contacts_) {
    colliding_[k.vertex] = k.collider;
    ++counters_.collisions;
  }
  // §6 as printed: reduce the normal velocity so that xⁿ⁺¹ = xⁿ + Δt w lands on the
  // surface (the nearest surface point of the unconstrained end), with friction from
  // that impulse; the same impulse goes to vⁿ (collisions are applied to vⁿ, v^{n+½}
  // and xⁿ⁺¹ in [SSF08]'s order). With the constraints this only catches what their
  // last round left.
  for (std::size_t a = 0; a < fixed_.size(); ++a) {
    if (fixed_[a]) continue;
    for (std::size_t j = 0; j < settings_.colliders.size(); ++j) {
      const StaticCollider& body = settings_.colliders[j];
      auto wa = w.segment<3>(3 * a);
      const auto cl = body.closest(x.segment<3>(3 * a) + dt_ * wa);
      if (cl.distance >= 0.0) {
        // Landed on the surface by a constraint released in the last round: the
        // final contact step still sees it.
        if (cl.distance < kOnSurface && colliding_[a] < 0) {
          colliding_[a] = static_cast<int>(j);
          ++counters_.collisions;
        }
        continue;
      }
      if (cl.distance > -kOnSurface) {  // on the surface: no push (see landing)
        if (colliding_[a] < 0) ++counters_.collisions;
        colliding_[a] = static_cast<int>(j);
        continue;
      }
      const double dwn = -cl.distance / dt_;  // > 0
      const Vec3 before = wa;
      wa += dwn * cl.normal;
      apply_friction(static_cast<Index>(a), body, cl.normal, mass3_[3 * a] * dwn, w);
      v.segment<3>(3 * a) += wa - before;
      event_ext_.segment<3>(3 * a) += mass3_[3 * a] * (wa - before);
      if (colliding_[a] < 0) ++counters_.collisions;
      colliding_[a] = static_cast<int>(j);
    }
  }
  keep_angular_momentum(x, v, w);
  // Decision 16 (fully implicit, no contacts), after the rotation: the split steps
  // start from vⁿ with it, so they turn it too (added after them, it would drift along
  // straight lines over the whole frame). A split step's L is not exact.
  check_whole_step(x, v, w);
}

SchroederStepper::Coefficients SchroederStepper::update_coefficients(bool position, bool coupled,
                                                                     double dt) const {
  // A position update evolves the forces over h = Δt/2, a velocity update over Δt.
  const double h = position ? 0.5 * dt : dt;
  const double beta = settings_.rayleigh_beta;
  Coefficients c;
  c.t_E = h;
  c.t_g = h;
  c.m_damp = h;
  c.k_E = h * beta;
  if (coupled) {
    // §4.3 with the §4.1 scaling of I: f̂ = α f, ∂f̂/∂v = α ∂f/∂v; the position argument
    // xⁿ + α h v½ (∂f̂/∂x h-weighted: α h · α h K_I). The velocity update is backward
    // Euler with every force at xⁿ⁺¹ + Δt vⁿ⁺¹.
    if (!position) c.k_E += h * h;
    c.t_I = alpha_now_ * h;
    c.k_I = alpha_now_ * h * beta + alpha_now_ * alpha_now_ * h * h;
  } else {
    c.project = settings_.scheme == SchroederScheme::Asynchronous && !dist_.empty();
  }
  return c;
}

void SchroederStepper::velocity_update(const Vector& x1, Vector& v) {
  open_event(v);
  const bool coupled = coupled_;
  const Coefficients c = update_coefficients(false, coupled, dt_);
  contacts_.clear();
  if (take_prepared_velocity_update(x1, v, c)) {
    // Solved ahead by the whole-step check (decision 16): no contacts, nothing collided.
  } else if (constrain_contacts()) {
    // §6's final contact step as constraints: the particles that collided end with
    // no normal velocity (released if that would pull them onto the surface).
    for (std::size_t a = 0; a < fixed_.size(); ++a) {
      if (colliding_[a] < 0) continue;
      const Vec3 n = settings_.colliders[colliding_[a]].closest(x1.segment<3>(3 * a)).normal;
      contacts_.push_back(
          new_contact(static_cast<Index>(a), colliding_[a], n, -v.segment<3>(3 * a)));
    }
    solve_with_contacts(x1, v, c, false);
    safeguard_update(x1, v, c, dt_);
    std::erase_if(contacts_, [](const Contact& k) { return k.impulse < 0.0; });
  } else {
    solve(x1, v, c, dv_);
    safeguard_update(x1, v, c, dt_);
  }
  v += dv_;
  event_ext_ += solve_ext_;
  // §6 final contact step as printed: the particles that collided keep no approaching
  // normal velocity (friction from that impulse).
  for (std::size_t a = 0; a < fixed_.size(); ++a) {
    if (colliding_[a] < 0) continue;
    const StaticCollider& body = settings_.colliders[colliding_[a]];
    const Vec3 n = body.closest(x1.segment<3>(3 * a)).normal;
    auto va = v.segment<3>(3 * a);
    const double vn = n.dot(va);
    if (vn < 0.0) {
      const Vec3 before = va;
      va -= vn * n;
      apply_friction(static_cast<Index>(a), body, n, mass3_[3 * a] * -vn, v);
      event_ext_.segment<3>(3 * a) += mass3_[3 * a] * (va - before);
    }
    colliding_[a] = -1;
  }
  ++counters_.steps;
  if (coupled) ++counters_.coupled_steps;
  uncoupled_ = coupled ? 0 : uncoupled_ + 1;
  if (k_ == p_ - 1) touched_ = false;
  coupled_ = false;
  k_ = (k_ + 1) % p_;
}

void SchroederStepper::step(Vector& x, Vector& v) {
  position_update(x, v, w_);
  x += dt_ * w_;
  velocity_update(x, v);
}

}  // namespace clockwork
