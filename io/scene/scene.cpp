/// The JSON front-end of the World (io/world/world.hpp): reads and validates a scene
/// file (docs/scene-format.md) into typed specs, each carrying its JSON origin so that
/// the World's own refusals name the file, the JSON pointer and the value.
#include "io/scene/scene.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "io/scene/json_reader.hpp"
#include "io/mesh/obstacle_meshes.hpp"
#include "io/scene/scene_contact.hpp"
#include "io/scene/scene_limits.hpp"
#include "io/scene/scene_schema.hpp"
#include "io/scene/scene_shapes.hpp"
#include "io/scene/scene_solid.hpp"
#include "io/world/world.hpp"

namespace clockwork {

namespace {

PeriodSpec read_periods(const std::optional<JsonField>& f) {
  PeriodSpec p;
  if (!f) return p;
  const SchemaObject periods(*f, "periods");
  // Absent or "auto": the stability estimate (kAutoPeriod).
  const auto period = [&](const char* key) { return periods.number(key).value_or(kAutoPeriod); };
  p.membrane = period("membrane");
  p.bending = period("bending");
  p.spring = period("spring");
  p.gravity = period("gravity");
  p.wind = period("wind");
  if (auto s = periods.number("safety")) p.safety = *s;
  return p;
}

std::vector<double> read_list(const JsonField& f, bool positive) {
  std::vector<double> out;
  if (f.raw().is_number()) {
    out.push_back(positive ? f.positive() : f.non_negative());
    return out;
  }
  if (f.array_size() == 0) f.fail("expected a number or a non-empty array of numbers");
  for (std::size_t i = 0; i < f.array_size(); ++i)
    out.push_back(positive ? f[i].positive() : f[i].non_negative());
  return out;
}

Index named_vertex(const JsonField& p, const std::string& kind, const TriangleMesh& mesh,
                   const JsonField& body) {
  const Index n = static_cast<Index>(mesh.vertices.size());
  if (kind == "chain") {
    const std::string s = p.choice({"first", "last"});
    return s == "first" ? 0 : n - 1;
  }
  if (kind == "grid") {
    const JsonField res = body.at("shape").at("resolution");
    const Index nu = static_cast<Index>(res[0].integer()), nv = static_cast<Index>(res[1].integer());
    const std::string s = p.choice({"u0v0", "u1v0", "u0v1", "u1v1"});
    const Index i = s[1] == '0' ? 0 : nu, j = s[3] == '0' ? 0 : nv;
    return j * (nu + 1) + i;
  }
  if (kind == "disk" || kind == "hat") {
    p.choice({"center"});
    return 0;
  }
  p.fail("named pins exist only for grid (u0v0, u1v0, u0v1, u1v1), chain (first, last), "
         "disk and hat (center) shapes; use vertex indices");
}

std::vector<Index> read_pins(const std::optional<JsonField>& f, const std::string& kind,
                             const TriangleMesh& mesh, const JsonField& body) {
  std::vector<Index> pins;
  if (!f) return pins;
  const std::size_t n = mesh.vertices.size();
  const std::size_t count = f->array_size();
  for (std::size_t i = 0; i < count; ++i) {
    const JsonField p = (*f)[i];
    Index a;
    if (p.raw().is_string()) {
      a = named_vertex(p, kind, mesh, body);
    } else {
      a = static_cast<Index>(p.integer_in(0, static_cast<long long>(n) - 1));
    }
    if (std::find(pins.begin(), pins.end(), a) != pins.end()) p.fail("vertex pinned twice");
    pins.push_back(a);
  }
  return pins;
}

VelocitySpec read_velocity(const std::optional<JsonField>& f, std::size_t vertices) {
  VelocitySpec v;
  if (!f) return v;
  v.given = true;
  const SchemaObject velocity(*f, "velocity");
  if (auto l = f->find("linear")) v.linear = l->vec3();
  if (auto a = f->find("angular")) v.angular = a->vec3();
  if (auto r = velocity.number("random")) v.random = *r;
  if (auto list = f->find("vertices")) {
    for (std::size_t i = 0; i < list->array_size(); ++i) {
      const JsonField item = (*list)[i];
      SchemaObject(item, "velocity.vertex");
      const auto a = item.at("vertex").integer_in(0, static_cast<long long>(vertices) - 1);
      v.vertices.emplace_back(static_cast<Index>(a), item.at("velocity").vec3());
    }
  }
  return v;
}

/// What a shell body's `pin_motion` may also name: the subset of its pins it moves and
/// a release time.
struct BodyPins {
  const std::string& kind;
  const JsonField& body;
};

/// A keyframed motion of `pins` (local indices); with `body_pins` (shells and chains)
/// the object may name the subset of the pins it moves (`pins`) and a `release` time.
MotionSpec read_motion(const JsonField& motion, const std::vector<Index>& pins,
                       const TriangleMesh& mesh, const BodyPins* body_pins = nullptr) {
  // Solids' pins and obstacles move whole: of the schema's pin_motion keys only keyframes.
  if (body_pins) SchemaObject(motion, "pin_motion");
  else motion.expect_keys({"keyframes"});
  if (pins.empty()) motion.fail("pin_motion needs pins");
  MotionSpec m;
  if (body_pins && motion.has("pins")) {
    const JsonField subset = motion.at("pins");
    m.moved = read_pins(subset, body_pins->kind, mesh, body_pins->body);
    if (m.moved.empty()) subset.fail("needs at least one pin");
    for (std::size_t i = 0; i < m.moved.size(); ++i)
      if (std::find(pins.begin(), pins.end(), m.moved[i]) == pins.end())
        subset[i].fail(fmt::format("vertex {} is not one of the body's pins", m.moved[i]));
  }
  const JsonField keys = motion.at("keyframes");
  if (keys.array_size() < 2) keys.fail("needs at least two keyframes");
  if (body_pins && motion.has("release"))
    m.release = *checked_number(motion.at("release"), schema_key("pin_motion", "release"));
  for (std::size_t i = 0; i < keys.array_size(); ++i) {
    const JsonField key = keys[i];
    const SchemaObject keyframe(key, "keyframe");
    const JsonField t = key.at("time");
    const double time = keyframe.required_number("time");
    if (i == 0 && time != 0.0) t.fail("the first keyframe must be at time 0");
    if (i > 0 && !(time > m.keyframes.back().time)) t.fail("keyframe times must increase strictly");
    m.keyframes.push_back(Keyframe{time, key.at("offset").vec3()});
  }
  return m;
}

class SceneReader {
 public:
  SceneReader(const nlohmann::json& doc, const std::string& file, const std::string& base_dir)
      : root_(doc, file), base_dir_(base_dir) {}

