#pragma once
/// Tet-solid bodies in scenes (docs/scene-format.md "Solids"): tet shapes, per-region
/// materials, pins, and the coarse-step integrators (synchronous backward Euler,
/// Zhao et al.'s multi-rate scheme).
#include <memory>
#include <string>
#include <vector>

#include "integrators/schroeder_source.hpp"
#include "integrators/solid_source.hpp"
#include "io/json_reader.hpp"
#include "io/scene_limits.hpp"
#include "io/tet_mesh.hpp"

namespace clockwork {

/// Whether a body's `shape` is a tet shape (type tet_bar, tet_sphere, tet_dinosaur,
/// tet_dragon, tetgen or gmsh).
bool is_tet_shape(const JsonField& shape);

/// Reads and validates a tet shape; relative file paths resolve against `base_dir`.
/// A generated shape's memory is estimated into `budget` before it is built.
TetMesh read_tet_shape(const JsonField& shape, const std::string& base_dir, SceneBudget& budget);

struct SolidMaterial {
  FemKind kind = FemKind::Linear;
  std::vector<TetMaterial> per_tet;
  double rayleigh_alpha = 0.0, rayleigh_beta = 0.0;
};
/// `material`: model, young, poisson, density, rayleigh, and per-region overrides.
SolidMaterial read_solid_material(const JsonField& material, const TetMesh& mesh);

/// `pins`: vertex indices, or {"box": {"min": [..], "max": [..]}} (every vertex inside,
/// at least one). Returns per-vertex flags.
std::vector<bool> read_solid_pins(const JsonField& pins, const TetMesh& mesh);

/// Sets the body's integrator from `integrator` and its settings object
/// (`backward_euler` or `zhao`); errors name the field.
void read_solid_integrator(const JsonField& body, const TetMesh& mesh,
                           const SolidMaterial& material, SolidSource& source);

/// Whether the body's `integrator` is one of Schroeder et al.'s schemes ("schroeder",
/// "semi_implicit", "fully_implicit"), which build a SchroederSource instead.
bool is_schroeder_integrator(const JsonField& body);

/// The body's Schroeder source from `integrator` and its settings object (docs/
/// scene-format.md "Solids"); `vertices` are the global indices of the mesh's vertices.
/// Errors name the file, the JSON pointer and the value.
std::unique_ptr<SchroederSource> read_schroeder_solid(
    const JsonField& body, const TetMesh& mesh, const SolidMaterial& material,
    const std::string& name, std::vector<Index> vertices, std::shared_ptr<TetFemModel> model,
    std::vector<bool> fixed, const Vec3& gravity);

}  // namespace clockwork
