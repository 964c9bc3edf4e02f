/// The schema's documented defaults (io/scene/scene_schema_keys.cpp, docs/scene-format.md)
/// are the ones the code uses: every key whose default is a constant (a number, a
/// boolean, a string, a vector, "auto", "never") is compared with the default-
/// constructed spec field or the reader's value for a scene without the key. A default
/// that depends on the scene says so ("derived: ...") and is skipped here; a key that
/// is an object or a list may describe its absence in words ("none", "at rest").
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <variant>

#include "io/scene/scene_contact.hpp"
#include "io/scene/scene_schema.hpp"
#include "io/scene/scene_shapes.hpp"
#include "io/scene/scene_solid.hpp"
#include "io/world/specs.hpp"
#include "tests/support/files.hpp"

using namespace clockwork;
using nlohmann::json;

namespace {

/// A C++ default in the schema's terms (enums by their scene names).
using Value = std::variant<double, bool, std::string, Vec3>;

JsonField field(const json& j) { return JsonField(j, "defaults.json"); }

std::string name_of(ImplicitSolverKind k) { return k == ImplicitSolverKind::ProjectedNewton ? "newton" : "ncg"; }

/// The settings a solid's integrator object gets from the reader when it holds only
/// the required keys.
BackwardEulerSettings backward_euler_read() {
  const json body = {{"integrator", "backward_euler"}, {"backward_euler", {{"h", 0.01}}}};
  return std::get<BackwardEulerSpec>(read_solid_integrator(field(body), TetMesh{})).settings;
}

SchroederSpec schroeder_read(const std::string& integrator) {
  json settings = {{"frame_dt", 0.04}, {"collisions", {{{"plane", {{"point", {0, 0, 0}}, {"normal", {0, 0, 1}}}}}}}};
  const json body = {{"integrator", integrator}, {integrator, settings}};
  return read_schroeder_solid(field(body), TetMesh{});
}

std::string auto_or(double x) { return x == 0.0 ? "auto" : "given"; }

/// Every constant default, by "object/key": the value the code uses.
std::map<std::string, std::function<Value()>> cxx_defaults() {
  std::map<std::string, std::function<Value()>> d;
  const WorldSettings world;
  d["scene/seed"] = [=] { return double(world.seed); };
  d["scene/gravity"] = [=] { return Value(world.gravity); };
  d["output/obj"] = [=] { return world.write_obj; };
  d["output/ply"] = [=] { return world.write_ply; };
  d["body/allow_unstable_periods"] = [] { return ShellSpec{}.allow_unstable_periods; };
  d["body/collide"] = [] {
    CHECK(SolidSpec{}.collide == ShellSpec{}.collide);
    return ShellSpec{}.collide;
  };
  d["body/integrator"] = [] { return std::string(ShellSpec{}.phantom ? "phantom" : "explicit"); };
  d["body/self_contact"] = [] { return SolidSpec{}.self_contact; };
  d["chain_material/quartic"] = [] {
    const ChainMaterial m;
    REQUIRE(m.quartic.size() == 1);
    return m.quartic[0];
  };
  d["velocity/linear"] = [] { return Value(VelocitySpec{}.linear); };
  d["velocity/angular"] = [] { return Value(VelocitySpec{}.angular); };
  d["velocity/random"] = [] { return VelocitySpec{}.random; };
  d["pin_motion/release"] = [] { return MotionSpec{}.release; };
  for (const char* k : {"membrane", "bending", "spring", "gravity", "wind"})
    d[std::string("periods/") + k] = [k] {
      const PeriodSpec p;
      const std::map<std::string, double> by_key = {{"membrane", p.membrane}, {"bending", p.bending},
                                                    {"spring", p.spring}, {"gravity", p.gravity}, {"wind", p.wind}};
      return by_key.at(k) == kAutoPeriod ? Value(std::string("auto")) : Value(by_key.at(k));
    };
  d["periods/safety"] = [] { return PeriodSpec{}.safety; };
  // The phantom mesh.
  const PhantomSpec phantom;
  const ImplicitSolverSettings tick = phantom.solver;
  d["phantom/rayleigh_beta"] = [=] { return tick.rayleigh_beta; };
  d["phantom.advanced/solver"] = [=] { return name_of(tick.kind); };
  d["phantom.advanced/tolerance"] = [=] { return tick.tolerance; };
  d["phantom.advanced/max_iterations"] = [=] { return double(tick.max_iterations); };
  d["phantom.advanced/refresh"] = [=] { return double(tick.refresh); };
  d["phantom.advanced/stall_iterations"] = [=] { return double(tick.stall_iterations); };
  d["phantom.advanced/tick_rule"] = [=] {
    return std::string(tick.theta == 0.5 ? "midpoint" : tick.theta == 1.0 ? "backward_euler" : "?");
  };
  d["phantom.advanced/factorization"] = [=] {
    return std::string(tick.factorization == TickFactorization::Simplicial ? "simplicial" : "vertex_block");
  };
  d["phantom.advanced/max_halvings"] = [=] { return double(phantom.halving.max_halvings); };
  d["phantom.advanced/calm_ticks"] = [=] { return double(phantom.halving.calm_ticks); };
  d["phantom.advanced/contact_mass"] = [=] { return std::string(phantom.contact_on_whole ? "whole" : "primary"); };
  d["phantom.advanced/obstacle_contact"] = [=] { return phantom.obstacles.on; };
  d["phantom.advanced/deformable_contact"] = [=] { return phantom.deformables.on; };
  d["phantom.advanced/obstacle_stiffness"] = [=] { return phantom.obstacles.settings.stiffness; };
  d["phantom.advanced/deformable_stiffness"] = [=] { return phantom.deformables.settings.stiffness; };
  // Solids.
  d["rayleigh/alpha"] = [] { return SolidMaterial{}.rayleigh_alpha; };
  d["rayleigh/beta"] = [] { return SolidMaterial{}.rayleigh_beta; };
  const SolveContactSpec solve_contact;
  for (const char* o : {"backward_euler.advanced", "zhao.advanced"}) {
    d[std::string(o) + "/obstacle_stiffness"] = [=] { return solve_contact.settings.stiffness; };
    d[std::string(o) + "/deformable_stiffness"] = [=] { return solve_contact.settings.stiffness; };
  }
  d["backward_euler.advanced/max_newton"] = [] { return double(backward_euler_read().max_newton); };
  d["backward_euler.advanced/tolerance"] = [] { return backward_euler_read().tolerance; };
  d["backward_euler.advanced/cg_tolerance"] = [] { return backward_euler_read().cg_tolerance; };
  d["backward_euler.advanced/linear_solver"] = [] {
    switch (backward_euler_read().linear) {
      case LinearSolverKind::Cholesky: return std::string("cholesky");
      case LinearSolverKind::CG: return std::string("cg");
      case LinearSolverKind::PcgJacobi: return std::string("pcg_jacobi");
      case LinearSolverKind::PcgIncompleteCholesky: return std::string("pcg_ic");
    }
    return std::string("?");
  };
  d["backward_euler.advanced/definiteness"] = [] {
    switch (backward_euler_read().fix) {
      case DefinitenessFix::LocalClamp: return std::string("clamp");
      case DefinitenessFix::GlobalRegularization: return std::string("regularize");
      case DefinitenessFix::None: return std::string("none");
    }
    return std::string("?");
  };
  d["backward_euler.advanced/damping"] = [] {
    return std::string(backward_euler_read().damping == RayleighDamping::ProjectedAtStart ? "projected" : "tangent");
  };
  const MultirateSettings zhao;
  d["zhao.advanced/symmetric"] = [=] { return zhao.symmetric_schur; };
  d["zhao.advanced/symmetric_solver"] = [=] { return std::string(zhao.block_cholesky ? "block_cholesky" : "ldlt"); };
  d["zhao.advanced/coupling"] = [=] {
    return std::string(zhao.coupling == MultirateCoupling::Conservative ? "conservative" : "paper");
  };
  d["zhao.advanced/damping"] = [=] {
    return std::string(zhao.damping == MultirateDamping::Projected ? "projected" : "tangent");
  };
  // Schroeder et al.'s schemes, as the reader fills them.
  for (const std::string integrator : {"schroeder", "semi_implicit", "fully_implicit"}) {
    const std::string o = integrator, a = integrator + ".advanced";
    d[a + "/cg_tolerance"] = [=] { return schroeder_read(integrator).settings.cg_tolerance; };
    d[a + "/cg_max_iterations"] = [=] { return double(schroeder_read(integrator).settings.cg_max_iterations); };
    d[a + "/constrain_collisions"] = [=] { return schroeder_read(integrator).settings.constrain_collisions; };
    if (integrator == "fully_implicit") continue;
    d[o + "/substep"] = [=] { return auto_or(schroeder_read(integrator).settings.substep); };
    d[a + "/safety"] = [=] { return schroeder_read(integrator).settings.safety; };
  }
  d["schroeder.advanced/epsilon"] = [] { return schroeder_read("schroeder").settings.epsilon; };
  d["schroeder.advanced/partition"] = [] {
    return std::string(schroeder_read("schroeder").semi_implicit_tets.empty() ? "auto" : "given");
  };
  d["collision/friction"] = [] { return schroeder_read("schroeder").settings.colliders.at(0).friction; };
  // Contact, as read from an empty contact object.
  const ContactSettings contact = read_contact_settings(field(json::object()));
  d["contact/friction"] = [=] { return contact.friction; };
  d["contact.advanced/safety"] = [=] { return contact.safety; };
  d["contact.advanced/max_layers"] = [=] { return double(contact.max_layers); };
  d["contact.advanced/adaptive_slack"] = [=] { return contact.adaptive_slack; };
  d["contact.advanced/vertex_periods"] = [=] { return contact.vertex_periods; };
  d["contact.advanced/position_slack"] = [=] { return contact.position_slack; };
  return d;
}

bool same_mesh(const TriangleMesh& a, const TriangleMesh& b) {
  return a.vertices == b.vertices && a.triangles == b.triangles && a.edges == b.edges;
}

bool same_mesh(const TetMesh& a, const TetMesh& b) {
  return a.vertices == b.vertices && a.tets == b.tets && a.tet_region == b.tet_region;
}

/// The defaults written as literals in the shape readers: `shape` without `key` reads
/// to the same mesh as `shape` with `key` set to the schema's default.
std::map<std::string, std::function<bool(const json&)>> omitted_equals_given(const std::string& dir) {
  std::map<std::string, std::function<bool(const json&)>> d;
  const auto obstacle = [](json shape, const std::string& key) {
    return [shape, key](const json& value) {
      SceneBudget budget;
      json given = shape;
      given[key] = value;
      return same_mesh(read_obstacle_shape(field(shape), budget)->mesh,
                       read_obstacle_shape(field(given), budget)->mesh);
    };
  };
  const json ground = {{"type", "ground"}, {"center", {0, 0, 0}}, {"half_size", 1.0}};
  const json sphere = {{"type", "sphere"}, {"center", {0, 0, 0}}, {"radius", 1.0}};
  const json cylinder = {{"type", "cylinder"}, {"base", {0, 0, 0}}, {"axis", {0, 0, 1}}, {"radius", 0.1}, {"length", 1}};
  const json capsule = {{"type", "capsule"}, {"a", {0, 0, 0}}, {"b", {0, 0, 1}}, {"radius", 0.1}};
  d["obstacle.ground/divisions"] = obstacle(ground, "divisions");
  d["obstacle.sphere/subdivisions"] = obstacle(sphere, "subdivisions");
  d["obstacle.cylinder/segments"] = obstacle(cylinder, "segments");
  d["obstacle.cylinder/rings"] = obstacle(cylinder, "rings");
  d["obstacle.cylinder/capped"] = obstacle(cylinder, "capped");
  d["obstacle.capsule/segments"] = obstacle(capsule, "segments");
  d["obstacle.capsule/rings"] = obstacle(capsule, "rings");
  std::ofstream(std::filesystem::path(dir) / "tri.obj") << "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
  const json obj = {{"type", "obj"}, {"file", "tri.obj"}};
  for (const char* key : {"scale", "translate"})
    d[std::string("shape.obj/") + key] = [=](const json& value) {
      SceneBudget budget;
      std::string kind;
      json given = obj;
      given[key] = value;
      return same_mesh(read_shape(field(obj), dir, kind, budget), read_shape(field(given), dir, kind, budget));
    };
  const auto tet = [](json shape, const std::string& key, const std::string& base) {
    return [=](const json& value) {
      SceneBudget budget;
      json given = shape;
      given[key] = value;
      return same_mesh(read_tet_shape(field(shape), base, budget), read_tet_shape(field(given), base, budget));
    };
  };
  const json dinosaur = {{"type", "tet_dinosaur"}, {"origin", {0, 0, 0}}, {"cell", 0.08}};
  d["tet.voxel/scale"] = tet(dinosaur, "scale", ".");
  const json cube = {{"type", "tetgen"}, {"file", "cube5"}};
  const std::string data = std::string(CLOCKWORK_SOURCE_DIR) + "/tests/io/data";
  d["tet.file/scale"] = tet(cube, "scale", data);
  d["tet.file/translate"] = tet(cube, "translate", data);
  return d;
}

/// The schema's default text without Markdown: `"newton"` → "newton" (a JSON string),
/// "0 (off)" → "0".
std::string plain(std::string_view fallback) {
  std::string s;
  for (char c : fallback)
    if (c != '`') s += c;
  if (const auto paren = s.find(" ("); paren != std::string::npos) s.resize(paren);
  return s;
}

bool equal(const Value& cxx, const json& doc) {
  if (const double* x = std::get_if<double>(&cxx)) {
    if (doc.is_string() && doc == "never") return *x == kNever;
    return doc.is_number() && doc.get<double>() == *x;
  }
  if (const bool* b = std::get_if<bool>(&cxx)) return doc.is_boolean() && doc.get<bool>() == *b;
  if (const std::string* s = std::get_if<std::string>(&cxx)) return doc.is_string() && doc.get<std::string>() == *s;
  const Vec3& v = std::get<Vec3>(cxx);
  if (doc.is_number()) return v == Vec3::Constant(doc.get<double>());  // "0": every component
  return doc.is_array() && doc.size() == 3 && v == Vec3(doc[0].get<double>(), doc[1].get<double>(), doc[2].get<double>());
}

}  // namespace

