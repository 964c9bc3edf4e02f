/// Schroeder et al.'s schemes in scenes (`"integrator": "schroeder"`, `"semi_implicit"`,
/// `"fully_implicit"`): bad input named with file, JSON pointer and value; the kernel's
/// coarse and fine events reproduce the stepper; free fall in a run; the penalty layers
/// as the alternative collision response. (The §6 ground run: test_schroeder_runs.cpp.)
#include <doctest/doctest.h>

#include "io/scene/scene.hpp"
#include "io/scene_error.hpp"
#include "tests/support/scenes.hpp"

using namespace clockwork;
using nlohmann::json;

namespace {

json ball_scene(const std::string& integrator, const json& settings) {
  json doc = json::parse(R"({
    "name": "ball", "end_time": 0.5, "frame_rate": 24, "gravity": [0, 0, -9.81],
    "bodies": [{
      "name": "ball",
      "shape": {"type": "tet_sphere", "center": [0, 0, 1], "radius": 0.1, "cells_per_diameter": 6},
      "material": {"model": "corotational", "young": 1e5, "poisson": 0.3, "density": 1000,
                   "rayleigh": {"beta": 0.002}}
    }]})");
  doc["bodies"][0]["integrator"] = integrator;
  doc["bodies"][0][integrator] = settings;
  return doc;
}

using test::error_of;  // names the document "test.json"

Eigen::VectorXd positions(const Scene& s, double t) {
  const VertexState& st = s.kernel->state();
  Eigen::VectorXd x(3 * st.size());
  for (Index a = 0; a < st.size(); ++a) x.segment<3>(3 * a) = st.position_at(a, t);
  return x;
}

}  // namespace

