/// The declarative scene schema (io/scene/scene_schema.hpp, issue 43): docs/scene-format.md's
/// key tables are the generated ones, numerical knobs live in "advanced" objects, and a
/// scene written before them still loads, with one warning per moved key, to the same
/// run.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "io/exit_codes.hpp"
#include "io/scene/scene.hpp"
#include "io/scene/scene_schema.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/files.hpp"
#include "tests/support/moved_keys.hpp"

using namespace clockwork;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json demo(const std::string& name) {
  return json::parse(test::read_file(std::string(CLOCKWORK_SOURCE_DIR) + "/demos/" + name + ".json"));
}

/// `doc` with every key of each `advanced` object moved back to its parent: a scene
/// as written before issue 43.
json old_layout(json doc) {
  const auto flatten = [](json& object) {
    if (!object.is_object() || !object.contains("advanced")) return;
    for (auto& [key, value] : object["advanced"].items()) object[key] = value;
    object.erase("advanced");
  };
  if (doc.contains("contact")) flatten(doc["contact"]);
  for (json& b : doc["bodies"])
    for (const char* k : {"phantom", "backward_euler", "zhao", "schroeder", "semi_implicit", "fully_implicit"})
      if (b.contains(k)) flatten(b[k]);
  return doc;
}

fs::path write(const json& doc, const fs::path& dir, const std::string& name) {
  const fs::path path = dir / (name + ".json");
  std::ofstream(path) << doc.dump(1);
  return path;
}

/// How often `needle` occurs in `text`.
std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

/// Every file a run wrote (frames, diagnostics), by its path inside `dir`.
std::map<std::string, std::string> outputs(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = test::read_file(e.path());
  return out;
}

std::string build_error(const json& doc) {
  return test::what_thrown([&] { build_scene(doc, "s.json", "."); });
}

}  // namespace

TEST_CASE("schema: docs/scene-format.md's key tables are the ones the schema generates") {
  const std::string path = std::string(CLOCKWORK_SOURCE_DIR) + "/docs/scene-format.md";
  const std::string text = test::read_file(path);
  // Regenerate with `clockwork schema --update docs/scene-format.md`.
  CHECK(update_schema_tables(text) == text);
  for (const SchemaObjectInfo& o : schema_objects()) {
    CAPTURE(o.name);
    CHECK(count(text, "<!-- schema " + std::string(o.name) + " -->") == 1);
  }
  CHECK(count(text, "<!-- end schema -->") == schema_objects().size());
}

TEST_CASE("schema: every key has a type, a default and a meaning, and belongs to a documented object") {
  for (const KeyInfo& k : schema_keys()) {
    CAPTURE(k.object);
    CAPTURE(k.key);
    CHECK(!k.fallback.empty());
    CHECK(!k.meaning.empty());
    if (k.check == KeyCheck::Custom) CHECK(!k.type.empty());
    if (k.check == KeyCheck::Choice) CHECK(!k.choices.empty());
    bool known = false;
    for (const SchemaObjectInfo& o : schema_objects()) known = known || o.name == k.object;
    CHECK(known);
    // Knobs, and only knobs, live in an ".advanced" object.
    CHECK(k.advanced == k.object.ends_with(".advanced"));
  }
}

