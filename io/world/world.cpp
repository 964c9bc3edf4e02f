/// The World: bodies in, a started kernel out (io/world/world.hpp). Shells are added in
/// world_shell.cpp, contact and resuming are in world_contact.cpp.
#include "io/world/world.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/diagnostics.hpp"
#include "io/world/world_impl.hpp"

namespace clockwork {

namespace {

/// The shortest time a pressure wave takes across a tet edge, s.
double shortest_wave_crossing(const TetMesh& mesh, const SolidMaterial& material) {
  double out = kNever;
  for (std::size_t t = 0; t < mesh.tets.size(); ++t) {
    const TetMaterial& m = material.per_tet[t];
    const double modulus = m.young / (1.0 + m.poisson) * (1.0 + m.poisson / (1.0 - 2.0 * m.poisson));
    double edge = kNever;
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j)
        edge = std::min(edge, (mesh.vertices[mesh.tets[t][i]] - mesh.vertices[mesh.tets[t][j]]).norm());
    out = std::min(out, edge * std::sqrt(m.density / modulus));
  }
  return out;
}

const char* schroeder_key(SchroederScheme s) {
  return s == SchroederScheme::FullyImplicit ? "fully_implicit"
         : s == SchroederScheme::SemiImplicit ? "semi_implicit"
                                              : "schroeder";
}

/// The field of a solid's integrator that sets its step, and the step (0: not given).
std::pair<std::string, double> solid_step(const SolidSpec& spec) {
  if (const auto* be = std::get_if<BackwardEulerSpec>(&spec.integrator)) return {"backward_euler/h", be->h};
  if (const auto* z = std::get_if<ZhaoSpec>(&spec.integrator)) return {"zhao/h_L", z->settings.h_L};
  const SchroederSettings& s = std::get<SchroederSpec>(spec.integrator).settings;
  const std::string key = schroeder_key(s.scheme);
  if (s.scheme == SchroederScheme::SemiImplicit && s.substep > 0.0) return {key + "/substep", s.substep};
  return {key + "/frame_dt", s.frame_dt};
}

/// Values a C++ caller can get wrong that a scene file's reader has already refused.
void check_solid_spec(const SolidSpec& spec, const SpecOrigin& origin) {
  if (spec.mesh.tets.empty()) origin.fail("shape", "needs at least one tet");
  // A scene file's tet shapes were validated as they were read (io/scene/scene_solid.hpp).
  if (!spec.origin) validate_tet_mesh(spec.mesh, origin.pointer("shape"));
  if (spec.material.per_tet.size() != spec.mesh.tets.size())
    origin.fail("material", fmt::format("{} tet materials for {} tets", spec.material.per_tet.size(),
                                        spec.mesh.tets.size()));
  for (std::size_t t = 0; t < spec.material.per_tet.size(); ++t) {
    const TetMaterial& m = spec.material.per_tet[t];
    if (!(m.young > 0.0 && std::isfinite(m.young) && m.poisson >= 0.0 && m.poisson < 0.5 && m.density > 0.0 &&
          std::isfinite(m.density)))
      origin.fail("material", fmt::format("tet {}: young {} (> 0), poisson {} (in [0, 0.5)) and density {} "
                                          "(> 0) out of range",
                                          t, m.young, m.poisson, m.density));
  }
  if (!spec.fixed.empty() && spec.fixed.size() != spec.mesh.vertices.size())
    origin.fail("pins", fmt::format("{} flags for {} vertices", spec.fixed.size(), spec.mesh.vertices.size()));
  const auto [field, step] = solid_step(spec);
  const bool schroeder = std::holds_alternative<SchroederSpec>(spec.integrator);
  if (!(step > 0.0 && std::isfinite(step)) &&
      !(schroeder && std::get<SchroederSpec>(spec.integrator).settings.scheme == SchroederScheme::SemiImplicit))
    origin.fail(field, fmt::format("must be > 0, got {}", step));
  if (const auto* z = std::get_if<ZhaoSpec>(&spec.integrator); z && z->regions.empty())
    origin.fail("zhao/regions", "needs at least one small-step region");
}

}  // namespace

