// The derivative-check harness (tests/support/finite_difference.hpp) over every energy
// term of the engine, at both levels of the energy interface
// (engine/energy_term.hpp): per stencil — spring (harmonic and FPU), St. Venant–Kirchhoff
// membrane, Discrete Shells hinge, gravity, linear and corotational tets, the penalty
// layer in every pair type and closest-feature region, the implicit ticks' contact
// planes (one-sided, two-sided and friction anchors) — and assembled over a body — a
// phantom cloth's BodyPotential, a TetFemModel of each kind, each with contact planes,
// and a plane alone. Gradient against central differences of the value, Hessian
// against central differences of the gradient, the PSD projection PSD and equal to the
// Hessian where that is PSD. The self-check cases show that the harness fails wrong
// derivatives.
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <vector>

#include "contact/penalty/penalty_potential.hpp"
#include "integrators/energy/body_potential.hpp"
#include "integrators/energy/gravity_energy.hpp"
#include "integrators/energy/hinge_energy.hpp"
#include "integrators/energy/membrane_energy.hpp"
#include "integrators/energy/spring_energy.hpp"
#include "integrators/fem/tet_fem.hpp"
#include "integrators/energy/tick_plane.hpp"
#include "tests/support/finite_difference.hpp"
#include "tests/support/stencils.hpp"
#include "tests/support/tet_blocks.hpp"

