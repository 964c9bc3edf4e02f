/// World::add_shell: a triangle-mesh shell or a spring chain, integrated by explicit AVI
/// stencils (membrane, bending, springs, gravity, wind) or by the phantom mesh.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <type_traits>

#include "integrators/avi/stability.hpp"
#include "io/world/world_impl.hpp"

namespace clockwork {

namespace {

/// Given periods are compared with stable_period at this safety: 1 / ω_max.
constexpr double kEstimateSafety = 0.5;
/// A body of at least 10 × kSampleStencils stencils of a kind is refused after its
/// first kSampleStencils when their rate, extrapolated, exceeds kSampleMargin times
/// kMaxEventRate (the margin for meshes whose first stencils are not typical).
constexpr std::size_t kSampleStencils = 10000;
constexpr double kSampleMargin = 2.0;

template <int N>
StencilPositions<N> gather(const std::vector<Vec3>& x, const std::array<Index, N>& ids) {
  StencilPositions<N> out;
  for (int i = 0; i < N; ++i) out.col(i) = x[ids[i]];
  return out;
}

/// A body's stencils of one kind against the stability estimate 1 / ω_max
/// (stable_period at kEstimateSafety): the worst given period is warned about above
/// the estimate and refused above kMaxPeriodFactor times it (docs/scene-format.md
/// "Limits"). Also names the material when a stencil's stiffness overflows.
struct PeriodCheck {
  std::string kind;                ///< "membrane", "bending", "spring"
  std::string stiffness;           ///< the material key the stencils' stiffness comes from
  double given = kAutoPeriod;      ///< the body's `periods` entry (kAutoPeriod: estimated)
  bool allow_unstable = false;     ///< the body's "allow_unstable_periods"
  std::size_t stencils = 0;        ///< stencils seen so far (the next one's index)
  double worst_ratio = 0.0, worst_estimate = 0.0;
  std::size_t worst_stencil = 0;
  std::size_t total = 0;           ///< stencils of the kind in the body
  double sample_rate = 0.0;        ///< events per simulated second of those seen
  std::string body;                ///< the body's name
};

PeriodCheck period_check(const ShellSpec& spec, const char* kind) {
  const std::string k = kind;
  PeriodCheck c;
  c.kind = k;
  c.stiffness = k == "membrane" ? "material/young" : k == "bending" ? "material/bending" : "material/stiffness";
  c.given = k == "membrane" ? spec.periods.membrane : k == "bending" ? spec.periods.bending : spec.periods.spring;
  c.allow_unstable = spec.allow_unstable_periods;
  c.body = spec.name;
  return c;
}

/// Builds one shell: the state of add_shell between its checks and the body's push.
class ShellBuilder {
 public:
  ShellBuilder(World::Impl& w, SceneBudget& budget, const ShellSpec& spec, const SpecOrigin& origin)
      : w_(w), budget_(budget), spec_(spec), origin_(origin) {}

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
        stable_period(term, rest, inv_mass, period == kAutoPeriod ? safety : kEstimateSafety);
    if (std::isnan(estimate) || !(estimate > 0.0))
      origin_.fail(check.stiffness,
                   fmt::format("gives {} stencil {} a stiffness or period that is not finite and "
                               "positive (period {} s): the material's values overflow",
                               check.kind, stencil, estimate));
    if (period != kAutoPeriod && period / estimate > check.worst_ratio) {
      check.worst_ratio = period / estimate;
      check.worst_estimate = estimate;
      check.worst_stencil = stencil;
    }
    const double h = period == kAutoPeriod ? std::min(estimate, auto_cap) : period;
    if (!std::isfinite(h)) return kNever;
    check.sample_rate += 1.0 / h;
    if (check.stencils == kSampleStencils && check.total >= 10 * kSampleStencils) {
      // A big body's rate, extrapolated from its first stencils before it takes
      // minutes to estimate them all (the exact sum is checked when they are).
      const double rate = check.sample_rate * double(check.total) / double(check.stencils);
      if (budget_.event_rate() + rate > kSampleMargin * kMaxEventRate)
        origin_.fail(check.given != kAutoPeriod ? "periods/" + check.kind : std::string("material"),
                     fmt::format("the first {} of the {} {} stencils of body '{}' extrapolate to an "
                                 "estimated {:.3g} events per simulated second, above {} times the "
                                 "limit of {:.3g} (docs/scene-format.md \"Limits\")",
                                 check.stencils, check.total, check.kind, check.body, rate,
                                 kSampleMargin, kMaxEventRate));
    }
    add_fixed(source, ids, term, h);
    return h;
  }

