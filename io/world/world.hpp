#pragma once
/// The typed API for assembling and running a simulation: add shells, chains, solids
/// and obstacles with their materials and integrator settings, enable contact, then
/// step, read state or write a run folder. The JSON scene loader (io/scene/scene.hpp) is one
/// front-end that maps a file onto it; tests, benchmarks and the Python module build
/// worlds directly.
///
///   World w({.name = "drop", .end_time = 1.0, .gravity = {0, 0, -9.81}});
///   w.add_shell({.name = "cloth", .mesh = make_grid(...), .material = ShellMaterial{...}});
///   w.add_obstacle({.name = "ground", .mesh = make_ground(...)});
///   w.enable_contact({});
///   w.advance_to(0.5);
///   std::vector<Vec3> x = w.positions("cloth");
///
/// Bodies are added before the first step; the first call to scene(), advance_to() or
/// the state readers builds the contact system and starts every integrator, in the
/// order: script, explicit stencils, then the bodies' integrators by the registry's
/// start order (integrators/body_integrator.hpp: phantoms, solids (backward Euler,
/// Zhao), Schroeder solids).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/scene/scene.hpp"
#include "io/scene/scene_limits.hpp"
#include "io/world/specs.hpp"

namespace clockwork {

class World {
 public:
  explicit World(WorldSettings settings = {});
  ~World();
  World(World&&) noexcept;
  World& operator=(World&&) noexcept;

  const WorldSettings& settings() const { return settings_; }

  /// Each returns the body's index in scene().bodies. Throws SceneError naming the
  /// spec's origin and field for a value the physics cannot take (a degenerate
  /// triangle, a period far above its stability estimate, a scene beyond the limits
  /// of docs/scene-format.md "Limits"). The spec's own values are checked before the
  /// world changes; a refusal of the stencils' periods or of the event budget comes
  /// after the body's vertices were added, and leaves a world to be discarded.
  std::size_t add_shell(ShellSpec spec);
  std::size_t add_solid(SolidSpec spec);
  std::size_t add_obstacle(ObstacleSpec spec);
  /// Contact between every colliding body and obstacle (penalty layers, certificates).
  void enable_contact(ContactSpec spec = {});
  bool has_contact() const { return contact_.has_value(); }

  /// Starts from the frame `frame` (-1: the last) of an earlier run's folder instead of
  /// the bodies' initial states (io/frames/resume.hpp). Before the first step.
  void resume_from(std::string dir, int frame = -1);

  /// The assembled scene (built on first use). Its kernel runs the events.
  Scene& scene();
  /// Processes every event before time t (s); the state read then is the state at t
  /// that a frame written at t holds (a coarse step due at t has not been taken).
  void advance_to(double t);
  /// The time the state is read at: the last advance_to's (0, or a resumed frame's).
  double time();
  /// A body's vertex positions and velocities now (local order of its mesh).
  std::vector<Vec3> positions(const std::string& body);
  std::vector<Vec3> velocities(const std::string& body);
  /// Kinetic + every potential energy of the whole world (the diagnostics' total), J.
  double total_energy();
  /// Moves the scene out (for run_scene and the JSON loader's callers).
  Scene release();

  /// The scene's estimated memory and event rate (the front-end adds the estimates of
  /// the shapes it generates before it generates them).
  SceneBudget& budget();

  /// The assembly state, private to io/world/ (world_impl.hpp).
  struct Impl;

 private:
  void build();
  const Body& body(const std::string& name);

  WorldSettings settings_;
  std::optional<ContactSpec> contact_;
  double time_ = 0.0;
  std::unique_ptr<Impl> impl_;
};

/// The checks of a shell's mesh and material that do not need the World (an overflowing
/// wave speed, degenerate triangles, vertices on no triangle), for front-ends that
/// report them before the fields read after the shape.
void check_shell_geometry(const ShellSpec& spec, const SpecOrigin& origin);

}  // namespace clockwork
