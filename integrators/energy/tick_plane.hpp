#pragma once
/// Contact seen by an implicit tick (docs/phantom.md "Obstacles in the tick", "Near
/// pairs in the tick"): a combination of the body's vertices, y(x) = Σ_i w_i x_i at the
/// tick's landing positions x, must stay on the outer side of a plane,
///   n · y(x) ≥ offset.
/// Obstacles: y a point of the body's surface (a vertex, a point of an edge or of a
/// face, weights ≥ 0 summing to 1), offset = n · p(t + h) + clearance, n the direction
/// from the obstacle's closest point p to y at the tick's start, p(t + h) that point
/// carried with the obstacle to the tick's end. Self-contact: y = y_A − y_B the
/// difference of a near element pair's closest points (distance.hpp; signed weights
/// summing to 0), so the plane bounds the pair's gap along its normal. Up to four
/// vertices; a zero weight marks an unused entry. It enters the tick's energy as the
/// one-sided quadratic penalty
///   P(x) = (k/2) max(0, offset − n · y(x))²,
/// value, gradient and Hessian below from the same violation; C¹, piecewise quadratic.
///
/// One plane is an energy at both levels (engine/energy_term.hpp): over the body's
/// stacked positions X (value, gradient, hessian with X; the solvers' add_gradient and
/// add_hessian add into their own systems, for the vertices they solve), and as a
/// stencil term over its four vertices' positions (the same functions with the
/// vertices renumbered 0..3).
#include <Eigen/Sparse>
#include <algorithm>
#include <array>
#include <vector>

#include "engine/types.hpp"
#include "engine/energy_term.hpp"

namespace clockwork {

struct TickPlane {
  static constexpr int kMaxVertices = 4;
  std::array<Index, kMaxVertices> vertices{};  ///< local indices; entries with zero weight unused
  Eigen::Vector4d weights = Eigen::Vector4d(1.0, 0.0, 0.0, 0.0);
  Vec3 normal = Vec3::UnitZ();
  double offset = 0.0;
  double stiffness = 0.0;  ///< k, N/m
  /// Held as a two-sided spring k/2 (offset − n·y)² (it may pull): a linearised step's
  /// one solve cannot switch a plane on or off, so it takes the planes its prediction
  /// lands behind as springs (backward_euler.hpp, max_newton = 1).
  bool two_sided = false;
  /// A tangential anchor of an obstacle contact's friction (SolveContact::add_friction):
  /// two-sided, along a tangent of its contact plane, never a normal load.
  bool friction = false;
  /// Zhao's multi-rate step only (MultirateSolver::set_planes): a plane on a region's
  /// vertices acts from this substep r (1..m) of the large step on, so that a point
  /// that reaches it in the step's later substeps is not pulled towards it before.
  int first_substep = 1;

  double violation(const Eigen::VectorXd& x) const {
    double height = 0.0;
    for (int i = 0; i < kMaxVertices; ++i)
      if (weights[i] != 0.0) height += weights[i] * normal.dot(x.segment<3>(3 * vertices[i]));
    return two_sided ? offset - height : std::max(0.0, offset - height);
  }
  double value(const Eigen::VectorXd& x) const {
    const double v = violation(x);
    return 0.5 * stiffness * v * v;
  }
  /// Adds ∂P/∂x_i = −k v w_i n to g, for the vertices with `take(vertex)`.
  template <typename Take>
  void add_gradient(const Eigen::VectorXd& x, Eigen::VectorXd& g, Take take) const {
    const double v = violation(x);
    if (v == 0.0) return;  // (a two-sided plane at exactly its offset: no force either)
    for (int i = 0; i < kMaxVertices; ++i)
      if (weights[i] != 0.0 && take(vertices[i]))
        g.segment<3>(3 * vertices[i]) -= stiffness * v * weights[i] * normal;
  }
  /// Adds the Hessian blocks k w_i w_j n nᵀ where the plane pushes (v > 0) through
  /// add(i, j, block) for the vertex pairs with `take` on both.
  template <typename Take, typename Add>
  void add_hessian(const Eigen::VectorXd& x, Take take, Add add) const {
    if (!two_sided && violation(x) == 0.0) return;
    const Mat3 nn = stiffness * normal * normal.transpose();
    for (int i = 0; i < kMaxVertices; ++i)
      for (int j = 0; j < kMaxVertices; ++j)
        if (weights[i] != 0.0 && weights[j] != 0.0 && take(vertices[i]) && take(vertices[j]))
          add(vertices[i], vertices[j], Mat3(weights[i] * weights[j] * nn));
  }

  // --- the energy interface over the body's stacked positions X -----------------
  /// out = ∇P(X), sized like X.
  void gradient(const Eigen::VectorXd& X, Eigen::VectorXd& out) const {
    out.setZero(X.size());
    add_gradient(X, out, everywhere);
  }
  /// out = ∇²P(X) (compressed). P's Hessian k (w ⊗ n)(w ⊗ n)ᵀ is PSD already, so the
  /// projection changes nothing.
  void hessian(const Eigen::VectorXd& X, Eigen::SparseMatrix<double>& out, bool = false) const {
    std::vector<Eigen::Triplet<double>> t;
    add_hessian(X, everywhere, [&](Index a, Index b, const Mat3& block) {
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
          t.emplace_back(static_cast<int>(3 * a + r), static_cast<int>(3 * b + c), block(r, c));
    });
    out.resize(X.size(), X.size());
    out.setFromTriplets(t.begin(), t.end());
    out.makeCompressed();
  }

  // --- the energy interface over the plane's own four vertices -------------------
  static constexpr int kVertices = kMaxVertices;
  double value(const StencilPositions<4>& x) const { return local().value(flat(x)); }
  StencilVector<4> gradient(const StencilPositions<4>& x) const {
    Eigen::VectorXd g = Eigen::VectorXd::Zero(12);
    local().add_gradient(flat(x), g, everywhere);
    return g;
  }
  StencilMatrix<4> hessian(const StencilPositions<4>& x, bool = false) const {
    StencilMatrix<4> H = StencilMatrix<4>::Zero();
    local().add_hessian(flat(x), everywhere,
                        [&](Index a, Index b, const Mat3& block) { H.block<3, 3>(3 * a, 3 * b) += block; });
    return H;
  }

 private:
  static bool everywhere(Index) { return true; }
  /// This plane on the vertices 0..3 of a stencil.
  TickPlane local() const {
    TickPlane p = *this;
    p.vertices = {0, 1, 2, 3};
    return p;
  }
  static Eigen::VectorXd flat(const StencilPositions<4>& x) {
    return Eigen::Map<const Eigen::VectorXd>(x.data(), 12);
  }
};

static_assert(EnergyTerm<TickPlane>);
static_assert(AssembledEnergy<TickPlane>);

}  // namespace clockwork