  template <typename Term>
  void add_fixed(ForceSource<Term>& source, const std::array<Index, Term::kVertices>& ids,
                 const Term& term, double h) {
    source.add(ids, term, h);
    World::Impl::KindRate& rate = w_.body_rates[std::string(source.name())];
    rate.rate += 1.0 / h;
    rate.shortest = std::min(rate.shortest, h);
    ++rate.count;
    TermSummary& s = w_.summary(std::string(source.name()));
    ++s.count;
    s.min_period = std::min(s.min_period, h);
    s.max_period = std::max(s.max_period, h);
  }

  void report(const PeriodCheck& c) const {
    if (c.given == kAutoPeriod || !(c.worst_ratio > 1.0)) return;
    const std::string field = "periods/" + c.kind;
    const std::string what = fmt::format(
        "{} s is {:.3g} times the stability estimate {:.3g} s (1/ω_max) of {} stencil {}", c.given,
        c.worst_ratio, c.worst_estimate, c.kind, c.worst_stencil);
    if (c.worst_ratio > kMaxPeriodFactor && !c.allow_unstable)
      origin_.fail(field, fmt::format("{}, above the limit of {} times (leapfrog's limit for the "
                                      "stencil alone); \"allow_unstable_periods\": true on the "
                                      "body runs it anyway",
                                      what, kMaxPeriodFactor));
    spdlog::warn("{}: {}: {}: the run may blow up", origin_.file(), origin_.pointer(field), what);
  }

  /// The events per simulated second of a body's stencils (body_rates), charged to
  /// the kind with the most: its `periods` entry when given, else the material the
  /// automatic periods come from.
  void need_body_events() {
    double total = 0.0;
    const World::Impl::KindRate* top = nullptr;
    std::string top_kind;
    for (const auto& [kind, r] : w_.body_rates) {
      total += r.rate;
      if (!top || r.rate > top->rate) {
        top = &r;
        top_kind = kind;
      }
    }
    if (!top) return;
    const std::string key = top_kind.substr(top_kind.find(':') + 1);
    std::string field = "material";
    if (given(key) != kAutoPeriod) {
      field = "periods/" + key;
    } else {
      // Automatic periods are capped by the given ones: a kind whose stencils run at a
      // given period as short as the top kind's is where the rate comes from.
      for (const auto& [kind, r] : w_.body_rates) {
        const std::string k = kind.substr(kind.find(':') + 1);
        if (const double p = given(k); p != kAutoPeriod && p <= top->shortest) {
          field = "periods/" + k;
          break;
        }
      }
    }
    budget_.need_events(SpecField{&origin_, field}, total,
                        fmt::format("the stencils of body '{}' (mostly {} {} stencils, periods "
                                    "down to {:.3g} s)",
                                    spec_.name, top->count, key, top->shortest));
  }

  double resolve_fallback(double period, double fallback, const char* what) const {
    if (period != kAutoPeriod) return period;
    if (!std::isfinite(fallback))
      origin_.fail("", fmt::format("periods/{} must be given: the body has no elastic stencil to "
                                   "take an automatic period from",
                                   what));
    return fallback;
  }

 private:
  double given(const std::string& key) const {
    const PeriodSpec& p = spec_.periods;
    return key == "membrane" ? p.membrane
           : key == "bending" ? p.bending
           : key == "spring"  ? p.spring
           : key == "gravity" ? p.gravity
           : key == "wind"    ? p.wind
                              : kAutoPeriod;
  }

