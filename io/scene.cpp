#include "io/scene.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numbers>
#include <random>
#include <set>
#include <tuple>
#include <type_traits>

#include "integrators/force_source.hpp"
#include "integrators/gravity_energy.hpp"
#include "integrators/hinge_energy.hpp"
#include "integrators/membrane_energy.hpp"
#include "integrators/phantom_source.hpp"
#include "integrators/spring_energy.hpp"
#include "integrators/stability.hpp"
#include "integrators/wind_force.hpp"
#include "engine/kinematic_script.hpp"
#include "io/json_reader.hpp"
#include "contact/intersection_check.hpp"
#include "engine/health.hpp"
#include "contact/obstacle_proximity.hpp"
#include "io/mesh.hpp"
#include "io/resume.hpp"
#include "io/scene_contact.hpp"
#include "io/scene_limits.hpp"
#include "io/scene_solid.hpp"
#include "io/tick_pairs.hpp"

namespace clockwork {

namespace {

constexpr double kAuto = -1.0;  // period chosen by the stability estimate
/// Given periods are compared with stable_period at this safety: 1 / ω_max.
constexpr double kEstimateSafety = 0.5;
/// A body of at least 10 × kSampleStencils stencils of a kind is refused after its
/// first kSampleStencils when their rate, extrapolated, exceeds kSampleMargin times
/// kMaxEventRate (the margin for meshes whose first stencils are not typical).
constexpr std::size_t kSampleStencils = 10000;
constexpr double kSampleMargin = 2.0;

struct Wind {
  Vec3 velocity = Vec3::Zero();
  double drag = 0.0;
};

/// The typed force sources of a scene, filled body by body, registered at the end.
struct Sources {
  std::unique_ptr<ForceSource<MembraneStVK>> membrane =
      std::make_unique<ForceSource<MembraneStVK>>("force:membrane");
  std::unique_ptr<ForceSource<HingeBending>> bending =
      std::make_unique<ForceSource<HingeBending>>("force:bending");
  std::unique_ptr<ForceSource<SpringEnergy>> spring =
      std::make_unique<ForceSource<SpringEnergy>>("force:spring");
  std::unique_ptr<ForceSource<GravityEnergy>> gravity =
      std::make_unique<ForceSource<GravityEnergy>>("force:gravity");
  std::unique_ptr<ForceSource<WindForce>> wind =
      std::make_unique<ForceSource<WindForce>>("force:wind");
  std::vector<std::unique_ptr<PhantomSource>> phantoms;
  std::vector<std::unique_ptr<SolidSource>> solids;
  std::vector<std::unique_ptr<SchroederSource>> schroeders;
  std::unique_ptr<KinematicScriptSource> script = std::make_unique<KinematicScriptSource>();
};

struct PeriodSettings {
  double membrane = kAuto, bending = kAuto, spring = kAuto, gravity = kAuto, wind = kAuto;
  double safety = 0.5;  // docs/scene-format.md; 1.0 is marginal for a lone stencil
};

double period_field(const std::optional<JsonField>& f) {
  if (!f) return kAuto;
  if (f->raw().is_string()) {
    f->choice({"auto"});
    return kAuto;
  }
  return f->positive();
}

PeriodSettings read_periods(const std::optional<JsonField>& f) {
  PeriodSettings p;
  if (!f) return p;
  f->expect_keys({"membrane", "bending", "spring", "gravity", "wind", "safety"});
  p.membrane = period_field(f->find("membrane"));
  p.bending = period_field(f->find("bending"));
  p.spring = period_field(f->find("spring"));
  p.gravity = period_field(f->find("gravity"));
  p.wind = period_field(f->find("wind"));
  if (auto s = f->find("safety")) {
    p.safety = s->number();
    if (!(p.safety > 0.0 && p.safety <= 1.0)) s->fail("must be in (0, 1]");
  }
  return p;
}

std::pair<Vec3, Vec3> read_axes(const JsonField& shape) {
  Vec3 u = Vec3::UnitX(), v = Vec3::UnitY();
  if (auto axes = shape.find("axes")) {
    if (axes->array_size() != 2) axes->fail("expected two axes [[ux,uy,uz],[vx,vy,vz]]");
    u = (*axes)[0].vec3();
    v = (*axes)[1].vec3();
    if (u.norm() == 0.0 || v.norm() == 0.0 || u.cross(v).norm() < 1e-9 * u.norm() * v.norm())
      axes->fail("axes must be non-zero and not parallel");
    u.normalize();
    v = (v - v.dot(u) * u).normalized();
  }
  return {u, v};
}

/// {"type": "mesh", "vertices": [[x,y,z], ...], "triangles": [[i,j,k], ...]}.
TriangleMesh read_inline_mesh(const JsonField& shape) {
  shape.expect_keys({"type", "vertices", "triangles"});
  TriangleMesh m;
  const JsonField v = shape.at("vertices"), t = shape.at("triangles");
  for (std::size_t i = 0; i < v.array_size(); ++i) m.vertices.push_back(v[i].vec3());
  if (m.vertices.size() < 3) v.fail("needs at least three vertices");
  if (t.array_size() == 0) t.fail("needs at least one triangle");
  const long long last = static_cast<long long>(m.vertices.size()) - 1;
  for (std::size_t i = 0; i < t.array_size(); ++i) {
    const JsonField tri = t[i];
    if (tri.array_size() != 3) tri.fail("expected three vertex indices");
    m.triangles.push_back({static_cast<Index>(tri[0].integer_in(0, last)),
                           static_cast<Index>(tri[1].integer_in(0, last)),
                           static_cast<Index>(tri[2].integer_in(0, last))});
  }
  return m;
}

/// Reads a triangle or chain shape; the memory a generated shape will need is
/// estimated from its counts first (io/scene_limits.hpp).
TriangleMesh read_shape(const JsonField& shape, const std::string& base_dir, std::string& kind,
                        SceneBudget& budget) {
  const auto need = [&](const JsonField& field, double vertices, double triangles, double springs) {
    budget.need_memory(field,
                       vertices * kBytesPerVertex + triangles * kBytesPerTriangle +
                           springs * kBytesPerSpring,
                       springs > 0 ? fmt::format("{:.0f} vertices, {:.0f} springs", vertices, springs)
                                   : fmt::format("{:.0f} vertices, {:.0f} triangles", vertices, triangles));
  };
  kind = shape.at("type").choice({"grid", "disk", "hat", "chain", "obj", "mesh"});
  if (kind == "mesh") {
    TriangleMesh m = read_inline_mesh(shape);
    need(shape, double(m.vertices.size()), double(m.triangles.size()), 0.0);
    return m;
  }
  if (kind == "grid") {
    shape.expect_keys({"type", "size", "resolution", "center", "axes"});
    const JsonField size = shape.at("size"), res = shape.at("resolution");
    if (size.array_size() != 2) size.fail("expected [size_u, size_v] in metres");
    if (res.array_size() != 2) res.fail("expected [cells_u, cells_v]");
    const auto [u, v] = read_axes(shape);
    const int nu = static_cast<int>(res[0].integer_in(1, kMaxGridCells)),
              nv = static_cast<int>(res[1].integer_in(1, kMaxGridCells));
    need(res, (nu + 1.0) * (nv + 1.0), 2.0 * nu * nv, 0.0);
    return make_grid(size[0].positive(), size[1].positive(), nu, nv, shape.at("center").vec3(), u, v);
  }
  if (kind == "disk") {
    shape.expect_keys({"type", "radius", "rings", "center", "axes"});
    const auto [u, v] = read_axes(shape);
    const JsonField rings = shape.at("rings");
    const int r = static_cast<int>(rings.integer_in(1, kMaxDiskRings));
    need(rings, 1.0 + 3.0 * r * (r + 1.0), 6.0 * r * r, 0.0);
    return make_disk(shape.at("radius").positive(), r, shape.at("center").vec3(), u, v);
  }
  if (kind == "hat") {
    shape.expect_keys({"type", "center", "axes", "crown_radius", "crown_height", "brim_radius",
                       "segments"});
    const auto [u, v] = read_axes(shape);
    const double crown = shape.at("crown_radius").positive();
    const JsonField brim = shape.at("brim_radius");
    if (!(brim.positive() > crown))
      brim.fail(fmt::format("must exceed crown_radius ({} m)", crown));
    const double height = shape.at("crown_height").positive();
    const int segments = static_cast<int>(shape.at("segments").integer_in(6, 256));
    // make_hat's rings are about one segment's arc apart along the profile.
    const double edge = 2.0 * std::numbers::pi * crown / segments;
    const double rings = 3.0 + (height + brim.positive()) / edge;
    need(shape, 1.0 + rings * segments, 2.0 * rings * segments, 0.0);
    return make_hat(shape.at("center").vec3(), u, v, crown, height, brim.positive(), segments);
  }
  if (kind == "chain") {
    shape.expect_keys({"type", "start", "end", "segments"});
    const Vec3 a = shape.at("start").vec3(), b = shape.at("end").vec3();
    if ((b - a).norm() == 0.0) shape.at("end").fail("must differ from start");
    const JsonField segments = shape.at("segments");
    const int count = static_cast<int>(segments.integer_in(1, 10000000));
    need(segments, count + 1.0, 0.0, count);
    return make_chain(a, b, count);
  }
  shape.expect_keys({"type", "file", "translate", "scale"});
  const JsonField file = shape.at("file");
  std::filesystem::path p(file.string());
  if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
  TriangleMesh m;
  try {
    m = read_obj(p.string(), ObjFaces::kSurface);
  } catch (const SceneError& e) {
    file.fail(e.what());
  }
  if (m.triangles.empty()) file.fail("OBJ file has no faces");
  need(file, double(m.vertices.size()), double(m.triangles.size()), 0.0);
  const double scale = shape.has("scale") ? shape.at("scale").positive() : 1.0;
  const Vec3 t = shape.has("translate") ? shape.at("translate").vec3() : Vec3::Zero();
  for (Vec3& x : m.vertices) x = scale * x + t;
  return m;
}

class SceneBuilder {
 public:
  SceneBuilder(const nlohmann::json& doc, const std::string& file, const std::string& base_dir,
               const std::string& resume_dir, int resume_frame)
      : root_(doc, file), root_file_(file), base_dir_(base_dir), resume_dir_(resume_dir),
        resume_frame_(resume_frame) {}