  World read() {
    const SchemaObject root(root_, "scene");
    WorldSettings settings;
    settings.name = root_.at("name").file_name();  // the default output folder out/<name>
    if (auto d = root_.find("description")) settings.description = d->string();
    settings.end_time = root.required_number("end_time");
    settings.frame_rate = root.required_number("frame_rate");
    const double frames = settings.end_time * settings.frame_rate;
    if (!(frames <= kMaxFrames))
      root_.at("frame_rate").fail(fmt::format(
          "with end_time {} s (/end_time) asks for {:.3g} frames, above the limit of {:.0f} "
          "(docs/scene-format.md \"Limits\")",
          settings.end_time, frames, kMaxFrames));
    settings.seed = static_cast<std::uint64_t>(root.integer("seed").value_or(0));
    if (auto g = root_.find("gravity")) settings.gravity = g->vec3();
    if (auto w = root_.find("wind")) {
      const SchemaObject wind(*w, "wind");
      settings.wind_velocity = w->at("velocity").vec3();
      settings.wind_drag = wind.required_number("drag");
    }
    if (auto out = root_.find("output")) {
      const SchemaObject output(*out, "output");
      if (auto f = output.boolean("obj")) settings.write_obj = *f;
      if (auto f = output.boolean("ply")) settings.write_ply = *f;
    }
    World world(settings);
    world_ = &world;
    const JsonField bodies = root_.at("bodies");
    if (bodies.array_size() == 0) bodies.fail("needs at least one body");
    contact_ = root_.find("contact");
    for (std::size_t i = 0; i < bodies.array_size(); ++i) read_body(bodies[i]);
    if (auto obstacles = root_.find("obstacles")) {
      if (!contact_) obstacles->fail("obstacles need a \"contact\" object");
      for (std::size_t i = 0; i < obstacles->array_size(); ++i) read_obstacle((*obstacles)[i]);
    }
    if (contact_) world.enable_contact({read_contact_settings(*contact_), json_origin(*contact_)});
    return world;
  }