  World::Impl& w_;
  SceneBudget& budget_;
  const ShellSpec& spec_;
  const SpecOrigin& origin_;
};

/// Values a C++ caller can get wrong that a scene file's reader has already refused.
void check_shell_spec(const ShellSpec& spec, const SpecOrigin& origin) {
  const std::size_t n = spec.mesh.vertices.size();
  const bool chain = std::holds_alternative<ChainMaterial>(spec.material);
  if (chain ? spec.mesh.edges.empty() : spec.mesh.triangles.empty())
    origin.fail("shape", chain ? "a chain needs at least one spring (mesh.edges)"
                               : "needs at least one triangle");
  for (const auto& t : spec.mesh.triangles)
    for (Index a : t)
      if (a >= n) origin.fail("shape", fmt::format("triangle vertex {} out of range (0..{})", a, n));
  for (const auto& e : spec.mesh.edges)
    for (Index a : e)
      if (a >= n) origin.fail("shape", fmt::format("spring vertex {} out of range (0..{})", a, n));
  for (Index a : spec.pins)
    if (a >= n) origin.fail("pins", fmt::format("vertex {} out of range (0..{})", a, n));
  const auto positive = [&](const char* field, double x) {
    if (!(x > 0.0 && std::isfinite(x))) origin.fail(field, fmt::format("must be > 0, got {}", x));
  };
  if (const auto* m = std::get_if<ShellMaterial>(&spec.material)) {
    positive("material/area_density", m->area_density);
    positive("material/young", m->young);
    if (!(m->poisson >= 0.0 && m->poisson < 0.5))
      origin.fail("material/poisson", fmt::format("must be in [0, 0.5), got {}", m->poisson));
    if (!(m->bending >= 0.0 && std::isfinite(m->bending)))
      origin.fail("material/bending", fmt::format("must be >= 0, got {}", m->bending));
  } else {
    const auto& c = std::get<ChainMaterial>(spec.material);
    positive("material/node_mass", c.node_mass);
    if (c.stiffness.empty() || c.quartic.empty())
      origin.fail("material", "needs at least one stiffness and one quartic coefficient");
    for (double k : c.stiffness) positive("material/stiffness", k);
    if (c.rest_length) positive("material/rest_length", *c.rest_length);
    if (spec.phantom) origin.fail("integrator", "phantom needs a triangle mesh body, not a chain");
  }
  if (spec.phantom) positive("phantom/h_imp", spec.phantom->h_imp);
}

}  // namespace

void check_shell_geometry(const ShellSpec& spec, const SpecOrigin& origin) {
  const auto* m = std::get_if<ShellMaterial>(&spec.material);
  if (!m) return;
  const TriangleMesh& mesh = spec.mesh;
  // young / area_density is the squared wave speed the periods come from.
  if (!std::isfinite(m->young / m->area_density))
    origin.fail("material/young",
                fmt::format("over area_density ({} kg/m²) overflows: the stencils' stiffness and "
                            "periods would not be finite",
                            m->area_density));
  std::vector<bool> used(mesh.vertices.size(), false);
  for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
    const auto& tri = mesh.triangles[t];
    if (MembraneStVK::is_degenerate(gather<3>(mesh.vertices, tri)))
      origin.fail("shape", fmt::format("triangle {} (vertices {}, {}, {}) is degenerate", t, tri[0], tri[1], tri[2]));
    for (Index a : tri) used[a] = true;
  }
  for (std::size_t a = 0; a < used.size(); ++a)
    if (!used[a]) origin.fail("shape", fmt::format("vertex {} belongs to no triangle", a));
}