World::World(WorldSettings settings) : settings_(std::move(settings)), impl_(std::make_unique<Impl>()) {
  Scene& s = impl_->scene;
  s.file = "<api>";
  s.name = settings_.name;
  s.description = settings_.description;
  s.end_time = settings_.end_time;
  s.frame_rate = settings_.frame_rate;
  s.write_obj = settings_.write_obj;
  s.write_ply = settings_.write_ply;
  s.kernel = std::make_unique<Kernel>();
}

World::~World() = default;
World::World(World&&) noexcept = default;
World& World::operator=(World&&) noexcept = default;

SceneBudget& World::budget() { return impl_->budget; }

TermSummary& World::Impl::summary(const std::string& kind) {
  for (TermSummary& s : scene.terms)
    if (s.kind == kind) return s;
  scene.terms.push_back(TermSummary{kind});
  return scene.terms.back();
}

std::shared_ptr<const SpecOrigin> World::Impl::origin_of(const std::shared_ptr<const SpecOrigin>& given,
                                                         const char* call, const std::string& name) {
  if (given) return given;
  return std::make_shared<CodeOrigin>(fmt::format("{} '{}'", call, name));
}

std::shared_ptr<const SpecOrigin> World::Impl::begin_add(const std::shared_ptr<const SpecOrigin>& given,
                                                         const char* call, const std::string& name) {
  auto origin = origin_of(given, call, name);
  if (built) origin->fail("", "bodies and obstacles are added before the world's first step");
  check_name(*origin, name);
  return origin;
}

std::size_t World::Impl::finish_add(Body body, std::shared_ptr<const SpecOrigin> origin,
                                    std::unique_ptr<BodyIntegrator> integrator) {
  body.integrator = integrator.get();
  if (integrator) sources.integrators.push_back(std::move(integrator));
  scene.bodies.push_back(std::move(body));
  origins.push_back(std::move(origin));
  return scene.bodies.size() - 1;
}

void World::Impl::check_name(const SpecOrigin& origin, const std::string& name) const {
  // Frames are <name>_NNNNN.obj/.ply: the JSON reader's file_name() rule.
  const bool ok = !name.empty() && name.size() <= 64 && name[0] != '.' &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
                  });
  if (!ok)
    origin.fail("name", fmt::format("must be a name usable in file names: 1 to 64 characters of "
                                    "A-Z a-z 0-9 . _ -, not starting with '.', got '{}'",
                                    name));
  for (const Body& other : scene.bodies)
    if (other.name == name) origin.fail("name", "duplicate body or obstacle name");
}

std::vector<Vec3> World::Impl::velocities(const SpecOrigin& origin, const VelocitySpec& f, const std::vector<Vec3>& x,
                                          const std::vector<double>& mass, std::size_t body_index,
                                          std::uint64_t seed) const {
  std::vector<Vec3> v(x.size(), Vec3::Zero());
  const auto checked = [&] {
    check_initial_state(SpecField{&origin, "shape"},
                        f.given ? std::optional<SpecField>(SpecField{&origin, "velocity"}) : std::optional<SpecField>(),
                        x, v);
    return v;
  };
  if (!f.given) return checked();
  Vec3 centroid = Vec3::Zero();
  double total = 0.0;
  for (std::size_t a = 0; a < x.size(); ++a) {
    centroid += mass[a] * x[a];
    total += mass[a];
  }
  centroid /= total;
  for (std::size_t a = 0; a < x.size(); ++a) v[a] = f.linear + f.angular.cross(x[a] - centroid);
  if (f.random > 0.0) {
    std::mt19937_64 rng(seed * 1000003ULL + body_index);
    std::normal_distribution<double> normal(0.0, f.random);
    for (Vec3& va : v)
      for (int k = 0; k < 3; ++k) va[k] += normal(rng);
  }
  for (const auto& [a, va] : f.vertices) {
    if (a >= x.size()) origin.fail("velocity/vertices", fmt::format("vertex {} out of range (0..{})", a, x.size()));
    v[a] = va;
  }
  return checked();
}