 private:
  void read_body(const JsonField& b) {
    SchemaObject(b, "body");
    const std::string name = b.at("name").file_name();  // frames are <name>_NNNNN.obj/.ply
    const bool collide = !b.has("collide") || b.at("collide").boolean();
    if (is_tet_shape(b.at("shape"))) {
      read_solid(b, name, collide);
      return;
    }
    for (const char* key : {"backward_euler", "zhao", "self_contact", "schroeder", "semi_implicit",
                            "fully_implicit"})
      if (b.has(key)) b.at(key).fail("needs a tet shape (a solid body)");
    ShellSpec spec;
    spec.name = name;
    spec.collide = collide;
    spec.origin = json_origin(b);
    std::string kind;
    spec.mesh = read_shape(b.at("shape"), base_dir_, kind, world_->budget());
    const bool springs = kind == "chain";
    spec.periods = read_periods(b.find("periods"));
    spec.phantom = read_phantom(b, springs);
    const JsonField material = b.at("material");
    if (springs) {
      const SchemaObject chain(material, "chain_material");
      ChainMaterial m;
      m.node_mass = chain.required_number("node_mass");
      m.stiffness = read_list(material.at("stiffness"), /*positive=*/true);
      if (auto q = material.find("quartic")) m.quartic = read_list(*q, /*positive=*/false);
      if (auto r = chain.number("rest_length")) m.rest_length = *r;
      spec.material = std::move(m);
    } else {
      const SchemaObject cloth(material, "cloth_material");
      ShellMaterial m;
      m.area_density = cloth.required_number("area_density");
      m.young = cloth.required_number("young");
      m.poisson = cloth.required_number("poisson");
      m.bending = cloth.required_number("bending");
      spec.material = m;
      check_shell_geometry(spec, *spec.origin);
    }
    spec.pins = read_pins(b.find("pins"), kind, spec.mesh, b);
    spec.velocity = read_velocity(b.find("velocity"), spec.mesh.vertices.size());
    if (auto motion = b.find("pin_motion")) {
      const BodyPins body_pins{kind, b};
      spec.pin_motion = read_motion(*motion, spec.pins, spec.mesh, &body_pins);
    }
    spec.allow_unstable_periods = b.has("allow_unstable_periods") && b.at("allow_unstable_periods").boolean();
    world_->add_shell(std::move(spec));
  }

  /// A tet solid (docs/scene-format.md "Solids").
  void read_solid(const JsonField& b, const std::string& name, bool collide) {
    if (b.has("periods")) b.at("periods").fail("a solid has no AVI periods (its integrator sets the steps)");
    if (b.has("phantom")) b.at("phantom").fail("the phantom integrator is for triangle meshes");
    SolidSpec spec;
    spec.name = name;
    spec.collide = collide;
    spec.origin = json_origin(b);
    spec.mesh = read_tet_shape(b.at("shape"), base_dir_, world_->budget());
    spec.self_contact = b.has("self_contact") && b.at("self_contact").boolean();
    spec.material = read_solid_material(b.at("material"), spec.mesh);
    const std::size_t n = spec.mesh.vertices.size();
    if (b.has("pins")) spec.fixed = read_solid_pins(b.at("pins"), spec.mesh);
    if (is_schroeder_integrator(b)) {
      spec.integrator = read_schroeder_solid(b, spec.mesh);
    } else {
      std::visit([&](auto&& s) { spec.integrator = std::move(s); }, read_solid_integrator(b, spec.mesh));
      const bool zhao = std::holds_alternative<ZhaoSpec>(spec.integrator);
      // Read a second time here (read_solid_integrator warned about knobs at old places).
      const SchemaObject f(b.at(zhao ? "zhao" : "backward_euler"), zhao ? "zhao" : "backward_euler",
                           /*warn=*/false);
      const bool collides = contact_.has_value() && collide;
      SolveContactSpec obstacles, pairs;
      obstacles.on = read_tick_contact(f, b, "obstacle", obstacles.settings, collides);
      pairs.on = read_tick_contact(f, b, "deformable", pairs.settings, collides);
      spec.obstacles = obstacles;
      spec.deformables = pairs;
    }
    spec.velocity = read_velocity(b.find("velocity"), n);
    if (auto motion = b.find("pin_motion")) {
      std::vector<Index> pins;
      for (Index a = 0; a < n; ++a)
        if (!spec.fixed.empty() && spec.fixed[a]) pins.push_back(a);
      TriangleMesh points;
      points.vertices = spec.mesh.vertices;
      spec.pin_motion = read_motion(*motion, pins, points);
    }
    world_->add_solid(std::move(spec));
  }

