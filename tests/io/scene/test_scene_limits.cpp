/// Up-front limits (docs/scene-format.md "Limits", issue 42): a scene that cannot run
/// — too much memory, too many events per simulated second, too many frames, periods
/// past the stability estimate, overflowing materials, steps longer than the run,
/// overlapping tets — is refused by `validate` within a second, exit kExitInput, with
/// one message naming the file, the field, the value and the estimate.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "io/exit_codes.hpp"
#include "io/scene/scene.hpp"
#include "io/scene/scene_limits.hpp"
#include "io/mesh/tet_mesh.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/files.hpp"

using namespace clockwork;
using nlohmann::json;

namespace {

json read_json(const std::string& path) {
  return json::parse(test::read_file(std::string(CLOCKWORK_SOURCE_DIR) + "/" + path));
}

/// demos/hanging_cloth.json: a 24 × 24 cloth, explicit AVI, automatic periods.
json hanging_cloth_doc() { return read_json("demos/hanging_cloth.json"); }

json solid_bar(int n) {
  return json::parse(R"({
    "name": "bar", "end_time": 1.0, "frame_rate": 10, "gravity": [0, 0, -9.81],
    "bodies": [{
      "name": "bar",
      "shape": {"type": "tet_bar", "origin": [0, 0, 0], "cells": [)" + std::to_string(n) + ", 2, 2" +
                     R"(], "cell": 0.05},
      "material": {"model": "linear", "young": 1e5, "poisson": 0.3, "density": 1000},
      "pins": [0],
      "integrator": "backward_euler", "backward_euler": {"h": 0.01}
    }]})");
}

struct Validated {
  test::CliResult result;
  double seconds;
};

/// `clockwork validate` of `doc` written to a fresh folder as NAME.json.
Validated validate(const json& doc, const std::string& name) {
  const auto dir = test::fresh_dir("limits_" + name);
  const std::string path = (dir / (name + ".json")).string();
  std::ofstream(path) << doc.dump(1);
  const auto start = std::chrono::steady_clock::now();
  test::CliResult r = test::run_cli("validate " + path);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {std::move(r), s};
}

/// Refused with kExitInput within `seconds` (process start included), the message
/// naming the file and holding every one of `parts`. The bound guards against a hang or
/// a build that grows with the mesh's square (minutes), not a speed: the refusal takes
/// 0.6 s under the sanitizers idle and 2.1 s on a loaded machine, so 10 s.
void check_refused(const json& doc, const std::string& name,
                   std::initializer_list<std::string> parts, double seconds = 10.0) {
  const Validated v = validate(doc, name);
  CAPTURE(v.result.err);
  CHECK(v.result.exit_code == kExitInput);
  CHECK(v.seconds < seconds);
  CHECK(v.result.err.find(name + ".json: ") != std::string::npos);
  for (const std::string& p : parts) {
    CAPTURE(p);
    CHECK(v.result.err.find(p) != std::string::npos);
  }
}

std::string limits_error(const json& doc) {
  return test::what_thrown([&] { build_scene(doc, "scene.json", "."); });
}

}  // namespace

TEST_CASE("memory: a ground of 4096 divisions and a 1024-cube tet bar are refused with the estimate") {
  json ground = hanging_cloth_doc();
  ground["contact"] = json::object();
  ground["obstacles"] = json::parse(
      R"([{"name": "floor", "shape": {"type": "ground", "center": [0, 0, 0], "half_size": 2, "divisions": 4096}}])");
  check_refused(ground, "ground4096",
                {"/obstacles/0/shape/divisions: 4096 × 4096 divisions: 33554432 triangles: an "
                 "estimated ",
                 "GB", "above the memory limit of", "got 4096"});

  json bar = solid_bar(1);
  bar["bodies"][0]["shape"]["cells"] = {1024, 1024, 1024};
  check_refused(bar, "bar1024",
                {"/bodies/0/shape/cells: 1024 × 1024 × 1024 cells: 6442450944 tets: an estimated ",
                 "above the memory limit of", "got [1024,1024,1024]"});
}

TEST_CASE("memory: a contact cell_size of 1e-9 m is refused before the grid is built") {
  json doc = hanging_cloth_doc();
  doc["contact"] = {{"advanced", {{"cell_size", 1e-9}}}, {"thickness", 1e-10}};
  check_refused(doc, "cell_size",
                {"/contact/advanced/cell_size: ", "(triangle, cell) entries of the contact grid (cell size 1e-09 m): an estimated",
                 "above the memory limit", "got 1e-09"});
}