TEST_CASE("schema: a knob at its old place loads with one warning naming its new place, to the same run") {
  test::AllowMovedKeys allow;  // old places on purpose (the runs at the new place are checked below)
  const fs::path dir = test::fresh_dir("schema_old_place");
  // cloth_drop: contact.advanced.cell_size; a phantom cloth with solver knobs.
  json cloth = demo("cloth_drop");
  cloth["end_time"] = 0.04;
  json phantom = demo("stiff_cloth_ball");
  phantom["end_time"] = 0.04;
  phantom["bodies"][0]["phantom"]["advanced"] = {{"solver", "ncg"}, {"stall_iterations", 6}};
  for (const auto& [name, doc] : {std::pair{std::string("cloth"), cloth}, std::pair{std::string("phantom"), phantom}}) {
    CAPTURE(name);
    const json old = old_layout(doc);
    REQUIRE(old != doc);
    const fs::path now_file = write(doc, dir, name), old_file = write(old, dir, name + "_old");
    const test::CliResult now = test::run_cli("run " + now_file.string() + " --out " + (dir / name).string());
    const test::CliResult before =
        test::run_cli("run " + old_file.string() + " --out " + (dir / (name + "_old")).string());
    CAPTURE(before.err);
    REQUIRE(now.exit_code == kExitOk);
    REQUIRE(before.exit_code == kExitOk);
    CHECK(count(now.err, "moved to") == 0);
    if (name == "cloth") {
      CHECK(count(before.err, "moved to") == 1);
      CHECK(count(before.err, "cloth_old.json: /contact/cell_size: 'cell_size' moved to "
                              "/contact/advanced/cell_size") == 1);
    } else {
      CHECK(count(before.err, "moved to") == 2);
      CHECK(count(before.err, "/bodies/0/phantom/solver: 'solver' moved to /bodies/0/phantom/advanced/solver") == 1);
      CHECK(count(before.err, "/bodies/0/phantom/stall_iterations: 'stall_iterations' moved to "
                              "/bodies/0/phantom/advanced/stall_iterations") == 1);
    }
    const auto a = outputs(dir / name), b = outputs(dir / (name + "_old"));
    CHECK(a.size() > 3);
    CHECK(a == b);  // byte for byte: frames, diagnostics, bodies.json
  }
}

TEST_CASE("schema: the solids' and Schroeder's knobs load from both places") {
  test::AllowMovedKeys allow;  // old places on purpose (the runs at the new place are checked below)
  const fs::path dir = test::fresh_dir("schema_solid_knobs");
  json be = json::parse(R"({"name": "bar", "end_time": 0.1, "frame_rate": 10,
    "bodies": [{"name": "bar", "shape": {"type": "tet_bar", "origin": [0, 0, 0], "cells": [2, 1, 1], "cell": 0.1},
      "material": {"model": "linear", "young": 1e5, "poisson": 0.3, "density": 100}, "pins": [0],
      "integrator": "backward_euler",
      "backward_euler": {"h": 0.01, "advanced": {"max_newton": 3, "linear_solver": "cg"}}}]})");
  const test::CliResult now = test::run_cli("validate " + write(be, dir, "be").string());
  const test::CliResult old = test::run_cli("validate " + write(old_layout(be), dir, "be_old").string());
  CHECK(now.exit_code == kExitOk);
  CHECK(old.exit_code == kExitOk);
  CHECK(count(now.err, "moved to") == 0);
  CHECK(count(old.err, "moved to") == 2);
  CHECK(count(old.err, "be_old.json: /bodies/0/backward_euler/max_newton: 'max_newton' moved to "
                       "/bodies/0/backward_euler/advanced/max_newton") == 1);
  json s = be;
  s["bodies"][0]["integrator"] = "schroeder";
  s["bodies"][0].erase("backward_euler");
  s["bodies"][0]["schroeder"] = json::parse(R"({"frame_dt": 0.05, "advanced": {"epsilon": 0.25}})");
  CHECK(test::run_cli("validate " + write(s, dir, "s").string()).exit_code == kExitOk);
  const test::CliResult s_old = test::run_cli("validate " + write(old_layout(s), dir, "s_old").string());
  CHECK(s_old.exit_code == kExitOk);
  CHECK(count(s_old.err, "/bodies/0/schroeder/epsilon: 'epsilon' moved to /bodies/0/schroeder/advanced/epsilon") == 1);
}

