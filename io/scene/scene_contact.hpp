#pragma once
/// The scene's `contact` object and `obstacles` list (docs/scene-format.md, DESIGN §2).
#include <optional>
#include <string>
#include <vector>

#include "contact/contact_parameters.hpp"
#include "contact/obstacles/static_collider.hpp"
#include "io/scene/json_reader.hpp"
#include "io/mesh/mesh.hpp"
#include "io/scene/scene_limits.hpp"

namespace clockwork {

/// What the scene asks for; unset values take the defaults of resolve_contact.
struct ContactSettings {
  std::optional<double> thickness, stiffness, period, cell_size;
  double friction = 0.0;
  std::optional<double> slack_near, slack_far;  ///< m/s; "auto" or absent: derived
  bool adaptive_slack = true;  ///< per-vertex slacks (Contingency::set_adaptive_slack)
  bool vertex_periods = false;  ///< per-vertex layer periods (ContactParameters)
  double position_slack = 0.0;  ///< m; position envelopes (ContactParameters)
  double safety = 0.1;  // docs/contact.md: energy error per contact ~ (h ω)²
  int max_layers = 4096;
};

ContactSettings read_contact_settings(const JsonField& f);

/// What the defaults are derived from: the deformable collision primitives.
struct ContactScale {
  double mean_edge = 0.0;       ///< m, over deformable collision triangles and chain springs
  double mean_mass = 0.0;       ///< kg, over free collision vertices
  double min_mass = 0.0;        ///< kg, over free collision vertices
  double gravity = 0.0;         ///< |g|, m/s²
};

/// Defaults (docs/scene-format.md): η1 = 0.1 ē, r1 = 1000 m̄ max(|g|, 9.81) / η1 (a
/// mean vertex resting on layer 1 compresses it by η1 / 1000), h1 = safety · 2 / ω
/// with ω² = 2 r1 / m_min (the largest eigenvalue of a layer's stiffness over a
/// pair, Σ w_i² / m_i <= 2 / m_min), cell size 2 ē. `where` names the contact object
/// in errors about inconsistent values.
ContactParameters resolve_contact(const ContactSettings& s, const ContactScale& scale,
                                  const SpecOrigin& where);

/// An obstacle shape as read: its triangles for the penalty layers and, where the shape
/// has one, its exact surface — ground (a box below its square, as deep as it is wide),
/// sphere, capsule — for Schroeder solids' §6 collisions. One reading feeds both paths.
struct ObstacleShape {
  TriangleMesh mesh;
  std::optional<StaticCollider> surface;
};

/// Obstacle shapes: ground, sphere, cylinder, capsule (plus the body shapes, read by
/// the caller). Returns std::nullopt for a type this function does not know.
/// A ground's memory is estimated into `budget` before it is built.
std::optional<ObstacleShape> read_obstacle_shape(const JsonField& shape, SceneBudget& budget);

}  // namespace clockwork