TEST_CASE("events: the largest grid and disk are built or refused in well under a second") {
  json grid = hanging_cloth_doc();
  grid["bodies"][0]["shape"]["resolution"] = {kMaxGridCells, kMaxGridCells};
  check_refused(grid, "grid_max",
                {"/bodies/0/material: the first 10000 of the 2097152 membrane stencils of body "
                 "'cloth' extrapolate to an estimated ",
                 "events per simulated second, above 2 times the limit of 1e+11"});
  json disk = hanging_cloth_doc();
  disk["bodies"][0]["shape"] = json::parse(
      R"({"type": "disk", "radius": 0.5, "rings": 512, "center": [0, 0, 1.5]})");
  disk["bodies"][0]["pins"] = {"center"};
  check_refused(disk, "disk_max", {"/bodies/0/material: the first 10000 of the 1572864 membrane stencils"});
  // Above the maxima: the field's range.
  grid["bodies"][0]["shape"]["resolution"] = {4096, 4096};
  check_refused(grid, "grid4096", {"/bodies/0/shape/resolution/0: must be an integer in [1, 1024], got 4096"});
  disk["bodies"][0]["shape"]["rings"] = 2048;
  check_refused(disk, "disk2048", {"/bodies/0/shape/rings: must be an integer in [1, 512], got 2048"});
}

TEST_CASE("events: steps and masses of 1e-300 are refused instead of hanging run") {
  json period = hanging_cloth_doc();
  period["bodies"][0]["periods"] = {{"gravity", 1e-300}};
  check_refused(period, "period_tiny",
                {"/bodies/0/periods/gravity: the stencils of body 'cloth' (mostly 623 gravity "
                 "stencils, periods down to 1e-300 s): an estimated 6.23e+302 events per "
                 "simulated second",
                 "above the limit of 1e+11", "got 1e-300"});

  json mass = hanging_cloth_doc();
  mass["bodies"][0]["material"]["area_density"] = 1e-300;
  check_refused(mass, "mass_tiny", {"/bodies/0/material: the stencils of body 'cloth'",
                                    "events per simulated second", "\"area_density\":1e-300"});

  json chain = read_json("demos/fpu_chain.json");
  chain["bodies"][0]["material"]["node_mass"] = 1e-300;
  check_refused(chain, "chain_mass_tiny",
                {"/bodies/0/periods/spring: 0.001 s is ", "times the stability estimate"});

  json be = solid_bar(4);
  be["bodies"][0]["backward_euler"]["h"] = 1e-300;
  check_refused(be, "be_tiny", {"/bodies/0/backward_euler/h: the steps of solid 'bar' (down to 1e-300 s): an estimated 1e+300 events per simulated second"});

  json sphere = read_json("demos/schroeder_sphere.json");
  sphere["bodies"][0]["material"]["density"] = 1e-300;
  check_refused(sphere, "sphere_light",
                {"/bodies/0/schroeder/frame_dt: the steps of solid 'sphere' (down to ",
                 "s, the elements' stability limit from the material): an estimated "});
  sphere["bodies"][0]["material"]["density"] = 1e-20;
  check_refused(sphere, "sphere_lighter",
                {"/bodies/0/schroeder/frame_dt: the steps of solid 'sphere' (down to 2.07e-15 s, "
                 "the elements' stability limit from the material): an estimated 4.84e+14 "});

  json contact = hanging_cloth_doc();
  contact["contact"] = {{"period", 1e-300}};
  check_refused(contact, "contact_tiny", {"/contact/period: a contact layer (period 1e-300 s): an estimated 1e+300 events"});
}