namespace clockwork {
namespace {

using test::check_derivatives;
using test::derivative_errors;
using test::perturbed;
using test::random_rotation;
using test::rest_hinge;
using test::rest_tet;
using test::rest_triangle;

/// One plane of the weight sets the ticks make: a vertex, an edge point and a face point
/// of an obstacle contact, and the signed weights of vertex–triangle and edge–edge pairs.
const Eigen::Vector4d kWeightSets[] = {{1.0, 0.0, 0.0, 0.0},
                                       {0.3, 0.7, 0.0, 0.0},
                                       {0.2, 0.5, 0.3, 0.0},
                                       {1.0, -0.2, -0.5, -0.3},
                                       {0.6, 0.4, -0.3, -0.7}};

TickPlane plane(const Eigen::Vector4d& w, double offset, const std::array<Index, 4>& vertices) {
  TickPlane p;
  p.vertices = vertices;
  p.weights = w;
  p.normal = Vec3(0.2, -0.3, 1.0).normalized();
  p.offset = offset;
  p.stiffness = 3e4;
  return p;
}

/// A body's energy plus contact planes on it, as the implicit solves see it (BE's
/// elastic energy with its ground planes, a phantom tick's potential with its planes).
template <typename Body>
struct WithPlanes {
  const Body& body;
  std::vector<TickPlane> planes;
  double value(const Eigen::VectorXd& X) const {
    double v = body.value(X);
    for (const TickPlane& p : planes) v += p.value(X);
    return v;
  }
  void gradient(const Eigen::VectorXd& X, Eigen::VectorXd& out) const {
    body.gradient(X, out);
    Eigen::VectorXd g;
    for (const TickPlane& p : planes) {
      p.gradient(X, g);
      out += g;
    }
  }
  void hessian(const Eigen::VectorXd& X, Eigen::SparseMatrix<double>& out, bool project_psd) const {
    body.hessian(X, out, project_psd);
    Eigen::SparseMatrix<double> H;
    for (const TickPlane& p : planes) {
      p.hessian(X, H, project_psd);
      out += H;
    }
  }
};
static_assert(AssembledEnergy<WithPlanes<BodyPotential>>);

/// At rest (a minimum) the gradient is 0 and its central differences are rounding:
/// there the Hessian is checked, and that it is PSD so that its projection is itself.
void check_at_rest(const test::DerivativeErrors& e) {
  CAPTURE(e.hessian);
  CAPTURE(e.projection_change);
  CHECK(e.hessian < 1e-6);
  CHECK(e.asymmetry <= 1e-10);
  CHECK(e.hessian_psd);
  CHECK(e.negativity <= 1e-9);
  CHECK(e.projection_change <= 1e-9);
}

/// Planes under a body's vertices with the given stacked positions: every kWeightSets
/// entry on four of its vertices, pushing (offset above the surface point) or not.
std::vector<TickPlane> planes_on(const Eigen::VectorXd& X) {
  std::vector<TickPlane> planes;
  const Index n = static_cast<Index>(X.size() / 3);
  Index k = 0;
  for (const Eigen::Vector4d& w : kWeightSets) {
    const std::array<Index, 4> v{k % n, (k + 3) % n, (k + 5) % n, (k + 6) % n};
    TickPlane p = plane(w, 0.0, v);
    double height = 0.0;
    for (int i = 0; i < 4; ++i) height += w[i] * p.normal.dot(X.segment<3>(3 * v[i]));
    p.offset = height + (k % 2 == 0 ? 1e-3 : -1e-3);
    p.two_sided = k == 2;
    planes.push_back(p);
    ++k;
  }
  return planes;
}

/// A side × side cloth of squares, two triangles each, with its interior hinges.
struct DerivativeCloth {
  std::vector<Vec3> rest;
  BodyPotential potential;
  explicit DerivativeCloth(int side) : potential(static_cast<std::size_t>((side + 1) * (side + 1))) {
    const double h = 0.1;
    const auto id = [&](int i, int j) { return static_cast<Index>(i + (side + 1) * j); };
    for (int j = 0; j <= side; ++j)
      for (int i = 0; i <= side; ++i) rest.emplace_back(h * i, h * j, 0.01 * std::sin(3.0 * i + j));
    const auto [mu, lambda] = MembraneStVK::lame_plane_stress(1000.0, 0.3);
    std::vector<std::array<Index, 3>> triangles;
    for (int j = 0; j < side; ++j)
      for (int i = 0; i < side; ++i) {
        triangles.push_back({id(i, j), id(i + 1, j), id(i + 1, j + 1)});
        triangles.push_back({id(i, j), id(i + 1, j + 1), id(i, j + 1)});
      }
    for (const auto& t : triangles) {
      StencilPositions<3> x;
      for (int a = 0; a < 3; ++a) x.col(a) = rest[t[a]];
      potential.add_membrane(t, MembraneStVK::from_rest(x, mu, lambda));
    }
    // Hinges across every edge shared by two triangles (x0, x1 the edge, in A's order).
    for (std::size_t a = 0; a < triangles.size(); ++a)
      for (std::size_t b = a + 1; b < triangles.size(); ++b)
        for (int e = 0; e < 3; ++e) {
          const Index x0 = triangles[a][e], x1 = triangles[a][(e + 1) % 3], x2 = triangles[a][(e + 2) % 3];
          for (int f = 0; f < 3; ++f)
            if (triangles[b][f] == x1 && triangles[b][(f + 1) % 3] == x0) {
              const std::array<Index, 4> v{x0, x1, x2, triangles[b][(f + 2) % 3]};
              StencilPositions<4> x;
              for (int i = 0; i < 4; ++i) x.col(i) = rest[v[i]];
              potential.add_hinge(v, HingeBending::from_rest(x, 0.01));
            }
        }
    potential.set_gravity(Vec3(0, 0, -9.81), std::vector<double>(rest.size(), 0.02));
    Eigen::VectorXd wind(3 * rest.size());
    for (Eigen::Index k = 0; k < wind.size(); ++k) wind[k] = 0.01 * std::cos(double(k));
    potential.set_external_force(wind);
  }
};

}  // namespace

TEST_CASE("energy derivatives: spring, harmonic and FPU, stretched and compressed") {
  for (double beta : {0.0, 50.0}) {
    const SpringEnergy s{3.0, beta, 1.2};
    StencilPositions<2> rest;
    rest << 0, 1.2, 0, 0, 0, 0;
    for (double scale : {1e-3, 0.3, 1.0})
      for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        CAPTURE(beta);
        CAPTURE(scale);
        check_derivatives(s, perturbed(rest, scale, seed));
      }
  }
}

