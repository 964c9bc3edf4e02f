/// Scene validation: every bad input gives one clear message naming the file, the
/// JSON pointer of the field and the offending value.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "io/scene/scene.hpp"
#include "io/scene_error.hpp"

using namespace clockwork;
using nlohmann::json;

namespace {

json valid_scene() {
  return json::parse(R"({
    "name": "t", "end_time": 1.0, "frame_rate": 10, "gravity": [0, 0, -9.81],
    "bodies": [{
      "name": "cloth",
      "shape": {"type": "grid", "size": [1, 1], "resolution": [4, 4], "center": [0, 0, 1]},
      "material": {"area_density": 0.1, "young": 100, "poisson": 0.3, "bending": 1e-4},
      "pins": ["u0v1", 3]
    }]})");
}

// Not error_of: test::error_of (tests/support/scenes.hpp) names its document test.json,
// and test_scene_solid.cpp, which uses that one, shares this file's unity batch.
std::string scene_error_of(const json& doc, const std::string& base_dir = ".") {
  try {
    build_scene(doc, "scene.json", base_dir);
  } catch (const SceneError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "clockwork_test_scene";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace

TEST_CASE("a valid scene builds bodies, pins, masses and stencils") {
  Scene s = build_scene(valid_scene(), "scene.json", ".");
  REQUIRE(s.bodies.size() == 1);
  CHECK(s.bodies[0].vertex_count == 25);
  CHECK(s.bodies[0].triangles.size() == 32);
  const VertexState& st = s.kernel->state();
  CHECK(st.kinematic(20));  // u0v1 = vertex (0, 4)
  CHECK(st.kinematic(3));
  CHECK(!st.kinematic(0));
  double mass = 0;
  for (Index a = 0; a < st.size(); ++a)
    if (!st.kinematic(a)) mass += st.mass(a);
  CHECK(mass < 0.1);  // total 0.1 kg, two pinned vertices excluded
  CHECK(mass > 0.09);
  bool has_membrane = false, has_bending = false, has_gravity = false;
  for (const auto& t : s.terms) {
    has_membrane |= t.kind == "force:membrane" && t.count == 32;
    has_bending |= t.kind == "force:bending" && t.count == 40;
    has_gravity |= t.kind == "force:gravity" && t.count == 23;
    CHECK(t.min_period > 0);
  }
  CHECK(has_membrane);
  CHECK(has_bending);
  CHECK(has_gravity);
  CHECK(s.description.empty());
  json described = valid_scene();
  described["description"] = "a cloth; 3 s in 10 s";
  CHECK(build_scene(described, "scene.json", ".").description == "a cloth; 3 s in 10 s");
}

TEST_CASE("bad scene values are rejected with the file, the JSON pointer and the value") {
  struct Case {
    const char* pointer;  // JSON pointer to change
    json value;
    const char* expected;
  };
  const Case cases[] = {
      {"/end_time", -1.0, "scene.json: /end_time: must be > 0, got -1.0"},
      {"/end_time", "3", "scene.json: /end_time: expected a number, got \"3\""},
      {"/frame_rate", 0, "scene.json: /frame_rate: must be > 0, got 0"},
      {"/bodies/0/material/young", -3.0, "scene.json: /bodies/0/material/young: must be > 0, got -3.0"},
      {"/bodies/0/material/poisson", 0.5, "scene.json: /bodies/0/material/poisson: must be in [0, 0.5), got 0.5"},
      {"/bodies/0/material/area_density", nullptr, "/bodies/0/material/area_density: expected a number, got null"},
      {"/bodies/0/pins/1", 25, "scene.json: /bodies/0/pins/1: must be an integer in [0, 24], got 25"},
      {"/bodies/0/pins/1", "top", "/bodies/0/pins/1: expected one of 'u0v0', 'u1v0', 'u0v1', 'u1v1', got \"top\""},
      {"/bodies/0/pins/1", "u0v1", "/bodies/0/pins/1: vertex pinned twice"},
      {"/bodies/0/shape/type", "sphere", "/bodies/0/shape/type: expected one of 'grid', 'disk', 'hat', 'chain', 'obj', 'mesh', got \"sphere\""},
      {"/bodies/0/shape", json{{"type", "hat"}, {"center", {0, 0, 1}}, {"crown_radius", 0.1}, {"crown_height", 0.1},
                               {"brim_radius", 0.1}, {"segments", 12}},
       "scene.json: /bodies/0/shape/brim_radius: must exceed crown_radius (0.1 m), got 0.1"},
      {"/bodies/0/shape", json{{"type", "hat"}, {"center", {0, 0, 1}}, {"crown_radius", 0.1}, {"crown_height", 0.1},
                               {"brim_radius", 0.2}, {"segments", 4}},
       "/bodies/0/shape/segments: must be an integer in [6, 256], got 4"},
      {"/bodies/0/shape/resolution", json::array({4, 0}), "/bodies/0/shape/resolution/1: must be an integer in [1, 1024], got 0"},
      {"/bodies/0/shape/size", json::array({1, 1, 1}), "/bodies/0/shape/size: expected [size_u, size_v] in metres"},
      {"/gravity", json::array({0, 0}), "scene.json: /gravity: expected an array of 3 numbers, got [0,0]"},
      {"/bodies/0/periods", json{{"membrane", 0.0}}, "/bodies/0/periods/membrane: must be > 0, got 0.0"},
      {"/bodies/0/periods", json{{"membrane", "fast"}}, "/bodies/0/periods/membrane: expected one of 'auto', got \"fast\""},
      {"/bodies/0/periods", json{{"safety", 2.0}}, "/bodies/0/periods/safety: must be in (0, 1], got 2.0"},
      {"/bodies/0/pin_motion", json{{"keyframes", json::array({json{{"time", 0.0}, {"offset", {0, 0, 0}}},
                                                               json{{"time", 0.0}, {"offset", {0, 0, 1}}}})}},
       "/bodies/0/pin_motion/keyframes/1/time: keyframe times must increase strictly, got 0.0"},
      {"/bodies", json::array(), "scene.json: /bodies: needs at least one body, got []"},
      {"/seed", -1, "scene.json: /seed: must be an integer in [0, 4611686018427387904], got -1"},
      {"/description", 3, "scene.json: /description: expected a string, got 3"},
  };
  for (const Case& c : cases) {
    json doc = valid_scene();
    doc[json::json_pointer(c.pointer)] = c.value;
    const std::string message = scene_error_of(doc);
    CAPTURE(c.pointer);
    CAPTURE(message);
    CHECK(message.find(c.expected) != std::string::npos);
  }
}

TEST_CASE("unknown and missing keys are errors naming the key") {
  json doc = valid_scene();
  doc["bodies"][0]["material"]["younng"] = 3;
  CHECK(scene_error_of(doc).find("scene.json: /bodies/0/material/younng: unknown key 'younng' (allowed: "
                           "area_density, young, poisson, bending)") != std::string::npos);
  doc = valid_scene();
  doc.erase("end_time");
  CHECK(scene_error_of(doc) == "scene.json: /: missing required key 'end_time'");
  doc = valid_scene();
  doc["bodies"].push_back(doc["bodies"][0]);
  CHECK(scene_error_of(doc).find("/bodies/1/name: duplicate body or obstacle name, got \"cloth\"") != std::string::npos);
}

TEST_CASE("pin_motion release and pins: bad values name the file, the pointer and the value") {
  const json keys = json::array({json{{"time", 0.0}, {"offset", {0, 0, 0}}},
                                 json{{"time", 0.5}, {"offset", {0, 0, 0.1}}}});
  struct Case {
    json motion;
    const char* expected;
  };
  const Case cases[] = {
      {json{{"keyframes", keys}, {"release", -1.0}},
       "scene.json: /bodies/0/pin_motion/release: must be > 0, got -1.0"},
      {json{{"keyframes", keys}, {"release", 0}}, "scene.json: /bodies/0/pin_motion/release: must be > 0, got 0"},
      {json{{"keyframes", keys}, {"release", "soon"}},
       "scene.json: /bodies/0/pin_motion/release: expected a number, got \"soon\""},
      {json{{"keyframes", keys}, {"pins", {5}}},
       "scene.json: /bodies/0/pin_motion/pins/0: vertex 5 is not one of the body's pins, got 5"},
      {json{{"keyframes", keys}, {"pins", json::array()}},
       "scene.json: /bodies/0/pin_motion/pins: needs at least one pin, got []"},
      {json{{"keyframes", keys}, {"pins", 3}}, "scene.json: /bodies/0/pin_motion/pins: expected an array, got 3"},
  };
  for (const Case& c : cases) {
    json doc = valid_scene();
    doc["bodies"][0]["pin_motion"] = c.motion;
    const std::string message = scene_error_of(doc);
    CAPTURE(c.motion.dump());
    CHECK(message == c.expected);
  }
  // Valid: the subset by name, released at 0.3 s.
  json doc = valid_scene();
  doc["bodies"][0]["pin_motion"] = {{"keyframes", keys}, {"pins", {"u0v1"}}, {"release", 0.3}};
  CHECK(scene_error_of(doc) == "(no error)");
  // Obstacles and solids have no release (their vertices have no mass to get back).
  doc = valid_scene();
  doc["contact"] = json::object();
  doc["obstacles"] = {{{"name", "ball"},
                       {"shape", {{"type", "sphere"}, {"center", {0, 0, -1}}, {"radius", 0.5}}},
                       {"motion", {{"keyframes", keys}, {"release", 0.3}}}}};
  CHECK(scene_error_of(doc).find("scene.json: /obstacles/0/motion/release: unknown key 'release'") == 0);
}

TEST_CASE("mesh files: missing, non-finite coordinates, degenerate triangles") {
  json doc = valid_scene();
  doc["bodies"][0]["shape"] = json{{"type", "obj"}, {"file", "no_such_mesh.obj"}};
  doc["bodies"][0].erase("pins");
  CHECK(scene_error_of(doc).find("/bodies/0/shape/file: ./no_such_mesh.obj: cannot open the OBJ file") !=
        std::string::npos);

  const std::string nan_obj = write_temp("nan.obj", "v 0 0 0\nv 1 0 nan\nv 0 1 0\nf 1 2 3\n");
  doc["bodies"][0]["shape"]["file"] = nan_obj;
  CHECK(scene_error_of(doc).find(nan_obj + ":2: vertex coordinate is not finite: 'v 1 0 nan'") !=
        std::string::npos);

  const std::string flat = write_temp("flat.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 4\n");
  doc["bodies"][0]["shape"]["file"] = flat;
  // Refused by the OBJ reader, which names the line (issue 42).
  CHECK(scene_error_of(doc).find("/bodies/0/shape/file: " + flat +
                           ":5: face 1 (vertices 1 2 3) is degenerate (zero area): 'f 1 2 3'") !=
        std::string::npos);

  const std::string ok = write_temp("ok.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 4 3\n");
  doc["bodies"][0]["shape"]["file"] = "ok.obj";
  Scene s = build_scene(doc, "scene.json", std::filesystem::path(ok).parent_path().string());
  CHECK(s.bodies[0].triangles.size() == 2);
}

TEST_CASE("load_scene reports unreadable and malformed files") {
  try {
    load_scene("/nonexistent/scene.json");
    FAIL("no error");
  } catch (const SceneError& e) {
    CHECK(std::string(e.what()) == "/nonexistent/scene.json: cannot open the file");
  }
  const std::string bad = write_temp("bad.json", "{\"name\": \"x\",");
  try {
    load_scene(bad);
    FAIL("no error");
  } catch (const SceneError& e) {
    CHECK(std::string(e.what()).find(bad + ": not valid JSON") == 0);
  }
}

TEST_CASE("every scene in demos/ validates") {
  for (const auto& entry : std::filesystem::directory_iterator(CLOCKWORK_SOURCE_DIR "/demos")) {
    if (entry.path().extension() != ".json") continue;
    CAPTURE(entry.path().string());
    CHECK_NOTHROW(load_scene(entry.path().string()));
  }
}
