// The Schroeder stepper's angular-momentum rotation and the energy (docs/schroeder.md
// "Schroeder", decisions 13 and 14; issue 41): a free corotational bar (no gravity, no
// obstacles, no damping) spinning fast, for each scheme. The rigid rotation that gives
// each event back the angular momentum its solves lost is cut where all of it would
// spend more energy than the body has dissipated. Energy (kinetic + elastic) is
// recomputed from the stepper's state (xⁿ, vⁿ) after every velocity update; angular
// momentum from the kernel's velocities v^{n+½} (what the rotation keeps) after every
// position update.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cmath>

#include "integrators/schroeder/schroeder_scheme.hpp"
#include "io/mesh/tet_mesh.hpp"

namespace clockwork {
namespace {

/// A 0.2 × 0.075 × 0.075 m corotational bar (432 tets, 1 MPa, 1000 kg/m³) about the
/// origin: its 3 × 3 cross-section leaves tets with no boundary vertex, the
/// asynchronous scheme's fully-implicit set I (automatic partition, §7).
struct Bar {
  TetMesh mesh;
  std::vector<TetMaterial> materials;
  std::unique_ptr<TetFemModel> model;
  std::vector<bool> surface;
};

Bar make_bar() {
  Bar b;
  b.mesh = make_tet_bar(Vec3(-0.1, -0.0375, -0.0375), 8, 3, 3, 0.025);
  b.materials.assign(b.mesh.tets.size(), TetMaterial{1e6, 0.3, 1000.0});
  b.model = std::make_unique<TetFemModel>(b.mesh.vertices, b.mesh.tets, b.materials,
                                          FemKind::Corotational);
  b.surface = tets_touching_faces(b.mesh.tets, boundary_faces(b.mesh), b.mesh.vertices.size());
  return b;
}

double kinetic(const TetFemModel& m, const Eigen::VectorXd& v) {
  double e = 0.0;
  for (std::size_t a = 0; a < m.vertex_count(); ++a)
    e += 0.5 * m.lumped_mass()[a] * v.segment<3>(3 * a).squaredNorm();
  return e;
}

Vec3 angular(const TetFemModel& m, const Eigen::VectorXd& x, const Eigen::VectorXd& v) {
  Vec3 L = Vec3::Zero();
  for (std::size_t a = 0; a < m.vertex_count(); ++a)
    L += Vec3(x.segment<3>(3 * a)).cross(m.lumped_mass()[a] * Vec3(v.segment<3>(3 * a)));
  return L;
}

struct Run {
  double initial = 0.0, highest = 0.0, final_energy = 0.0;
  double L_scale = 0.0;       ///< Σ |x × m v| at the start
  double L_worst_uncut = 0.0;  ///< largest |ΔL| of an event whose rotation was not cut
  std::uint64_t cuts = 0, steps = 0, safeguarded = 0, splits = 0;
};

/// 0.3 s of the bar spinning at `spin` rad/s about a transverse axis.
Run run(const Bar& b, SchroederSettings s, double spin, bool keep) {
  s.keep_angular_momentum = keep;
  SchroederStepper st(*b.model, b.materials, b.surface, {}, Vec3::Zero(), s);
  const std::size_t n = b.mesh.vertices.size();
  Eigen::VectorXd x(3 * n), v(3 * n), w(3 * n);
  Run r;
  for (std::size_t a = 0; a < n; ++a) {
    x.segment<3>(3 * a) = b.mesh.vertices[a];
    v.segment<3>(3 * a) = Vec3(0.0, spin, 0.0).cross(b.mesh.vertices[a]);
    r.L_scale += b.model->lumped_mass()[a] *
                 Vec3(x.segment<3>(3 * a)).cross(Vec3(v.segment<3>(3 * a))).norm();
  }
  r.initial = r.highest = r.final_energy = kinetic(*b.model, v) + st.elastic_energy(x);
  const int steps = static_cast<int>(std::ceil(0.3 / st.substep()));
  Vec3 L_before = Vec3::Zero();
  for (int k = 0; k < steps; ++k) {
    const std::uint64_t cuts = st.counters().rotation_limited, splits = st.counters().split_steps;
    st.position_update(x, v, w);
    const Vec3 L = angular(*b.model, x, w);  // = x^{n+1} × m w: the drift keeps it
    // (A step split by the whole-step check, decision 16, does not keep L either.)
    if (k > 0 && st.counters().rotation_limited == cuts && st.counters().split_steps == splits)
      r.L_worst_uncut = std::max(r.L_worst_uncut, (L - L_before).norm());
    L_before = L;
    x += st.substep() * w;
    st.velocity_update(x, v);
    r.final_energy = kinetic(*b.model, v) + st.elastic_energy(x);
    r.highest = std::max(r.highest, r.final_energy);
  }
  r.cuts = st.counters().rotation_limited;
  r.steps = st.counters().steps;
  r.safeguarded = st.counters().safeguarded;
  r.splits = st.counters().split_steps;
  return r;
}

SchroederSettings settings(SchroederScheme scheme, double frame, double eps) {
  SchroederSettings s;
  s.scheme = scheme;
  s.frame_dt = frame;
  s.epsilon = eps;
  s.rayleigh_alpha = 0.0;
  s.rayleigh_beta = 0.0;
  s.cg_tolerance = 1e-10;
  return s;
}

/// Runs with and without the rotation; with it the energy never exceeds its initial
/// value (+ 1e-9 of it) and every event that was not cut keeps L to round-off.
Run check(const Bar& b, const SchroederSettings& s, double spin, const char* what) {
  const Run on = run(b, s, spin, true), off = run(b, s, spin, false);
  MESSAGE(fmt::format("{} frame {:.4g} s eps {} spin {} rad/s: E0 {:.5g} J; with the rotation highest − E0 "
                      "{:.3g} J, final {:.4g} J, {} of {} events cut, |dL| of the others {:.2g} of "
                      "sum |x × m v|; without: highest − E0 {:.3g} J, final {:.4g} J",
                      what, s.frame_dt, s.epsilon, spin, on.initial, on.highest - on.initial,
                      on.final_energy, on.cuts, on.steps, on.L_worst_uncut / on.L_scale,
                      off.highest - off.initial, off.final_energy));
  CHECK(on.highest <= on.initial * (1.0 + 1e-9));
  CHECK(on.L_worst_uncut <= 1e-13 * on.L_scale);
  CHECK(off.highest <= off.initial * (1.0 + 1e-9));  // the scheme alone: no gain either
  CHECK(off.cuts == 0);
  return on;
}

}  // namespace

TEST_CASE("schroeder: a fast-spinning free bar, semi-implicit: the rotation keeps L and needs no cut") {
  const Bar b = make_bar();
  for (double spin : {20.0, 40.0, 60.0}) {
    const Run on = check(b, settings(SchroederScheme::SemiImplicit, 0.002, 0.5), spin, "semi-implicit");
    CHECK(on.cuts == 0);
  }
}

TEST_CASE("schroeder: a fast-spinning free bar, fully implicit: no energy gained at 2 ms frames") {
  // At frames of 10 ms and more (0.2–2.5 rad a step) the linearised step gains energy
  // by itself, rotation or not (docs/schroeder.md, decision 14).
  const Bar b = make_bar();
  for (double spin : {20.0, 40.0})
    check(b, settings(SchroederScheme::FullyImplicit, 0.002, 0.5), spin, "fully implicit");
}

TEST_CASE("schroeder: a fast-spinning free bar, fully implicit at frame steps: the safeguard and the whole-step check") {
  // One linearised solve per update cannot follow a bar turning 0.2–1.7 rad in one
  // frame: without the safeguards it gains energy by itself, rotation or not (0.9 J →
  // 1.7e4 J at 20 rad/s and 10 ms). The update safeguard (decision 15) re-solves the
  // updates that gain by Newton; what it leaves is the drift x^{n+1} = xⁿ + Δt v^{n+½}
  // along straight lines, which stretches a body turning θ a step even with converged
  // updates (with it alone: up to 1.27e4 J above E0 at 40 rad/s, 10 ms). The whole-step
  // check (decision 16) splits the steps whose balance gains into 2–16 steps of Δt/k.
  const Bar b = make_bar();
  for (double frame : {0.01, 1.0 / 24.0})
    for (double spin : {20.0, 40.0}) {
      CAPTURE(frame);
      CAPTURE(spin);
      SchroederSettings s = settings(SchroederScheme::FullyImplicit, frame, 0.5);
      const Run on = run(b, s, spin, true), off = run(b, s, spin, false);
      s.split_gaining_steps = false;
      const Run updates_only = run(b, s, spin, false);
      s.energy_safeguard = false;
      const Run bare = run(b, s, spin, false);
      MESSAGE(fmt::format("fully implicit frame {:.4g} s spin {}: E0 {:.5g} J; rotation on: highest − E0 "
                          "{:.3g} J, final {:.4g} J, {} of {} events cut, {} split, {} updates "
                          "safeguarded; off: highest − E0 {:.3g} J, final {:.4g} J, {} split, {} "
                          "safeguarded; no split: highest − E0 {:.3g} J; neither: {:.3g} J",
                          frame, spin, on.initial, on.highest - on.initial, on.final_energy, on.cuts,
                          on.steps, on.splits, on.safeguarded, off.highest - off.initial,
                          off.final_energy, off.splits, off.safeguarded,
                          updates_only.highest - updates_only.initial, bare.highest - bare.initial));
      CHECK(bare.highest > 10.0 * bare.initial);  // what the safeguards are for
      CHECK(bare.safeguarded == 0);
      CHECK(bare.splits == 0);
      CHECK(off.splits > 0);
      CHECK(on.L_worst_uncut <= 1e-13 * on.L_scale);
      // Never above the initial energy, with or without the rotation.
      CHECK(on.highest <= on.initial * (1.0 + 1e-9));
      CHECK(off.highest <= off.initial * (1.0 + 1e-9));
      // The update safeguard alone holds only 0.2 rad a frame.
      if (frame == 0.01 && spin == 40.0) CHECK(updates_only.highest > 2.0 * updates_only.initial);
    }
}

TEST_CASE("schroeder: a fast-spinning free bar, asynchronous: the rotation is cut where it would create energy") {
  // Uncut, the rotation took this bar 0.026 J above its initial 3.61 J at 40 rad/s and
  // 10 ms frames, 0.54 J at 1/24 s (ε = 0.5); the scheme without it loses up to all of
  // its spin's energy, and 1–27 % of L.
  const Bar b = make_bar();
  for (double frame : {0.01, 1.0 / 24.0})
    for (double eps : {0.5, 1.0})
      for (double spin : {40.0, 60.0}) {
        CAPTURE(frame);
        CAPTURE(eps);
        CAPTURE(spin);
        const Run on = check(b, settings(SchroederScheme::Asynchronous, frame, eps), spin, "asynchronous");
        CHECK(on.cuts > 0);
        CHECK(on.final_energy > 0.85 * on.initial);  // most of the spin kept
      }
}

TEST_CASE("schroeder: the rotation switched off leaves the stepper as printed") {
  // SchroederSettings::keep_angular_momentum = false is what the tests above compare
  // with: no rotation, no cut, and L not kept.
  const Bar b = make_bar();
  const Run off = run(b, settings(SchroederScheme::Asynchronous, 0.01, 0.5), 40.0, false);
  CHECK(off.cuts == 0);
  CHECK(off.L_worst_uncut > 1e-6 * off.L_scale);
}

}  // namespace clockwork
