#include "io/scene/scene_shapes.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <numbers>

#include "io/scene/scene_schema.hpp"

namespace clockwork {

namespace {

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
  SchemaObject(shape, "shape.mesh");
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

}  // namespace

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
    SchemaObject(shape, "shape.grid");
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
    const SchemaObject s(shape, "shape.disk");
    const auto [u, v] = read_axes(shape);
    const JsonField rings = shape.at("rings");
    const int r = static_cast<int>(*s.integer("rings"));
    need(rings, 1.0 + 3.0 * r * (r + 1.0), 6.0 * r * r, 0.0);
    return make_disk(s.required_number("radius"), r, shape.at("center").vec3(), u, v);
  }
  if (kind == "hat") {
    const SchemaObject s(shape, "shape.hat");
    const auto [u, v] = read_axes(shape);
    const double crown = s.required_number("crown_radius");
    const JsonField brim = shape.at("brim_radius");
    if (!(brim.positive() > crown))
      brim.fail(fmt::format("must exceed crown_radius ({} m)", crown));
    const double height = s.required_number("crown_height");
    shape.at("segments");  // "missing required key"
    const int segments = static_cast<int>(*s.integer("segments"));
    // make_hat's rings are about one segment's arc apart along the profile.
    const double edge = 2.0 * std::numbers::pi * crown / segments;
    const double rings = 3.0 + (height + brim.positive()) / edge;
    need(shape, 1.0 + rings * segments, 2.0 * rings * segments, 0.0);
    return make_hat(shape.at("center").vec3(), u, v, crown, height, brim.positive(), segments);
  }
  if (kind == "chain") {
    const SchemaObject s(shape, "shape.chain");
    const Vec3 a = shape.at("start").vec3(), b = shape.at("end").vec3();
    if ((b - a).norm() == 0.0) shape.at("end").fail("must differ from start");
    const JsonField segments = shape.at("segments");
    const int count = static_cast<int>(*s.integer("segments"));
    need(segments, count + 1.0, 0.0, count);
    return make_chain(a, b, count);
  }
  const SchemaObject obj(shape, "shape.obj");
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
  const double scale = obj.number("scale").value_or(1.0);
  const Vec3 t = shape.has("translate") ? shape.at("translate").vec3() : Vec3::Zero();
  for (Vec3& x : m.vertices) x = scale * x + t;
  return m;
}

}  // namespace clockwork