std::vector<Index> World::Impl::add_motion(const SpecOrigin& origin, const char* field,
                                           const MotionSpec& m, const std::vector<Index>& pins,
                                           const std::vector<Vec3>& x, Index first,
                                           const std::vector<double>* release_mass) {
  if (pins.empty()) origin.fail(field, "pin_motion needs pins");
  const std::string keys = std::string(field) + "/keyframes";
  if (m.keyframes.size() < 2) origin.fail(keys, "needs at least two keyframes");
  for (std::size_t i = 0; i < m.keyframes.size(); ++i) {
    const double t = m.keyframes[i].time;
    if (!(std::isfinite(t) && t >= 0.0) || (i == 0 && t != 0.0) || (i > 0 && !(t > m.keyframes[i - 1].time)))
      origin.fail(keys, "the first keyframe must be at time 0 and times must increase strictly");
  }
  const std::vector<Index>& moved = m.moved.empty() ? pins : m.moved;
  for (Index a : moved)
    if (std::find(pins.begin(), pins.end(), a) == pins.end())
      origin.fail(std::string(field) + "/pins", fmt::format("vertex {} is not one of the body's pins", a));
  ScriptGroup group;
  for (Index a : moved) {
    group.vertices.push_back(first + a);
    group.reference.push_back(x[a]);
  }
  std::vector<Index> released;
  if (release_mass && std::isfinite(m.release)) {
    if (!(m.release > 0.0)) origin.fail(std::string(field) + "/release", "must be > 0");
    group.release = m.release;
    for (Index a : moved) group.release_mass.push_back((*release_mass)[a]);
    released = moved;
  }
  group.keyframes = m.keyframes;
  sources.script->add(std::move(group));
  return released;
}

