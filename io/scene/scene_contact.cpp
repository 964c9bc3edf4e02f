#include "io/scene/scene_contact.hpp"

#include <fmt/format.h>

#include <cmath>

#include "io/mesh/obstacle_meshes.hpp"
#include "io/scene/scene_schema.hpp"

namespace clockwork {

namespace {
/// Envelope slack in units of sqrt(g ē), for both levels (measured, docs/contact.md).
constexpr double kSlackFactor = 3.0;

}  // namespace

ContactSettings read_contact_settings(const JsonField& f) {
  const SchemaObject c(f, "contact");
  ContactSettings s;
  s.thickness = c.number("thickness");
  s.stiffness = c.number("stiffness");
  s.period = c.number("period");
  s.cell_size = c.number("cell_size");
  if (auto m = c.number("friction")) s.friction = *m;
  s.slack_near = c.number("slack_near");
  s.slack_far = c.number("slack_far");
  if (auto m = c.boolean("adaptive_slack")) s.adaptive_slack = *m;
  if (auto m = c.boolean("vertex_periods")) s.vertex_periods = *m;
  if (auto m = c.number("position_slack")) s.position_slack = *m;
  if (auto m = c.number("safety")) s.safety = *m;
  if (auto m = c.integer("max_layers")) s.max_layers = static_cast<int>(*m);
  return s;
}

ContactParameters resolve_contact(const ContactSettings& s, const ContactScale& scale,
                                  const SpecOrigin& where) {
  ContactParameters p;
  if (!(scale.mean_edge > 0.0) && (!s.thickness || !s.cell_size))
    where.fail("", "thickness and cell_size must be given: no deformable body collides");
  p.eta1 = s.thickness.value_or(0.1 * scale.mean_edge);
  if (!(scale.min_mass > 0.0)) where.fail("", "contact needs at least one free colliding vertex");
  p.r1 = s.stiffness.value_or(1000.0 * scale.mean_mass * std::max(scale.gravity, 9.81) / p.eta1);
  p.h1 = s.period.value_or(s.safety * 2.0 / std::sqrt(2.0 * p.r1 / scale.min_mass));
  p.cell_size = s.cell_size.value_or(2.0 * scale.mean_edge);
  if (!(p.cell_size > p.eta1))
    where.fail("", fmt::format("cell_size ({} m) must exceed the thickness ({} m)", p.cell_size,
                           p.eta1));
  // Speeds of a gravity-driven scene scale as sqrt(g L) (docs/contact.md has the
  // measurements behind the factors).
  const double speed =
      std::sqrt(std::max(scale.gravity, 9.81) * (scale.mean_edge > 0 ? scale.mean_edge : p.cell_size));
  p.slack_near = s.slack_near.value_or(kSlackFactor * speed);
  p.slack_far = s.slack_far.value_or(kSlackFactor * speed);
  p.friction = s.friction;
  p.adaptive_slack = s.adaptive_slack;
  p.vertex_periods = s.vertex_periods;
  if (s.position_slack > 0.0) {
    const SpecField field{&where, "position_slack"};
    if (!s.adaptive_slack) field.fail("needs the adaptive slack (adaptive_slack true)");
    if (!(p.slack_far > 0.0)) field.fail("needs slack_far > 0");
    if (!(s.position_slack < ContactParameters::kMaxPositionSlack * p.eta1))
      field.fail(fmt::format("must be below thickness / 8 ({} m)",
                             ContactParameters::kMaxPositionSlack * p.eta1));
  }
  p.position_slack = s.position_slack;
  p.min_mass = scale.min_mass;
  p.max_layers = s.max_layers;
  return p;
}

std::optional<ObstacleShape> read_obstacle_shape(const JsonField& shape, SceneBudget& budget) {
  const std::string type = shape.at("type").string();
  // The generators validate their arguments too; the reader names the field first.
  const auto count = [&](const SchemaObject& s, const char* key, int def) {
    return static_cast<int>(s.integer(key).value_or(def));
  };
  if (type == "ground") {
    const SchemaObject s(shape, "obstacle.ground");
    const int n = count(s, "divisions", 8);
    budget.need_memory(shape.has("divisions") ? shape.at("divisions") : shape,
                       (n + 1.0) * (n + 1.0) * kBytesPerVertex + 2.0 * n * n * kBytesPerTriangle,
                       fmt::format("{0} × {0} divisions: {1:.0f} triangles", n, 2.0 * n * n));
    const Vec3 center = shape.at("center").vec3();
    const double half_size = s.required_number("half_size");
    return ObstacleShape{make_ground(center, half_size, n), StaticCollider::ground(center, half_size)};
  }
  if (type == "sphere") {
    const SchemaObject s(shape, "obstacle.sphere");
    const Vec3 center = shape.at("center").vec3();
    const double radius = s.required_number("radius");
    return ObstacleShape{make_sphere(center, radius, count(s, "subdivisions", 3)),
                         StaticCollider::sphere(center, radius)};
  }
  if (type == "cylinder") {
    const SchemaObject s(shape, "obstacle.cylinder");
    const JsonField axis = shape.at("axis");
    const Vec3 a = axis.vec3();
    if (a.norm() == 0.0) axis.fail("must be non-zero");
    // No exact surface (open or capped): Schroeder solids see its mesh (contact/obstacles/mesh_collider.hpp).
    return ObstacleShape{make_cylinder(shape.at("base").vec3(), a.normalized(), s.required_number("radius"),
                                       s.required_number("length"), count(s, "segments", 24),
                                       count(s, "rings", 8), s.boolean("capped").value_or(true)),
                         std::nullopt};
  }
  if (type == "capsule") {
    const SchemaObject s(shape, "obstacle.capsule");
    const Vec3 a = shape.at("a").vec3(), b = shape.at("b").vec3();
    if ((b - a).norm() == 0.0) shape.at("b").fail("must differ from a");
    const double radius = s.required_number("radius");
    return ObstacleShape{make_capsule(a, b, radius, count(s, "segments", 24), count(s, "rings", 6)),
                         StaticCollider::capsule(a, b, radius)};
  }
  return std::nullopt;
}

}  // namespace clockwork
