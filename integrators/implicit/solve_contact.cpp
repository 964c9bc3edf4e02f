#include "integrators/implicit/solve_contact.hpp"

#include <algorithm>

namespace clockwork {

void SolveContact::find(double time, double h, double speed, const Eigen::VectorXd& x,
                        const std::vector<bool>& fixed, const std::vector<double>& mass,
                        const Eigen::VectorXd* v) {
  planes_.clear();
  plane_features_.clear();
  planned_by_others_.clear();
  if (time != anchoring_time_) {
    if (anchoring_time_ >= 0.0) std::swap(stuck_, anchoring_);
    anchoring_time_ = time;
  }
  // How far a surface point can get from where it is over the step, doubled.
  if (obstacles_) {
    obstacles_(time, 2.0 * (obstacle_settings_.clearance + h * speed), features_);
    add_planes(time, h, x, fixed, mass, obstacle_settings_, v);
  }
  if (pairs_) {
    const double clearance = std::max(pair_settings_.clearance, pair_settings_.solid_clearance);
    pairs_(time, 2.0 * (clearance + h * speed), features_);
    add_planes(time, h, x, fixed, mass, pair_settings_, v);
  }
}

void SolveContact::add_planes(double time, double h, const Eigen::VectorXd& x, const std::vector<bool>& fixed,
                              const std::vector<double>& mass, const TickContactSettings& settings,
                              const Eigen::VectorXd* v) {
  // A solid's pair planes with another solid that carry friction: how many of them each
  // vertex (own, local; other, global) is in. A vertex in N such pairs (a face pressed
  // on a face: a vertex–face pair and edge pairs) would take N anchors, each holding the
  // vertex's whole load and each as stiff as the other point's whole inertia allows
  // (add_friction): N times the friction, and N times the recoil that stops the other
  // point — a staggered overshoot that grew without bound (a Schroeder block landing on
  // a backward-Euler block, 3.4 J -> 1.5e5 J in one frame).
  own_pairs_.clear();
  other_pairs_.clear();
  if (reduced_mass_ && settings.friction > 0.0) {
    own_pairs_.assign(x.size() / 3, 0);
    for (const TickContactFeature& f : features_) {
      if (!f.pair || !f.other_solid || f.planned_by_other) continue;
      for (int i = 0; i < TickPlane::kMaxVertices; ++i) {
        if (f.weights[i] != 0.0) ++own_pairs_[f.vertices[i]];
        if (f.other_weights[i] != 0.0) other_pairs_.push_back(f.others[i]);
      }
    }
    std::sort(other_pairs_.begin(), other_pairs_.end());
  }
  for (const TickContactFeature& f : features_) {
    if (f.planned_by_other) {
      for (int j = 0; j < TickPlane::kMaxVertices; ++j)
        if (f.other_weights[j] != 0.0) {
          planned_by_others_.push_back(f.others[j]);
          break;
        }
      continue;
    }
    if (f.pair && !self_pairs_ && (f.other_weights.array() == 0.0).all()) continue;
    Vec3 y = -f.point;
    double inverse_mass = 0.0;
    bool any_free = false;
    for (int i = 0; i < TickPlane::kMaxVertices; ++i) {
      if (f.weights[i] == 0.0) continue;
      const Index a = f.vertices[i];
      y += f.weights[i] * x.segment<3>(3 * static_cast<Eigen::Index>(a));
      if (fixed[a]) continue;
      inverse_mass += f.weights[i] * f.weights[i] / mass[a];
      any_free = true;
    }
    const double distance = y.norm();
    // The layers keep the sides apart; a pair at zero distance has no side.
    if (!any_free || !(distance > 1e-12 * (1.0 + f.point.norm()))) continue;
    TickPlane plane;
    plane.vertices = f.vertices;
    plane.weights = f.weights;
    plane.normal = y / distance;
    const bool series = f.pair && reduced_mass_ && f.other_solid;
    // An obstacle plane keeps the clearance (pushing a point inside it back out); a
    // pair's stops the approach below min(gap, clearance) without pushing apart.
    //
    // A backward-Euler or Zhao body's pair with another solid keeps 2 η(1)
    // (solid_clearance), as an obstacle plane does, so that its give stays out of the
    // first layer (a Zhao m = 1 block at 3 m/s: io/world/world_contact.cpp). At η(1)
    // the pair rested on the first layer's edge (sweep pair_be_be, two backward-Euler
    // blocks at 5 ms, a slow second contact at 0.14–0.19 s): the give let a corner into
    // layer 1, whose explicit impulses bounced the two faces apart between the steps;
    // the planning body then took the other face at that bounced (separating) velocity
    // and its planes did not push, and the other body's own step, which has no plane
    // for the pair, carried its face back into the layer. The layers' impulses on faces
    // whose elastic answer comes one step later added 3e-5 to 2.3e-4 J net per step:
    // +3.3e-3 J (5.7e-3 of E0) of elastic energy with the kinetic flat. At 2 η(1) no
    // layer fires and the climb is 2e-6 of E0
    // (tests/integrators/implicit/test_pair_energy.cpp). A cloth keeps η(1): at 2 η(1)
    // an explicit cloth under a backward-Euler or Zhao m = 1 block gained 2.3 % and
    // 147 % (io/world/world_contact.cpp for Zhao's pairs).
    const double clearance =
        series && settings.solid_clearance > 0.0 ? settings.solid_clearance : settings.clearance;
    const double gap = f.pair ? std::min(distance, clearance) : clearance;
    // A pair with another solid: its point does not move with the common velocity
    // during this step but with its own, plus the plane's reaction on its lumped mass
    // (applied at `time`): y_o(t + h) = p + h v_o − h² W_o k s, s the violation. The
    // plane on the own side is then a spring in series with that inertia,
    // k' = k / (1 + k h² W_o), at the offset of p + h v_o, and its impulse h k' s is
    // the one that moves the other point so (tests/integrators/implicit/test_pair_energy.cpp:
    // with the common velocity the other block's step carried its bottom 5 mm past the
    // plane's guess into the layers, 0.57 J -> 1.19 J). A cloth keeps the common
    // velocity: its vertex sits in many planes, each of which would take its whole
    // recoil (measured: the health check stopped an explicit cloth under a block).
    plane.offset = plane.normal.dot(f.point + h * (series ? f.other_velocity : f.velocity)) + gap;
    // κ times the inertia term of the point's effective mass (Σ w_i²/m_i)⁻¹ over the
    // unknowns — and, for a pair, over the other side too: that side takes the force
    // as an explicit impulse, h k v, which a light body (a cloth on a solid, masses
    // 1000× apart) cannot take at the solid's stiffness κ m/h² (Δv ~ κ (m/m_o) v/h: it
    // blew up at once). With the reduced mass the other side's explicit step stays
    // within κ.
    if (reduced_mass_) inverse_mass += f.other_inverse_mass;
    double kappa = settings.stiffness;
    if (v && !f.pair) {  // the give within a quarter of the clearance (find())
      Vec3 u = -f.velocity;
      for (int i = 0; i < TickPlane::kMaxVertices; ++i)
        if (f.weights[i] != 0.0) u += f.weights[i] * v->segment<3>(3 * static_cast<Eigen::Index>(f.vertices[i]));
      const double approach = -plane.normal.dot(u);
      if (approach > 0.0) kappa = std::max(kappa, 4.0 * approach * h / clearance);
    }
    plane.stiffness = kappa / (inverse_mass * h * h);
    // As stiff as the material behind the point (obstacles only: a pair's other side
    // takes the force explicitly, and a cloth kicked at the solid's stiffness blew up).
    if (!material_k_.empty() && !f.pair) {
      double k = 0.0;
      for (int i = 0; i < TickPlane::kMaxVertices; ++i)
        if (f.weights[i] != 0.0) k += std::abs(f.weights[i]) * material_k_[f.vertices[i]];
      plane.stiffness = std::max(plane.stiffness, 10.0 * k);
    }
    double load = 0.0;
    if (!load_.empty()) {  // carry the last step's load within c/4 (record_loads)
      for (int i = 0; i < TickPlane::kMaxVertices; ++i)
        if (f.weights[i] != 0.0) load += std::abs(f.weights[i]) * load_[f.vertices[i]];
      plane.stiffness = std::max(plane.stiffness, 4.0 * load / clearance);
    }
    // A solid's pair planes with another solid go in series with the other side's
    // inertia last, whatever raised k above: a plane's impulse h k' s then never
    // exceeds the one that stops the other point, s / (h W_o). Stiffened by the load
    // after that, k' was unbounded: a 5 ms block dropped onto a 10 ms one resting on the
    // ground met planes stiffened by the load the lower block's top carried from the
    // step before, which the ground held in place, and took 6.4 N s (|Δv| 5.7 m/s) in
    // one step where 1.3 N s stops it: 3.36 J -> 17.3 J
    // (tests/integrators/implicit/test_solid_stacks.cpp); a 5 ms block dropped onto a
    // Zhao m = 1 block on the ground, 3.4 J -> 37 J (sweep stack_zhao_m1_be, now never
    // above E0). (While Zhao's pairs kept η(1), the bound made two Zhao m = 1 blocks
    // climb back 1.2e-2 of E0; at 2 η(1) they climb 3e-4 with it.)
    if (series) plane.stiffness /= 1.0 + plane.stiffness * h * h * f.other_inverse_mass;
    planes_.push_back(plane);
    plane_features_.push_back(f);
    ++(f.pair ? pair_planes : obstacle_planes);
    // Friction on obstacle planes, and on a solid's pair planes with another solid, whose
    // reaction goes to that body's vertices at once (apply_impulses). Without it a
    // Schroeder block resting on a backward-Euler block slid off at the first tilt
    // (sweep stack_be_schroeder): the planes keep the faces out of the layers, whose
    // friction had held it. A cloth's pairs keep none (their layers hold the cloth).
    if (!f.pair && settings.friction > 0.0 && load > 0.0)
      add_friction(time, h, x, plane, f, settings.friction * load, v, 0.0);
    if (series && settings.friction > 0.0 && !load_.empty()) {
      // Each vertex's load shared among its pairs, and the other point's inertia among
      // the pairs of its most shared vertex (above).
      double share = 0.0;
      int most = 1;
      for (int i = 0; i < TickPlane::kMaxVertices; ++i) {
        if (f.weights[i] != 0.0) share += std::abs(f.weights[i]) * load_[f.vertices[i]] / own_pairs_[f.vertices[i]];
        if (f.other_weights[i] == 0.0) continue;
        const auto range = std::equal_range(other_pairs_.begin(), other_pairs_.end(), f.others[i]);
        most = std::max(most, static_cast<int>(range.second - range.first));
      }
      if (share > 0.0) add_friction(time, h, x, plane, f, settings.friction * share, v, most * f.other_inverse_mass);
    }
  }
}

// Coulomb friction inside the solve, lagged as in IPC's semi-implicit friction: the
// normal force F and the slip speed s are the last step's, and the contact point is
// held by a two-sided spring along each tangent t of its plane, anchored where the
// point starts plus the obstacle's own motion over the step,
//   D(x) = (k_t/2) |T (y(x) − a)|²,  a = y(x_n) + h u_o,  k_t = μ F / (h max(s, ε)).
// A slide at about s then meets μ F (the spring's force k_t h s), and a contact slower
// than ε sticks. Being a potential of the step's unknowns it is solved with them, so it
// only ever takes energy out: applied after the solve, as a velocity change that the
// kick also turns into a position change h Δv, friction strained the material around a
// stopped point — a bunny dropped 5 cm gained 0.2 % at the landing with μ = 0.5 (none
// with μ = 0), a soft dragon on stiff legs 160 J of 180 (docs/backward-euler.md "Friction").
//
// Static friction: re-anchored at every step, a point under a tangential load T < μ F
// gives T / k_t = ε h T / (μ F) a step — a creep of up to ε. A vertex that sticks (s < ε)
// therefore keeps the anchor of its last step, moved with the obstacle, a' = a + h u_o,
// while that anchor's pull at the step's start stays within μ F: |T (y(x_n) − a')| ≤ ε h
// (k_t ε h = μ F). The point then settles where the spring balances T and stays there;
// past μ F it is re-anchored and slides. Only single-vertex features (a vertex on an
// obstacle face) keep anchors: an edge's point moves along the edge as it turns.
//
// A pair with another solid: the other side's point moves with its own velocity, the
// anchor with it, and each anchor is in series with the other side's inertia as the
// normal plane is (its impulse never more than what stops the other point: it is given
// to that body explicitly). No sticking anchors: a pair's point is not one vertex's.
void SolveContact::add_friction(double time, double h, const Eigen::VectorXd& x, const TickPlane& plane,
                                const TickContactFeature& f, double friction_force,
                                const Eigen::VectorXd* v, double other_inverse_mass) {
  const bool pair = f.pair;
  const Vec3& moving = pair ? f.other_velocity : f.velocity;
  Vec3 y = Vec3::Zero(), u = -moving;
  for (int i = 0; i < TickPlane::kMaxVertices; ++i) {
    if (f.weights[i] == 0.0) continue;
    const auto o = 3 * static_cast<Eigen::Index>(f.vertices[i]);
    y += f.weights[i] * x.segment<3>(o);
    if (v) u += f.weights[i] * v->segment<3>(o);
  }
  const Vec3& n = plane.normal;
  const double slip = v ? (u - n.dot(u) * n).norm() : 0.0;
  const Vec3 t1 = n.unitOrthogonal(), t2 = n.cross(t1);
  Vec3 anchor = y + h * moving;
  const bool single = !pair && f.weights[0] == 1.0 && (f.weights.tail<3>().array() == 0.0).all();
  if (single && slip < kStickSpeed) {
    const auto a = static_cast<std::size_t>(f.vertices[0]);
    const auto vertices = static_cast<std::size_t>(x.size() / 3);
    if (stuck_.size() != vertices) stuck_.assign(vertices, {});
    if (anchoring_.size() != vertices) anchoring_.assign(vertices, {});
    const StickAnchor& last = stuck_[a];
    if (last.end >= 0.0 && std::abs(last.end - time) <= 1e-9 * (1.0 + time)) {
      const Vec3 kept = last.anchor + h * f.velocity;
      const Vec3 d = y - kept;
      if ((d - n.dot(d) * n).norm() <= h * kStickSpeed) anchor = kept;
    }
    anchoring_[a] = {anchor, time + h};
  }
  for (const Vec3& t : {t1, t2}) {
    TickPlane anchor_plane = plane;
    anchor_plane.normal = t;
    anchor_plane.offset = t.dot(anchor);
    anchor_plane.stiffness = friction_force / (h * std::max(slip, kStickSpeed));
    if (other_inverse_mass > 0.0) anchor_plane.stiffness /= 1.0 + anchor_plane.stiffness * h * h * other_inverse_mass;
    anchor_plane.two_sided = true;
    anchor_plane.friction = true;
    planes_.push_back(anchor_plane);
    plane_features_.push_back(f);
  }
}

int SolveContact::apply_reactions(Kernel& kernel, double time, double h,
                                  const Eigen::VectorXd& x_end) const {
  impulses_.resize(planes_.size());
  for (std::size_t i = 0; i < planes_.size(); ++i)
    impulses_[i] = h * planes_[i].stiffness * planes_[i].violation(x_end);
  return apply_impulses(kernel, time, impulses_);
}

void SolveContact::record_loads(double h, std::span<const double> impulses, std::size_t vertices) {
  load_.assign(vertices, 0.0);
  for (std::size_t k = 0; k < planes_.size(); ++k) {
    if (!(impulses[k] > 0.0) || planes_[k].friction) continue;
    const TickPlane& p = planes_[k];
    for (int i = 0; i < TickPlane::kMaxVertices; ++i)
      if (p.weights[i] != 0.0) load_[p.vertices[i]] += impulses[k] * std::abs(p.weights[i]) / h;
  }
}

int SolveContact::apply_impulses(Kernel& kernel, double time, std::span<const double> impulses) const {
  VertexState& s = kernel.state();
  int pushing = 0;
  for (std::size_t i = 0; i < planes_.size(); ++i) {
    const TickContactFeature& f = plane_features_[i];
    if (!f.pair || f.joint) continue;
    const TickPlane& c = planes_[i];
    const double impulse = impulses[i];
    if (impulse == 0.0) continue;
    ++pushing;
    for (int j = 0; j < TickPlane::kMaxVertices; ++j) {
      const Index g = f.others[j];
      if (f.other_weights[j] == 0.0 || s.kinematic(g)) continue;
      const Vec3 reaction = (impulse * f.other_weights[j]) * c.normal;
      if (f.other_phantom) {
        f.other_phantom->receive_impulse(g - f.other_first, reaction, time, kernel);
        continue;
      }
      s.sync(g, time);
      s.velocity_ref(g) += s.inv_mass(g) * reaction;
      kernel.velocity_changed(g);
    }
  }
  return pushing;
}

}  // namespace clockwork