  std::optional<PhantomSpec> read_phantom(const JsonField& b, bool springs) {
    const std::string integrator =
        b.has("integrator") ? b.at("integrator").choice({"explicit", "phantom"}) : "explicit";
    if (integrator != "phantom") {
      if (b.has("phantom")) b.at("phantom").fail("needs \"integrator\": \"phantom\"");
      return std::nullopt;
    }
    if (springs) b.at("integrator").fail("phantom needs a triangle mesh body, not a chain");
    const SchemaObject f(b.at("phantom"), "phantom");
    PhantomSpec p;
    p.h_imp = f.required_number("h_imp");
    if (auto k = f.choice("solver"))
      p.solver.kind = *k == "newton" ? ImplicitSolverKind::ProjectedNewton : ImplicitSolverKind::PreconditionedNcg;
    if (auto t = f.number("tolerance")) p.solver.tolerance = *t;
    if (auto m = f.integer("max_iterations")) p.solver.max_iterations = static_cast<int>(*m);
    if (auto r = f.integer("refresh")) p.solver.refresh = static_cast<int>(*r);
    if (auto st = f.integer("stall_iterations")) p.solver.stall_iterations = static_cast<int>(*st);
    if (auto d = f.number("rayleigh_beta")) p.solver.rayleigh_beta = *d;
    if (auto r = f.choice("tick_rule")) p.solver.theta = *r == "backward_euler" ? 1.0 : 0.5;
    if (auto c = f.choice("factorization"))
      p.solver.factorization = *c == "vertex_block" ? TickFactorization::VertexBlock : TickFactorization::Simplicial;
    if (auto m = f.integer("max_halvings")) p.halving.max_halvings = static_cast<int>(*m);
    if (auto c = f.find("calm_ticks")) {
      if (p.halving.max_halvings == 0) c->fail("needs \"max_halvings\" of at least 1");
      p.halving.calm_ticks = static_cast<int>(*f.integer("calm_ticks"));
    }
    if (auto c = f.find("contact_mass")) {
      p.contact_on_whole = *f.choice("contact_mass") == "whole";
      if (p.contact_on_whole && !contact_) c->fail("needs a \"contact\" object in the scene");
    }
    p.obstacles.on = read_tick_contact(f, b, "obstacle", p.obstacles.settings);
    p.deformables.on = read_tick_contact(f, b, "deformable", p.deformables.settings);
    return p;
  }

  /// The `KIND_contact`, `KIND_stiffness` and `KIND_clearance` keys of a phantom or a
  /// solid's step (docs/phantom.md "Obstacles in the tick", "Near pairs in the tick");
  /// whether the switch is on.
  bool read_tick_contact(const SchemaObject& f, const JsonField& b, const std::string& kind,
                         TickContactSettings& settings, bool default_on = false) {
    bool on = default_on;
    if (auto o = f.find(kind + "_contact")) {
      on = *f.boolean(kind + "_contact");
      if (on && !contact_) o->fail("needs a \"contact\" object in the scene");
      if (on && b.has("collide") && !b.at("collide").boolean())
        o->fail("needs a colliding body (\"collide\": false)");
    }
    const std::string needs = fmt::format("needs \"{}_contact\": true", kind);
    if (auto k = f.find(kind + "_stiffness")) {
      if (!on) k->fail(needs);
      settings.stiffness = *f.number(kind + "_stiffness");
    }
    if (auto c = f.find(kind + "_clearance")) {
      if (!on) c->fail(needs);
      settings.clearance = *f.number(kind + "_clearance");
    }
    return on;
  }

  /// Obstacles: kinematic meshes (infinite mass), static or following keyframes.
  void read_obstacle(const JsonField& o) {
    SchemaObject(o, "obstacle");
    ObstacleSpec spec;
    spec.name = o.at("name").file_name();
    spec.origin = json_origin(o);
    const JsonField shape = o.at("shape");
    std::optional<ObstacleShape> read;
    try {
      read = read_obstacle_shape(shape, world_->budget());
    } catch (const std::invalid_argument& e) {
      shape.fail(e.what());
    }
    if (read) {
      spec.mesh = std::move(read->mesh);
      spec.surface = read->surface;
    } else {
      std::string kind = shape.at("type").choice(
          {"ground", "sphere", "cylinder", "capsule", "grid", "disk", "hat", "obj", "mesh"});
      spec.mesh = read_shape(shape, base_dir_, kind, world_->budget());
    }
    if (auto motion = o.find("motion")) {
      std::vector<Index> all(spec.mesh.vertices.size());
      for (Index a = 0; a < all.size(); ++a) all[a] = a;
      spec.motion = read_motion(*motion, all, spec.mesh);
    }
    world_->add_obstacle(std::move(spec));
  }

  JsonField root_;
  std::string base_dir_;
  std::optional<JsonField> contact_;
  World* world_ = nullptr;
};

}  // namespace

Scene build_scene(const nlohmann::json& doc, const std::string& file, const std::string& base_dir,
                  const std::string& resume_dir, int resume_frame) {
  World world = SceneReader(doc, file, base_dir).read();
  if (!resume_dir.empty()) world.resume_from(resume_dir, resume_frame);
  Scene scene = world.release();
  scene.file = file;
  return scene;
}

Scene load_scene(const std::string& path, const std::string& resume_dir, int resume_frame) {
  const nlohmann::json doc = parse_json_file(path);
  return build_scene(doc, path, std::filesystem::path(path).parent_path().string(), resume_dir,
                     resume_frame);
}

}  // namespace clockwork
