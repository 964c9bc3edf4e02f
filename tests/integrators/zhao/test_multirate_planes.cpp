// Zhao's multi-rate step with contact planes that act from a later substep
// (TickPlane::first_substep, integrators/zhao/multirate_planes.cpp; issue 41): the
// Schur path against the assembled eq. 23 with the planes' blocks, and causality —
// a plane from substep q leaves the substeps before q as they were without it.
#include <doctest/doctest.h>

#include <vector>

#include "integrators/zhao/multirate_solver.hpp"
#include "tests/support/multirate_bar.hpp"

namespace clockwork {

using namespace test;

namespace {

/// A two-sided plane under vertex a, 1 mm above it (it pushes at x0), acting from `first`.
TickPlane plane_under(const Bar& b, Index a, int first) {
  TickPlane p;
  p.vertices = {a, 0, 0, 0};
  p.normal = Vec3(0.3, 0.2, 1.0).normalized();
  p.offset = p.normal.dot(Vec3(b.x0.segment<3>(3 * a))) + 1e-3;
  p.stiffness = 2e4;
  p.two_sided = true;
  p.first_substep = first;
  return p;
}

}  // namespace

TEST_CASE("multirate planes: planes from later substeps, Schur path equals the direct solve of eq. 23") {
  for (FemKind kind : {FemKind::Linear, FemKind::Corotational})
    for (MultirateCoupling coupling : kCouplings) {
      CAPTURE(int(kind));
      CAPTURE(int(coupling));
      const Bar b = make_bar(kind, 3);
      MultirateSettings s;
      s.h_L = 0.01;
      s.rayleigh_alpha = 0.2;
      s.rayleigh_beta = 1e-3;
      s.coupling = coupling;
      const std::vector<Index> end = end_vertices(b, 0.2);
      MultirateSolver solver(*b.model, {{"end", end, 5}}, b.fixed, s);
      // From substeps 1, 3, 3 (two planes), 5 and 7 (> m: never) on region vertices, and
      // one on an L vertex (first_substep ignored there: from the start).
      const Index l = solver.large_vertices().back();
      std::vector<TickPlane> planes = {plane_under(b, end[0], 1), plane_under(b, end[1], 3),
                                       plane_under(b, end[2], 3), plane_under(b, end[3], 5),
                                       plane_under(b, end[4], 7), plane_under(b, l, 3)};
      solver.set_planes(planes);
      MultirateStep schur, direct;
      solver.step(b.x0, b.v0, b.f_ext, schur);
      solver.step_direct(b.x0, b.v0, b.f_ext, direct);
      CHECK(relative(schur.dv_L, direct.dv_L) < 1e-10);
      for (std::size_t r = 0; r < 5; ++r) {
        CAPTURE(r);
        CHECK(relative(schur.dv_S[0][r], direct.dv_S[0][r]) < 1e-10);
      }
      // The plane from substep 7 > m = 5 does nothing.
      planes.erase(planes.begin() + 4);
      solver.set_planes(planes);
      MultirateStep without;
      solver.step(b.x0, b.v0, b.f_ext, without);
      CHECK(relative(without.dv_L, schur.dv_L) < 1e-12);
      CHECK(relative(without.dv_S[0][4], schur.dv_S[0][4]) < 1e-12);
    }
}

TEST_CASE("multirate planes: a plane from substep q leaves the substeps before q unchanged") {
  // The whole free bar one region (no L, whose Δv^L would carry the later substeps'
  // forces back): substep r depends on substeps ≤ r only.
  const Bar b = make_bar(FemKind::Corotational, 5);
  MultirateSettings s;
  s.h_L = 0.01;
  s.rayleigh_beta = 1e-3;
  std::vector<Index> all;
  for (Index a = 0; a < b.mesh.vertices.size(); ++a)
    if (!b.fixed[a]) all.push_back(a);
  MultirateSolver solver(*b.model, {{"all", all, 4}}, b.fixed, s);
  MultirateStep free_step, with;
  solver.set_planes({});
  solver.step(b.x0, b.v0, b.f_ext, free_step);
  const std::vector<TickPlane> planes = {plane_under(b, all.back(), 3)};
  solver.set_planes(planes);
  solver.step(b.x0, b.v0, b.f_ext, with);
  CHECK(relative(with.dv_S[0][0], free_step.dv_S[0][0]) < 1e-12);
  CHECK(relative(with.dv_S[0][1], free_step.dv_S[0][1]) < 1e-12);
  // From substep 3 the plane pushes the vertex along its normal.
  const Vec3 n = planes[0].normal;
  const auto o = 3 * static_cast<Eigen::Index>(all.back());
  CHECK(n.dot(Vec3((with.dv_S[0][2] - free_step.dv_S[0][2]).segment<3>(o))) > 1e-4);
}

}  // namespace clockwork