TEST_CASE("schroeder scenes: bad input is named with the file, the field and the value") {
  const json ok = json::parse(R"({"frame_dt": 0.04, "advanced": {"epsilon": 0.5}})");
  CHECK(error_of(ball_scene("schroeder", ok)) == "(no error)");
  json bad = ok;
  bad["advanced"]["epsilon"] = 1.5;
  CHECK(error_of(ball_scene("schroeder", bad)) ==
        "test.json: /bodies/0/schroeder/advanced/epsilon: must be in [0, 1], got 1.5");
  bad["advanced"]["epsilon"] = -0.25;
  CHECK(error_of(ball_scene("schroeder", bad)) ==
        "test.json: /bodies/0/schroeder/advanced/epsilon: must be in [0, 1], got -0.25");
  bad = ok;
  bad["substep"] = 0.003;
  CHECK(error_of(ball_scene("schroeder", bad)) ==
        "test.json: /bodies/0/schroeder/substep: frame_dt 0.04 s is not a multiple of the "
        "substep, got 0.003");
  bad["substep"] = 0.01;
  CHECK(error_of(ball_scene("schroeder", bad)) == "(no error)");
  bad["substep"] = "fast";
  CHECK(error_of(ball_scene("schroeder", bad)) ==
        "test.json: /bodies/0/schroeder/substep: expected one of 'auto', got \"fast\"");
  bad = ok;
  bad.erase("frame_dt");
  CHECK(error_of(ball_scene("schroeder", bad)).find("/bodies/0/schroeder") != std::string::npos);
  CHECK(error_of(ball_scene("schroeder", bad)).find("frame_dt") != std::string::npos);
  bad = ok;
  bad["advanced"]["partition"] = {{"semi_implicit_regions", {"shell"}}};
  CHECK(error_of(ball_scene("schroeder", bad))
            .rfind("test.json: /bodies/0/schroeder/advanced/partition/semi_implicit_regions/0: ", 0) == 0);
  CHECK(error_of(ball_scene("schroeder", bad)).find("shell") != std::string::npos);
  bad = ok;
  bad["collisions"] = json::parse(R"([{"plane": {"point": [0, 0, 0], "normal": [0, 0, 0]}}])");
  CHECK(error_of(ball_scene("schroeder", bad)) ==
        "test.json: /bodies/0/schroeder/collisions/0/plane/normal: must be non-zero, got [0,0,0]");
  // The other static bodies of §6.
  bad["collisions"] = json::parse(R"([{"sphere": {"center": [0, 0, 0], "radius": 0.2}},
      {"capsule": {"a": [0, 0, 0], "b": [1, 0, 0], "radius": 0.05}, "friction": 0.4},
      {"box": {"min": [-1, -1, -1], "max": [1, 1, 0.5]}}])");
  bad["advanced"]["constrain_collisions"] = false;
  CHECK(error_of(ball_scene("schroeder", bad)) == "(no error)");
  bad["advanced"]["constrain_collisions"] = "yes";
  CHECK(error_of(ball_scene("schroeder", bad)).rfind(
            "test.json: /bodies/0/schroeder/advanced/constrain_collisions: ", 0) == 0);
  bad["advanced"].erase("constrain_collisions");
  bad["collisions"] = json::parse(R"([{"sphere": {"center": [0, 0, 0], "radius": 0.2},
                                       "plane": {"point": [0, 0, 0], "normal": [0, 0, 1]}}])");
  CHECK(error_of(ball_scene("schroeder", bad))
            .rfind("test.json: /bodies/0/schroeder/collisions/0: needs exactly one of \"plane\", "
                   "\"sphere\", \"capsule\", \"box\", got {",
                   0) == 0);
  bad["collisions"] = json::parse(R"([{"sphere": {"center": [0, 0, 0], "radius": -0.2}}])");
  CHECK(error_of(ball_scene("schroeder", bad)) ==
        "test.json: /bodies/0/schroeder/collisions/0/sphere/radius: must be > 0, got -0.2");
  bad["collisions"] = json::parse(R"([{"capsule": {"a": [0, 1, 0], "b": [0, 1, 0], "radius": 0.1}}])");
  CHECK(error_of(ball_scene("schroeder", bad)) ==
        "test.json: /bodies/0/schroeder/collisions/0/capsule/b: must differ from \"a\", got [0,1,0]");
  bad["collisions"] = json::parse(R"([{"box": {"min": [0, 0, 0], "max": [1, 0, 1]}}])");
  CHECK(error_of(ball_scene("schroeder", bad)) ==
        "test.json: /bodies/0/schroeder/collisions/0/box/max: must exceed \"min\" in every "
        "coordinate, got [1,0,1]");
  bad["collisions"] = json::parse(R"([{"cone": {}}])");
  CHECK(error_of(ball_scene("schroeder", bad)) ==
        "test.json: /bodies/0/schroeder/collisions/0/cone: unknown key 'cone' (allowed: plane, "
        "sphere, capsule, box, friction)");
  bad = ok;
  bad["advanced"]["safety"] = 0.0;
  CHECK(error_of(ball_scene("schroeder", bad)) ==
        "test.json: /bodies/0/schroeder/advanced/safety: must be in (0, 1], got 0.0");
  bad = ok;
  bad["h"] = 0.01;
  CHECK(error_of(ball_scene("schroeder", bad))
            .rfind("test.json: /bodies/0/schroeder/h: unknown key 'h'", 0) == 0);
  // A settings object for another integrator, and the integrator's choices.
  json other = ball_scene("schroeder", ok);
  other["bodies"][0]["zhao"] = json::object();
  CHECK(error_of(other) == "test.json: /bodies/0/zhao: needs \"integrator\": \"zhao\", got {}");
  other = ball_scene("fully_implicit", json::parse(R"({"frame_dt": 0.04, "advanced": {"epsilon": 0.5}})"));
  CHECK(error_of(other).rfind("test.json: /bodies/0/fully_implicit/advanced/epsilon: unknown key 'epsilon'",
                              0) == 0);
  other = ball_scene("schroeder", ok);
  other["bodies"][0]["integrator"] = "schroder";
  CHECK(error_of(other).find("/bodies/0/integrator") != std::string::npos);
  CHECK(error_of(other).find("'schroeder', 'semi_implicit', 'fully_implicit', got \"schroder\"") !=
        std::string::npos);
}

TEST_CASE("schroeder scenes: the kernel's coarse and fine events reproduce the stepper") {
  for (const std::string integrator : {"schroeder", "semi_implicit", "fully_implicit"}) {
    CAPTURE(integrator);
    json settings = json::parse(R"({"frame_dt": 0.04})");
    if (integrator == "schroeder") settings["advanced"]["epsilon"] = 0.75;
    Scene s = build_scene(ball_scene(integrator, settings), "test.json", ".");
    REQUIRE(s.bodies_of<SchroederSource>().size() == 1);
    const SchroederSource& src = *s.bodies_of<SchroederSource>()[0];
    const SchroederStepper& run = src.stepper();
    // A reference stepper over the same model and settings, stepped by hand.
    const TetFemModel& model = src.model();
    std::vector<TetMaterial> mats(model.tet_count(), TetMaterial{1e5, 0.3, 1000.0});
    std::vector<bool> semi(model.tet_count());
    // The automatic partition, recomputed from the kernel's boundary triangles.
    semi = tets_touching_faces(model.tets(), s.bodies[0].triangles, model.vertex_count());
    SchroederStepper ref(model, mats, semi, std::vector<bool>(model.vertex_count(), false),
                         Vec3(0, 0, -9.81), run.settings());
    CHECK(ref.substeps_per_frame() == run.substeps_per_frame());
    Eigen::VectorXd x = positions(s, 0.0), v = Eigen::VectorXd::Zero(x.size());
    for (Eigen::Index i = 0; i < x.size(); i += 3) v[i] = 0.05 * (x[i + 2] - 1.0) / 0.1;
    for (Index a = 0; a < s.kernel->state().size(); ++a)
      s.kernel->state().velocity_ref(a) = v.segment<3>(3 * a);
    const int steps = 2 * ref.substeps_per_frame();
    for (int i = 0; i < steps; ++i) ref.step(x, v);
    const double t = 0.08;
    s.kernel->run_until(t - 1e-9);
    // The kernel's positions at the end of the last substep: x_n + Δt w drifted.
    const Eigen::VectorXd xk = positions(s, t);
    // Equal but for the kernel's drift arithmetic (x + (t − t_a) v, in other roundings).
    CHECK((xk - x).cwiseAbs().maxCoeff() < 1e-10);
    CHECK(run.counters().steps + 0 == static_cast<std::uint64_t>(steps - 1));
    if (integrator == "schroeder") {
      CHECK(run.substeps_per_frame() > 1);
      CHECK(s.kernel->source_count() >= 2);  // the fine source
      CHECK(src.name() == "coarse:schroeder");
    }
  }
}