TEST_CASE("stability: the hanging cloth with every period 1e-3 s is refused naming the field and the estimate") {
  json doc = hanging_cloth_doc();
  doc["bodies"][0]["periods"] = {{"membrane", 1e-3}, {"bending", 1e-3}, {"gravity", 1e-3}};
  check_refused(doc, "hanging_1e-3",
                {"/bodies/0/periods/membrane: 0.001 s is 5.45 times the stability estimate "
                 "0.000184 s (1/ω_max) of membrane stencil ",
                 "above the limit of 2 times", "\"allow_unstable_periods\": true", "got 0.001"});

  SUBCASE("run refuses it too, before writing anything") {
    const auto dir = test::fresh_dir("limits_run_refused");
    const std::string path = (dir / "hanging.json").string();
    std::ofstream(path) << doc.dump();
    const test::CliResult r = test::run_cli("run " + path + " --out " + (dir / "out").string());
    CAPTURE(r.err);
    CHECK(r.exit_code == kExitInput);
    CHECK(r.err.find("hanging.json: /bodies/0/periods/membrane: 0.001 s is 5.45 times") != std::string::npos);
    CHECK(!std::filesystem::exists(dir / "out"));
  }
  SUBCASE("the body that says it knows runs, with a warning") {
    doc["bodies"][0]["allow_unstable_periods"] = true;
    const Validated v = validate(doc, "hanging_allowed");
    CAPTURE(v.result.err);
    CHECK(v.result.exit_code == kExitOk);
    CHECK(v.result.err.find("hanging_allowed.json: /bodies/0/periods/membrane: 0.001 s is 5.45 "
                            "times the stability estimate") != std::string::npos);
    CHECK(v.result.err.find("the run may blow up") != std::string::npos);
  }
  SUBCASE("between the estimate and twice it: a warning only") {
    doc["bodies"][0]["periods"] = {{"membrane", 2.5e-4}};
    const Validated v = validate(doc, "hanging_warned");
    CAPTURE(v.result.err);
    CHECK(v.result.exit_code == kExitOk);
    CHECK(v.result.err.find("/bodies/0/periods/membrane: 0.00025 s is 1.36 times the stability "
                            "estimate") != std::string::npos);
  }
  SUBCASE("the key must be a boolean") {
    doc["bodies"][0]["allow_unstable_periods"] = "yes";
    CHECK(limits_error(doc) == "scene.json: /bodies/0/allow_unstable_periods: expected true or false, got \"yes\"");
  }
}

TEST_CASE("frames: a frame_rate of 1e10 is refused naming frame_rate and end_time") {
  json doc = hanging_cloth_doc();
  doc["frame_rate"] = 1e10;
  check_refused(doc, "frames",
                {"/frame_rate: with end_time 3 s (/end_time) asks for 3e+10 frames, above the "
                 "limit of 1000000",
                 "got 10000000000.0"});
  doc["frame_rate"] = 3e5;  // 9e5 frames
  CHECK(limits_error(doc) == "(no error)");
}

TEST_CASE("materials whose stiffness overflows are refused at the field") {
  json cloth = hanging_cloth_doc();
  cloth["bodies"][0]["material"]["young"] = 1e308;
  CHECK(limits_error(cloth) ==
        "scene.json: /bodies/0/material/young: over area_density (0.1 kg/m²) overflows: the "
        "stencils' stiffness and periods would not be finite, got 1e+308");
  // Finite over the density, but the stencils' Hessians overflow: they used to be
  // left out as if stiffless.
  cloth["bodies"][0]["material"]["area_density"] = 1.0;
  CHECK(limits_error(cloth) ==
        "scene.json: /bodies/0/material/young: gives membrane stencil 0 a stiffness or period "
        "that is not finite and positive (period nan s): the material's values overflow, got "
        "1e+308");
  const Validated v = validate(cloth, "young");
  CHECK(v.result.exit_code == kExitInput);
  CHECK(v.result.err.find("young.json: /bodies/0/material/young: ") != std::string::npos);

  json bar = solid_bar(4);
  bar["bodies"][0]["material"]["young"] = 1e308;
  const std::string e = limits_error(bar);
  CHECK(e.find("scene.json: /bodies/0/material/young: young 1e+308 Pa (poisson 0.3, density 1000 "
               "kg/m³) overflows: P-wave modulus 1.346") != std::string::npos);
  CHECK(e.find("must be finite and positive, got 1e+308") != std::string::npos);
  bar["bodies"][0]["material"]["young"] = 1e5;
  bar["bodies"][0]["material"]["regions"] = {{"all", {{"density", 1e-300}, {"young", 1e300}}}};
  CHECK(limits_error(bar).find("scene.json: /bodies/0/material/regions/all: young 1e+300 Pa") == 0);
}

