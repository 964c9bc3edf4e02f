// Slab certificates against brute force: on random linear trajectories the
// certificate's failure time is never later than the first sampled time at which
// the true distance is below the certified threshold.
#include <doctest/doctest.h>

#include <random>

#include "contact/slab.hpp"

namespace clockwork {
namespace {

struct Trajectory {
  StencilPositions<4> x, v;
};

/// Random pair motion; every fourth one degenerate (parallel or zero-length edges,
/// collinear or collapsed triangles, vertex aligned with a triangle vertex).
Trajectory random_trajectory(std::mt19937_64& rng, PairType type, int k) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Trajectory tr;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) {
      tr.x(i, j) = u(rng);
      tr.v(i, j) = u(rng);
    }
  // Half of the pairs are aimed at each other, so that many cross the threshold.
  if (k % 2 == 0) {
    const int split = type == PairType::VertexTriangle ? 1 : 2;
    const Vec3 ca = tr.x.leftCols(split).rowwise().mean();
    const Vec3 cb = tr.x.rightCols(4 - split).rowwise().mean();
    tr.v.leftCols(split).colwise() += 0.6 * (cb - ca);
    tr.v.rightCols(4 - split).colwise() -= 0.6 * (cb - ca);
  }
  switch (k % 8) {
    case 1:  // parallel edges, moving rigidly or not
      if (type == PairType::EdgeEdge) {
        tr.x.col(3) = tr.x.col(2) + 0.7 * (tr.x.col(1) - tr.x.col(0));
        if (k % 16 == 1) tr.v.col(3) = tr.v.col(2), tr.v.col(1) = tr.v.col(0);
      } else {  // vertex straight above a triangle vertex
        tr.x.col(0) = tr.x.col(1) + Vec3(0, 0, 0.5);
      }
      break;
    case 3:  // collinear triangle / collinear edges
      tr.x.col(3) = 2.0 * tr.x.col(2) - tr.x.col(1);
      tr.v.col(3) = 2.0 * tr.v.col(2) - tr.v.col(1);
      break;
    case 5:  // zero-length edge / triangle collapsed to an edge
      tr.x.col(3) = tr.x.col(2);
      tr.v.col(3) = tr.v.col(2);
      break;
    case 7:  // the whole pair in one plane, moving in it
      tr.x.row(2).setZero();
      tr.v.row(2).setZero();
      break;
    default:
      break;
  }
  return tr;
}

void run_brute_force(PairType type) {
  std::mt19937_64 rng(type == PairType::EdgeEdge ? 11 : 13);
  std::uniform_real_distribution<double> threshold_dist(0.01, 0.3);
  const double horizon = 2.0;
  const int samples = 400;
  int certified = 0, crossed = 0, never = 0;
  for (int k = 0; certified < 10000; ++k) {
    const Trajectory tr = random_trajectory(rng, type, k);
    const double threshold = threshold_dist(rng);
    const auto slab = make_slab(type, tr.x, tr.v, 0.0, threshold);
    if (!slab) {
      CHECK(pair_closest(type, tr.x).distance <= threshold);
      continue;
    }
    ++certified;
    const double tf = slab_failure_time(*slab, type, tr.x, tr.v, 0.0);
    REQUIRE(tf > 0.0);
    if (tf == kNever) ++never;
    double first_below = kNever;
    for (int s = 1; s <= samples; ++s) {
      const double t = horizon * s / samples;
      const StencilPositions<4> xt = tr.x + t * tr.v;
      if (pair_closest(type, xt).distance < threshold) {
        first_below = t;
        break;
      }
    }
    if (first_below < kNever) ++crossed;
    CAPTURE(k);
    CAPTURE(tr.x);
    CAPTURE(tr.v);
    CAPTURE(threshold);
    REQUIRE(tf <= first_below);
    // Re-evaluating later on the same trajectory (a reschedule without a velocity
    // change) gives the same failure time.
    if (tf < kNever) {
      const double tm = 0.5 * tf;
      const double tf2 = slab_failure_time(*slab, type, tr.x + tm * tr.v, tr.v, tm);
      REQUIRE(tf2 == doctest::Approx(tf).epsilon(1e-9));
    }
  }
  MESSAGE(certified << " certified, " << crossed << " crossed the threshold within "
                    << horizon << " s, " << never << " never fail");
  CHECK(crossed > 2000);  // the test exercises approaching pairs, not just receding ones
  CHECK(never > 100);
}

TEST_CASE("vertex-triangle slab failure times are conservative on 1e4 random trajectories") {
  run_brute_force(PairType::VertexTriangle);
}

TEST_CASE("edge-edge slab failure times are conservative on 1e4 random trajectories") {
  run_brute_force(PairType::EdgeEdge);
}

TEST_CASE("slab: exact failure time for two approaching parallel planes") {
  // Vertex at height 1 falling at 1 m/s onto a static triangle, threshold 0.2: the
  // plane moves at −0.5 m/s (mean of both sides), the vertex reaches it minus the half
  // width when 1 − t = 0.5 − 0.5 t + 0.1, i.e. t = 0.8.
  StencilPositions<4> x, v = StencilPositions<4>::Zero();
  x.col(0) = Vec3(0.2, 0.2, 1.0);
  x.col(1) = Vec3(0, 0, 0);
  x.col(2) = Vec3(1, 0, 0);
  x.col(3) = Vec3(0, 1, 0);
  v.col(0) = Vec3(0, 0, -1);
  const auto slab = make_slab(PairType::VertexTriangle, x, v, 0.0, 0.2);
  REQUIRE(slab);
  CHECK(slab->normal.isApprox(Vec3(0, 0, -1)));
  CHECK(slab_failure_time(*slab, PairType::VertexTriangle, x, v, 0.0) ==
        doctest::Approx(0.8).epsilon(1e-12));
  CHECK_FALSE(make_slab(PairType::VertexTriangle, x, v, 0.0, 1.0));
}

}  // namespace
}  // namespace clockwork