  Scene build() {
    root_.expect_keys({"name", "description", "end_time", "frame_rate", "seed", "gravity", "wind",
                       "output", "bodies", "contact", "obstacles"});
    scene_.name = root_.at("name").file_name();  // the default output folder out/<name>
    if (auto d = root_.find("description")) scene_.description = d->string();
    scene_.end_time = root_.at("end_time").positive();
    scene_.frame_rate = root_.at("frame_rate").positive();
    const double frames = scene_.end_time * scene_.frame_rate;
    if (!(frames <= kMaxFrames))
      root_.at("frame_rate").fail(fmt::format(
          "with end_time {} s (/end_time) asks for {:.3g} frames, above the limit of {:.0f} "
          "(docs/scene-format.md \"Limits\")",
          scene_.end_time, frames, kMaxFrames));
    seed_ = root_.has("seed") ? static_cast<std::uint64_t>(root_.at("seed").integer_in(0, 1LL << 62))
                              : 0;
    if (auto g = root_.find("gravity")) gravity_ = g->vec3();
    if (auto w = root_.find("wind")) {
      w->expect_keys({"velocity", "drag"});
      wind_.velocity = w->at("velocity").vec3();
      wind_.drag = w->at("drag").non_negative();
    }
    if (auto out = root_.find("output")) {
      out->expect_keys({"obj", "ply"});
      if (auto f = out->find("obj")) scene_.write_obj = f->boolean();
      if (auto f = out->find("ply")) scene_.write_ply = f->boolean();
    }
    const JsonField bodies = root_.at("bodies");
    if (bodies.array_size() == 0) bodies.fail("needs at least one body");
    scene_.kernel = std::make_unique<Kernel>();
    contact_ = root_.find("contact");
    for (std::size_t i = 0; i < bodies.array_size(); ++i) read_body(bodies[i], i);
    if (auto obstacles = root_.find("obstacles")) {
      if (!contact_) obstacles->fail("obstacles need a \"contact\" object");
      for (std::size_t i = 0; i < obstacles->array_size(); ++i) read_obstacle((*obstacles)[i]);
    }
    if (!resume_dir_.empty()) resume();
    register_sources();
    for (const auto& [b, src] : phantom_of_body_) scene_.bodies[b].phantom = src;
    for (const auto& [src, copy] : resumed_copies_) src->restore_copy(copy.first, copy.second);
    if (contact_) build_contact(*contact_);
    return std::move(scene_);
  }

 private:
  /// A body's stencils of one kind against the stability estimate 1 / ω_max
  /// (stable_period at kEstimateSafety): the worst given period is warned about above
  /// the estimate and refused above kMaxPeriodFactor times it (docs/scene-format.md
  /// "Limits"). Also names the material when a stencil's stiffness overflows.
  struct PeriodCheck {
    PeriodCheck(std::string k, const JsonField& m, const JsonField& s)
        : kind(std::move(k)), material(m), stiffness(s) {}
    std::string kind;                ///< "membrane", "bending", "spring"
    JsonField material;              ///< named for rates of automatic periods
    JsonField stiffness;             ///< the key the stencils' stiffness comes from
    std::optional<JsonField> given;  ///< the body's `periods` entry, when a number
    bool allow_unstable = false;     ///< the body's "allow_unstable_periods"
    std::size_t stencils = 0;        ///< stencils seen so far (the next one's index)
    double worst_ratio = 0.0, worst_estimate = 0.0;
    std::size_t worst_stencil = 0;
    std::size_t total = 0;           ///< stencils of the kind in the body
    double sample_rate = 0.0;        ///< events per simulated second of those seen
    std::string body;                ///< the body's name
  };

  void read_body(const JsonField& b, std::size_t index) {
    b.expect_keys({"name", "shape", "material", "pins", "pin_motion", "velocity", "periods",
                   "collide", "integrator", "phantom", "backward_euler", "zhao", "self_contact",
                   "schroeder", "semi_implicit", "fully_implicit", "allow_unstable_periods"});
    Body body;
    body.name = read_name(b);
    body.collide = contact_.has_value() && (!b.has("collide") || b.at("collide").boolean());
    if (is_tet_shape(b.at("shape"))) {
      read_solid(b, index, std::move(body));
      return;
    }
    for (const char* key : {"backward_euler", "zhao", "self_contact", "schroeder", "semi_implicit",
                            "fully_implicit"})
      if (b.has(key)) b.at(key).fail("needs a tet shape (a solid body)");
    std::string kind;
    TriangleMesh mesh = read_shape(b.at("shape"), base_dir_, kind, budget_);
    const bool springs = kind == "chain";
    const PeriodSettings periods = read_periods(b.find("periods"));
    body_rates_.clear();
    const std::optional<PhantomSettings> phantom = read_phantom(b, springs);

    const std::size_t n = mesh.vertices.size();
    std::vector<double> mass(n, 0.0);
    const JsonField material = b.at("material");
    double mu = 0, lambda = 0, k_bending = 0, area_density = 0;
    std::vector<double> stiffness, quartic{0.0};
    std::optional<double> rest_length;
    if (springs) {
      material.expect_keys({"node_mass", "stiffness", "quartic", "rest_length"});
      std::fill(mass.begin(), mass.end(), material.at("node_mass").positive());
      stiffness = read_list(material.at("stiffness"), /*positive=*/true);
      if (auto q = material.find("quartic")) quartic = read_list(*q, /*positive=*/false);
      if (auto r = material.find("rest_length")) rest_length = r->positive();
    } else {
      material.expect_keys({"area_density", "young", "poisson", "bending"});
      area_density = material.at("area_density").positive();
      const double young = material.at("young").positive();
      const JsonField poisson = material.at("poisson");
      const double nu = poisson.number();
      if (!(nu >= 0.0 && nu < 0.5)) poisson.fail("must be in [0, 0.5)");
      std::tie(mu, lambda) = MembraneStVK::lame_plane_stress(young, nu);
      // young / area_density is the squared wave speed the periods come from.
      if (!std::isfinite(young / area_density))
        material.at("young").fail(fmt::format(
            "over area_density ({} kg/m²) overflows: the stencils' stiffness and periods would "
            "not be finite",
            area_density));
      k_bending = material.at("bending").non_negative();
      for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
        const auto& tri = mesh.triangles[t];
        if (MembraneStVK::is_degenerate(gather<3>(mesh.vertices, tri)))
          b.at("shape").fail(fmt::format("triangle {} (vertices {}, {}, {}) is degenerate", t,
                                         tri[0], tri[1], tri[2]));
        const double area = 0.5 * (mesh.vertices[tri[1]] - mesh.vertices[tri[0]])
                                      .cross(mesh.vertices[tri[2]] - mesh.vertices[tri[0]])
                                      .norm();
        for (Index a : tri) mass[a] += area_density * area / 3.0;
      }
      for (std::size_t a = 0; a < n; ++a)
        if (mass[a] == 0.0)
          b.at("shape").fail(fmt::format("vertex {} belongs to no triangle", a));
    }

