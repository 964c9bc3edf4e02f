#pragma once
/// Tet-solid bodies in scenes (docs/scene-format.md "Solids"): tet shapes, per-region
/// materials, pins, and the coarse-step integrators (synchronous backward Euler,
/// Zhao et al.'s multi-rate scheme).
#include <memory>
#include <string>
#include <vector>

#include "integrators/schroeder/schroeder_source.hpp"
#include "integrators/implicit/solid_source.hpp"
#include "io/scene/json_reader.hpp"
#include "io/scene/scene_limits.hpp"
#include "io/mesh/tet_mesh.hpp"
#include "io/world/specs.hpp"

namespace clockwork {

/// Whether a body's `shape` is a tet shape (type tet_bar, tet_sphere, tet_dinosaur,
/// tet_dragon, tetgen or gmsh).
bool is_tet_shape(const JsonField& shape);

/// Reads and validates a tet shape; relative file paths resolve against `base_dir`.
/// A generated shape's memory is estimated into `budget` before it is built.
TetMesh read_tet_shape(const JsonField& shape, const std::string& base_dir, SceneBudget& budget);

/// `material`: model, young, poisson, density, rayleigh, and per-region overrides.
SolidMaterial read_solid_material(const JsonField& material, const TetMesh& mesh);

/// `pins`: vertex indices, or {"box": {"min": [..], "max": [..]}} (every vertex inside,
/// at least one). Returns per-vertex flags.
std::vector<bool> read_solid_pins(const JsonField& pins, const TetMesh& mesh);

/// The body's integrator from `integrator` and its settings object (`backward_euler`
/// or `zhao`); errors name the field. The Rayleigh coefficients come from the material.
std::variant<BackwardEulerSpec, ZhaoSpec> read_solid_integrator(const JsonField& body,
                                                                 const TetMesh& mesh);

/// Whether the body's `integrator` is one of Schroeder et al.'s schemes ("schroeder",
/// "semi_implicit", "fully_implicit"), which build a SchroederSource instead.
bool is_schroeder_integrator(const JsonField& body);

/// The body's Schroeder scheme from `integrator` and its settings object (docs/
/// scene-format.md "Solids"). Errors name the file, the JSON pointer and the value.
SchroederSpec read_schroeder_solid(const JsonField& body, const TetMesh& mesh);

}  // namespace clockwork