std::size_t World::add_solid(SolidSpec spec) {
  Impl& w = *impl_;
  const auto origin_ptr = w.begin_add(spec.origin, "add_solid", spec.name);
  const SpecOrigin& origin = *origin_ptr;
  check_solid_spec(spec, origin);
  const std::size_t index = w.scene.bodies.size();
  Body body;
  body.name = spec.name;
  body.collide = spec.collide;
  body.self_contact = spec.self_contact;
  const TetMesh& mesh = spec.mesh;
  const SolidMaterial& material = spec.material;
  const std::size_t n = mesh.vertices.size();
  const std::vector<bool> fixed = spec.fixed.empty() ? std::vector<bool>(n, false) : spec.fixed;
  // Before the integrator is built: a step of 1e308 gave backward Euler -nan.
  const auto [step_path, step_value] = solid_step(spec);
  const SpecField step{&origin, step_path};
  if (step_value > 0.0) check_step_within_run(step, step_value, settings_.end_time);
  auto model = std::make_shared<TetFemModel>(mesh.vertices, mesh.tets, material.per_tet, material.kind);
  const std::vector<double>& mass = model->lumped_mass();
  const std::vector<Vec3> velocity = w.velocities(origin, spec.velocity, mesh.vertices, mass, index, settings_.seed);
  VertexState& state = w.scene.kernel->state();
  body.first_vertex = static_cast<Index>(state.size());
  body.vertex_count = static_cast<Index>(n);
  std::vector<Index> ids(n);
  for (std::size_t a = 0; a < n; ++a)
    ids[a] = state.add(mesh.vertices[a], fixed[a] ? Vec3::Zero() : velocity[a], fixed[a] ? kNever : mass[a]);
  std::unique_ptr<SolidSource> src;
  std::unique_ptr<SchroederSource> schroeder;
  if (auto* sch = std::get_if<SchroederSpec>(&spec.integrator)) {
    SchroederSettings s = sch->settings;
    s.rayleigh_alpha = material.rayleigh_alpha;
    s.rayleigh_beta = material.rayleigh_beta;
    std::vector<bool> semi = sch->semi_implicit_tets;
    if (semi.empty()) semi = tets_touching_faces(mesh.tets, boundary_faces(mesh), n);
    try {
      schroeder = std::make_unique<SchroederSource>(body.name, ids, model, material.per_tet, semi, fixed,
                                                    settings_.gravity, s);
    } catch (const std::invalid_argument& e) {
      origin.fail(schroeder_key(s.scheme), e.what());
    }
    if (spec.collide && s.colliders.empty()) w.schroeder_seeing_obstacles.push_back({index, schroeder.get()});
  } else {
    src = std::make_unique<SolidSource>(body.name, ids, model, fixed, settings_.gravity);
    if (auto* be = std::get_if<BackwardEulerSpec>(&spec.integrator)) {
      BackwardEulerSettings s = be->settings;
      s.rayleigh_alpha = material.rayleigh_alpha;
      s.rayleigh_beta = material.rayleigh_beta;
      src->use_backward_euler(be->h, s);
    } else {
      ZhaoSpec& z = std::get<ZhaoSpec>(spec.integrator);
      MultirateSettings s = z.settings;
      s.rayleigh_alpha = material.rayleigh_alpha;
      s.rayleigh_beta = material.rayleigh_beta;
      try {
        src->use_multirate(std::move(z.regions), s);
      } catch (const std::invalid_argument& e) {
        origin.fail("zhao/regions", e.what());
      }
    }
    w.solid_contacts.push_back({src.get(), index, spec.collide, spec.obstacles, spec.deformables});
  }
  if (spec.pin_motion) {
    std::vector<Index> pins;
    for (Index a = 0; a < n; ++a)
      if (fixed[a]) pins.push_back(a);
    w.add_motion(origin, "pin_motion", *spec.pin_motion, pins, mesh.vertices, body.first_vertex, nullptr);
  }
  const EventSource& named = src ? static_cast<const EventSource&>(*src) : *schroeder;
  const double period = src ? src->coarse_step() : schroeder->coarse_step();
  double rate = 1.0 / period, finest = period;
  std::string limited;
  if (schroeder) {
    // The substeps the semi-implicit elements' stability needs (safety √2 / ω_max):
    // the stepper's substep count overflows an int for a material of density 1e-300
    // and falls back to one substep per frame, which is not that.
    const SchroederStepper& st = schroeder->stepper();
    double fine = st.substep();
    if (st.settings().scheme != SchroederScheme::FullyImplicit) {
      // ω_max comes from a power iteration that gives 0 when M^{-1/2} K M^{-1/2}
      // overflows (density 1e-300); then half the shortest element's wave crossing
      // time, edge · sqrt(ρ / (λ + 2μ)), stands in for the stable step.
      double stable = st.omega_max() > 0.0 && std::isfinite(st.omega_max())
                          ? st.settings().safety * std::sqrt(2.0) / st.omega_max()
                          : 0.5 * shortest_wave_crossing(mesh, material);
      if (!(stable >= fine)) limited = ", the elements' stability limit from the material";
      fine = std::min(fine, stable);
    }
    if (fine > 0.0) {
      finest = std::min(finest, fine);
      rate += 1.0 / fine;
    }
  }
  if (src && src->multirate())
    for (const MultirateRegion& r : src->multirate()->regions()) {
      finest = std::min(finest, period / r.m);
      rate += r.m / period;
    }
  w.budget.need_events(step, rate, fmt::format("the steps of solid '{}' (down to {:.3g} s{})", body.name,
                                               finest, limited));
  TermSummary& s = w.summary(std::string(named.name()));
  s.count += 1;
  s.min_period = std::min(s.min_period, period);
  s.max_period = std::max(s.max_period, period);
  body.triangles = boundary_faces(mesh);
  std::unique_ptr<BodyIntegrator> integrator;
  if (src) integrator = std::move(src);
  else integrator = std::move(schroeder);
  return w.finish_add(std::move(body), origin_ptr, std::move(integrator));
}

std::size_t World::add_obstacle(ObstacleSpec spec) {
  Impl& w = *impl_;
  const auto origin_ptr = w.begin_add(spec.origin, "add_obstacle", spec.name);
  const SpecOrigin& origin = *origin_ptr;
  const std::size_t n = spec.mesh.vertices.size();
  for (const auto& t : spec.mesh.triangles)
    for (Index a : t)
      if (a >= n) origin.fail("shape", fmt::format("triangle vertex {} out of range (0..{})", a, n));
  if (spec.mesh.triangles.empty()) origin.fail("shape", "needs at least one triangle");
  Body body;
  body.name = spec.name;
  body.obstacle = body.collide = true;
  check_initial_state(SpecField{&origin, "shape"}, std::optional<SpecField>(), spec.mesh.vertices, {});
  VertexState& state = w.scene.kernel->state();
  body.first_vertex = static_cast<Index>(state.size());
  body.vertex_count = static_cast<Index>(n);
  for (const Vec3& x : spec.mesh.vertices) state.add(x, Vec3::Zero(), kNever);
  if (spec.motion) {
    std::vector<Index> all(n);
    for (Index a = 0; a < all.size(); ++a) all[a] = a;
    w.add_motion(origin, "motion", *spec.motion, all, spec.mesh.vertices, body.first_vertex, nullptr);
  }
  body.triangles = std::move(spec.mesh.triangles);
  w.obstacle_surfaces.push_back({w.scene.bodies.size(), spec.surface, spec.motion.has_value()});
  return w.finish_add(std::move(body), origin_ptr);
}

