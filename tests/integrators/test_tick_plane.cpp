// The contact plane of an implicit tick (integrators/tick_plane.hpp): value, gradient
// and Hessian from the same violation, checked by central differences where the plane
// pushes and where it does not, for obstacle features (a vertex, an edge point, a face
// point) and self-contact pairs (vertex–triangle and edge–edge signed weights).
#include <doctest/doctest.h>

#include "integrators/tick_plane.hpp"
#include "tests/support/finite_difference.hpp"

namespace clockwork {
namespace {

/// The plane as a 3-vertex stencil term for the derivative harness.
struct PlaneTerm {
  static constexpr int kVertices = 4;
  TickPlane plane;
  static Eigen::VectorXd flat(const StencilPositions<4>& x) {
    return Eigen::Map<const Eigen::VectorXd>(x.data(), 12);
  }
  double value(const StencilPositions<4>& x) const { return plane.value(flat(x)); }
  StencilVector<4> gradient(const StencilPositions<4>& x) const {
    Eigen::VectorXd g = Eigen::VectorXd::Zero(12);
    plane.add_gradient(flat(x), g, [](Index) { return true; });
    return g;
  }
  StencilMatrix<4> hessian(const StencilPositions<4>& x) const {
    StencilMatrix<4> H = StencilMatrix<4>::Zero();
    plane.add_hessian(flat(x), [](Index) { return true; },
                      [&](Index a, Index b, const Mat3& block) { H.block<3, 3>(3 * a, 3 * b) += block; });
    return H;
  }
};

TEST_CASE("tick plane: derivatives by central differences, pushing and not") {
  StencilPositions<4> rest;
  rest << 0.0, 0.01, 0.0, 0.01,  //
      0.0, 0.0, 0.01, 0.01,      //
      0.0, 0.0, 0.0, 0.002;
  const Eigen::Vector4d weight_sets[] = {{1.0, 0.0, 0.0, 0.0},     {0.3, 0.7, 0.0, 0.0},
                                         {0.2, 0.5, 0.3, 0.0},     {1.0, -0.2, -0.5, -0.3},
                                         {0.6, 0.4, -0.3, -0.7}};
  int pushing = 0;
  for (const Eigen::Vector4d& w : weight_sets)
    for (const double offset : {2e-3, -2e-3}) {  // the surface point 2 mm inside / outside
      PlaneTerm t;
      t.plane.vertices = {0, 1, 2, 3};
      t.plane.weights = w;
      t.plane.normal = Vec3(0.2, -0.3, 1.0).normalized();
      t.plane.offset = offset;
      t.plane.stiffness = 3e4;
      const StencilPositions<4> x = test::perturbed<4>(rest, 2e-4, 7);
      CAPTURE(w.transpose());
      CAPTURE(offset);
      const double v = t.plane.violation(PlaneTerm::flat(x));
      if (offset > 0.0) {
        CHECK(v > 5e-4);
        ++pushing;
        test::check_derivatives(t, x, 1e-6);
        // The force pushes along +n, and the same total as k v.
        const StencilVector<4> g = t.gradient(x);
        Vec3 total = Vec3::Zero();
        for (int i = 0; i < 4; ++i) total -= g.segment<3>(3 * i);
        // (A pair's weights sum to 0: no net force, as the layers' impulses.)
        CHECK((total - t.plane.stiffness * v * w.sum() * t.plane.normal).norm() <=
              1e-12 * (total.norm() + t.plane.stiffness * v));
      } else {
        CHECK(v == 0.0);
        CHECK(t.value(x) == 0.0);
        CHECK(t.gradient(x).isZero());
        CHECK(t.hessian(x).isZero());
      }
    }
  CHECK(pushing == 5);
}

}  // namespace
}  // namespace clockwork
