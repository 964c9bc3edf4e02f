#include "integrators/implicit/joint_solids.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include "integrators/implicit/solid_source.hpp"

namespace clockwork {

namespace {
// (The energy safeguard acts on linearised steps only.)
bool same_settings(const BackwardEulerSettings& a, const BackwardEulerSettings& b) {
  return a.linear == b.linear && a.fix == b.fix && a.max_newton == b.max_newton && a.tolerance == b.tolerance &&
         a.cg_tolerance == b.cg_tolerance && a.cg_max_iterations == b.cg_max_iterations &&
         a.rayleigh_alpha == b.rayleigh_alpha && a.rayleigh_beta == b.rayleigh_beta && a.damping == b.damping &&
         (a.max_newton > 1 || a.energy_safeguard == b.energy_safeguard);
}
}  // namespace

// SolidSource's side of the joint steps.
void SolidSource::set_joint(std::shared_ptr<JointSolids> joint) {
  joint_ = std::move(joint);
  if (joint_) joint_->add(*this);
}

void SolidSource::find_planes(Kernel& kernel, double time, double h) {
  gather(kernel.state(), time);
  v_new_ = v_;
  x_start_ = x_;
  if (!contact_.any()) return;
  double speed = 0.0;
  for (Index a : free_) speed = std::max(speed, v_.segment<3>(3 * a).norm());
  contact_.find(time, h > 0.0 ? h : h_, speed, x_, fixed_, model_->lumped_mass(), &v_);
}

void JointSolids::add(SolidSource& solid) {
  if (solid.vertices_.empty()) return;
  solids_.insert(std::upper_bound(solids_.begin(), solids_.end(), &solid,
                                  [](const SolidSource* a, const SolidSource* b) {
                                    return a->vertices_.front() < b->vertices_.front();
                                  }),
                 &solid);
}

SolidSource* JointSolids::owner_of(Index g) const {
  auto it = std::upper_bound(solids_.begin(), solids_.end(), g,
                             [](Index v, const SolidSource* s) { return v < s->vertices_.front(); });
  if (it == solids_.begin()) return nullptr;
  SolidSource* s = *std::prev(it);
  return s->owns(g) ? s : nullptr;
}

bool JointSolids::joinable(const SolidSource& first, const SolidSource& other, double time) const {
  if (other.model_->kind() != first.model_->kind() || other.energy_safeguard_ != first.energy_safeguard_ ||
      !other.contact_.any() || !same_settings(other.joint_settings(), first.joint_settings()))
    return false;
  // The steps on one grid: the longer h a whole multiple of the shorter, and the other's
  // next own step (not taken yet at `time`) a whole number of the shorter steps ahead.
  const double shorter = std::min(first.h_, other.h_), longer = std::max(first.h_, other.h_);
  const auto whole = [](double r) { return std::abs(r - std::round(r)) <= 1e-9 * std::max(1.0, r); };
  if (!whole(longer / shorter)) return false;
  const double next = other.clock_.time(other.next_step_);
  const double ahead = (next - time) / shorter;
  if (other.joint_step_ == other.next_step_ || !(ahead > -1e-9) || !whole(ahead)) return false;
  // A Zhao solid within a large step it planned keeps its plan (its fine events would
  // apply the plan's increments after the joint step).
  if (other.multirate_ && ahead > 0.5)
    for (std::size_t i = 0; i < other.multirate_->regions().size(); ++i)
      if (other.multirate_->regions()[i].m > 1 && other.fine_->next_[i] < other.multirate_->regions()[i].m)
        return false;
  return true;
}

JointSolids::Group& JointSolids::group() {
  auto it = groups_.find(members_);
  if (it != groups_.end()) return it->second;
  std::vector<const TetFemModel*> parts;
  for (const SolidSource* m : members_) parts.push_back(m->model_.get());
  Group g;
  g.model = std::make_unique<TetFemModel>(TetFemModel::joined(parts));
  g.euler = std::make_unique<BackwardEuler>(*g.model, members_.front()->joint_settings());
  return groups_.emplace(members_, std::move(g)).first->second;
}

bool JointSolids::step(SolidSource& first, double time, Kernel& kernel) {
  // The group: the solids first's near pairs reach — those it plans and those the other
  // plans (a pair is planned by the longer step, so the shorter one's planes do not show
  // it) — then theirs, with their planes found now.
  members_.assign(1, &first);
  const auto consider = [&](Index vertex) {
    SolidSource* o = owner_of(vertex);
    if (o && std::find(members_.begin(), members_.end(), o) == members_.end() && joinable(first, *o, time))
      members_.push_back(o);
  };
  for (std::size_t i = 0; i < members_.size(); ++i) {
    SolidSource& m = *members_[i];
    if (i > 0) m.find_planes(kernel, time);
    const SolveContact& c = m.contact_;
    for (Index v : c.planned_by_others()) consider(v);
    for (std::size_t k = 0; k < c.planes().size(); ++k) {
      const TickContactFeature& f = c.feature(k);
      if (!f.pair || !f.other_solid || c.planes()[k].friction) continue;
      for (int j = 0; j < TickPlane::kMaxVertices; ++j)
        if (f.other_weights[j] != 0.0) {
          consider(f.others[j]);
          break;  // a pair's other side is one element of one body
        }
    }
  }
  if (members_.size() == 1) return false;
  std::sort(members_.begin(), members_.end(), [](const SolidSource* a, const SolidSource* b) {
    return a->vertices_.front() < b->vertices_.front();
  });
  Group& g = group();
  // The group steps at its shortest h: a solid at a longer one takes, while in contact,
  // a step at each of the shorter steps' times (their grid, joinable()); its own events
  // on that grid start joint steps too.
  double h = first.h_;
  for (const SolidSource* m : members_) h = std::min(h, m->h_);
  for (SolidSource* m : members_)
    if (m->h_ != h) m->find_planes(kernel, time, h);
  // The member owning global vertex g, or −1.
  const auto member_of = [&](Index global) -> long {
    for (std::size_t i = 0; i < members_.size(); ++i)
      if (members_[i]->owns(global)) return static_cast<long>(i);
    return -1;
  };

  // The union's state, in member order.
  base_.clear();
  Index n = 0;
  for (const SolidSource* m : members_) {
    base_.push_back(n);
    n += static_cast<Index>(m->vertices_.size());
  }
  x_.resize(3 * static_cast<Eigen::Index>(n));
  v_.resize(x_.size());
  f_ext_.resize(x_.size());
  fixed_.assign(n, false);
  for (std::size_t i = 0; i < members_.size(); ++i) {
    const SolidSource& m = *members_[i];
    const Eigen::Index o = 3 * static_cast<Eigen::Index>(base_[i]);
    x_.segment(o, m.x_.size()) = m.x_;
    v_.segment(o, m.v_.size()) = m.v_;
    f_ext_.segment(o, m.f_ext_.size()) = m.f_ext_;
    for (std::size_t a = 0; a < m.fixed_.size(); ++a) fixed_[base_[i] + a] = m.fixed_[a];
  }
  const std::vector<double>& mass = g.model->lumped_mass();
  // The member owning vertex v of the union.
  const auto union_owner = [&](Index v) {
    return static_cast<std::size_t>(std::upper_bound(base_.begin(), base_.end(), v) - base_.begin() - 1);
  };

  // A vertex's share of the net normal load of the last joint step (N), if that step
  // was the one before this.
  const auto share_of = [&](Index v) {
    const std::size_t i = union_owner(v);
    const SolidSource& m = *members_[i];
    if (m.joint_share_.empty() || std::abs(m.joint_share_time_ - time) > 1e-9 * (1.0 + time)) return 0.0;
    return m.joint_share_[v - base_[i]];
  };
  // Every member's planes on the union; a pair plane between two members on both sides.
  planes_.clear();
  origin_.clear();
  for (std::size_t i = 0; i < members_.size(); ++i) {
    SolveContact& c = members_[i]->contact_;
    for (std::size_t k = 0; k < c.planes().size(); ++k) {
      TickPlane p = c.planes()[k];
      for (int j = 0; j < TickPlane::kMaxVertices; ++j)
        if (p.weights[j] != 0.0) p.vertices[j] += base_[i];
      const TickContactFeature& f = c.feature(k);
      long other = -1;
      if (f.pair && f.other_solid)
        for (int j = 0; j < TickPlane::kMaxVertices && other < 0; ++j)
          if (f.other_weights[j] != 0.0) other = member_of(f.others[j]);
      // The planner's friction anchors of a pair with another member (planned for a
      // staggered step) give way to the joint anchors below (impulse 0: no reaction).
      if (other >= 0 && p.friction) continue;
      if (other >= 0) {
        const SolidSource& o = *members_[static_cast<std::size_t>(other)];
        double inverse_mass = 0.0;
        Vec3 u = Vec3::Zero();
        for (int j = 0; j < TickPlane::kMaxVertices; ++j) {
          if (f.other_weights[j] != 0.0) {
            p.vertices[j] = base_[static_cast<std::size_t>(other)] + (f.others[j] - o.vertices_.front());
            p.weights[j] = f.other_weights[j];
          }
          if (p.weights[j] == 0.0) continue;
          u += p.weights[j] * v_.segment<3>(3 * static_cast<Eigen::Index>(p.vertices[j]));
          if (!fixed_[p.vertices[j]]) inverse_mass += p.weights[j] * p.weights[j] / mass[p.vertices[j]];
        }
        // At the clearance, as an obstacle plane (header); κ over both sides' inertia (no
        // series bound: both sides are unknowns now), within a quarter of the clearance
        // under its load, and for an approach at u its give u h / κ within a quarter of
        // the clearance, as an obstacle plane's (SolveContact::find).
        // Its load: the share of the last joint step's net normal load on its vertices
        // (joint_share_, both sides, halved). SolveContact's load, Σ Λ |w| over every plane of a
        // vertex, counts the planes of two faces pressed together that push sideways
        // against each other (edge pairs whose closest points are their ends): raised by
        // it, their stiffness grew with the load it raised, and the planes' stored energy
        // with it, released at each step: two 10 ms blocks stacked 2.3 J -> 110 J.
        double load = 0.0;
        for (int j = 0; j < TickPlane::kMaxVertices; ++j)
          if (p.weights[j] != 0.0) load += 0.5 * std::abs(p.weights[j]) * share_of(p.vertices[j]);
        const double clearance = c.solid_pair_clearance();
        p.offset = clearance;
        p.stiffness = inverse_mass > 0.0 ? c.pair_stiffness() / (h * h * inverse_mass) : 0.0;
        p.stiffness = std::max(p.stiffness, 4.0 * load / clearance);
        const double approach = -p.normal.dot(u);
        if (approach > 0.0 && inverse_mass > 0.0)
          p.stiffness = std::max(p.stiffness, 4.0 * approach / (clearance * h * inverse_mass));
        c.mark_joint(k);
        // Coulomb friction between the two as on an obstacle (SolveContact::add_friction):
        // two-sided springs along the plane's tangents, anchored at the sides' relative
        // position at the step's start, k_t = μ F / (h max(s, ε)) with F the plane's load
        // above and s the relative slip speed.
        // Anchored anew each step (no sticking anchors: a creep below ε).
        const double friction = c.pair_friction() * load;
        if (friction > 0.0) {
          Vec3 y = Vec3::Zero();
          for (int j = 0; j < TickPlane::kMaxVertices; ++j)
            if (p.weights[j] != 0.0) y += p.weights[j] * x_.segment<3>(3 * static_cast<Eigen::Index>(p.vertices[j]));
          const double slip = (u - p.normal.dot(u) * p.normal).norm();
          const Vec3 t1 = p.normal.unitOrthogonal(), t2 = p.normal.cross(t1);
          for (const Vec3& t : {t1, t2}) {
            TickPlane a = p;
            a.normal = t;
            a.offset = t.dot(y);
            a.stiffness = friction / (h * std::max(slip, SolveContact::kStickSpeed));
            a.two_sided = a.friction = true;
            anchors_.push_back(a);
          }
        }
      }
      planes_.push_back(p);
      origin_.push_back({i, k, other >= 0});
    }
  }
  const std::size_t normal_planes = planes_.size();
  planes_.insert(planes_.end(), anchors_.begin(), anchors_.end());
  anchors_.clear();

  const BackwardEulerReport r = g.euler->step(h, x_, v_, f_ext_, fixed_, planes_);
  ++joint_steps_;
  first.counters_.newton_iterations += r.newton_iterations;
  first.counters_.linear_iterations += r.linear_iterations;
  if (r.safeguarded) ++first.counters_.safeguarded;
  if (!r.converged && (first.joint_settings().max_newton > 1 || r.safeguarded))
    first.warn_unconverged("backward Euler step (with the solids it touches)", time, r);

  // Each plane's impulse h k s at the landing, in each member's list: its own planes
  // (the planner's side of a pair plane among them), and appended, the other sides (every
  // side of a friction anchor) in their own vertices, which count in those bodies' loads
  // and torques. The net normal load of the pair planes that push, per vertex.
  impulses_.resize(members_.size());
  for (std::size_t i = 0; i < members_.size(); ++i)
    impulses_[i].assign(members_[i]->contact_.planes().size(), 0.0);
  net_.assign(static_cast<std::size_t>(n), Vec3::Zero());
  count_.assign(static_cast<std::size_t>(n), 0);
  for (std::size_t q = 0; q < planes_.size(); ++q) {
    const TickPlane& p = planes_[q];
    const double impulse = h * p.stiffness * p.violation(x_);
    std::size_t planner = members_.size();
    if (q < normal_planes) {
      const PlaneOrigin& o = origin_[q];
      impulses_[o.member][o.plane] = impulse;
      if (!o.pair) continue;
      planner = o.member;
      if (impulse > 0.0) {
        ++members_[planner]->counters_.pushing_pairs;  // (its reaction is in the solve)
        for (int j = 0; j < TickPlane::kMaxVertices; ++j)
          if (p.weights[j] != 0.0) {
            net_[p.vertices[j]] += (impulse * p.weights[j] / h) * p.normal;
            ++count_[p.vertices[j]];
          }
      }
    }
    std::array<TickPlane, 2> sides{p, p};  // a pair's element sides lie in two bodies
    std::array<std::size_t, 2> owners{members_.size(), members_.size()};
    for (TickPlane& side : sides) side.weights.setZero();
    for (int j = 0; j < TickPlane::kMaxVertices; ++j) {
      if (p.weights[j] == 0.0) continue;
      const std::size_t owner = union_owner(p.vertices[j]);
      if (owner == planner) continue;
      const int slot = owners[0] == members_.size() || owners[0] == owner ? 0 : 1;
      owners[slot] = owner;
      sides[slot].vertices[j] = p.vertices[j] - base_[owner];
      sides[slot].weights[j] = p.weights[j];
    }
    for (int slot = 0; slot < 2; ++slot)
      if (owners[slot] != members_.size()) {
        members_[owners[slot]]->contact_.add_joint_side(sides[slot]);
        impulses_[owners[slot]].push_back(impulse);
      }
  }
  for (std::size_t i = 0; i < members_.size(); ++i) {
    SolidSource& m = *members_[i];
    m.joint_share_.resize(m.vertices_.size());
    for (std::size_t a = 0; a < m.vertices_.size(); ++a) {
      const std::size_t v = base_[i] + a;
      m.joint_share_[a] = count_[v] > 0 ? net_[v].norm() / count_[v] : 0.0;
    }
    m.joint_share_time_ = time + h;
  }
  for (std::size_t i = 0; i < members_.size(); ++i) {
    SolidSource& m = *members_[i];
    const Eigen::Index o = 3 * static_cast<Eigen::Index>(base_[i]);
    m.x_ = x_.segment(o, m.x_.size());
    m.v_new_ = v_.segment(o, m.v_.size()) - m.v_;
    m.impulses_ = impulses_[i];
    m.contact_.record_loads(h, m.impulses_, m.vertices_.size());
    m.keep_angular_momentum(m.x_start_, m.v_new_, m.joint_settings().rayleigh_alpha, h);
    m.kick(kernel, time, m.v_new_, m.free_);
    m.counters_.pushing_pairs += m.contact_.apply_impulses(kernel, time, m.impulses_);
    if (&m == &first) continue;
    // Its own event at this time only advances its clock; at a later time (a longer
    // step, taken here at the shorter one's time) it comes as usual.
    if (std::abs(m.clock_.time(m.next_step_) - time) <= 1e-9 * (1.0 + time)) m.joint_step_ = m.next_step_;
    else ++m.counters_.joint_steps;
  }
  return true;
}

}  // namespace clockwork
