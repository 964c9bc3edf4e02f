// The contact plane of an implicit tick (integrators/energy/tick_plane.hpp): where it pushes
// and where it does not, for obstacle features (a vertex, an edge point, a face point)
// and self-contact pairs (vertex–triangle and edge–edge signed weights), and its two
// views (a stencil term, an energy over the body's positions) agreeing. Its derivatives
// by central differences: test_energy_derivatives.cpp.
#include <doctest/doctest.h>

#include "integrators/energy/tick_plane.hpp"
#include "tests/support/finite_difference.hpp"

namespace clockwork {
namespace {

TEST_CASE("tick plane: pushes along its normal where violated, nothing elsewhere") {
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
      TickPlane plane;
      plane.vertices = {0, 1, 2, 3};
      plane.weights = w;
      plane.normal = Vec3(0.2, -0.3, 1.0).normalized();
      plane.offset = offset;
      plane.stiffness = 3e4;
      const StencilPositions<4> x = test::perturbed<4>(rest, 2e-4, 7);
      const Eigen::VectorXd X = x.reshaped();
      CAPTURE(w.transpose());
      CAPTURE(offset);
      const double v = plane.violation(X);
      // The stencil view is the body view on vertices 0..3.
      Eigen::VectorXd g_body;
      plane.gradient(X, g_body);
      CHECK(plane.value(x) == plane.value(X));
      CHECK(Eigen::VectorXd(plane.gradient(x)) == g_body);
      Eigen::SparseMatrix<double> H_body;
      plane.hessian(X, H_body);
      CHECK(Eigen::MatrixXd(plane.hessian(x)) == Eigen::MatrixXd(H_body));
      if (offset > 0.0) {
        CHECK(v > 5e-4);
        ++pushing;
        // The force pushes along +n, and the same total as k v.
        const StencilVector<4> g = plane.gradient(x);
        Vec3 total = Vec3::Zero();
        for (int i = 0; i < 4; ++i) total -= g.segment<3>(3 * i);
        // (A pair's weights sum to 0: no net force, as the layers' impulses.)
        CHECK((total - plane.stiffness * v * w.sum() * plane.normal).norm() <=
              1e-12 * (total.norm() + plane.stiffness * v));
      } else {
        CHECK(v == 0.0);
        CHECK(plane.value(x) == 0.0);
        CHECK(plane.gradient(x).isZero());
        CHECK(plane.hessian(x).isZero());
      }
    }
  CHECK(pushing == 5);
}

}  // namespace
}  // namespace clockwork