TEST_CASE("schroeder scenes: free fall in the kernel is x0 + g t²/2 with no CG iteration") {
  Scene s =
      build_scene(ball_scene("schroeder", json::parse(R"({"frame_dt": 0.04, "advanced": {"epsilon": 0.5}})")),
                  "test.json", ".");
  const Eigen::VectorXd x0 = positions(s, 0.0);
  const double t = 0.2;
  s.kernel->run_until(t);
  const Eigen::VectorXd x = positions(s, t);
  double err = 0.0;
  for (Eigen::Index i = 0; i < x.size(); ++i)
    err = std::max(err, std::abs(x[i] - x0[i] - (i % 3 == 2 ? -0.5 * 9.81 * t * t : 0.0)));
  CAPTURE(err);
  CHECK(err < 1e-13);
  const SchroederCounters& c = s.bodies_of<SchroederSource>()[0]->stepper().counters();
  CHECK(c.solves > 0);
  CHECK(c.max_cg_iterations == 0);
}

/// A ball falling on an obstacle at z = 0.8, checked every 25 ms to 0.5 s: the lowest
/// particle, the largest downward centre velocity after 0.3 s (the fall stopped), and
/// the contact counters.
struct ObstacleFall {
  double lowest = kNever, vz_max = -kNever;
  std::uint64_t layer_activations = 0;
};

ObstacleFall fall_on(const json& shape) {
  json doc = ball_scene("schroeder", json::parse(R"({"frame_dt": 0.04, "advanced": {"epsilon": 0.5}})"));
  doc["contact"] = {{"friction", 0.0}};
  doc["obstacles"] = json::array({{{"name", "ground"}, {"shape", shape}}});
  doc["bodies"][0]["shape"]["cells_per_diameter"] = 4;
  Scene s = build_scene(doc, "test.json", ".");
  const Index first = s.bodies[0].first_vertex, count = s.bodies[0].vertex_count;
  ObstacleFall f;
  for (int k = 1; k <= 20; ++k) {
    const double t = 0.025 * k;
    s.kernel->run_until(t);
    Vec3 vc = Vec3::Zero();
    double m = 0.0;
    for (Index a = first; a < first + count; ++a) {
      f.lowest = std::min(f.lowest, s.kernel->state().position_at(a, t).z());
      vc += s.kernel->state().mass(a) * s.kernel->state().velocity(a);
      m += s.kernel->state().mass(a);
    }
    if (t > 0.3) f.vz_max = std::max(f.vz_max, vc.z() / m);
  }
  f.layer_activations = s.contact->counters().layer_activations;
  return f;
}

// docs/schroeder.md "Obstacles in the solve": a ground obstacle's exact surface is a §6
// collider of the solve, 2 η1 above it, and the layers are never needed; so is a mesh
// without an exact surface (a grid sheet: the triangle-mesh collider, one-sided).
TEST_CASE("schroeder scenes: a ground obstacle and a grid obstacle are both in the solve") {
  const ObstacleFall ground = fall_on(json::parse(R"({"type": "ground", "center": [0, 0, 0.8], "half_size": 1})"));
  CHECK(ground.layer_activations == 0);
  CHECK(ground.lowest > 0.8);
  CHECK(ground.vz_max > -0.5);
  const ObstacleFall grid =
      fall_on(json::parse(R"({"type": "grid", "size": [2, 2], "resolution": [4, 4], "center": [0, 0, 0.8]})"));
  CHECK(grid.layer_activations == 0);
  CHECK(grid.lowest > 0.8);   // never through the ground
  CHECK(grid.vz_max > -0.5);  // the fall was stopped
  // The flat sheet's collider is the ground's top: the ball lands the same.
  CHECK(std::abs(grid.lowest - ground.lowest) < 1e-9);
}
