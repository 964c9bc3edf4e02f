#include <doctest/doctest.h>

#include "engine/vertex_state.hpp"

using namespace clockwork;

TEST_CASE("a vertex drifts linearly from its own clock, sync folds the drift in") {
  VertexState s;
  const Index a = s.add(Vec3(1, 2, 3), Vec3(0.5, -1, 2), 2.0, /*t=*/1.0);
  CHECK(s.position_at(a, 1.0) == Vec3(1, 2, 3));
  CHECK(s.position_at(a, 3.0).isApprox(Vec3(2, 0, 7)));
  CHECK(s.clock(a) == 1.0);  // reading did not sync
  s.sync(a, 3.0);
  CHECK(s.clock(a) == 3.0);
  CHECK(s.position(a).isApprox(Vec3(2, 0, 7)));
  // After a velocity change at t = 3 the new velocity applies from t = 3 on.
  s.velocity_ref(a) = Vec3(1, 0, 0);
  CHECK(s.position_at(a, 4.0).isApprox(Vec3(3, 0, 7)));
  CHECK(s.inv_mass(a) == 0.5);
}

TEST_CASE("kinematic vertices have infinite mass and zero inverse mass") {
  VertexState s;
  const Index a = s.add(Vec3::Zero(), Vec3(1, 0, 0), kNever);
  CHECK(s.kinematic(a));
  CHECK(s.inv_mass(a) == 0.0);
  CHECK(s.position_at(a, 2.0) == Vec3(2, 0, 0));
}