TEST_CASE("integrator steps longer than the run are refused: backward Euler h 1e308, h_imp") {
  json bar = solid_bar(4);
  bar["bodies"][0]["backward_euler"]["h"] = 1e308;
  check_refused(bar, "be_huge", {"/bodies/0/backward_euler/h: the step must not exceed end_time (1 s), got 1e+308"});

  // An AVI period longer than the run only means the stencil ticks once (tests use
  // that to switch a force off): no limit beyond the stability estimate.
  json cloth = hanging_cloth_doc();
  cloth["bodies"][0]["periods"] = {{"gravity", 10.0}};
  CHECK(limits_error(cloth) == "(no error)");

  json phantom = hanging_cloth_doc();
  phantom["bodies"][0]["integrator"] = "phantom";
  phantom["bodies"][0]["phantom"] = {{"h_imp", 5.0}};
  CHECK(limits_error(phantom) ==
        "scene.json: /bodies/0/phantom/h_imp: the step must not exceed end_time (3 s), got 5.0");
  phantom["bodies"][0]["phantom"]["h_imp"] = 1e-300;
  CHECK(limits_error(phantom).find("/bodies/0/phantom/h_imp: the implicit ticks of body 'cloth': "
                                  "an estimated 1e+300 events") != std::string::npos);
}

TEST_CASE("duplicate and overlapping tets are refused naming the file and the tet") {
  const auto dir = test::fresh_dir("limits_tets");
  std::ofstream(dir / "t.node") << "5 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n4 1 1 1\n";
  SUBCASE("the same four vertices twice") {
    std::ofstream(dir / "t.ele") << "3 4 0\n0 0 1 2 3\n1 1 2 3 4\n2 0 2 1 3\n";
    const std::string e = test::what_thrown([&] { read_tetgen((dir / "t").string()); });
    CHECK(e.find("t.node/.ele: tet 2 (") != std::string::npos);
    CHECK(e.find("duplicates tet 0 (the same four vertices)") != std::string::npos);
  }
  SUBCASE("two tets on the same side of their face") {
    // Vertex 4 mirrored to the side of vertex 3: tets 0 and 1 share face (1 2 3)...
    // and so does tet 1' = (1 2 3 5) with 5 inside tet 0's side.
    std::ofstream(dir / "u.node") << "5 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n4 0.1 0.1 0.1\n";
    std::ofstream(dir / "u.ele") << "2 4 0\n0 0 1 2 3\n1 4 1 2 3\n";
    const std::string e = test::what_thrown([&] { read_tetgen((dir / "u").string()); });
    CHECK(e.find("u.node/.ele: tet ") != std::string::npos);
    CHECK(e.find("overlaps tet ") != std::string::npos);
    CHECK(e.find("both lie on the same side of their face (1 2 3)") != std::string::npos);
  }
  SUBCASE("a scene with such a file: validate exits 3 naming the shape") {
    std::ofstream(dir / "t.ele") << "3 4 0\n0 0 1 2 3\n1 1 2 3 4\n2 0 2 1 3\n";
    json doc = solid_bar(1);
    doc["bodies"][0]["shape"] = {{"type", "tetgen"}, {"file", (dir / "t").string()}};
    check_refused(doc, "dup_tets", {"/bodies/0/shape/file: ", "duplicates tet 0"});
  }
}

TEST_CASE("tet_sphere: code and docs agree on 400 cells per diameter") {
  json doc = read_json("demos/schroeder_sphere.json");
  doc["bodies"][0]["shape"]["cells_per_diameter"] = 401;
  CHECK(limits_error(doc) ==
        "scene.json: /bodies/0/shape/cells_per_diameter: must be an integer in [2, 400], got 401");
  const std::string docs = test::read_file(std::string(CLOCKWORK_SOURCE_DIR) + "/docs/scene-format.md");
  // The key tables are generated from io/scene/scene_schema_keys.cpp (test_io "schema: ...").
  CHECK(docs.find("| `cells_per_diameter` | integer in [2, " + std::to_string(kMaxSphereCells) + "] |") !=
        std::string::npos);
  CHECK(docs.find("| `resolution` | [cells_u, cells_v], each integer in [1, " + std::to_string(kMaxGridCells) +
                  "] |") != std::string::npos);
  CHECK(docs.find("| `rings` | integer in [1, " + std::to_string(kMaxDiskRings) + "] |") != std::string::npos);
}

TEST_CASE("every demo stays within the limits") {
  for (const auto& entry : std::filesystem::directory_iterator(std::string(CLOCKWORK_SOURCE_DIR) + "/demos")) {
    if (entry.path().extension() != ".json") continue;
    CAPTURE(entry.path().string());
    CHECK(test::what_thrown([&] { load_scene(entry.path().string()); }) == "(no error)");
  }
}