void World::enable_contact(ContactSpec spec) {
  if (!spec.origin) spec.origin = std::make_shared<CodeOrigin>("enable_contact");
  if (impl_->built) spec.origin->fail("", "contact is enabled before the world's first step");
  contact_ = std::move(spec);
}

void World::resume_from(std::string dir, int frame) {
  if (impl_->built) throw SceneError("World: resume_from: before the world's first step");
  impl_->resume_dir = std::move(dir);
  impl_->resume_frame = frame;
}

void World::build() {
  Impl& w = *impl_;
  if (w.built) return;
  if (w.scene.bodies.empty()) throw SceneError("World: needs at least one body");
  if (!contact_) {
    for (std::size_t b = 0; b < w.scene.bodies.size(); ++b) {
      if (w.scene.bodies[b].obstacle) w.origins[b]->fail("", "obstacles need contact (enable_contact)");
      w.scene.bodies[b].collide = false;
    }
    for (const auto& t : w.tick_obstacles) w.origins[t.body]->fail("", "contact in the ticks needs contact (enable_contact)");
    for (const auto& t : w.tick_pairs) w.origins[t.body]->fail("", "contact in the ticks needs contact (enable_contact)");
  }
  // Backward-Euler and Zhao steps see contact in their solve by default
  // (docs/backward-euler.md "Contact inside the step"): explicit impulses between steps
  // longer than the contact's elastic period create energy and never let a solid rest.
  for (const SolidContactRequest& r : w.solid_contacts) {
    const bool collides = contact_.has_value() && r.collide;
    const SolveContactSpec obstacles = r.obstacles.value_or(SolveContactSpec{collides, {}});
    const SolveContactSpec pairs = r.deformables.value_or(SolveContactSpec{collides, {}});
    if ((obstacles.on || pairs.on) && !collides)
      w.origins[r.body]->fail("", "contact in the solve needs a colliding body in a world with contact");
    if (obstacles.on) w.tick_obstacles.push_back({nullptr, r.solid, obstacles.settings, r.body});
    if (pairs.on) w.tick_pairs.push_back({nullptr, r.solid, pairs.settings, r.body});
  }
  w.built = true;
  if (!w.resume_dir.empty()) w.resume(settings_.frame_rate);
  time_ = w.scene.kernel->now();
  w.register_sources(contact_.has_value());
  for (const Impl::ResumedCopy& c : w.resumed_copies) c.integrator->restore_vertex_copy(c.x, c.v);
  if (contact_) w.build_contact(*contact_, settings_);
}

Scene& World::scene() {
  build();
  return impl_->scene;
}

Scene World::release() {
  build();
  return std::move(impl_->scene);
}

void World::advance_to(double t) {
  // Events at t itself wait: the state read at t is the one an observer (a frame) at t
  // sees, before a coarse step at t sets the velocities of the step after it.
  scene().kernel->run_until(std::nextafter(t, -kNever));
  time_ = std::max(time_, t);
}

double World::time() {
  build();
  return time_;
}

const Body& World::body(const std::string& name) {
  for (const Body& b : scene().bodies)
    if (b.name == name) return b;
  throw SceneError(fmt::format("World: no body named '{}'", name));
}

std::vector<Vec3> World::positions(const std::string& name) {
  const Body& b = body(name);
  const Kernel& k = *impl_->scene.kernel;
  std::vector<Vec3> x(b.vertex_count);
  for (Index i = 0; i < b.vertex_count; ++i) x[i] = k.state().position_at(b.first_vertex + i, time_);
  return x;
}

std::vector<Vec3> World::velocities(const std::string& name) {
  const Body& b = body(name);
  const Kernel& k = *impl_->scene.kernel;
  std::vector<Vec3> v(b.vertex_count);
  for (Index i = 0; i < b.vertex_count; ++i) v[i] = k.state().velocity(b.first_vertex + i);
  return v;
}

double World::total_energy() {
  return measure(*scene().kernel, time_).total();
}

}  // namespace clockwork
