#pragma once
/// The implicit potential of a phantom body (phantom-mesh paper §3.2, §4): all its
/// elastic terms (StVK membranes, Discrete Shells hinges), gravity and a constant
/// external force (wind, evaluated once per tick) as one function of the body's
/// stacked positions X (3n). Value, gradient and PSD-projected Hessian come from the
/// same element terms the explicit AVI uses; element work runs in parallel (TBB) and
/// is summed in a fixed order, so results do not depend on the thread count. An
/// AssembledEnergy (engine/energy_term.hpp).
#include <Eigen/Sparse>
#include <vector>

#include "engine/energy_term.hpp"
#include "integrators/energy/hinge_energy.hpp"
#include "integrators/energy/membrane_energy.hpp"

namespace clockwork {

class BodyPotential {
 public:
  using Vector = Eigen::VectorXd;
  using Sparse = Eigen::SparseMatrix<double>;

  explicit BodyPotential(std::size_t vertices) : n_(vertices), mass_(vertices, 0.0) {}

  void add_membrane(const std::array<Index, 3>& v, const MembraneStVK& e) {
    membranes_.push_back({v, e});
  }
  void add_hinge(const std::array<Index, 4>& v, const HingeBending& e) { hinges_.push_back({v, e}); }
  /// Gravity acts on `mass` (full lumped masses, kg).
  void set_gravity(const Vec3& g, const std::vector<double>& mass) {
    gravity_ = g;
    mass_ = mass;
  }
  /// Gravity's mass at vertex a (kg, ≥ 0): a pinned vertex carries none, until released.
  void set_gravity_mass(Index a, double mass) { mass_[a] = mass; }
  const Vec3& gravity() const { return gravity_; }
  /// A constant force per vertex (3n), e.g. wind evaluated at the start of a tick.
  void set_external_force(const Vector& f) { external_ = f; }

  std::size_t vertex_count() const { return n_; }
  double value(const Vector& X) const;
  /// ∇V(X) (3n).
  void gradient(const Vector& X, Vector& out) const;
  /// value(X), and gradient(X) into `out`, bit for bit, in one pass over the elements.
  double value_and_gradient(const Vector& X, Vector& out) const;
  /// ∇²V(X) (the elements' only: gravity and the external force are linear), every
  /// element block projected to PSD on request (projected Newton), into a matrix whose
  /// pattern is fixed after the first call.
  void hessian(const Vector& X, Sparse& out, bool project_psd = false) const;
  /// The elements' material (Gauss–Newton) stiffness: PSD without projection, zero on
  /// rigid motions of X; same pattern as hessian(). The stiffness of Rayleigh damping.
  void material_stiffness(const Vector& X, Sparse& out) const;

 private:
  template <typename Term>
  struct Element {
    std::array<Index, Term::kVertices> v;
    Term term;
  };
  /// Assembles per-element matrices block(term, x_e) in a fixed order.
  template <typename MembraneBlock, typename HingeBlock>
  void assemble(const Vector& X, Sparse& out, MembraneBlock membrane, HingeBlock hinge) const;
  /// The ordered sums of element_values_ / element_gradients_ (filled for X), with
  /// gravity and the external force.
  double sum_values(const Vector& X) const;
  void sum_gradients(const Vector& X, Vector& out) const;
  /// pattern_ and slot_ from the elements' vertices.
  void build_pattern() const;
  template <int N>
  StencilPositions<N> gather(const Vector& X, const std::array<Index, N>& v) const {
    StencilPositions<N> x;
    for (int i = 0; i < N; ++i) x.col(i) = X.segment<3>(3 * v[i]);
    return x;
  }

  std::size_t n_;
  std::vector<Element<MembraneStVK>> membranes_;
  std::vector<Element<HingeBending>> hinges_;
  Vec3 gravity_ = Vec3::Zero();
  std::vector<double> mass_;
  Vector external_;
  // Scratch reused between calls (element results before the ordered sum).
  mutable std::vector<double> entries_;  ///< the element blocks' entries, in element order
  // The assembled pattern (fixed: the same elements every call) and each entry's value
  // slot in it, built once; an assembly then adds entries_ in order into the slots,
  // which sums duplicates in the same order setFromTriplets did.
  mutable Sparse pattern_;
  mutable std::vector<int> slot_;
  mutable std::vector<double> element_values_;
  mutable std::vector<double> element_gradients_;
};

static_assert(AssembledEnergy<BodyPotential>);

}  // namespace clockwork