std::size_t World::add_shell(ShellSpec spec) {
  Impl& w = *impl_;
  const auto origin_ptr = w.begin_add(spec.origin, "add_shell", spec.name);
  const SpecOrigin& origin = *origin_ptr;
  // A scene file's reader has checked the values and the geometry, in its order of the
  // fields (a degenerate triangle before a pin); a C++ caller's spec is checked here.
  if (!spec.origin) {
    check_shell_spec(spec, origin);
    check_shell_geometry(spec, origin);
  }
  const std::size_t index = w.scene.bodies.size();
  if (spec.phantom) {
    const SpecField h_imp{&origin, "phantom/h_imp"};
    check_step_within_run(h_imp, spec.phantom->h_imp, settings_.end_time);
    budget().need_events(h_imp, 1.0 / spec.phantom->h_imp,
                         fmt::format("the implicit ticks of body '{}'", spec.name));
  }
  Body body;
  body.name = spec.name;
  body.collide = spec.collide;
  TriangleMesh& mesh = spec.mesh;
  const bool springs = std::holds_alternative<ChainMaterial>(spec.material);
  const PeriodSpec& periods = spec.periods;
  w.body_rates.clear();
  const std::optional<PhantomSpec>& phantom = spec.phantom;

  const std::size_t n = mesh.vertices.size();
  std::vector<double> mass(n, 0.0);
  double mu = 0, lambda = 0, k_bending = 0;
  if (springs) {
    std::fill(mass.begin(), mass.end(), std::get<ChainMaterial>(spec.material).node_mass);
  } else {
    const ShellMaterial& m = std::get<ShellMaterial>(spec.material);
    std::tie(mu, lambda) = MembraneStVK::lame_plane_stress(m.young, m.poisson);
    k_bending = m.bending;
    for (const auto& tri : mesh.triangles) {
      const double area = 0.5 * (mesh.vertices[tri[1]] - mesh.vertices[tri[0]])
                                    .cross(mesh.vertices[tri[2]] - mesh.vertices[tri[0]])
                                    .norm();
      for (Index a : tri) mass[a] += m.area_density * area / 3.0;
    }
    for (std::size_t a = 0; a < n; ++a)  // an area that underflows leaves no mass either
      if (mass[a] == 0.0) origin.fail("shape", fmt::format("vertex {} belongs to no triangle", a));
  }

  // Pins: infinite mass; optionally moved by a keyframed script.
  std::vector<bool> pinned(n, false);
  for (Index a : spec.pins) pinned[a] = true;

  // Initial velocities.
  std::vector<Vec3> velocity = w.velocities(origin, spec.velocity, mesh.vertices, mass, index, settings_.seed);
  VertexState& state = w.scene.kernel->state();
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
  if (spec.pin_motion) {
    std::vector<double> release_mass(n);
    for (std::size_t a = 0; a < n; ++a) release_mass[a] = primary_share * mass[a];
    for (Index a : w.add_motion(origin, "pin_motion", *spec.pin_motion, spec.pins, mesh.vertices,
                                body.first_vertex, &release_mass)) {
      releasable[a] = true;
      w.releasable.emplace(global(a), release_mass[a]);
    }
  }
  // Pins to be released count with their mass in the stability estimates, and get
  // gravity stencils (which leave them alone while they are kinematic).
  std::vector<double> inv_mass(n);
  for (std::size_t a = 0; a < n; ++a) inv_mass[a] = pinned[a] && !releasable[a] ? 0.0 : 1.0 / mass[a];

  // Stencils. The stability estimate of a stencil gives each of its vertices the
  // share m_a / n_a of its mass, n_a the number of stencils of the same kind at the
  // vertex (a Gershgorin bound on the assembled stiffness the vertex feels).
  const auto share = [&](const auto& ids, const std::vector<int>& count) {
    std::array<double, std::tuple_size_v<std::decay_t<decltype(ids)>>> wt{};
    for (std::size_t i = 0; i < wt.size(); ++i) wt[i] = inv_mass[ids[i]] * count[ids[i]];
    return wt;
  };
  const auto incidence = [&](const auto& stencils) {
    std::vector<int> count(n, 0);
    for (const auto& st : stencils)
      for (Index a : st) ++count[a];
    return count;
  };
  const Vec3 gravity = settings_.gravity;
  if (phantom) {
    // The body's elastic terms, gravity and wind go to its phantom (§4: "combine
    // gravity and wind into the implicit solve"); its primary keeps only contact.
    std::vector<Index> ids(n);
    for (std::size_t a = 0; a < n; ++a) ids[a] = body.first_vertex + static_cast<Index>(a);
    auto src = std::make_unique<PhantomSource>(body.name, ids, mass, phantom->h_imp, phantom->solver);
    src->set_halving(phantom->halving);
    src->set_contact_on_whole_mass(phantom->contact_on_whole);
    BodyPotential& V = src->potential();
    for (const auto& tri : mesh.triangles)
      V.add_membrane(tri, MembraneStVK::from_rest(gather<3>(mesh.vertices, tri), mu, lambda));
    if (k_bending > 0.0)
      for (const auto& h : interior_hinges(mesh))
        V.add_hinge(h, HingeBending::from_rest(gather<4>(mesh.vertices, h), k_bending));
    std::vector<double> weighed = mass;
    for (std::size_t a = 0; a < n; ++a)
      if (pinned[a]) weighed[a] = 0.0;
    V.set_gravity(gravity, weighed);
    if (settings_.wind_drag > 0.0)
      for (const auto& tri : mesh.triangles) {
        WindForce wf{};
        wf.wind_velocity = settings_.wind_velocity;
        wf.drag = settings_.wind_drag;
        src->add_wind(tri, wf);
      }
    TermSummary& s = w.summary("implicit:phantom");
    s.count += 1;
    s.min_period = std::min(s.min_period, phantom->h_imp);
    s.max_period = std::max(s.max_period, phantom->h_imp);
    if (phantom->obstacles.on) w.tick_obstacles.push_back({src.get(), nullptr, phantom->obstacles.settings, index});
    if (phantom->deformables.on) w.tick_pairs.push_back({src.get(), nullptr, phantom->deformables.settings, index});
    w.phantom_of_body[index] = src.get();
    body.triangles = std::move(mesh.triangles);
    body.edges = std::move(mesh.edges);
    return w.finish_add(std::move(body), origin_ptr, std::move(src));
  }
  ShellBuilder b(w, budget(), spec, origin);
  // The body's stencils are appended to the shared sources: its adapter names their
  // ranges (integrators/avi/explicit_shell.hpp).
  std::vector<Index> ids(n);
  for (std::size_t a = 0; a < n; ++a) ids[a] = global(static_cast<Index>(a));
  auto shell = std::make_unique<ExplicitShell>(body.name, std::move(ids));
  const auto first = [](const auto& source) { return static_cast<EventSlot>(source->size()); };
  const EventSlot first_spring = first(w.sources.spring), first_membrane = first(w.sources.membrane),
                  first_hinge = first(w.sources.bending), first_gravity = first(w.sources.gravity);
  double min_elastic = kNever;
  PeriodCheck spring_check = period_check(spec, "spring"), membrane_check = period_check(spec, "membrane"),
              bending_check = period_check(spec, "bending");
  spring_check.total = mesh.edges.size();
  membrane_check.total = mesh.triangles.size();
  if (springs) {
    const ChainMaterial& c = std::get<ChainMaterial>(spec.material);
    const std::vector<int> per_vertex = incidence(mesh.edges);
    for (std::size_t e = 0; e < mesh.edges.size(); ++e) {
      const auto& [i, j] = mesh.edges[e];
      SpringEnergy s{};
      s.stiffness = c.stiffness[e % c.stiffness.size()];
      s.quartic = c.quartic[e % c.quartic.size()];
      s.rest_length = c.rest_length ? *c.rest_length : (mesh.vertices[j] - mesh.vertices[i]).norm();
      min_elastic = std::min(min_elastic, b.add_stencil(*w.sources.spring, {global(i), global(j)}, s,
                                                        gather<2>(mesh.vertices, {i, j}),
                                                        share(mesh.edges[e], per_vertex),
                                                        periods.spring, periods.safety, spring_check));
    }
    b.report(spring_check);
  } else {
    const std::vector<int> per_vertex = incidence(mesh.triangles);
    for (const auto& tri : mesh.triangles) {
      const auto rest = gather<3>(mesh.vertices, tri);
      min_elastic = std::min(
          min_elastic, b.add_stencil(*w.sources.membrane, {global(tri[0]), global(tri[1]), global(tri[2])},
                                     MembraneStVK::from_rest(rest, mu, lambda), rest,
                                     share(tri, per_vertex), periods.membrane, periods.safety,
                                     membrane_check));
    }
    b.report(membrane_check);
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
            b.add_stencil(*w.sources.bending, {global(h[0]), global(h[1]), global(h[2]), global(h[3])},
                          HingeBending::from_rest(rest, k_bending), rest, share(h, per_vertex_hinge),
                          periods.bending, periods.safety, bending_check, membrane_cap));
      }
    b.report(bending_check);
  }
  const double fallback = std::isfinite(min_elastic) ? min_elastic : kNever;
  if (gravity.squaredNorm() > 0.0) {
    const double h = b.resolve_fallback(periods.gravity, fallback, "gravity");
    for (std::size_t a = 0; a < n; ++a)
      if (!pinned[a] || releasable[a])
        b.add_fixed(*w.sources.gravity, {global(a)}, GravityEnergy{mass[a], gravity}, h);
  }
  if (settings_.wind_drag > 0.0 && !springs) {
    const double h = b.resolve_fallback(periods.wind, fallback, "wind");
    for (const auto& tri : mesh.triangles) {
      WindForce wf{};
      wf.wind_velocity = settings_.wind_velocity;
      wf.drag = settings_.wind_drag;
      b.add_fixed(*w.sources.wind, {global(tri[0]), global(tri[1]), global(tri[2])}, wf, h);
    }
  }
  b.need_body_events();
  shell->add_stencils(*w.sources.spring, first_spring, first(w.sources.spring));
  shell->add_stencils(*w.sources.membrane, first_membrane, first(w.sources.membrane));
  shell->add_stencils(*w.sources.bending, first_hinge, first(w.sources.bending));
  shell->add_stencils(*w.sources.gravity, first_gravity, first(w.sources.gravity));
  body.triangles = std::move(mesh.triangles);
  body.edges = std::move(mesh.edges);
  return w.finish_add(std::move(body), origin_ptr, std::move(shell));
}

}  // namespace clockwork