    // Pins: infinite mass; optionally moved by a keyframed script.
    std::vector<Index> pins = read_pins(b.find("pins"), kind, mesh, b);
    std::vector<bool> pinned(n, false);
    for (Index a : pins) pinned[a] = true;

    // Initial velocities.
    std::vector<Vec3> velocity = read_velocities(b.find("velocity"), mesh.vertices, mass, index);
    check_initial_state(b.at("shape"), b.find("velocity"), mesh.vertices, velocity);
    VertexState& state = scene_.kernel->state();
    body.first_vertex = static_cast<Index>(state.size());
    body.vertex_count = static_cast<Index>(n);
    // A phantom body's primary carries half the kinetic energy (phantom-mesh paper
    // §3.2, condition 3): mass m/2 in the kernel, m/2 on the phantom.
    const double primary_share = phantom ? 0.5 : 1.0;
    for (std::size_t a = 0; a < n; ++a)
      state.add(mesh.vertices[a], pinned[a] ? Vec3::Zero() : velocity[a],
                pinned[a] ? kNever : primary_share * mass[a]);
    auto global = [&](Index a) { return body.first_vertex + a; };
    std::vector<bool> releasable(n, false);
    if (auto motion = b.find("pin_motion")) {
      std::vector<double> release_mass(n);
      for (std::size_t a = 0; a < n; ++a) release_mass[a] = primary_share * mass[a];
      const BodyPins body_pins{kind, b, release_mass};
      for (Index a : read_pin_motion(*motion, pins, mesh, global, &body_pins)) {
        releasable[a] = true;
        releasable_.emplace(global(a), release_mass[a]);
      }
    }
    // Pins to be released count with their mass in the stability estimates, and get
    // gravity stencils (which leave them alone while they are kinematic).
    std::vector<double> inv_mass(n);
    for (std::size_t a = 0; a < n; ++a)
      inv_mass[a] = pinned[a] && !releasable[a] ? 0.0 : 1.0 / mass[a];

    // Stencils. The stability estimate of a stencil gives each of its vertices the
    // share m_a / n_a of its mass, n_a the number of stencils of the same kind at the
    // vertex (a Gershgorin bound on the assembled stiffness the vertex feels).
    const auto share = [&](const auto& ids, const std::vector<int>& count) {
      std::array<double, std::tuple_size_v<std::decay_t<decltype(ids)>>> w{};
      for (std::size_t i = 0; i < w.size(); ++i) w[i] = inv_mass[ids[i]] * count[ids[i]];
      return w;
    };
    const auto incidence = [&](const auto& stencils) {
      std::vector<int> count(n, 0);
      for (const auto& st : stencils)
        for (Index a : st) ++count[a];
      return count;
    };
    if (phantom) {
      add_phantom(body, *phantom, mesh, mass, pinned, mu, lambda, k_bending);
      body.triangles = std::move(mesh.triangles);
      body.edges = std::move(mesh.edges);
      scene_.bodies.push_back(std::move(body));
      return;
    }
    double min_elastic = kNever;
    PeriodCheck spring_check = period_check(b, material, "spring"),
                membrane_check = period_check(b, material, "membrane"),
                bending_check = period_check(b, material, "bending");
    spring_check.body = membrane_check.body = bending_check.body = body.name;
    spring_check.total = mesh.edges.size();
    membrane_check.total = mesh.triangles.size();
    if (springs) {
      const std::vector<int> per_vertex = incidence(mesh.edges);
      for (std::size_t e = 0; e < mesh.edges.size(); ++e) {
        const auto& [i, j] = mesh.edges[e];
        SpringEnergy s{};
        s.stiffness = stiffness[e % stiffness.size()];
        s.quartic = quartic[e % quartic.size()];
        s.rest_length = rest_length ? *rest_length
                                    : (mesh.vertices[j] - mesh.vertices[i]).norm();
        min_elastic = std::min(min_elastic, add_stencil(*sources_.spring, {global(i), global(j)},
                                                        s, gather<2>(mesh.vertices, {i, j}),
                                                        share(mesh.edges[e], per_vertex),
                                                        periods.spring, periods.safety,
                                                        spring_check));
      }
      report(spring_check);
    } else {
      const std::vector<int> per_vertex = incidence(mesh.triangles);
      for (const auto& tri : mesh.triangles) {
        const auto rest = gather<3>(mesh.vertices, tri);
        min_elastic = std::min(
            min_elastic,
            add_stencil(*sources_.membrane, {global(tri[0]), global(tri[1]), global(tri[2])},
                        MembraneStVK::from_rest(rest, mu, lambda), rest,
                        share(tri, per_vertex),
                        periods.membrane, periods.safety, membrane_check));
      }
      report(membrane_check);
      // Automatic bending periods are capped by the body's shortest membrane period:
      // longer bending periods, though stable by the per-stencil estimate, drove the
      // hanging-cloth demo unstable (asynchronous resonance, cf. Fong, de Sturler and
      // Lew 2008), while equal or shorter ones conserve energy.
      const double membrane_cap = min_elastic;
      const auto hinges = interior_hinges(mesh);
      bending_check.total = hinges.size();
      const std::vector<int> per_vertex_hinge = incidence(hinges);
      if (k_bending > 0.0)
        for (const auto& h : hinges) {
          const auto rest = gather<4>(mesh.vertices, h);
          min_elastic = std::min(
              min_elastic,
              add_stencil(*sources_.bending,
                          {global(h[0]), global(h[1]), global(h[2]), global(h[3])},
                          HingeBending::from_rest(rest, k_bending), rest,
                          share(h, per_vertex_hinge),
                          periods.bending, periods.safety, bending_check, membrane_cap));
        }
      report(bending_check);
    }
    const double fallback = std::isfinite(min_elastic) ? min_elastic : kNever;
    if (gravity_.squaredNorm() > 0.0) {
      const double h = resolve_fallback(periods.gravity, fallback, b, "gravity");
      for (std::size_t a = 0; a < n; ++a)
        if (!pinned[a] || releasable[a])
          add_fixed(*sources_.gravity, {global(a)}, GravityEnergy{mass[a], gravity_}, h);
    }
    if (wind_.drag > 0.0 && !springs) {
      const double h = resolve_fallback(periods.wind, fallback, b, "wind");
      for (const auto& tri : mesh.triangles) {
        WindForce w{};
        w.wind_velocity = wind_.velocity;
        w.drag = wind_.drag;
        add_fixed(*sources_.wind, {global(tri[0]), global(tri[1]), global(tri[2])}, w, h);
      }
    }
    need_body_events(b, material, body.name);
    body.triangles = std::move(mesh.triangles);
    body.edges = std::move(mesh.edges);
    scene_.bodies.push_back(std::move(body));
  }

