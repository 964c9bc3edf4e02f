// Slab certificates against brute force: on random linear trajectories the
// certificate's failure time is never later than the first sampled time at which
// the true distance is below the certified threshold.
#include <doctest/doctest.h>

#include <random>

#include "contact/intersections/intersection_check.hpp"
#include "contact/certificates/slab.hpp"

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
  // plane moves at −0.5 m/s (mean of the sides' fastest approach speeds), the vertex
  // reaches it minus the half width when 1 − t = 0.5 − 0.5 t + 0.1, i.e. t = 0.8 —
  // exactly when the gap has closed to the threshold.
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

TEST_CASE("with velocity envelopes, failure times hold for every velocity history inside them") {
  // Piecewise-constant velocities that jump every 0.02 s to a random point of the
  // envelope |v − u| <= δ (u: the velocities the certificate was computed with).
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> u(-1.0, 1.0), threshold_dist(0.01, 0.3);
  const double slack = 0.3, horizon = 2.0, dt = 0.005;
  int certified = 0, crossed = 0;
  for (int k = 0; certified < 10000; ++k) {
    const PairType type = k % 2 ? PairType::EdgeEdge : PairType::VertexTriangle;
    const Trajectory tr = random_trajectory(rng, type, k / 2);
    const double threshold = threshold_dist(rng);
    const auto slab = make_slab(type, tr.x, tr.v, 0.0, threshold);
    if (!slab) continue;
    ++certified;
    const double tf = slab_failure_time<4>(*slab, side_a_count(type), tr.x, tr.v, 0.0, slack);
    REQUIRE(tf > 0.0);
    StencilPositions<4> x = tr.x, v = tr.v;
    double first_below = kNever;
    for (int s = 1; s * dt <= horizon && s * dt < tf; ++s) {
      if (s % 4 == 1) {
        for (int j = 0; j < 4; ++j) {
          Vec3 r(u(rng), u(rng), u(rng));
          while (r.norm() > 1.0) r = Vec3(u(rng), u(rng), u(rng));
          v.col(j) = tr.v.col(j) + slack * r;
        }
      }
      x += dt * v;
      if (pair_closest(type, x).distance < threshold) {
        first_below = s * dt;
        break;
      }
    }
    if (tf < horizon) ++crossed;
    CAPTURE(k);
    REQUIRE(tf <= first_below);
  }
  MESSAGE(certified << " certified, " << crossed << " fail within the horizon");
  CHECK(crossed > 2000);
}

/// The phantom-mesh paper's slab: six vertices, two triangles, one plane, with the
/// normal `choose_normal(x, closest-point normal, rng)`. The true distance is the
/// triangles' (triangle_pair_gap while they are apart; zero once the independent
/// exact test finds them intersecting).
template <typename ChooseNormal>
void check_triangle_pair_slabs(std::uint64_t seed, ChooseNormal choose_normal) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0), threshold_dist(0.01, 0.3);
  const double horizon = 2.0;
  const int samples = 400;
  const auto below = [](const StencilPositions<6>& x, double threshold) {
    if (triangle_pair_gap(x).distance < threshold) return true;
    // Apart by the gap or intersecting: the exact test decides (the gap is not a
    // distance for intersecting triangles). Disjoint boxes cannot intersect.
    const Eigen::Vector3d lo_a = x.leftCols(3).rowwise().minCoeff(), hi_a = x.leftCols(3).rowwise().maxCoeff();
    const Eigen::Vector3d lo_b = x.rightCols(3).rowwise().minCoeff(), hi_b = x.rightCols(3).rowwise().maxCoeff();
    if ((hi_a.array() < lo_b.array()).any() || (hi_b.array() < lo_a.array()).any()) return false;
    return triangles_intersect(x.col(0), x.col(1), x.col(2), x.col(3), x.col(4), x.col(5));
  };
  int certified = 0, crossed = 0;
  for (int k = 0; certified < 10000; ++k) {
    StencilPositions<6> x, v;
    for (int j = 0; j < 6; ++j)
      for (int i = 0; i < 3; ++i) {
        x(i, j) = u(rng) + (j >= 3 && i == 2 ? 1.0 : 0.0);
        v(i, j) = u(rng);
      }
    if (k % 2 == 0) {  // aimed at each other
      const Vec3 d = x.rightCols(3).rowwise().mean() - x.leftCols(3).rowwise().mean();
      v.leftCols(3).colwise() += 0.6 * d;
      v.rightCols(3).colwise() -= 0.6 * d;
    }
    if (k % 8 == 1) x.col(5) = x.col(3), v.col(5) = v.col(3);  // B collapsed to an edge
    if (k % 8 == 3) x.col(1) = x.col(2) = x.col(0), v.col(1) = v.col(2) = v.col(0);  // A a point
    if (k % 8 == 5) v.rightCols(3).colwise() = v.col(3);  // B rigid
    const double threshold = threshold_dist(rng);
    const TriangleGap g = triangle_pair_gap(x);
    if (!(g.distance > 0.0)) continue;
    const Vec3 n = choose_normal(Vec3(-g.y / g.distance), rng);
    const auto slab = separation_slab<6>(x, 3, n, v, 0.0, threshold);
    if (!slab) continue;
    ++certified;
    const double tf = slab_failure_time<6>(*slab, 3, x, v, 0.0);
    REQUIRE(tf > 0.0);
    // Only samples before the failure time can contradict the certificate.
    double first_below = kNever;
    for (int s = 1; s <= samples && horizon * s / samples < tf; ++s) {
      const double t = horizon * s / samples;
      if (below(x + t * v, threshold)) {
        first_below = t;
        break;
      }
    }
    if (tf < horizon) ++crossed;
    CAPTURE(k);
    CAPTURE(x);
    CAPTURE(v);
    CAPTURE(threshold);
    REQUIRE(tf <= first_below);
  }
  MESSAGE(certified << " triangle pairs certified, " << crossed << " fail within the horizon");
  CHECK(crossed > 2000);
}

TEST_CASE("triangle-pair slab failure times are conservative on 1e4 random trajectories") {
  check_triangle_pair_slabs(19, [](const Vec3& closest, std::mt19937_64&) { return closest; });
}

TEST_CASE("triangle-pair slabs along a tilted normal are conservative") {
  // The closest-point normal gives the longest life, but any unit normal along which
  // the triangles are apart must certify.
  check_triangle_pair_slabs(23, [](const Vec3& closest, std::mt19937_64& rng) {
    std::normal_distribution<double> tilt(0.0, 0.3);
    return Vec3(closest + Vec3(tilt(rng), tilt(rng), tilt(rng))).normalized();
  });
}

}  // namespace
}  // namespace clockwork