TEST_CASE("schema: every constant default is the one the code uses") {
  const std::string dir = test::fresh_dir("schema_defaults").string();
  const auto cxx = cxx_defaults();
  const auto literal = omitted_equals_given(dir);
  std::size_t compared = 0;
  for (const KeyInfo& k : schema_keys()) {
    const std::string id = std::string(k.object) + "/" + std::string(k.key);
    CAPTURE(id);
    CAPTURE(k.fallback);
    if (k.fallback == "required" || k.fallback == "none" || k.fallback.starts_with("derived:")) continue;
    const std::string text = plain(k.fallback);
    json doc;
    if (text == "never") doc = "never";
    else doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) {
      // Objects and lists may describe what their absence means; a value's default is
      // a constant or says "derived: ..." (what it is computed from).
      CHECK_MESSAGE(k.check == KeyCheck::Custom, "a default neither constant nor marked 'derived:'");
      continue;
    }
    ++compared;
    if (const auto c = cxx.find(id); c != cxx.end()) {
      const Value v = c->second();
      CHECK_MESSAGE(equal(v, doc), "the code's default differs from the schema's");
    } else if (const auto l = literal.find(id); l != literal.end()) {
      CHECK_MESSAGE(l->second(doc), "a scene without the key differs from one giving the schema's default");
    } else {
      FAIL_CHECK("no C++ default to compare the schema's with: add one to this test");
    }
  }
  CHECK(compared == cxx.size() + literal.size());  // no probe left without its key
}