  /// A tet solid (docs/scene-format.md "Solids"): vertices in the kernel with their
  /// lumped masses, elastic forces and gravity in its coarse-step source.
  void read_solid(const JsonField& b, std::size_t index, Body body) {
    if (b.has("periods")) b.at("periods").fail("a solid has no AVI periods (its integrator sets the steps)");
    if (b.has("phantom")) b.at("phantom").fail("the phantom integrator is for triangle meshes");
    const TetMesh mesh = read_tet_shape(b.at("shape"), base_dir_, budget_);
    body.self_contact = b.has("self_contact") && b.at("self_contact").boolean();
    const SolidMaterial material = read_solid_material(b.at("material"), mesh);
    const std::size_t n = mesh.vertices.size();
    const std::vector<bool> fixed =
        b.has("pins") ? read_solid_pins(b.at("pins"), mesh) : std::vector<bool>(n, false);
    // Before the integrator is built: a step of 1e308 gave backward Euler -nan.
    const JsonField step = solid_step_field(b);
    if (step.raw().is_number()) check_step_within_run(step, step.raw().get<double>(), scene_.end_time);
    auto model = std::make_shared<TetFemModel>(mesh.vertices, mesh.tets, material.per_tet,
                                               material.kind);
    const std::vector<double>& mass = model->lumped_mass();
    const std::vector<Vec3> velocity = read_velocities(b.find("velocity"), mesh.vertices, mass, index);
    check_initial_state(b.at("shape"), b.find("velocity"), mesh.vertices, velocity);
    VertexState& state = scene_.kernel->state();
    body.first_vertex = static_cast<Index>(state.size());
    body.vertex_count = static_cast<Index>(n);
    std::vector<Index> ids(n);
    for (std::size_t a = 0; a < n; ++a) {
      ids[a] = state.add(mesh.vertices[a], fixed[a] ? Vec3::Zero() : velocity[a],
                         fixed[a] ? kNever : mass[a]);
    }
    std::unique_ptr<SolidSource> src;
    std::unique_ptr<SchroederSource> schroeder;
    if (is_schroeder_integrator(b)) {
      schroeder = read_schroeder_solid(b, mesh, material, body.name, ids, model, fixed, gravity_);
    } else {
      src = std::make_unique<SolidSource>(body.name, ids, model, fixed, gravity_);
      read_solid_integrator(b, mesh, material, *src);
      {
        // Backward-Euler and Zhao steps see contact in their solve by default
        // (docs/solids.md "Contact inside the step"): explicit impulses between steps
        // longer than the contact's elastic period create energy and never let a
        // solid rest.
        const JsonField f = b.at(src->multirate() ? "zhao" : "backward_euler");
        const bool collides = contact_ && !(b.has("collide") && !b.at("collide").boolean());
        TickContactSettings obstacles, pairs;
        if (read_tick_contact(f, b, "obstacle", obstacles, collides))
          tick_obstacles_.push_back({nullptr, src.get(), obstacles, scene_.bodies.size()});
        if (read_tick_contact(f, b, "deformable", pairs, collides))
          tick_pairs_.push_back({nullptr, src.get(), pairs, scene_.bodies.size()});
      }
    }
    if (auto motion = b.find("pin_motion")) {
      std::vector<Index> pins;
      for (Index a = 0; a < n; ++a)
        if (fixed[a]) pins.push_back(a);
      TriangleMesh points;
      points.vertices = mesh.vertices;
      const Index first = body.first_vertex;
      read_pin_motion(*motion, pins, points, [first](Index a) { return first + a; });
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
    budget_.need_events(step, rate, fmt::format("the steps of solid '{}' (down to {:.3g} s{})",
                                                body.name, finest, limited));
    TermSummary& s = summary(std::string(named.name()));
    s.count += 1;
    s.min_period = std::min(s.min_period, period);
    s.max_period = std::max(s.max_period, period);
    body.triangles = boundary_faces(mesh);
    if (src) sources_.solids.push_back(std::move(src));
    else sources_.schroeders.push_back(std::move(schroeder));
    scene_.bodies.push_back(std::move(body));
  }

  struct PhantomSettings {
    double h_imp = 0.0;
    ImplicitSolverSettings solver;
    TickHalving halving;
    bool contact_on_whole = false;
    bool obstacle_contact = false;
    TickContactSettings obstacles;
    bool deformable_contact = false;
    TickContactSettings deformables;
  };

  std::optional<PhantomSettings> read_phantom(const JsonField& b, bool springs) {
    const std::string integrator =
        b.has("integrator") ? b.at("integrator").choice({"explicit", "phantom"}) : "explicit";
    if (integrator != "phantom") {
      if (b.has("phantom")) b.at("phantom").fail("needs \"integrator\": \"phantom\"");
      return std::nullopt;
    }
    if (springs) b.at("integrator").fail("phantom needs a triangle mesh body, not a chain");
    const JsonField f = b.at("phantom");
    f.expect_keys({"h_imp", "solver", "tolerance", "max_iterations", "refresh", "stall_iterations",
                   "rayleigh_beta", "tick_rule", "factorization", "max_halvings", "calm_ticks", "contact_mass", "obstacle_contact", "obstacle_stiffness", "obstacle_clearance",
                   "deformable_contact", "deformable_stiffness", "deformable_clearance"});
    PhantomSettings p;
    p.h_imp = f.at("h_imp").positive();
    check_step_within_run(f.at("h_imp"), p.h_imp, scene_.end_time);
    budget_.need_events(f.at("h_imp"), 1.0 / p.h_imp,
                        fmt::format("the implicit ticks of body '{}'", b.at("name").string()));
    if (auto k = f.find("solver"))
      p.solver.kind = k->choice({"newton", "ncg"}) == "newton" ? ImplicitSolverKind::ProjectedNewton
                                                               : ImplicitSolverKind::PreconditionedNcg;
    if (auto t = f.find("tolerance")) p.solver.tolerance = t->positive();
    if (auto m = f.find("max_iterations")) p.solver.max_iterations = static_cast<int>(m->integer_in(1, 100000));
    if (auto r = f.find("refresh")) p.solver.refresh = static_cast<int>(r->integer_in(1, 1000000));
    if (auto st = f.find("stall_iterations"))
      p.solver.stall_iterations = static_cast<int>(st->integer_in(1, 100000));
    if (auto d = f.find("rayleigh_beta")) p.solver.rayleigh_beta = d->non_negative();
    if (auto r = f.find("tick_rule"))
      p.solver.theta = r->choice({"midpoint", "backward_euler"}) == "backward_euler" ? 1.0 : 0.5;
    if (auto c = f.find("factorization"))
      p.solver.factorization = c->choice({"simplicial", "vertex_block"}) == "vertex_block"
                                   ? TickFactorization::VertexBlock
                                   : TickFactorization::Simplicial;
    if (auto m = f.find("max_halvings")) p.halving.max_halvings = static_cast<int>(m->integer_in(0, 30));
    if (auto c = f.find("calm_ticks")) {
      if (p.halving.max_halvings == 0) c->fail("needs \"max_halvings\" of at least 1");
      p.halving.calm_ticks = static_cast<int>(c->integer_in(1, 1000000));
    }
    if (auto c = f.find("contact_mass")) {
      p.contact_on_whole = c->choice({"primary", "whole"}) == "whole";
      if (p.contact_on_whole && !contact_) c->fail("needs a \"contact\" object in the scene");
    }
    p.obstacle_contact = read_tick_contact(f, b, "obstacle", p.obstacles);
    p.deformable_contact = read_tick_contact(f, b, "deformable", p.deformables);
    return p;
  }

  /// The `KIND_contact`, `KIND_stiffness` and `KIND_clearance` keys of a phantom
  /// (docs/phantom.md "Obstacles in the tick", "Near pairs in the tick"); whether the
  /// switch is on.
  bool read_tick_contact(const JsonField& f, const JsonField& b, const std::string& kind,
                         TickContactSettings& settings, bool default_on = false) {
    bool on = default_on;
    if (auto o = f.find(kind + "_contact")) {
      on = o->boolean();
      if (on && !contact_) o->fail("needs a \"contact\" object in the scene");
      if (on && b.has("collide") && !b.at("collide").boolean())
        o->fail("needs a colliding body (\"collide\": false)");
    }
    const std::string needs = fmt::format("needs \"{}_contact\": true", kind);
    if (auto k = f.find(kind + "_stiffness")) {
      if (!on) k->fail(needs);
      settings.stiffness = k->positive();
    }
    if (auto c = f.find(kind + "_clearance")) {
      if (!on) c->fail(needs);
      settings.clearance = c->positive();
    }
    return on;
  }

  /// The body's elastic terms, gravity and wind go to its phantom (§4: "combine
  /// gravity and wind into the implicit solve"); its primary keeps only contact.
  void add_phantom(const Body& body, const PhantomSettings& settings, const TriangleMesh& mesh,
                   const std::vector<double>& mass, const std::vector<bool>& pinned, double mu,
                   double lambda, double k_bending) {
    const std::size_t n = mesh.vertices.size();
    std::vector<Index> ids(n);
    for (std::size_t a = 0; a < n; ++a) ids[a] = body.first_vertex + static_cast<Index>(a);
    auto src = std::make_unique<PhantomSource>(body.name, ids, mass, settings.h_imp, settings.solver);
    src->set_halving(settings.halving);
    src->set_contact_on_whole_mass(settings.contact_on_whole);
    BodyPotential& V = src->potential();
    for (const auto& tri : mesh.triangles)
      V.add_membrane(tri, MembraneStVK::from_rest(gather<3>(mesh.vertices, tri), mu, lambda));
    if (k_bending > 0.0)
      for (const auto& h : interior_hinges(mesh))
        V.add_hinge(h, HingeBending::from_rest(gather<4>(mesh.vertices, h), k_bending));
    std::vector<double> weighed = mass;
    for (std::size_t a = 0; a < n; ++a)
      if (pinned[a]) weighed[a] = 0.0;
    V.set_gravity(gravity_, weighed);
    if (wind_.drag > 0.0)
      for (const auto& tri : mesh.triangles) {
        WindForce w{};
        w.wind_velocity = wind_.velocity;
        w.drag = wind_.drag;
        src->add_wind(tri, w);
      }
    TermSummary& s = summary("implicit:phantom");
    s.count += 1;
    s.min_period = std::min(s.min_period, settings.h_imp);
    s.max_period = std::max(s.max_period, settings.h_imp);
    if (settings.obstacle_contact) tick_obstacles_.push_back({src.get(), nullptr, settings.obstacles, scene_.bodies.size()});
    if (settings.deformable_contact) tick_pairs_.push_back({src.get(), nullptr, settings.deformables, scene_.bodies.size()});
    phantom_of_body_[scene_.bodies.size()] = src.get();
    sources_.phantoms.push_back(std::move(src));
  }

  std::string read_name(const JsonField& b) {
    std::string name = b.at("name").file_name();  // frames are <name>_NNNNN.obj/.ply
    for (const Body& other : scene_.bodies)
      if (other.name == name) b.at("name").fail("duplicate body or obstacle name");
    pointers_.push_back(b.pointer());
    return name;
  }

  /// Obstacles: kinematic meshes (infinite mass), static or following keyframes.
  void read_obstacle(const JsonField& o) {
    o.expect_keys({"name", "shape", "motion"});
    Body body;
    body.name = read_name(o);
    body.obstacle = body.collide = true;
    const JsonField shape = o.at("shape");
    std::optional<TriangleMesh> mesh;
    try {
      mesh = read_obstacle_shape(shape, budget_);
    } catch (const std::invalid_argument& e) {
      shape.fail(e.what());
    }
    if (!mesh) {
      std::string kind = shape.at("type").choice(
          {"ground", "sphere", "cylinder", "capsule", "grid", "disk", "hat", "obj", "mesh"});
      mesh = read_shape(shape, base_dir_, kind, budget_);
    }
    check_initial_state(shape, std::nullopt, mesh->vertices, {});
    VertexState& state = scene_.kernel->state();
    body.first_vertex = static_cast<Index>(state.size());
    body.vertex_count = static_cast<Index>(mesh->vertices.size());
    for (const Vec3& x : mesh->vertices) state.add(x, Vec3::Zero(), kNever);
    if (auto motion = o.find("motion")) {
      std::vector<Index> all(mesh->vertices.size());
      for (Index a = 0; a < all.size(); ++a) all[a] = a;
      const Index first = body.first_vertex;
      read_pin_motion(*motion, all, *mesh, [first](Index a) { return first + a; });
    }
    body.triangles = std::move(mesh->triangles);
    scene_.bodies.push_back(std::move(body));
  }

  /// The contact system over every colliding body and obstacle (DESIGN §2).
  void build_contact(const JsonField& f) {
    const ContactSettings settings = read_contact_settings(f);
    const VertexState& s = scene_.kernel->state();
    ContactScale scale;
    scale.gravity = gravity_.norm();
    double edge_sum = 0.0, mass_sum = 0.0;
    std::size_t edge_count = 0, mass_count = 0;
    scale.min_mass = kNever;
    const auto edge = [&](const Body& b, Index i, Index j) {
      edge_sum += (s.position(b.first_vertex + i) - s.position(b.first_vertex + j)).norm();
      ++edge_count;
    };
    for (const Body& b : scene_.bodies) {
      if (!b.collide || b.obstacle) continue;
      for (const auto& t : b.triangles)
        for (int k = 0; k < 3; ++k) edge(b, t[k], t[(k + 1) % 3]);
      for (const auto& e : b.edges) edge(b, e[0], e[1]);
      for (Index a = b.first_vertex; a < b.first_vertex + b.vertex_count; ++a) {
        // A pin to be released counts with the mass it will have.
        double m = s.mass(a);
        if (s.kinematic(a)) {
          const auto r = releasable_.find(a);
          if (r == releasable_.end()) continue;
          m = r->second;
        }
        mass_sum += m;
        ++mass_count;
        scale.min_mass = std::min(scale.min_mass, m);
      }
    }
    if (edge_count > 0) scale.mean_edge = edge_sum / double(edge_count);
    if (mass_count > 0) scale.mean_mass = mass_sum / double(mass_count);
    else scale.min_mass = 0.0;
    const ContactParameters params = resolve_contact(settings, scale, f);
    need_contact(f, params);
    check_initial_overlap();
    scene_.contact = std::make_unique<ContactSystem>(*scene_.kernel, params);
    for (const auto& [a, m] : releasable_) scene_.contact->mark_releasable(a);
    for (const Body& b : scene_.bodies) {
      if (!b.collide) continue;
      if (b.triangles.empty())
        for (Index a = 0; a < b.vertex_count; ++a) scene_.contact->add_point(b.first_vertex + a);
      const std::uint32_t group = b.self_contact ? ContactSystem::kSelfContact
                                                 : static_cast<std::uint32_t>(&b - scene_.bodies.data());
      for (const auto& t : b.triangles)
        scene_.contact->add_triangle(
            {b.first_vertex + t[0], b.first_vertex + t[1], b.first_vertex + t[2]}, group);
    }
    try {
      scene_.contact->start();
    } catch (const NumericalFailure& e) {
      // Layers stacked up at the start: the input touches where contact cannot push.
      throw SceneError(fmt::format("{}: {}: the initial geometry touches: {}", root_file_,
                                   e.vertex == NumericalFailure::kNoVertex ? "/contact" : pointer_of_vertex(e.vertex),
                                   e.problem));
    }
    if (!tick_obstacles_.empty()) give_ticks_obstacles(params);
    if (!tick_pairs_.empty()) give_ticks_pairs(params);
  }

  /// The contact system's estimates, before it is built: its hash grid holds every
  /// colliding triangle in every cell its box (grown as ContactSystem::cells_of does)
  /// covers — a cell_size of 1e-9 m put billions of entries in it — and a layer in
  /// contact fires 1 / h1 times per simulated second.
  void need_contact(const JsonField& f, const ContactParameters& params) {
    const VertexState& s = scene_.kernel->state();
    const double grow = 0.5 * params.eta1 + 0.125 * params.cell_size;
    double entries = 0.0;
    for (const Body& b : scene_.bodies) {
      if (!b.collide) continue;
      for (const auto& t : b.triangles) {
        Vec3 lo = Vec3::Constant(kNever), hi = Vec3::Constant(-kNever);
        for (Index a : t) {
          lo = lo.cwiseMin(s.position(b.first_vertex + a));
          hi = hi.cwiseMax(s.position(b.first_vertex + a));
        }
        double cells = 1.0;
        for (int k = 0; k < 3; ++k)
          cells *= std::floor((hi[k] + grow) / params.cell_size) -
                   std::floor((lo[k] - grow) / params.cell_size) + 1.0;
        entries += cells;
      }
      if (b.triangles.empty()) entries += double(b.vertex_count);  // chain points
    }
    const JsonField cell = f.has("cell_size") ? f.at("cell_size") : f;
    budget_.need_memory(cell, entries * kBytesPerGridEntry,
                        fmt::format("{:.3g} (triangle, cell) entries of the contact grid (cell "
                                    "size {:.3g} m)",
                                    entries, params.cell_size));
    const JsonField period = f.has("period") ? f.at("period") : f;
    if (f.has("period")) check_step_within_run(period, params.h1, scene_.end_time);
    budget_.need_events(period, 1.0 / params.h1,
                        fmt::format("a contact layer (period {:.3g} s)", params.h1));
  }

  /// Phantom bodies with `obstacle_contact` see the obstacles in their ticks
  /// (docs/phantom.md "Obstacles in the tick"): landing points keep 2 η(1) off them
  /// unless the scene says otherwise.
  void give_ticks_obstacles(const ContactParameters& params) {
    std::vector<std::array<Index, 3>> triangles;
    for (const Body& b : scene_.bodies)
      if (b.obstacle)
        for (const auto& t : b.triangles)
          triangles.push_back({b.first_vertex + t[0], b.first_vertex + t[1], b.first_vertex + t[2]});
    auto grid = std::make_shared<ObstacleProximity>(std::move(triangles), 8.0 * params.eta1);
    const VertexState& state = scene_.kernel->state();
    for (TickContact& t : tick_obstacles_) {
      const Body& body = scene_.bodies[t.body];
      const Index first = body.first_vertex;
      std::vector<std::array<Index, 3>> surface;
      for (const auto& tri : body.triangles) surface.push_back({first + tri[0], first + tri[1], first + tri[2]});
      if (!(t.settings.clearance > 0.0)) t.settings.clearance = 2.0 * params.eta1;
      // A solid's planes carry the contact's friction (a solid resting on them no
      // longer enters the layers that hold the friction); a phantom tick's do not.
      if (t.solid) t.settings.friction = params.friction;
      const double h = t.step();
      t.set_obstacles(
          [grid, &state, h, first, surface = OwnedTriangles(std::move(surface)),
           found = std::vector<ObstacleContact>()](double time, double reach,
                                                   std::vector<TickContactFeature>& out) mutable {
            grid->find(state, time, surface, reach + h * grid->max_speed(), found);
            out.clear();
            for (const ObstacleContact& c : found) {
              TickContactFeature f;
              for (int i = 0; i < 3; ++i) {
                f.vertices[i] = c.vertices[i] - first;
                f.weights[i] = c.weights[i];
              }
              f.point = c.point;
              f.velocity = c.velocity;
              out.push_back(f);
            }
          });
    }
  }

  /// Phantom bodies with `deformable_contact` see the contact system's near element
  /// pairs (self-contact and other bodies) in their ticks (io/tick_pairs.hpp).
  void give_ticks_pairs(const ContactParameters& params) {
    std::vector<PairOwner> owners;
    for (std::size_t b = 0; b < scene_.bodies.size(); ++b) {
      const auto it = phantom_of_body_.find(b);
      owners.push_back({scene_.bodies[b].first_vertex, it == phantom_of_body_.end() ? nullptr : it->second, false});
    }
    for (const TickContact& t : tick_pairs_) owners[t.body].plans_pairs = true;
    for (TickContact& t : tick_pairs_) {
      if (!(t.settings.clearance > 0.0)) t.settings.clearance = params.eta1;
      t.set_pairs(TickPairFinder(scene_.kernel->state(), *scene_.contact, owners, t.body));
    }
  }

  /// The JSON pointer of the body or obstacle that holds global vertex a, with the
  /// vertex's local index, e.g. "/obstacles/1 (vertex 3 of 'right_wall')".
  std::string pointer_of_vertex(Index a) const {
    for (std::size_t b = 0; b < scene_.bodies.size(); ++b) {
      const Body& body = scene_.bodies[b];
      if (a >= body.first_vertex && a < body.first_vertex + body.vertex_count)
        return fmt::format("{} (vertex {} of '{}')", pointers_[b], a - body.first_vertex, body.name);
    }
    return "/contact";
  }

  /// Contact cannot repair an initial state that already intersects: refuse it,
  /// naming both bodies and triangles (obstacles may overlap each other).
  void check_initial_overlap() const {
    std::vector<Vec3> x;
    std::vector<std::array<Index, 3>> tris;
    std::vector<std::pair<std::size_t, std::size_t>> owner;  // (body, local triangle)
    const VertexState& s = scene_.kernel->state();
    for (Index a = 0; a < s.size(); ++a) x.push_back(s.position(a));
    for (std::size_t b = 0; b < scene_.bodies.size(); ++b) {
      const Body& body = scene_.bodies[b];
      if (!body.collide) continue;
      for (std::size_t t = 0; t < body.triangles.size(); ++t) {
        const auto& tri = body.triangles[t];
        tris.push_back({body.first_vertex + tri[0], body.first_vertex + tri[1],
                        body.first_vertex + tri[2]});
        owner.emplace_back(b, t);
      }
    }
    for (const IntersectingPair& p : find_intersections(x, tris)) {
      const auto [ba, ta] = owner[p.a];
      const auto [bb, tb] = owner[p.b];
      if (scene_.bodies[ba].obstacle && scene_.bodies[bb].obstacle) continue;
      throw SceneError(fmt::format(
          "{}: {} and {}: the initial geometry intersects: triangle {} of '{}' crosses "
          "triangle {} of '{}'",
          root_file_, pointers_[ba], pointers_[bb], ta, scene_.bodies[ba].name, tb,
          scene_.bodies[bb].name));
    }
  }

  template <int N>
  static StencilPositions<N> gather(const std::vector<Vec3>& x, const std::array<Index, N>& ids) {
    StencilPositions<N> out;
    for (int i = 0; i < N; ++i) out.col(i) = x[ids[i]];
    return out;
  }

  static std::vector<double> read_list(const JsonField& f, bool positive) {
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

  /// Adds a stencil whose period is given or estimated; returns the period used
  /// (infinity if the stencil was skipped because nothing can move or it is stiffless).
  /// A stiffness that overflows (NaN from stable_period, or a period of 0) is refused
  /// at the material; a given period is compared with the stability estimate.
  template <typename Term>
  double add_stencil(ForceSource<Term>& source, const std::array<Index, Term::kVertices>& ids,
                     const Term& term, const StencilPositions<Term::kVertices>& rest,
                     const std::array<double, Term::kVertices>& inv_mass, double period,
                     double safety, PeriodCheck& check, double auto_cap = kNever) {
    const std::size_t stencil = check.stencils++;
    if (std::all_of(inv_mass.begin(), inv_mass.end(), [](double w) { return w == 0.0; }))
      return kNever;
    const double estimate =
        stable_period(term, rest, inv_mass, period == kAuto ? safety : kEstimateSafety);
    if (std::isnan(estimate) || !(estimate > 0.0))
      check.stiffness.fail(fmt::format(
          "gives {} stencil {} a stiffness or period that is not finite and positive (period "
          "{} s): the material's values overflow",
          check.kind, stencil, estimate));
    if (period != kAuto && period / estimate > check.worst_ratio) {
      check.worst_ratio = period / estimate;
      check.worst_estimate = estimate;
      check.worst_stencil = stencil;
    }
    const double h = period == kAuto ? std::min(estimate, auto_cap) : period;
    if (!std::isfinite(h)) return kNever;
    check.sample_rate += 1.0 / h;
    if (check.stencils == kSampleStencils && check.total >= 10 * kSampleStencils) {
      // A big body's rate, extrapolated from its first stencils before it takes
      // minutes to estimate them all (the exact sum is checked when they are).
      const double rate = check.sample_rate * double(check.total) / double(check.stencils);
      if (budget_.event_rate() + rate > kSampleMargin * kMaxEventRate)
        (check.given ? *check.given : check.material)
            .fail(fmt::format(
                "the first {} of the {} {} stencils of body '{}' extrapolate to an estimated "
                "{:.3g} events per simulated second, above {} times the limit of {:.3g} "
                "(docs/scene-format.md \"Limits\")",
                check.stencils, check.total, check.kind, check.body, rate, kSampleMargin,
                kMaxEventRate));
    }
    add_fixed(source, ids, term, h);
    return h;
  }

  template <typename Term>
  void add_fixed(ForceSource<Term>& source, const std::array<Index, Term::kVertices>& ids,
                 const Term& term, double h) {
    source.add(ids, term, h);
    KindRate& rate = body_rates_[std::string(source.name())];
    rate.rate += 1.0 / h;
    rate.shortest = std::min(rate.shortest, h);
    ++rate.count;
    TermSummary& s = summary(std::string(source.name()));
    ++s.count;
    s.min_period = std::min(s.min_period, h);
    s.max_period = std::max(s.max_period, h);
  }

  static PeriodCheck period_check(const JsonField& b, const JsonField& material, const char* kind) {
    const std::string k = kind;
    const char* key = k == "membrane" ? "young" : k == "bending" ? "bending" : "stiffness";
    PeriodCheck c(kind, material, material.has(key) ? material.at(key) : material);
    if (auto p = b.find("periods"))
      if (auto f = p->find(kind); f && f->raw().is_number()) c.given = f;
    c.allow_unstable = b.has("allow_unstable_periods") && b.at("allow_unstable_periods").boolean();
    return c;
  }

  void report(const PeriodCheck& c) const {
    if (!c.given || !(c.worst_ratio > 1.0)) return;
    const std::string what = fmt::format(
        "{} s is {:.3g} times the stability estimate {:.3g} s (1/ω_max) of {} stencil {}",
        c.given->raw().get<double>(), c.worst_ratio, c.worst_estimate, c.kind, c.worst_stencil);
    if (c.worst_ratio > kMaxPeriodFactor && !c.allow_unstable)
      c.given->fail(fmt::format("{}, above the limit of {} times (leapfrog's limit for the stencil "
                                "alone); \"allow_unstable_periods\": true on the body runs it anyway",
                                what, kMaxPeriodFactor));
    spdlog::warn("{}: {}: {}: the run may blow up", root_file_, c.given->pointer(), what);
  }

  /// The events per simulated second of a body's stencils (body_rates_), charged to
  /// the kind with the most: its `periods` entry when given, else the material the
  /// automatic periods come from.
  void need_body_events(const JsonField& b, const JsonField& material, const std::string& name) {
    double total = 0.0;
    const KindRate* top = nullptr;
    std::string top_kind;
    for (const auto& [kind, r] : body_rates_) {
      total += r.rate;
      if (!top || r.rate > top->rate) {
        top = &r;
        top_kind = kind;
      }
    }
    if (!top) return;
    const std::string key = top_kind.substr(top_kind.find(':') + 1);
    std::optional<JsonField> field;
    if (auto p = b.find("periods")) {
      if (auto f = p->find(key); f && f->raw().is_number()) field = f;
      // Automatic periods are capped by the given ones: a kind whose stencils run at a
      // given period as short as the top kind's is where the rate comes from.
      for (const auto& [kind, r] : body_rates_)
        if (auto f = p->find(kind.substr(kind.find(':') + 1)); !field && f && f->raw().is_number() &&
                                                             f->raw().get<double>() <= top->shortest)
          field = f;
    }
    budget_.need_events(field ? *field : material, total,
                        fmt::format("the stencils of body '{}' (mostly {} {} stencils, periods "
                                    "down to {:.3g} s)",
                                    name, top->count, key, top->shortest));
  }

  /// The shortest time a pressure wave takes across a tet edge, s.
  static double shortest_wave_crossing(const TetMesh& mesh, const SolidMaterial& material) {
    double out = kNever;
    for (std::size_t t = 0; t < mesh.tets.size(); ++t) {
      const TetMaterial& m = material.per_tet[t];
      const double modulus =
          m.young / (1.0 + m.poisson) * (1.0 + m.poisson / (1.0 - 2.0 * m.poisson));
      double edge = kNever;
      for (int i = 0; i < 4; ++i)
        for (int j = i + 1; j < 4; ++j)
          edge = std::min(edge, (mesh.vertices[mesh.tets[t][i]] - mesh.vertices[mesh.tets[t][j]]).norm());
      out = std::min(out, edge * std::sqrt(m.density / modulus));
    }
    return out;
  }

  /// The field of a solid's integrator that sets its step.
  static JsonField solid_step_field(const JsonField& b) {
    const std::string integrator = b.at("integrator").choice(
        {"backward_euler", "zhao", "schroeder", "semi_implicit", "fully_implicit"});
    const JsonField f = b.at(integrator);
    const char* key = integrator == "backward_euler" ? "h"
                      : integrator == "zhao"         ? "h_L"
                      : integrator == "semi_implicit" && f.has("substep") &&
                              f.at("substep").raw().is_number()
                          ? "substep"
                          : "frame_dt";
    return f.has(key) ? f.at(key) : f;
  }

  TermSummary& summary(const std::string& kind) {
    for (TermSummary& s : scene_.terms)
      if (s.kind == kind) return s;
    scene_.terms.push_back(TermSummary{kind});
    return scene_.terms.back();
  }

  static double resolve_fallback(double period, double fallback, const JsonField& body,
                                 const char* what) {
    if (period != kAuto) return period;
    if (!std::isfinite(fallback))
      body.fail(fmt::format("periods/{} must be given: the body has no elastic stencil to take "
                            "an automatic period from",
                            what));
    return fallback;
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

  static Index named_vertex(const JsonField& p, const std::string& kind, const TriangleMesh& mesh,
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

  std::vector<Vec3> read_velocities(const std::optional<JsonField>& f,
                                    const std::vector<Vec3>& x, const std::vector<double>& mass,
                                    std::size_t body_index) const {
    std::vector<Vec3> v(x.size(), Vec3::Zero());
    if (!f) return v;
    f->expect_keys({"linear", "angular", "random", "vertices"});
    Vec3 centroid = Vec3::Zero();
    double total = 0.0;
    for (std::size_t a = 0; a < x.size(); ++a) {
      centroid += mass[a] * x[a];
      total += mass[a];
    }
    centroid /= total;
    const Vec3 linear = f->has("linear") ? f->at("linear").vec3() : Vec3::Zero();
    const Vec3 omega = f->has("angular") ? f->at("angular").vec3() : Vec3::Zero();
    for (std::size_t a = 0; a < x.size(); ++a) v[a] = linear + omega.cross(x[a] - centroid);
    if (auto r = f->find("random")) {
      const double sigma = r->non_negative();
      std::mt19937_64 rng(seed_ * 1000003ULL + body_index);
      std::normal_distribution<double> normal(0.0, sigma);
      for (Vec3& va : v)
        for (int k = 0; k < 3; ++k) va[k] += normal(rng);
    }
    if (auto list = f->find("vertices")) {
      for (std::size_t i = 0; i < list->array_size(); ++i) {
        const JsonField item = (*list)[i];
        item.expect_keys({"vertex", "velocity"});
        const auto a = item.at("vertex").integer_in(0, static_cast<long long>(x.size()) - 1);
        v[a] = item.at("velocity").vec3();
      }
    }
    return v;
  }

  /// What a cloth body's `pin_motion` needs for its `pins` subset and `release`.
  struct BodyPins {
    const std::string& kind;
    const JsonField& body;
    const std::vector<double>& release_mass;  ///< per local vertex, kg
  };

  /// A keyframed script for `pins` (local indices). With `body_pins` (cloth bodies)
  /// the object may also name the subset of the pins it moves (`pins`; the others
  /// stay where they are) and a `release` time (s > 0) at which the moved pins become
  /// free with their `release_mass`; returns the released pins.
  template <typename Global>
  std::vector<Index> read_pin_motion(const JsonField& motion, const std::vector<Index>& pins,
                                     const TriangleMesh& mesh, Global global,
                                     const BodyPins* body_pins = nullptr) {
    if (body_pins) motion.expect_keys({"keyframes", "pins", "release"});
    else motion.expect_keys({"keyframes"});
    if (pins.empty()) motion.fail("pin_motion needs pins");
    std::vector<Index> moved = pins;
    if (body_pins && motion.has("pins")) {
      const JsonField subset = motion.at("pins");
      moved = read_pins(subset, body_pins->kind, mesh, body_pins->body);
      if (moved.empty()) subset.fail("needs at least one pin");
      for (std::size_t i = 0; i < moved.size(); ++i)
        if (std::find(pins.begin(), pins.end(), moved[i]) == pins.end())
          subset[i].fail(fmt::format("vertex {} is not one of the body's pins", moved[i]));
    }
    const JsonField keys = motion.at("keyframes");
    if (keys.array_size() < 2) keys.fail("needs at least two keyframes");
    ScriptGroup group;
    for (Index a : moved) {
      group.vertices.push_back(global(a));
      group.reference.push_back(mesh.vertices[a]);
    }
    std::vector<Index> released;
    if (body_pins && motion.has("release")) {
      group.release = motion.at("release").positive();
      for (Index a : moved) group.release_mass.push_back(body_pins->release_mass[a]);
      released = moved;
    }
    for (std::size_t i = 0; i < keys.array_size(); ++i) {
      const JsonField key = keys[i];
      key.expect_keys({"time", "offset"});
      const JsonField t = key.at("time");
      const double time = t.non_negative();
      if (i == 0 && time != 0.0) t.fail("the first keyframe must be at time 0");
      if (i > 0 && !(time > group.keyframes.back().time))
        t.fail("keyframe times must increase strictly");
      group.keyframes.push_back(Keyframe{time, key.at("offset").vec3()});
    }
    sources_.script->add(std::move(group));
    return released;
  }

  /// The deformable bodies' vertices from the last frame of the run in resume_dir_,
  /// and the clock at its time (io/resume.hpp). Masses must match: a frame of another
  /// scene with as many vertices is refused.
  void resume() {
    std::vector<std::string> names;
    std::vector<const Body*> bodies;
    for (const Body& b : scene_.bodies)
      if (!b.obstacle) {
        names.push_back(b.name);
        bodies.push_back(&b);
      }
    const ResumePoint point = read_resume_point(resume_dir_, names, resume_frame_);
    const double t0 = point.frame / scene_.frame_rate;
    VertexState& s = scene_.kernel->state();
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      const Body& b = *bodies[i];
      const std::vector<FrameVertex>& frame = point.bodies[i];
      const auto refuse = [&](const std::string& what) {
        throw SceneError(fmt::format("--resume {}: frame {} of body '{}': {} (a run of another scene?)",
                                     resume_dir_, point.frame, b.name, what));
      };
      if (frame.size() != b.vertex_count)
        refuse(fmt::format("{} vertices, the scene's body has {}", frame.size(), b.vertex_count));
      for (Index k = 0; k < b.vertex_count; ++k) {
        const Index a = b.first_vertex + k;
        const FrameVertex& f = frame[k];
        const auto released = releasable_.find(a);
        const double scene_mass = released != releasable_.end() && std::isfinite(f.mass) ? released->second : s.mass(a);
        if (std::isinf(f.mass) != std::isinf(scene_mass) ||
            (std::isfinite(f.mass) && std::abs(f.mass - scene_mass) > 1e-9 * scene_mass))
          refuse(fmt::format("vertex {} has mass {}, the scene gives {}", k, f.mass, scene_mass));
        if (!f.x.allFinite() || !f.v.allFinite())
          refuse(fmt::format("vertex {} has a position or velocity that is not finite", k));
        s.place(a, f.x, t0);
        s.velocity_ref(a) = f.v;
      }
      // A phantom body's copy: without it the primary's velocities, which hold the
      // coupling's pull towards the copy, would pull towards the primary itself.
      const auto ph = phantom_of_body_.find(std::size_t(bodies[i] - scene_.bodies.data()));
      if (ph == phantom_of_body_.end()) continue;
      auto& [q, v] = resumed_copies_[ph->second];
      for (const FrameVertex& f : frame) {
        if (!f.has_phantom)
          refuse("no phantom state (phantom_x … phantom_vz: frames of this phantom body written "
                 "before they were saved cannot be resumed)");
        q.push_back(f.phantom_x);
        v.push_back(f.phantom_v);
      }
    }
    scene_.kernel->start_at(t0);
    scene_.first_frame = point.frame;
    scene_.resumed_from = resume_dir_;
    scene_.later_frames = point.later_frames;
  }

  template <typename Src>
  void register_source(std::unique_ptr<Src>& src, bool nonempty) {
    if (!nonempty) return;
    Src& ref = *src;
    const EventKind kind = scene_.kernel->add_source(std::move(src));
    if constexpr (requires { ref.start(kind, *scene_.kernel, start_from()); })
      ref.start(kind, *scene_.kernel, start_from());
    else
      ref.start(kind, *scene_.kernel);
  }

  /// Explicit stencils and phantom ticks begin with a half kick from the scene's
  /// initial state, with whole ones from a resumed frame (StartFrom).
  StartFrom start_from() const {
    return resume_dir_.empty() ? StartFrom::initial_state : StartFrom::resumed_frame;
  }

  void register_sources() {
    scene_.kernel->finalize_vertices();
    register_source(sources_.script, sources_.script->size() > 0);
    register_source(sources_.membrane, sources_.membrane->size() > 0);
    register_source(sources_.bending, sources_.bending->size() > 0);
    register_source(sources_.spring, sources_.spring->size() > 0);
    register_source(sources_.wind, sources_.wind->size() > 0);
    register_source(sources_.gravity, sources_.gravity->size() > 0);
    for (auto& src : sources_.phantoms) {
      PhantomSource& ref = *src;
      const EventKind kind = scene_.kernel->add_source(std::move(src));
      ref.start(kind, *scene_.kernel, scene_.kernel->now(), start_from());
      scene_.phantoms.push_back(&ref);
    }
    for (auto& src : sources_.solids) {
      SolidSource& ref = *src;
      const EventKind kind = scene_.kernel->add_source(std::move(src));
      ref.start(kind, *scene_.kernel, scene_.kernel->now());
      scene_.solids.push_back(&ref);
    }
    for (auto& src : sources_.schroeders) {
      SchroederSource& ref = *src;
      const EventKind kind = scene_.kernel->add_source(std::move(src));
      ref.start(kind, *scene_.kernel, scene_.kernel->now());
      scene_.schroeders.push_back(&ref);
    }
  }

  JsonField root_;
  std::string root_file_;
  std::string base_dir_;
  std::string resume_dir_;  ///< empty: start from the scene's initial state
  int resume_frame_ = -1;   ///< -1: the last frame in resume_dir_
  /// Phantom copies (positions, velocities) read from the resumed frame.
  std::map<PhantomSource*, std::pair<std::vector<Vec3>, std::vector<Vec3>>> resumed_copies_;
  std::optional<JsonField> contact_;
  std::vector<std::string> pointers_;  ///< JSON pointer of each body, in order
  Scene scene_;
  Sources sources_;
  std::uint64_t seed_ = 0;
  SceneBudget budget_;  ///< memory and events per simulated second, estimated up front
  /// The current body's explicit stencils by source name: events per simulated
  /// second, count, shortest period.
  struct KindRate {
    double rate = 0.0, shortest = kNever;
    std::size_t count = 0;
  };
  std::map<std::string, KindRate> body_rates_;
  Vec3 gravity_ = Vec3::Zero();
  Wind wind_;
  /// Phantom bodies whose ticks see obstacles or near pairs, with their settings and
  /// body index.
  /// An implicit solve that sees contact: a phantom body's ticks or a solid's steps.
  struct TickContact {
    PhantomSource* phantom;
    SolidSource* solid;
    TickContactSettings settings;
    std::size_t body;
    double step() const { return phantom ? phantom->h_imp() : solid->coarse_step(); }
    void set_obstacles(ContactFinder f) {
      if (phantom) phantom->set_obstacles(std::move(f), settings);
      else solid->contact().set_obstacles(std::move(f), settings);
    }
    void set_pairs(ContactFinder f) {
      if (phantom) phantom->set_pair_contact(std::move(f), settings);
      else solid->contact().set_pairs(std::move(f), settings);
    }
  };
  std::vector<TickContact> tick_obstacles_, tick_pairs_;
  std::map<std::size_t, PhantomSource*> phantom_of_body_;
  /// Pins a script releases: global vertex -> its mass after the release.
  std::map<Index, double> releasable_;
};

}  // namespace

Scene build_scene(const nlohmann::json& doc, const std::string& file, const std::string& base_dir,
                  const std::string& resume_dir, int resume_frame) {
  Scene scene = SceneBuilder(doc, file, base_dir, resume_dir, resume_frame).build();
  scene.file = file;
  return scene;
}

Scene load_scene(const std::string& path, const std::string& resume_dir, int resume_frame) {
  const nlohmann::json doc = parse_json_file(path);
  return build_scene(doc, path, std::filesystem::path(path).parent_path().string(), resume_dir,
                     resume_frame);
}

}  // namespace clockwork
