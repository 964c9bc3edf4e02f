/// The World's start: contact over every colliding body (DESIGN §2), the implicit
/// solves that see it, resuming from an earlier run's frame, and the sources' start.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "contact/intersections/intersection_check.hpp"
#include "contact/obstacles/mesh_collider.hpp"
#include "contact/obstacles/obstacle_proximity.hpp"
#include "integrators/implicit/joint_solids.hpp"
#include "integrators/schroeder/schroeder_source.hpp"
#include "io/frames/resume.hpp"
#include "io/world/tick_pairs.hpp"
#include "io/world/world_impl.hpp"

namespace clockwork {

namespace {

/// The contact system's estimates, before it is built: its hash grid holds every
/// colliding triangle in every cell its box (grown as ContactSystem::cells_of does)
/// covers — a cell_size of 1e-9 m put billions of entries in it — and a layer in
/// contact fires 1 / h1 times per simulated second.
void need_contact(World::Impl& w, const SpecOrigin& origin, const ContactSettings& settings,
                  const ContactParameters& params, double end_time) {
  const VertexState& s = w.scene.kernel->state();
  const double grow = 0.5 * params.eta1 + 0.125 * params.cell_size;
  double entries = 0.0;
  for (const Body& b : w.scene.bodies) {
    if (!b.collide) continue;
    for (const auto& t : b.triangles) {
      Vec3 lo = Vec3::Constant(kNever), hi = Vec3::Constant(-kNever);
      for (Index a : t) {
        lo = lo.cwiseMin(s.position(b.first_vertex + a));
        hi = hi.cwiseMax(s.position(b.first_vertex + a));
      }
      double cells = 1.0;
      for (int k = 0; k < 3; ++k)
        cells *= std::floor((hi[k] + grow) / params.cell_size) - std::floor((lo[k] - grow) / params.cell_size) + 1.0;
      entries += cells;
    }
    if (b.triangles.empty()) entries += double(b.vertex_count);  // chain points
  }
  w.budget.need_memory(SpecField{&origin, "cell_size"}, entries * kBytesPerGridEntry,
                       fmt::format("{:.3g} (triangle, cell) entries of the contact grid (cell "
                                   "size {:.3g} m)",
                                   entries, params.cell_size));
  const SpecField period{&origin, "period"};
  if (settings.period) check_step_within_run(period, params.h1, end_time);
  w.budget.need_events(period, 1.0 / params.h1, fmt::format("a contact layer (period {:.3g} s)", params.h1));
}

/// Phantom bodies and solids whose solves see the obstacles (docs/phantom.md
/// "Obstacles in the tick"): landing points keep 2 η(1) off them unless the spec says
/// otherwise.
void give_ticks_obstacles(World::Impl& w, const ContactParameters& params) {
  std::vector<std::array<Index, 3>> triangles;
  for (const Body& b : w.scene.bodies)
    if (b.obstacle)
      for (const auto& t : b.triangles)
        triangles.push_back({b.first_vertex + t[0], b.first_vertex + t[1], b.first_vertex + t[2]});
  auto grid = std::make_shared<ObstacleProximity>(std::move(triangles), 8.0 * params.eta1);
  const VertexState& state = w.scene.kernel->state();
  for (TickContact& t : w.tick_obstacles) {
    const Body& body = w.scene.bodies[t.body];
    const Index first = body.first_vertex;
    std::vector<std::array<Index, 3>> surface;
    for (const auto& tri : body.triangles) surface.push_back({first + tri[0], first + tri[1], first + tri[2]});
    if (!(t.settings.clearance > 0.0)) t.settings.clearance = 2.0 * params.eta1;
    // A solid's planes carry the contact's friction (a solid resting on them no
    // longer enters the layers that hold the friction); a phantom tick's do not.
    if (t.solid) t.settings.friction = params.friction;
    const double h = t.step();
    t.set_obstacles([grid, &state, h, first, surface = OwnedTriangles(std::move(surface)),
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

/// Solves with deformable contact see the contact system's near element pairs
/// (self-contact and other bodies) (io/world/tick_pairs.hpp).
void give_ticks_pairs(World::Impl& w, const ContactParameters& params) {
  std::vector<PairOwner> owners;
  for (std::size_t b = 0; b < w.scene.bodies.size(); ++b) {
    const auto it = w.phantom_of_body.find(b);
    const Body& body = w.scene.bodies[b];
    PairOwner o{body.first_vertex, it == w.phantom_of_body.end() ? nullptr : it->second};
    o.obstacle = body.obstacle;
    owners.push_back(o);
  }
  // A Schroeder solid plans no pairs, but to the planes of a backward-Euler or Zhao
  // solid it is a solid: its side of a pair moves with its own velocity and recoils
  // from the plane's reaction (SolveContact::add_planes). Taken at the pair's common
  // velocity instead, as a cloth, a Zhao m = 1 block against it went 0.57 J -> 1.26 J
  // (tests/integrators/implicit/test_pair_energy.cpp; sweep pair_zhao_m1_schroeder).
  for (const SchroederSource* schroeder : w.scene.bodies_of<SchroederSource>())
    for (PairOwner& o : owners)
      if (!schroeder->vertices().empty() && o.first == schroeder->vertices().front()) o.solid = true;
  for (const TickContact& t : w.tick_pairs) {
    owners[t.body].plans_pairs = true;
    owners[t.body].solid = t.solid != nullptr;
    if (t.solid) owners[t.body].step = t.step();
  }
  for (TickContact& t : w.tick_pairs) {
    // A solid's pairs with another solid keep 2 η(1), out of the first layer, as its
    // obstacle planes do (TickContactSettings::solid_clearance); a given clearance holds
    // for every pair. At η(1) the planes' give let the faces into layer 1, whose explicit
    // impulses act between the steps on faces whose elastic answer comes a step later:
    // two backward-Euler blocks at 5 ms climbed back 5.7e-3 of E0 (2e-6 at 2 η(1)); a
    // Zhao m = 1 block at 3 m/s against backward Euler at 5 ms or a Schroeder block,
    // 14 layers active at 28-31 ms, then the Zhao block's elastic energy 0.008 -> 0.082 J
    // over its next step with its kinetic flat: +1.06e-2 and +6.1e-3 of E0 (1.4e-4 and
    // 1.6e-4 at 2 η(1), no layer fires; test_pair_energy). Zhao kept η(1) while its
    // regions at m > 1 planned the pairs themselves (two m = 4 blocks gained 27-31 % at
    // 2 η(1)); such a plan is now re-solved as backward Euler at h_L
    // (SolidSource::region_meets_solid), whose planes these are.
    if (!(t.settings.clearance > 0.0)) {
      t.settings.clearance = params.eta1;
      if (t.solid) t.settings.solid_clearance = 2.0 * params.eta1;
    }
    // Friction between solids stepped together (JointSolids; the planes out of the
    // layers hold no friction otherwise).
    if (t.solid) t.settings.friction = params.friction;
    t.set_pairs(TickPairFinder(w.scene.kernel->state(), *w.scene.contact, owners, t.body,
                               t.solid ? t.step() : 0.0));
  }
  // Backward-Euler and Zhao solids in contact step together
  // (integrators/implicit/joint_solids.hpp): planned by one of them and taken by the
  // other as an impulse, the pair planes of a block resting on another added energy at
  // every step under the load (two 10 ms blocks stacked on the ground +92 %).
  auto joint = std::make_shared<JointSolids>();
  for (TickContact& t : w.tick_pairs)
    if (t.solid) t.solid->set_joint(joint);
}

/// Every static obstacle as a §6 collider of the Schroeder solids that name none of
/// their own (docs/schroeder.md "Obstacles in the solve"): its exact surface where it
/// has one, else its mesh; a moving obstacle is left to the penalty layers, with a
/// warning. A solid that starts inside an obstacle (behind an open obstacle sheet,
/// within its band) is named: its §6 response pushes those particles out to the front.
void give_schroeder_obstacles(World::Impl& w, const ContactParameters& params) {
  const VertexState& state = w.scene.kernel->state();
  std::vector<StaticCollider> colliders;
  std::vector<std::size_t> owner;  // obstacle body of each collider
  for (const World::Impl::ObstacleSurface& o : w.obstacle_surfaces) {
    if (o.moves) continue;
    StaticCollider c = o.surface ? *o.surface : StaticCollider();
    if (!o.surface) {
      const Body& b = w.scene.bodies[o.body];
      std::vector<Vec3> x;
      for (Index a = 0; a < b.vertex_count; ++a) x.push_back(state.position(b.first_vertex + a));
      try {
        c = StaticCollider::from_mesh(std::make_shared<const MeshCollider>(std::move(x), b.triangles));
      } catch (const std::invalid_argument& e) {
        // Only a mesh of zero-area triangles has no collider: the layers still see it.
        spdlog::warn("{}: {}: Schroeder solids do not see obstacle '{}' in their solves: {}",
                     w.origins[o.body]->file(), w.origins[o.body]->pointer(), b.name, e.what());
        continue;
      }
    }
    colliders.push_back(c.grown(2.0 * params.eta1));
    colliders.back().friction = params.friction;
    owner.push_back(o.body);
  }
  for (const auto& [solid, source] : w.schroeder_seeing_obstacles) {
    const Body& body = w.scene.bodies[solid];
    for (const World::Impl::ObstacleSurface& o : w.obstacle_surfaces)
      if (o.moves)
        spdlog::warn("{}: {}: Schroeder solid '{}' does not see obstacle '{}' in its solve (it moves): "
                     "only the penalty layers hold it, and their impulses at its step can add energy",
                     w.origins[solid]->file(), w.origins[solid]->pointer(), body.name, w.scene.bodies[o.body].name);
    for (std::size_t j = 0; j < colliders.size(); ++j) {
      std::size_t inside = 0;
      for (Index a = 0; a < body.vertex_count; ++a)
        if (colliders[j].closest(state.position(body.first_vertex + a)).distance < -2.0 * params.eta1) ++inside;
      if (inside > 0)
        spdlog::warn("{}: {}: Schroeder solid '{}' starts with {} of its {} vertices inside obstacle '{}' "
                     "(an open mesh: behind it, within its one-sided band): its solve pushes them out",
                     w.origins[solid]->file(), w.origins[solid]->pointer(), body.name, inside, body.vertex_count,
                     w.scene.bodies[owner[j]].name);
    }
    source->add_colliders(colliders);
  }
}

}  // namespace

void World::Impl::build_contact(const ContactSpec& spec, const WorldSettings& settings) {
  const SpecOrigin& origin = *spec.origin;
  const VertexState& s = scene.kernel->state();
  ContactScale scale;
  scale.gravity = settings.gravity.norm();
  double edge_sum = 0.0, mass_sum = 0.0;
  std::size_t edge_count = 0, mass_count = 0;
  scale.min_mass = kNever;
  const auto edge = [&](const Body& b, Index i, Index j) {
    edge_sum += (s.position(b.first_vertex + i) - s.position(b.first_vertex + j)).norm();
    ++edge_count;
  };
  for (const Body& b : scene.bodies) {
    if (!b.collide || b.obstacle) continue;
    for (const auto& t : b.triangles)
      for (int k = 0; k < 3; ++k) edge(b, t[k], t[(k + 1) % 3]);
    for (const auto& e : b.edges) edge(b, e[0], e[1]);
    for (Index a = b.first_vertex; a < b.first_vertex + b.vertex_count; ++a) {
      // A pin to be released counts with the mass it will have.
      double m = s.mass(a);
      if (s.kinematic(a)) {
        const auto r = releasable.find(a);
        if (r == releasable.end()) continue;
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
  const ContactParameters params = resolve_contact(spec.settings, scale, origin);
  need_contact(*this, origin, spec.settings, params, settings.end_time);
  check_initial_overlap();
  scene.contact = std::make_unique<ContactSystem>(*scene.kernel, *contingency, params);
  for (const auto& [a, m] : releasable) scene.contact->mark_releasable(a);
  // Schroeder solids see the static obstacles in their solves, as §6 colliders 2 η1 off
  // the surface (where backward Euler's and Zhao's obstacle planes hold their points):
  // with the penalty layers' explicit impulses alone, at a step as long as a frame, a
  // fully-implicit block dropped 4 mm on the ground went from 0.26 J to 1000 J. An
  // obstacle with an exact surface gives that; any other static one its triangle mesh
  // (contact/obstacles/mesh_collider.hpp), built once and shared by the solids.
  if (!schroeder_seeing_obstacles.empty()) give_schroeder_obstacles(*this, params);
  // A phantom body whose contact impulses move its whole mass holds half of it in the
  // kernel: contact splits its impulses through the phantom (contact/mass_share.hpp).
  for (const auto& [body, phantom] : phantom_of_body)
    if (phantom->contact_on_whole_mass())
      for (std::size_t a = 0; a < phantom->body_vertices().size(); ++a)
        scene.contact->share_mass(phantom->body_vertices()[a], phantom, static_cast<Index>(a));
  for (const Body& b : scene.bodies) {
    if (!b.collide) continue;
    if (b.triangles.empty())
      for (Index a = 0; a < b.vertex_count; ++a) scene.contact->add_point(b.first_vertex + a);
    const std::uint32_t group = b.self_contact ? ContactSystem::kSelfContact
                                               : static_cast<std::uint32_t>(&b - scene.bodies.data());
    for (const auto& t : b.triangles)
      scene.contact->add_triangle({b.first_vertex + t[0], b.first_vertex + t[1], b.first_vertex + t[2]}, group);
  }
  try {
    scene.contact->start();
  } catch (const NumericalFailure& e) {
    // Layers stacked up at the start: the input touches where contact cannot push.
    throw SceneError(fmt::format("{}: {}: the initial geometry touches: {}", origin.file(),
                                 e.vertex == NumericalFailure::kNoVertex ? origin.pointer() : pointer_of_vertex(e.vertex),
                                 e.problem));
  }
  if (!tick_obstacles.empty()) give_ticks_obstacles(*this, params);
  if (!tick_pairs.empty()) give_ticks_pairs(*this, params);
}

/// The pointer of the body or obstacle that holds global vertex a, with the vertex's
/// local index, e.g. "/obstacles/1 (vertex 3 of 'right_wall')".
std::string World::Impl::pointer_of_vertex(Index a) const {
  for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
    const Body& body = scene.bodies[b];
    if (a >= body.first_vertex && a < body.first_vertex + body.vertex_count)
      return fmt::format("{} (vertex {} of '{}')", origins[b]->pointer(), a - body.first_vertex, body.name);
  }
  return "/contact";
}

/// Contact cannot repair an initial state that already intersects: refuse it,
/// naming both bodies and triangles (obstacles may overlap each other).
void World::Impl::check_initial_overlap() const {
  std::vector<Vec3> x;
  std::vector<std::array<Index, 3>> tris;
  std::vector<std::pair<std::size_t, std::size_t>> owner;  // (body, local triangle)
  const VertexState& s = scene.kernel->state();
  for (Index a = 0; a < s.size(); ++a) x.push_back(s.position(a));
  for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
    const Body& body = scene.bodies[b];
    if (!body.collide) continue;
    for (std::size_t t = 0; t < body.triangles.size(); ++t) {
      const auto& tri = body.triangles[t];
      tris.push_back({body.first_vertex + tri[0], body.first_vertex + tri[1], body.first_vertex + tri[2]});
      owner.emplace_back(b, t);
    }
  }
  for (const IntersectingPair& p : find_intersections(x, tris)) {
    const auto [ba, ta] = owner[p.a];
    const auto [bb, tb] = owner[p.b];
    if (scene.bodies[ba].obstacle && scene.bodies[bb].obstacle) continue;
    throw SceneError(fmt::format(
        "{}: {} and {}: the initial geometry intersects: triangle {} of '{}' crosses "
        "triangle {} of '{}'",
        origins[ba]->file(), origins[ba]->pointer(), origins[bb]->pointer(), ta, scene.bodies[ba].name, tb,
        scene.bodies[bb].name));
  }
}

/// The deformable bodies' vertices from the frame of the run in resume_dir, and the
/// clock at its time (io/frames/resume.hpp). Masses must match: a frame of another scene with
/// as many vertices is refused.
void World::Impl::resume(double frame_rate) {
  std::vector<std::string> names;
  std::vector<const Body*> bodies;
  for (const Body& b : scene.bodies)
    if (!b.obstacle) {
      names.push_back(b.name);
      bodies.push_back(&b);
    }
  const ResumePoint point = read_resume_point(resume_dir, names, resume_frame);
  const double t0 = point.frame / frame_rate;
  VertexState& s = scene.kernel->state();
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const Body& b = *bodies[i];
    const std::vector<FrameVertex>& frame = point.bodies[i];
    const auto refuse = [&](const std::string& what) {
      throw SceneError(fmt::format("--resume {}: frame {} of body '{}': {} (a run of another scene?)",
                                   resume_dir, point.frame, b.name, what));
    };
    if (frame.size() != b.vertex_count)
      refuse(fmt::format("{} vertices, the scene's body has {}", frame.size(), b.vertex_count));
    for (Index k = 0; k < b.vertex_count; ++k) {
      const Index a = b.first_vertex + k;
      const FrameVertex& f = frame[k];
      const auto released = releasable.find(a);
      const double scene_mass = released != releasable.end() && std::isfinite(f.mass) ? released->second : s.mass(a);
      if (std::isinf(f.mass) != std::isinf(scene_mass) ||
          (std::isfinite(f.mass) && std::abs(f.mass - scene_mass) > 1e-9 * scene_mass))
        refuse(fmt::format("vertex {} has mass {}, the scene gives {}", k, f.mass, scene_mass));
      if (!f.x.allFinite() || !f.v.allFinite())
        refuse(fmt::format("vertex {} has a position or velocity that is not finite", k));
      s.place(a, f.x, t0);
      s.velocity_ref(a) = f.v;
    }
    // A vertex copy (a phantom body's): without it the primary's velocities, which
    // hold the coupling's pull towards the copy, would pull towards the primary itself.
    if (!b.integrator || !b.integrator->has_vertex_copy()) continue;
    ResumedCopy& copy = resumed_copies.emplace_back(ResumedCopy{b.integrator, {}, {}});
    for (const FrameVertex& f : frame) {
      if (!f.has_phantom)
        refuse("no phantom state (phantom_x … phantom_vz: frames of this phantom body written "
               "before they were saved cannot be resumed)");
      copy.x.push_back(f.phantom_x);
      copy.v.push_back(f.phantom_v);
    }
  }
  scene.kernel->start_at(t0);
  scene.first_frame = point.frame;
  scene.resumed_from = resume_dir;
  scene.later_frames = point.later_frames;
}

void World::Impl::register_sources(bool contact) {
  Kernel& kernel = *scene.kernel;
  // Explicit stencils and phantom ticks begin with a half kick from the initial state,
  // with whole ones from a resumed frame (StartFrom).
  const StartFrom from = resume_dir.empty() ? StartFrom::initial_state : StartFrom::resumed_frame;
  const auto add = [&](auto& src, bool nonempty) {
    if (!nonempty) return;
    auto& ref = *src;
    const EventKind kind = kernel.add_source(std::move(src));
    if constexpr (requires { ref.start(kind, kernel, from); }) ref.start(kind, kernel, from);
    else ref.start(kind, kernel);
  };
  if (contact) contingency = &Contingency::install(kernel);
  add(sources.script, sources.script->size() > 0);
  add(sources.membrane, sources.membrane->size() > 0);
  add(sources.bending, sources.bending->size() > 0);
  add(sources.spring, sources.spring->size() > 0);
  add(sources.wind, sources.wind->size() > 0);
  add(sources.gravity, sources.gravity->size() > 0);
  // Body integrators after the shared stencils, kind by kind in the registry's order;
  // backward-Euler and Zhao solids by their coarse step, longest first. Their first
  // steps are all at t0, and events of equal time run in the order they were queued:
  // from then on a longer step's event at a common time was queued before the shorter
  // one's, so the longer step, which plans the pair planes of two solids
  // (io/world/tick_pairs.hpp), steps first and its reactions reach the shorter body
  // just before that body's own step answers them. Started in the scene's order, a
  // backward-Euler block at 5 ms stepped before the 10 ms one hitting it at t0, took the
  // first step's reactions on its face and let the face drift 5 ms into its own
  // interior before answering: 2.28 J -> 14.7 J of elastic energy at 2 m/s (the sweep's
  // pairs meet later, at 1 m/s, and never saw it).
  const auto coarse_step = [](const std::unique_ptr<BodyIntegrator>& i) {
    const auto* solid = dynamic_cast<const SolidSource*>(i.get());
    return solid ? solid->coarse_step() : 0.0;
  };
  std::stable_sort(sources.integrators.begin(), sources.integrators.end(), [&](const auto& a, const auto& b) {
    const int ra = start_rank(a->kind()), rb = start_rank(b->kind());
    return ra < rb || (ra == rb && coarse_step(a) > coarse_step(b));
  });
  for (auto& integrator : sources.integrators)
    scene.integrators.push_back(start_integrator(std::move(integrator), kernel, from, scene.kept_integrators));
  sources.integrators.clear();
}

}  // namespace clockwork
