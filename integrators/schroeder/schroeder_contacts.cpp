// The §6 contacts of SchroederStepper as constraints of its solves: the active set,
// friction (sticking, sliding, held), the landing targets, and the tests that couple an
// asynchronous substep (near a collider, interior deforming). The stepper itself:
// integrators/schroeder/schroeder_scheme.cpp; the design: integrators/schroeder/schroeder_scheme.hpp and
// docs/schroeder.md, decisions 7, 9–12.
#include <algorithm>
#include <cmath>

#include "integrators/schroeder/schroeder_scheme.hpp"

namespace clockwork {

void SchroederStepper::filter_contacts(Vector& y) const {
  for (const Contact& k : contacts_) {
    auto ya = y.segment<3>(3 * k.vertex);
    if (k.stick)
      ya.setZero();
    else
      ya = tangential_part(ya, k.normal);
  }
}

void SchroederStepper::apply_friction(Index a, const StaticCollider& body, const Vec3& n,
                                      double impulse, Vector& y) const {
  auto ya = y.segment<3>(3 * a);
  const Vec3 tangential = tangential_part(ya, n);
  const double t = tangential.norm();
  if (t > 0.0 && impulse > 0.0)
    ya -= std::min(t, body.friction * impulse / mass3_[3 * a]) / t * tangential;
}

bool SchroederStepper::constrain_contacts() const {
  return settings_.constrain_collisions && !settings_.colliders.empty();
}

SchroederStepper::Contact SchroederStepper::new_contact(Index a, int collider, const Vec3& n,
                                                        const Vec3& target) const {
  Contact k;
  k.vertex = a;
  k.collider = collider;
  k.normal = n;
  k.target = target;
  k.stick = settings_.colliders[collider].friction > 0.0;  // it sticks while friction holds it
  return k;
}

bool SchroederStepper::near_collider(const Vector& x, const Vector& v) const {
  if (!contacts_.empty()) return true;
  for (std::size_t a = 0; a < fixed_.size(); ++a) {
    if (fixed_[a]) continue;
    const Vec3 xa = x.segment<3>(3 * a), va = v.segment<3>(3 * a);
    for (const StaticCollider& body : settings_.colliders)
      if (body.closest(xa).distance < kOnSurface ||
          body.closest(xa + 2.0 * dt_ * va).distance < kOnSurface)
        return true;
  }
  return false;
}

bool SchroederStepper::interior_deforming(const Vector& x, const Vector& v) {
  if (interior_.empty() || !settings_.couple_deforming_interior) return false;
  interior_.update(x);
  const double rms =
      std::sqrt(2.0 * interior_.deformation_kinetic_energy(v) / interior_.total_mass());
  return rms * settings_.frame_dt > kInteriorDrift * interior_edge_;
}

Vec3 SchroederStepper::landing(const Vec3& x, const Vec3& v, const Vec3& n, const Vec3& s) const {
  // A particle already on the surface (to kOnSurface) stays where it is: aiming at the
  // exact surface again leaves x + Δt (−d/Δt) = d δ (δ the rounding, ~1e-16), a depth
  // that shrinks geometrically each step into subnormal coordinates (5e-309 in frames).
  const double depth = n.dot(s - x);
  return (std::abs(depth) < kOnSurface ? 0.0 : depth / dt_) * n - v;
}

void SchroederStepper::solve_with_contacts(const Vector& x, const Vector& v, const Coefficients& c,
                                           bool add_crossing) {
  const std::size_t n = fixed_.size();
  for (int round = 1;; ++round) {
    solve(x, v, c, dv_);
    // Let the sticking contacts outside the friction cone slide, release those that
    // pull, add the particles that would cross; then solve again.
    bool changed = false;
    for (Contact& k : contacts_) {
      const double limit = settings_.colliders[k.collider].friction * std::max(k.impulse, 0.0);
      if (k.stick) {
        const double t = k.tangential.norm();
        if (!k.held && t > limit * (1.0 + 1e-9)) {
          k.stick = false;  // at the cone's edge, along the impulse that held it
          k.friction = limit / t * k.tangential;
          changed = true;
        }
      } else if (k.friction != Vec3::Zero()) {
        // Kinetic friction: μ J_n against the slide (a change of the impulse or of the
        // direction alone does not call for another solve: it lags one round).
        const Vec3 u = v.segment<3>(3 * k.vertex) + dv_.segment<3>(3 * k.vertex);
        const Vec3 slide = tangential_part(u, k.normal);
        // A slide the friction impulse reversed: it was more than the impulse that stops
        // the particle (see below).
        k.overshot = slide.dot(k.friction) > 0.0;
        if (k.overshot) {
          // The particle sticks again, and stays so for the rest of the update (no
          // cycling): see the end of this function.
          k.stick = k.held = true;
          k.overshot = false;
          k.friction.setZero();
          changed = true;
          continue;
        }
        const Vec3 along = slide.norm() > 0.0 ? Vec3(-slide) : k.friction;
        k.friction = limit / along.norm() * along;
      }
    }
    // A particle released in this update is not added again (no cycling): the §6
    // response after the solve catches it if it crosses.
    for (const Contact& k : contacts_)
      if (k.impulse < 0.0) released_.push_back(k.vertex);
    const std::size_t before = contacts_.size();
    std::erase_if(contacts_, [](const Contact& k) { return k.impulse < 0.0; });
    changed = changed || contacts_.size() != before;
    if (add_crossing) {
      for (const Contact& k : contacts_) colliding_[k.vertex] = k.collider;
      for (Index a : released_) colliding_[a] = kReleased;
      for (std::size_t a = 0; a < n; ++a) {
        if (fixed_[a] || colliding_[a] != -1) continue;
        const Vec3 xa = x.segment<3>(3 * a), va = v.segment<3>(3 * a);
        const Vec3 end = xa + dt_ * (va + dv_.segment<3>(3 * a));
        for (std::size_t j = 0; j < settings_.colliders.size(); ++j) {
          const StaticCollider::Closest cl = settings_.colliders[j].closest(end);
          if (cl.distance >= 0.0) continue;
          // Land on the surface point nearest the unconstrained end (n·(x + Δt w) = n·s),
          // sticking (no tangential drift) while friction can hold it.
          contacts_.push_back(new_contact(static_cast<Index>(a), static_cast<int>(j), cl.normal,
                                          landing(xa, va, cl.normal, cl.point)));
          changed = true;
          break;
        }
      }
      for (const Contact& k : contacts_) colliding_[k.vertex] = -1;
      for (Index a : released_) colliding_[a] = -1;
    }
    if (!changed) break;
    if (round == kMaxContactRounds) {
      // The solved Δv keeps the last round's set; the §6 response after the solve
      // catches what it leaves crossing.
      ++counters_.contact_round_limit;
      break;
    }
    ++counters_.contact_resolves;
  }
  released_.clear();
  // Coulomb friction stops a slide, it never reverses it. The kinetic friction of a
  // sliding contact is a known impulse μ J_n of the solve; where that is more than the
  // impulse that stops the particle (its tangential velocity after the solve points
  // along the friction), the particle sticks instead. Without this the ball of
  // demos/schroeder_sphere.json never rested at frame steps: the heavily loaded contact
  // patch slid every update, friction reversing the slides by up to 0.5 m/s, and the
  // ball walked about the plane with 0.01–0.05 J of kinetic energy (docs/schroeder.md,
  // decision 11).
  // The contact sticks again and the update is solved anew (above), in both updates.
  // - In a position update Δv sets xⁿ⁺¹, so a particle stopped after the solve would
  //   sit where the solve had not put it, against neighbours moved as if it slid back.
  //   That created elastic energy: the fully-implicit demo ball dropped 15 cm with
  //   μ = .3 gained up to 10.7 J in one frame, inverted 8 tets and never rested.
  // - In a velocity update, stopping the particle after the solve leaves the friction
  //   impulse that reversed it in its neighbours: the implicit solve spread that
  //   external push through the body, and only the particle's own velocity was taken
  //   out. A fully-implicit bar resting on the ground (the sweep's
  //   bar_fully_implicit_15cm_mu0.5_damped_spin) went from 3.4e-3 J to 2.7e-2 J of
  //   kinetic energy in one velocity update whose 12 contacts all slid and ended at
  //   rest (their impulses did no work on them), and slid off at 0.12 m/s.
  // Only where the contact rounds ran out is the tangential velocity removed after the
  // solve (positions set or not, the last word).
  for (Contact& k : contacts_) {
    if (k.stick || !k.overshot) continue;
    auto da = dv_.segment<3>(3 * k.vertex);
    const Vec3 stop = -tangential_part(v.segment<3>(3 * k.vertex) + da, k.normal);
    da += stop;
    solve_ext_.segment<3>(3 * k.vertex) += mass3_[3 * k.vertex] * stop;  // friction's
    k.overshot = false;
  }
}

}  // namespace clockwork
