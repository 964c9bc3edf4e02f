#pragma once
/// What a World is assembled from (io/world/world.hpp): typed descriptions of the
/// shells, chains, solids and obstacles of a simulation, with their materials and
/// integrator settings. Every field has the meaning and unit of the scene-format key of
/// the same name (docs/scene-format.md); the JSON front-end (io/scene/scene.cpp) fills these
/// from a file, a C++ or Python client fills them directly.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "contact/contact_parameters.hpp"
#include "engine/kinematic_script.hpp"
#include "integrators/phantom/implicit_tick.hpp"
#include "integrators/zhao/multirate_solver.hpp"
#include "integrators/phantom/phantom_source.hpp"
#include "integrators/schroeder/schroeder_source.hpp"
#include "integrators/implicit/solid_source.hpp"
#include "io/mesh/mesh.hpp"
#include "io/scene/scene_contact.hpp"
#include "io/mesh/tet_mesh.hpp"
#include "io/world/spec_origin.hpp"

namespace clockwork {

/// A period chosen by the stability estimate (`"auto"` in scene files).
inline constexpr double kAutoPeriod = -1.0;

/// The whole simulation's settings (the scene's top-level keys).
struct WorldSettings {
  std::string name = "world";  ///< names the default output folder out/<name>
  std::string description;
  double end_time = 1.0;       ///< s
  double frame_rate = 30.0;    ///< frames per simulated second
  bool write_obj = true, write_ply = true;
  Vec3 gravity = Vec3::Zero();  ///< m/s²
  Vec3 wind_velocity = Vec3::Zero();  ///< m/s
  double wind_drag = 0.0;             ///< kg/(m² s); 0: no wind
  std::uint64_t seed = 0;             ///< of random initial velocities
};

/// Initial velocities: v_a = linear + angular × (x_a − mass centre), plus Gaussian noise
/// of deviation `random` (seeded by the world's seed and the body's index), then the
/// per-vertex overrides.
struct VelocitySpec {
  Vec3 linear = Vec3::Zero();
  Vec3 angular = Vec3::Zero();
  double random = 0.0;
  std::vector<std::pair<Index, Vec3>> vertices;
  bool given = false;  ///< the scene wrote a `velocity` object (its checks name it)
};

/// Keyframed motion of a body's pins or of an obstacle (docs/scene-format.md
/// "pin_motion"). `moved`: local vertices the script moves (empty: all the pins);
/// `release` (s, shells and chains only): the moved pins then become free.
struct MotionSpec {
  std::vector<Index> moved;
  std::vector<Keyframe> keyframes;
  double release = kNever;
};

/// The AVI periods of a shell's or chain's stencils, s (kAutoPeriod: estimated).
struct PeriodSpec {
  double membrane = kAutoPeriod, bending = kAutoPeriod, spring = kAutoPeriod,
         gravity = kAutoPeriod, wind = kAutoPeriod;
  double safety = 0.5;  ///< of the estimates (docs/scene-format.md; 1.0 is marginal)
};

/// Contact seen inside an implicit solve (a phantom's ticks, a solid's steps): on/off
/// and its settings (TickContactSettings: clearance 0 takes the default).
struct SolveContactSpec {
  bool on = false;
  TickContactSettings settings;
};

/// The phantom mesh's implicit ticks (docs/phantom.md).
struct PhantomSpec {
  double h_imp = 0.0;  ///< s
  ImplicitSolverSettings solver;
  TickHalving halving;
  bool contact_on_whole = false;  ///< `contact_mass: whole`
  SolveContactSpec obstacles, deformables;
};

/// Membrane (St.Venant–Kirchhoff, plane stress) and hinge bending of a triangle mesh.
struct ShellMaterial {
  double area_density = 0.0;  ///< kg/m²
  double young = 0.0;         ///< N/m (membrane stiffness per unit width)
  double poisson = 0.0;       ///< [0, 0.5)
  double bending = 0.0;       ///< N m
};

/// Springs of a chain (FPU: k (l − l0)²/2 + quartic (l − l0)⁴/4), cycled over the
/// springs when shorter than their count.
struct ChainMaterial {
  double node_mass = 0.0;  ///< kg
  std::vector<double> stiffness;
  std::vector<double> quartic{0.0};
  std::optional<double> rest_length;  ///< m; absent: the initial lengths
};

/// A triangle-mesh shell (cloth, hat, card) or a spring chain (mesh.edges, no triangles)
/// integrated by explicit AVI stencils or, for shells, the phantom mesh.
struct ShellSpec {
  std::string name;
  TriangleMesh mesh;
  std::variant<ShellMaterial, ChainMaterial> material;
  std::vector<Index> pins;  ///< local vertices held (infinite mass)
  std::optional<MotionSpec> pin_motion;
  VelocitySpec velocity;
  PeriodSpec periods;
  bool allow_unstable_periods = false;
  std::optional<PhantomSpec> phantom;  ///< absent: explicit AVI
  bool collide = true;                 ///< in the contact system, if the world has one
  /// Set by a front-end that has checked the spec's values (the scene reader, whose
  /// messages then name the file and JSON pointer); null: the World checks them and
  /// names "World: add_shell '<name>'".
  std::shared_ptr<const SpecOrigin> origin;
};

/// Zhao et al.'s multi-rate step: the large step and its small-step regions.
struct ZhaoSpec {
  MultirateSettings settings;  ///< h_L and the solver's options
  std::vector<MultirateRegion> regions;
};

/// Synchronous backward Euler at step h.
struct BackwardEulerSpec {
  double h = 0.0;  ///< s
  BackwardEulerSettings settings;
};

/// Schroeder et al.'s schemes; `semi_implicit_tets` (per tet) empty: the tets touching
/// the boundary surface (§7).
struct SchroederSpec {
  SchroederSettings settings;
  std::vector<bool> semi_implicit_tets;
};

/// A tet solid's elements: the model and per-tet constants, and Rayleigh damping.
struct SolidMaterial {
  FemKind kind = FemKind::Linear;
  std::vector<TetMaterial> per_tet;
  double rayleigh_alpha = 0.0, rayleigh_beta = 0.0;
};

/// A tet solid (docs/fem.md; its integrators: docs/solids.md).
struct SolidSpec {
  std::string name;
  TetMesh mesh;
  SolidMaterial material;  ///< per tet, with the Rayleigh coefficients
  std::vector<bool> fixed;  ///< per vertex (empty: none)
  std::optional<MotionSpec> pin_motion;
  VelocitySpec velocity;
  std::variant<BackwardEulerSpec, ZhaoSpec, SchroederSpec> integrator;
  bool collide = true;
  bool self_contact = false;  ///< its own surface triangles may collide with each other
  /// Contact inside the backward-Euler or Zhao solve (docs/backward-euler.md "Contact inside
  /// the step"); absent: on for a colliding solid in a world with contact.
  std::optional<SolveContactSpec> obstacles, deformables;
  std::shared_ptr<const SpecOrigin> origin;
};

/// A kinematic triangle mesh (infinite mass), static or keyframed.
struct ObstacleSpec {
  std::string name;
  TriangleMesh mesh;
  std::optional<MotionSpec> motion;  ///< moves every vertex
  /// The exact surface the mesh approximates, where it has one (ground, sphere,
  /// capsule): a static obstacle with one is a §6 collider of the Schroeder solids' solves
  /// (docs/schroeder.md "Obstacles in the solve").
  std::optional<StaticCollider> surface;
  std::shared_ptr<const SpecOrigin> origin;
};

/// The penalty layers and certificates over every colliding body (docs/contact.md).
struct ContactSpec {
  ContactSettings settings;
  std::shared_ptr<const SpecOrigin> origin;
};

}  // namespace clockwork
