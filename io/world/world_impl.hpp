#pragma once
/// The World's private state, shared by its translation units (world.cpp: bodies and
/// start; world_shell.cpp: explicit stencils and their periods; world_contact.cpp:
/// contact, resume).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "contact/certificates/contingency.hpp"
#include "engine/kinematic_script.hpp"
#include "integrators/avi/explicit_shell.hpp"
#include "integrators/avi/force_source.hpp"
#include "integrators/energy/gravity_energy.hpp"
#include "integrators/energy/hinge_energy.hpp"
#include "integrators/energy/membrane_energy.hpp"
#include "integrators/energy/spring_energy.hpp"
#include "integrators/energy/wind_force.hpp"
#include "io/world/world.hpp"

namespace clockwork {

/// The typed force sources of a world, filled body by body, registered at the start.
struct WorldSources {
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
  /// Every deformable body's integrator, in the order added; started (and moved to the
  /// scene and the kernel) in the registry's order (integrators/body_integrator.hpp).
  std::vector<std::unique_ptr<BodyIntegrator>> integrators;
  std::unique_ptr<KinematicScriptSource> script = std::make_unique<KinematicScriptSource>();
};

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

/// A solid's solve contact, resolved when the world starts (its default depends on
/// whether the world has contact).
struct SolidContactRequest {
  SolidSource* solid;
  std::size_t body;
  bool collide;
  std::optional<SolveContactSpec> obstacles, deformables;
};

struct World::Impl {
  Scene scene;
  WorldSources sources;
  SceneBudget budget;  ///< memory and events per simulated second, estimated up front
  bool built = false;
  std::string resume_dir;  ///< empty: start from the bodies' initial states
  int resume_frame = -1;
  /// Each body's and obstacle's origin, in scene.bodies order (messages).
  std::vector<std::shared_ptr<const SpecOrigin>> origins;
  /// Vertex copies (a phantom's positions, velocities) read from the resumed frame.
  struct ResumedCopy {
    BodyIntegrator* integrator;
    std::vector<Vec3> x, v;
  };
  std::vector<ResumedCopy> resumed_copies;
  std::vector<TickContact> tick_obstacles, tick_pairs;
  std::vector<SolidContactRequest> solid_contacts;
  std::map<std::size_t, PhantomSource*> phantom_of_body;
  /// Obstacles (body index) and their exact surfaces, if any, and whether they move.
  struct ObstacleSurface {
    std::size_t body = 0;
    std::optional<StaticCollider> surface;
    bool moves = false;
  };
  std::vector<ObstacleSurface> obstacle_surfaces;
  /// Colliding Schroeder solids that name no §6 colliders of their own: the static
  /// obstacles' surfaces, or their meshes, become theirs (build_contact).
  std::vector<std::pair<std::size_t, SchroederSource*>> schroeder_seeing_obstacles;
  /// Pins a script releases: global vertex -> its mass after the release.
  std::map<Index, double> releasable;
  /// The current body's explicit stencils by source name: events per simulated
  /// second, count, shortest period.
  struct KindRate {
    double rate = 0.0, shortest = kNever;
    std::size_t count = 0;
  };
  std::map<std::string, KindRate> body_rates;

  TermSummary& summary(const std::string& kind);
  /// The spec's origin, or a CodeOrigin naming the World call.
  static std::shared_ptr<const SpecOrigin> origin_of(const std::shared_ptr<const SpecOrigin>& given,
                                                     const char* call, const std::string& name);
  /// An add_*'s origin (the spec's, or one naming the call) after the checks every
  /// add_* makes: before the start, a file-name-safe unique name.
  std::shared_ptr<const SpecOrigin> begin_add(const std::shared_ptr<const SpecOrigin>& given, const char* call,
                                              const std::string& name);
  /// Appends the body, its origin and its integrator (none for an obstacle); returns
  /// its index.
  std::size_t finish_add(Body body, std::shared_ptr<const SpecOrigin> origin,
                         std::unique_ptr<BodyIntegrator> integrator = nullptr);
  /// Body name checks (file-name safe, unique) shared by every add_*.
  void check_name(const SpecOrigin& origin, const std::string& name) const;
  /// The initial velocities of `velocity` over positions x with masses `mass`, after
  /// the health limits' checks of both (check_initial_state).
  std::vector<Vec3> velocities(const SpecOrigin& origin, const VelocitySpec& velocity, const std::vector<Vec3>& x,
                               const std::vector<double>& mass, std::size_t body_index,
                               std::uint64_t seed) const;
  /// A keyframed script for `pins` (local), `first` the body's first global vertex;
  /// returns the released pins (with `release_mass` per local vertex).
  std::vector<Index> add_motion(const SpecOrigin& origin, const char* field, const MotionSpec& m,
                                const std::vector<Index>& pins, const std::vector<Vec3>& x,
                                Index first, const std::vector<double>* release_mass);

  // world_contact.cpp
  void build_contact(const ContactSpec& spec, const WorldSettings& settings);
  void resume(double frame_rate);
  std::string pointer_of_vertex(Index a) const;
  void check_initial_overlap() const;
  /// Starts every source; with `contact`, first installs the contingency on the
  /// kernel (its envelopes start from the initial velocities, before the half kicks).
  void register_sources(bool contact);
  Contingency* contingency = nullptr;  ///< installed by register_sources(true)
};

}  // namespace clockwork