TEST_CASE("energy derivatives: membrane stretched, compressed, sheared and inverted") {
  const auto [mu, lambda] = MembraneStVK::lame_plane_stress(1000.0, 0.3);
  int indefinite = 0;
  for (double size : {1e-3, 1.0, 1e3}) {
    const auto rest = rest_triangle(size);
    const MembraneStVK m = MembraneStVK::from_rest(rest, mu, lambda);
    CAPTURE(size);
    check_at_rest(derivative_errors(m, rest));
    for (double strain : {0.01, 0.3})
      for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        CAPTURE(strain);
        indefinite += !check_derivatives(m, perturbed(rest, strain * size, seed)).hessian_psd;
      }
    StencilPositions<3> squashed = rest;
    squashed.col(2) = rest.col(0) + 0.5 * (rest.col(2) - rest.col(0));
    indefinite += !check_derivatives(m, squashed).hessian_psd;
    StencilPositions<3> inverted = rest;
    inverted(1, 2) = -rest(1, 2);
    check_derivatives(m, inverted);
  }
  CHECK(indefinite > 0);  // the projection was exercised where it matters
}

TEST_CASE("energy derivatives: hinge at every fold, also through plus or minus pi") {
  for (double size : {1e-3, 1.0, 1e3})
    for (double fold : {0.0, 0.7, -1.2, 2.9, -3.0}) {
      const HingeBending h = HingeBending::from_rest(rest_hinge(size, fold), 0.01);
      CAPTURE(size);
      CAPTURE(fold);
      for (std::uint64_t seed = 1; seed <= 4; ++seed)
        check_derivatives(h, perturbed(rest_hinge(size, fold), 0.1 * size, seed), 2e-6);
    }
}

TEST_CASE("energy derivatives: gravity") {
  const GravityEnergy g{2.0, Vec3(0, 0, -9.81)};
  StencilPositions<1> x;
  x << 1, 2, 3;
  check_derivatives(g, x);
}

TEST_CASE("energy derivatives: linear and corotational tets, rotated, stretched and inverted") {
  constexpr double kYoung = 1e5, kPoisson = 0.3;
  const StencilPositions<4> X = rest_tet(0.7);
  const LinearTet lin = LinearTet::from_rest(X, kYoung, kPoisson);
  const CorotationalTet co = CorotationalTet::from_rest(X, kYoung, kPoisson);
  int indefinite = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    CAPTURE(seed);
    const StencilPositions<4> x = perturbed(X, 0.15, seed);  // moderate deformation
    check_derivatives(lin, x);
    check_derivatives(co, x);
    // Strongly rotated and stretched: rotation × diag(1.8, 0.6, 1.2) × shear.
    Mat3 A = Vec3(1.8, 0.6, 1.2).asDiagonal();
    A(0, 1) = 0.4;
    const StencilPositions<4> y = ((random_rotation(seed) * A) * perturbed(X, 0.05, seed + 10)).colwise() +
                                  Vec3(3.0, -1.0, 2.0);
    indefinite += !check_derivatives(co, y).hessian_psd;
  }
  // Vertex 3 pushed through the opposite face: det F < 0 (the signed SVD's branch).
  StencilPositions<4> inverted = X;
  inverted.col(3) = X.col(0) + 0.1 * (X.col(1) - X.col(0)) + 0.2 * (X.col(2) - X.col(0)) + Vec3(0.05, 0.1, -0.4);
  REQUIRE(signed_volume(inverted) < 0.0);
  check_derivatives(co, inverted);
  check_derivatives(lin, inverted);
  // Compressed to half along one axis: the corotational Hessian is indefinite there.
  StencilPositions<4> squashed = X;
  squashed.row(2) *= 0.5;
  indefinite += !check_derivatives(co, squashed).hessian_psd;
  CHECK(indefinite > 0);
}