TEST_CASE("schema: advanced objects are checked like any other") {
  json doc = demo("cloth_drop");
  SUBCASE("a value out of range is named at its new place") {
    doc["contact"]["advanced"]["safety"] = 0;
    CHECK(build_error(doc) == "s.json: /contact/advanced/safety: must be in (0, 1], got 0");
  }
  SUBCASE("at its old place, by its old place") {
    test::AllowMovedKeys allow;  // the warning comes before the refusal
    doc["contact"]["safety"] = -5;
    CHECK(build_error(doc) == "s.json: /contact/safety: must be in (0, 1], got -5");
  }
  SUBCASE("a knob at both places") {
    doc["contact"]["cell_size"] = 0.05;
    CHECK(build_error(doc) == "s.json: /contact/cell_size: given twice: here (its place before issue 43) "
                              "and at /contact/advanced/cell_size, got 0.05");
  }
  SUBCASE("an unknown key in advanced lists the knobs") {
    doc["contact"]["advanced"]["colour"] = 1;
    CHECK(build_error(doc).starts_with(
        "s.json: /contact/advanced/colour: unknown key 'colour' (allowed: stiffness, safety, cell_size,"));
  }
  SUBCASE("an unknown key at the top lists the current keys only") {
    doc["contact"]["colour"] = 1;
    CHECK(build_error(doc) ==
          "s.json: /contact/colour: unknown key 'colour' (allowed: thickness, friction, period, advanced)");
  }
  SUBCASE("a physics key is not a knob") {
    doc["contact"]["advanced"]["friction"] = 0.3;
    CHECK(build_error(doc).starts_with("s.json: /contact/advanced/friction: unknown key 'friction'"));
  }
  SUBCASE("advanced must be an object") {
    doc["contact"]["advanced"] = 3;
    CHECK(build_error(doc) == "s.json: /contact/advanced: expected an object, got 3");
  }
}

TEST_CASE("schema: the World's refusals name a knob inside advanced by its pointer") {
  json doc = demo("cloth_drop");
  doc["contact"]["advanced"]["adaptive_slack"] = false;
  doc["contact"]["advanced"]["position_slack"] = 1e-4;
  CHECK(build_error(doc).starts_with(
      "s.json: /contact/advanced/position_slack: needs the adaptive slack (adaptive_slack true), got 0.0001"));
}

TEST_CASE("schema: 'clockwork schema --update' rewrites a drifted table and leaves the rest") {
  const fs::path dir = test::fresh_dir("schema_update");
  const std::string docs = test::read_file(std::string(CLOCKWORK_SOURCE_DIR) + "/docs/scene-format.md");
  std::string drifted = docs;
  const std::string row = "| `friction` | number ≥ 0 | — | 0 | Coulomb coefficient μ |";
  REQUIRE(drifted.find(row) != std::string::npos);
  drifted.replace(drifted.find(row), row.size(), "| `friction` | hand-edited |");
  std::ofstream(dir / "format.md") << drifted;
  const test::CliResult r = test::run_cli("schema --update " + (dir / "format.md").string());
  CHECK(r.exit_code == kExitOk);
  CHECK(r.out.find("key tables rewritten") != std::string::npos);
  CHECK(test::read_file(dir / "format.md") == docs);
  const test::CliResult printed = test::run_cli("schema");
  CHECK(printed.exit_code == kExitOk);
  CHECK(printed.out.find("### contact.advanced") != std::string::npos);
  const test::CliResult missing = test::run_cli("schema --update " + (dir / "none.md").string());
  CHECK(missing.exit_code == kExitInput);
  CHECK(missing.err.find("none.md: cannot read") != std::string::npos);
}

TEST_CASE("schema: shapes are checked from the schema, naming the field") {
  json doc = demo("cloth_drop");
  json& sphere = doc["obstacles"][0]["shape"];
  REQUIRE(sphere["type"] == "sphere");
  sphere["subdivisions"] = 7;  // the generator's limit is 6; the docs said 3 before the schema
  CHECK(build_error(doc) == "s.json: /obstacles/0/shape/subdivisions: must be an integer in [0, 6], got 7");
  doc = demo("cloth_drop");
  doc["obstacles"][0]["shape"]["colour"] = 1;
  CHECK(build_error(doc) == "s.json: /obstacles/0/shape/colour: unknown key 'colour' (allowed: type, center, "
                            "radius, subdivisions)");
}
