#pragma once
/// Explicit AVI force events (Lew et al. 2003; phantom-mesh paper §3.1 with α_k = 0).
///
/// Stencil k with period h^k ticks at t_k^i = t0 + i h^k (times computed from the
/// tick count, not accumulated). At a tick the stencil is synced to t and every
/// vertex receives the impulse of the explicit DEL update
///     p_a^{j+1/2} = p_a^{j-1/2} − h^k ∂V^k/∂q_a (q(t_k^i)),
/// i.e. v_a −= h^k ∇_a V^k / m_a. Kinematic vertices (inverse mass 0) are unaffected.
/// For velocity-dependent forces (wind) the impulse is h^k F(x, v).
///
/// The first impulse of a run started from its initial state covers the time from the
/// run's start t_b to its tick's interval midpoint, (t_k^0 − t_b) + h^k/2: a half
/// kick for a stencil that ticks at t_b (StartFrom). Resumed runs take whole impulses.
#include <array>
#include <cassert>
#include <string>
#include <vector>

#include "engine/kernel.hpp"
#include "engine/energy_term.hpp"

namespace clockwork {

/// A velocity-dependent force that is no potential (wind): F(x, v) over a stencil.
template <typename Term>
concept ForceTerm = requires(const Term& e, const StencilPositions<Term::kVertices>& x) {
  { e.force(x, x) } -> std::convertible_to<StencilVector<Term::kVertices>>;
};

template <typename Term>
  requires EnergyTerm<Term> || ForceTerm<Term>
class ForceSource final : public EventSource {
 public:
  static constexpr int N = Term::kVertices;
  struct Stencil {
    std::array<Index, N> vertices;
    Term term;
    double period;           ///< h^k, s
    double start;            ///< t0, s
    std::uint64_t tick = 0;  ///< i of the next tick
    double weight = 1.0;     ///< the next impulse in periods (the first: set by start())
  };

  explicit ForceSource(std::string name) : name_(std::move(name)) {}

  std::string_view name() const override { return name_; }
  int stencil_size(EventSlot) const override { return N; }
  std::span<const Index> stencil_vertices(EventSlot slot) const override {
    return stencils_[slot].vertices;
  }

  EventSlot add(const std::array<Index, N>& vertices, const Term& term, double period,
                double start = 0.0) {
    assert(period > 0.0);
    stencils_.push_back(Stencil{vertices, term, period, start, 0, 1.0});
    return static_cast<EventSlot>(stencils_.size() - 1);
  }
  /// Schedules the first tick of every stencil, its start counted from the kernel's
  /// clock (Kernel::start_at: a resumed run), and weighs its first impulse (header).
  void start(EventKind my_kind, Kernel& kernel, StartFrom from = StartFrom::initial_state) {
    for (EventSlot k = 0; k < stencils_.size(); ++k) {
      Stencil& s = stencils_[k];
      s.weight = from == StartFrom::initial_state ? s.start / s.period + 0.5 : 1.0;
      s.start += kernel.now();
      kernel.schedule(my_kind, k, s.start);
    }
  }

  double process(EventSlot slot, double time, Kernel& kernel) override {
    Stencil& s = stencils_[slot];
    VertexState& state = kernel.state();
    StencilPositions<N> x;
    for (int i = 0; i < N; ++i) {
      state.sync(s.vertices[i], time);
      x.col(i) = state.position(s.vertices[i]);
    }
    StencilVector<N> impulse;
    const double span = s.weight * s.period;  // the period itself after the first tick
    s.weight = 1.0;
    if constexpr (EnergyTerm<Term>) {
      impulse = -span * s.term.gradient(x);
    } else {
      StencilPositions<N> v;
      for (int i = 0; i < N; ++i) v.col(i) = state.velocity(s.vertices[i]);
      impulse = span * s.term.force(x, v);
    }
    for (int i = 0; i < N; ++i) {
      const Index a = s.vertices[i];
      const double w = state.inv_mass(a);
      if (w == 0.0) continue;
      state.velocity_ref(a) += w * impulse.template segment<3>(3 * i);
      kernel.velocity_changed(a);
    }
    ++s.tick;
    return s.start + static_cast<double>(s.tick) * s.period;
  }

  double potential_energy(const VertexState& state, double t) const override {
    return potential_energy(state, t, 0, static_cast<EventSlot>(stencils_.size()));
  }
  /// The same over the stencils [begin, end) (one body's: ExplicitShell).
  double potential_energy(const VertexState& state, double t, EventSlot begin, EventSlot end) const {
    if constexpr (EnergyTerm<Term>) {
      double sum = 0.0;
      StencilPositions<N> x;
      for (EventSlot k = begin; k < end; ++k) {
        const Stencil& s = stencils_[k];
        for (int i = 0; i < N; ++i) x.col(i) = state.position_at(s.vertices[i], t);
        sum += s.term.value(x);
      }
      return sum;
    } else {
      return 0.0;
    }
  }

  std::size_t size() const { return stencils_.size(); }
  const Stencil& stencil(EventSlot k) const { return stencils_[k]; }
  Stencil& stencil(EventSlot k) { return stencils_[k]; }

 private:
  std::string name_;
  std::vector<Stencil> stencils_;
};

}  // namespace clockwork