TEST_CASE("energy derivatives: penalty layer for every pair type and closest-feature region") {
  for (const test::PairState& state : test::pair_states()) {
    const PenaltyLayer p = PenaltyLayer::of(state.type, 0.5, 1e3, 2);
    CAPTURE(state.region);
    REQUIRE(p.pushes(pair_closest(p.type, state.x).distance));
    check_derivatives(p, state.x, 1e-5);
  }
  const PenaltyLayer ee = PenaltyLayer::of(PairType::EdgeEdge, 0.5, 1e3, 2);
  StencilPositions<4> apart;
  // Outside the layer: zero, and so are its derivatives.
  apart << 0, 1, 0.5, 0.5, 0, 0, -1, 1, 0, 0, 1, 1;
  REQUIRE(!ee.pushes(pair_closest(ee.type, apart).distance));
  check_derivatives(ee, apart);
  CHECK(ee.value(apart) == 0.0);
}

TEST_CASE("energy derivatives: tick planes, friction anchors, pushing and not") {
  StencilPositions<4> rest;
  rest << 0.0, 0.01, 0.0, 0.01, 0.0, 0.0, 0.01, 0.01, 0.0, 0.0, 0.0, 0.002;
  const StencilPositions<4> x = perturbed<4>(rest, 2e-4, 7);
  int pushing = 0;
  for (const Eigen::Vector4d& w : kWeightSets)
    for (const double offset : {2e-3, -2e-3})  // the surface point 2 mm inside / outside
      for (const bool anchor : {false, true}) {
        // A friction anchor: a two-sided spring along a tangent (SolveContact::add_friction).
        TickPlane p = plane(w, offset, {7, 3, 9, 1});
        p.two_sided = p.friction = anchor;
        if (anchor) p.normal = Vec3(1.0, 0.5, 0.2).normalized();
        CAPTURE(w.transpose());
        CAPTURE(offset);
        CAPTURE(anchor);
        pushing += p.value(x) > 0.0;
        check_derivatives(p, x);
      }
  CHECK(pushing == 15);  // the one-sided planes inside, and every anchor
}

TEST_CASE("assembled derivatives: a cloth's BodyPotential, alone and with planes") {
  DerivativeCloth cloth(3);  // 16 vertices, 18 membranes
  const Eigen::VectorXd rest = test::stacked(cloth.rest);
  // At rest every element block is PSD: the projection changes nothing.
  check_at_rest(derivative_errors(cloth.potential, rest, 0.1));
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-0.02, 0.02);
  Eigen::VectorXd X = rest;
  for (Eigen::Index k = 0; k < X.size(); ++k) X[k] += u(rng);
  test::DerivativeErrors e = derivative_errors(cloth.potential, X, 0.1);
  e.projection_change = 0.0;  // blocks projected one by one: not the sum's projection
  test::check_errors(e, 1e-6);
  WithPlanes<BodyPotential> contact{cloth.potential, planes_on(X)};
  e = derivative_errors(contact, X, 0.1);
  e.projection_change = 0.0;
  test::check_errors(e, 1e-6);
}

TEST_CASE("assembled derivatives: TetFemModel of each kind with per-tet materials, with planes") {
  const test::TetBlock block = test::tet_block(2, 1, 1, 0.5);  // 12 vertices, 12 tets
  std::vector<TetMaterial> materials;
  for (std::size_t e = 0; e < block.tets.size(); ++e)
    materials.push_back({1e5 * (1.0 + e), 0.2 + 0.02 * e, 1000.0});
  const Eigen::VectorXd rest = test::stacked(block.vertices);
  for (FemKind kind : {FemKind::Linear, FemKind::Corotational}) {
    CAPTURE(int(kind));
    const TetFemModel model(block.vertices, block.tets, materials, kind);
    check_at_rest(derivative_errors(model, rest, 0.5));
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      std::mt19937_64 rng(seed);
      std::uniform_real_distribution<double> u(-0.08, 0.08);
      Eigen::VectorXd X = rest;
      for (Eigen::Index k = 0; k < X.size(); ++k) X[k] += u(rng);
      test::DerivativeErrors e = derivative_errors(model, X, 0.5);
      if (kind == FemKind::Corotational) e.projection_change = 0.0;  // per block, as above
      test::check_errors(e, 1e-6);
      const WithPlanes<TetFemModel> contact{model, planes_on(X)};
      e = derivative_errors(contact, X, 0.5);
      e.projection_change = 0.0;
      test::check_errors(e, 1e-6);
    }
  }
}

TEST_CASE("assembled derivatives: one tick plane over a body's stacked positions") {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-0.01, 0.01);
  Eigen::VectorXd X(3 * 10);
  for (Eigen::Index k = 0; k < X.size(); ++k) X[k] = u(rng);
  for (const Eigen::Vector4d& w : kWeightSets) {
    CAPTURE(w.transpose());
    const TickPlane p = plane(w, 5e-3, {8, 2, 5, 0});
    check_derivatives(p, X, 0.01);
  }
}

TEST_CASE("derivative harness self-check: wrong derivatives and a wrong projection fail") {
  // Each wrong term is a correct one with one derivative broken slightly.
  struct WrongGradient : SpringEnergy {
    StencilVector<2> gradient(const StencilPositions<2>& x) const { return 1.001 * SpringEnergy::gradient(x); }
  };
  struct WrongHessian : SpringEnergy {  // leaves out the geometric (dV/dl)/l term
    StencilMatrix<2> hessian(const StencilPositions<2>& x, bool = false) const {
      const Vec3 u = (x.col(1) - x.col(0)).normalized();
      const Mat3 K = stiffness * u * u.transpose();
      StencilMatrix<2> H;
      H << K, -K, -K, K;
      return H;
    }
  };
  struct WrongProjection : SpringEnergy {  // "projects" by returning H unchanged
    StencilMatrix<2> hessian(const StencilPositions<2>& x, bool = false) const {
      return SpringEnergy::hessian(x, false);
    }
  };
  static_assert(EnergyTerm<WrongGradient> && EnergyTerm<WrongHessian> && EnergyTerm<WrongProjection>);
  const SpringEnergy right{3.0, 0.0, 1.2};
  StencilPositions<2> compressed;  // l = 0.8 < L: the spring's Hessian is indefinite
  compressed << 0, 0.7, 0, 0.3, 0, 0.2;
  const test::DerivativeErrors ok = check_derivatives(right, compressed);
  CHECK(!ok.hessian_psd);
  CHECK(derivative_errors(WrongGradient{right}, compressed).gradient > 1e-4);
  CHECK(derivative_errors(WrongHessian{right}, compressed).hessian > 1e-2);
  CHECK(derivative_errors(WrongProjection{right}, compressed).negativity > 1e-2);
  // Assembled: a body whose gradient forgets its external force.
  struct ForgetsWind {
    const BodyPotential& body;
    Eigen::VectorXd wind;
    double value(const Eigen::VectorXd& X) const { return body.value(X); }
    void gradient(const Eigen::VectorXd& X, Eigen::VectorXd& out) const {
      body.gradient(X, out);
      out += wind;
    }
    void hessian(const Eigen::VectorXd& X, Eigen::SparseMatrix<double>& out, bool p) const {
      body.hessian(X, out, p);
    }
  };
  DerivativeCloth cloth(2);
  Eigen::VectorXd wind = Eigen::VectorXd::Constant(3 * static_cast<Eigen::Index>(cloth.rest.size()), 0.01);
  cloth.potential.set_external_force(wind);
  const Eigen::VectorXd rest = test::stacked(cloth.rest);
  CHECK(derivative_errors(cloth.potential, rest, 0.1).gradient < 1e-6);
  CHECK(derivative_errors(ForgetsWind{cloth.potential, wind}, rest, 0.1).gradient > 1e-3);
}

}  // namespace clockwork
