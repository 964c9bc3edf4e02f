#include "io/scene/scene_solid.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <optional>
#include <filesystem>
#include <numbers>
#include <stdexcept>

#include "io/scene_error.hpp"
#include "io/scene/scene_schema.hpp"

namespace clockwork {

namespace {

/// Runs `read`, turning an error of a reader, generator or validator into a
/// SceneError at `field`.
template <typename F>
auto at_field(const JsonField& field, F&& read) {
  try {
    return read();
  } catch (const SceneError& e) {
    field.fail(e.what());
  } catch (const std::invalid_argument& e) {
    field.fail(e.what());
  }
}

/// Vertices inside {"min": [..], "max": [..]}; at least one.
std::vector<Index> vertices_in_box(const JsonField& box, const TetMesh& mesh) {
  SchemaObject(box, "box");
  const Vec3 lo = box.at("min").vec3(), hi = box.at("max").vec3();
  if (!(lo.array() <= hi.array()).all()) box.fail("min must not exceed max");
  std::vector<Index> out;
  for (Index a = 0; a < mesh.vertices.size(); ++a)
    if ((mesh.vertices[a].array() >= lo.array()).all() &&
        (mesh.vertices[a].array() <= hi.array()).all())
      out.push_back(a);
  if (out.empty()) box.fail("contains no vertex of the mesh");
  return out;
}

std::vector<Index> vertex_list(const JsonField& list, const TetMesh& mesh) {
  if (list.array_size() == 0) list.fail("needs at least one vertex");
  std::vector<Index> out;
  const long long last = static_cast<long long>(mesh.vertices.size()) - 1;
  for (std::size_t i = 0; i < list.array_size(); ++i)
    out.push_back(static_cast<Index>(list[i].integer_in(0, last)));
  return out;
}

}  // namespace

bool is_tet_shape(const JsonField& shape) {
  const auto type = shape.find("type");
  if (!type || !type->raw().is_string()) return false;
  const std::string t = type->raw().get<std::string>();
  return t == "tet_bar" || t == "tet_sphere" || t == "tet_dinosaur" || t == "tet_dragon" ||
         t == "tetgen" || t == "gmsh";
}

TetMesh read_tet_shape(const JsonField& shape, const std::string& base_dir, SceneBudget& budget) {
  const std::string type = shape.at("type").choice(
      {"tet_bar", "tet_sphere", "tet_dinosaur", "tet_dragon", "tetgen", "gmsh"});
  TetMesh mesh;
  // Generators throw std::invalid_argument for arguments they cannot mesh.
  const auto generate = [&](auto&& make) { return at_field(shape, make); };
  if (type == "tet_bar") {
    const SchemaObject s(shape, "tet.tet_bar");
    const JsonField cells = shape.at("cells");
    if (cells.array_size() != 3) cells.fail("expected [nx, ny, nz]");
    const Vec3 origin = shape.at("origin").vec3();
    const std::array<int, 3> n{static_cast<int>(cells[0].integer_in(1, 1024)),
                               static_cast<int>(cells[1].integer_in(1, 1024)),
                               static_cast<int>(cells[2].integer_in(1, 1024))};
    const double cell = s.required_number("cell");
    const double voxels = double(n[0]) * n[1] * n[2];
    budget.need_memory(cells,
                       (n[0] + 1.0) * (n[1] + 1.0) * (n[2] + 1.0) * kBytesPerVertex +
                           voxels * (6 * kBytesPerTet + kBytesPerVoxel),
                       fmt::format("{} × {} × {} cells: {:.0f} tets", n[0], n[1], n[2], 6 * voxels));
    mesh = generate([&] { return make_tet_bar(origin, n[0], n[1], n[2], cell); });
  } else if (type == "tet_sphere") {
    const SchemaObject s(shape, "tet.tet_sphere");
    const Vec3 center = shape.at("center").vec3();
    const double radius = s.required_number("radius");
    const JsonField per_diameter = shape.at("cells_per_diameter");
    const int cells = static_cast<int>(*s.integer("cells_per_diameter"));
    // The voxels inside the ball, π/6 of its bounding cube, each 6 tets.
    const double inside = std::numbers::pi / 6.0 * cells * cells * cells;
    budget.need_memory(per_diameter,
                       inside * (kBytesPerVertex + 6 * kBytesPerTet) +
                           std::pow(cells + 2.0, 3) * kBytesPerVoxel,
                       fmt::format("{} cells per diameter: about {:.0f} tets", cells, 6 * inside));
    mesh = generate([&] { return make_tet_sphere(center, radius, cells); });
  } else if (type == "tet_dinosaur" || type == "tet_dragon") {
    const SchemaObject s(shape, "tet.voxel");
    const double scale = s.number("scale").value_or(1.0);
    const Vec3 origin = shape.at("origin").vec3();
    const double cell = s.required_number("cell");
    mesh = generate([&] {
      return type == "tet_dragon" ? make_tet_dragon(origin, scale, cell)
                                  : make_tet_dinosaur(origin, scale, cell);
    });
  } else {
    const SchemaObject s(shape, "tet.file");
    const JsonField file = shape.at("file");
    std::filesystem::path p(file.string());
    if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
    mesh = at_field(file, [&] { return type == "tetgen" ? read_tetgen(p.string()) : read_gmsh(p.string()); });
    const double scale = s.number("scale").value_or(1.0);
    const Vec3 t = shape.has("translate") ? shape.at("translate").vec3() : Vec3::Zero();
    for (Vec3& x : mesh.vertices) x = scale * x + t;
  }
  if (type != "tet_bar" && type != "tet_sphere")  // counted before they were built
    budget.need_memory(shape,
                       double(mesh.vertices.size()) * kBytesPerVertex +
                           double(mesh.tets.size()) * kBytesPerTet,
                       fmt::format("{} vertices, {} tets", mesh.vertices.size(), mesh.tets.size()));
  at_field(shape, [&] {
    validate_tet_mesh(mesh, type);
    return 0;
  });
  return mesh;
}

SolidMaterial read_solid_material(const JsonField& material, const TetMesh& mesh) {
  const SchemaObject solid(material, "solid_material");
  SolidMaterial out;
  out.kind = solid.required_choice("model") == "linear" ? FemKind::Linear : FemKind::Corotational;
  // Derived quantities that must be finite and positive: the P-wave modulus λ + 2μ,
  // the time a wave takes across the mesh, D sqrt(ρ / (λ + 2μ)) (D the mesh's
  // bounding-box diagonal), and a bound on the assembled stiffness, (λ + 2μ) D times
  // the tet count. Past them (young 1e308) the energies came out -nan.
  Vec3 lo = Vec3::Constant(kNever), hi = Vec3::Constant(-kNever);
  for (const Vec3& x : mesh.vertices) {
    lo = lo.cwiseMin(x);
    hi = hi.cwiseMax(x);
  }
  const double size = mesh.vertices.empty() ? 0.0 : (hi - lo).norm();
  const auto finite = [&](const JsonField& f, const TetMaterial& m) {
    const double modulus = m.young / (1.0 + m.poisson) * (1.0 + m.poisson / (1.0 - 2.0 * m.poisson));
    const double crossing = size * std::sqrt(m.density / modulus);
    const double stiffness = modulus * size * double(mesh.tets.size());
    if (!std::isfinite(modulus) || !(crossing > 0.0) || !std::isfinite(stiffness))
      f.fail(fmt::format("young {} Pa (poisson {}, density {} kg/m³) overflows: P-wave modulus {} "
                         "Pa, wave crossing time {} s, assembled stiffness up to {} N/m must be "
                         "finite and positive",
                         m.young, m.poisson, m.density, modulus, crossing, stiffness));
  };
  TetMaterial base{solid.required_number("young"), solid.required_number("poisson"),
                   solid.required_number("density")};
  finite(material.at("young"), base);
  std::vector<TetMaterial> per_region(mesh.region_names.size(), base);
  if (auto r = material.find("regions")) {
    if (!r->raw().is_object()) r->fail("expected an object {region name: {young, poisson, density}}");
    for (const auto& [name, value] : r->raw().items()) {
      const JsonField f = r->at(name);
      const int region = at_field(f, [&] { return find_region(mesh, name, "the mesh"); });
      const SchemaObject override_of(f, "region_material");
      TetMaterial& m = per_region[region];
      if (auto y = override_of.number("young")) m.young = *y;
      if (auto p = override_of.number("poisson")) m.poisson = *p;
      if (auto d = override_of.number("density")) m.density = *d;
      finite(f, m);
    }
  }
  out.per_tet.resize(mesh.tets.size());
  for (std::size_t t = 0; t < mesh.tets.size(); ++t) out.per_tet[t] = per_region[mesh.tet_region[t]];
  if (auto d = material.find("rayleigh")) {
    const SchemaObject rayleigh(*d, "rayleigh");
    if (auto a = rayleigh.number("alpha")) out.rayleigh_alpha = *a;
    if (auto b = rayleigh.number("beta")) out.rayleigh_beta = *b;
  }
  return out;
}

std::vector<bool> read_solid_pins(const JsonField& pins, const TetMesh& mesh) {
  std::vector<bool> fixed(mesh.vertices.size(), false);
  std::vector<Index> list;
  if (pins.raw().is_object()) {
    SchemaObject(pins, "solid_pins");
    list = vertices_in_box(pins.at("box"), mesh);
  } else {
    list = vertex_list(pins, mesh);
  }
  for (Index a : list) fixed[a] = true;
  return fixed;
}

std::variant<BackwardEulerSpec, ZhaoSpec> read_solid_integrator(const JsonField& body,
                                                                 const TetMesh& mesh) {
  const std::string integrator = body.at("integrator").choice(
      {"backward_euler", "zhao", "schroeder", "semi_implicit", "fully_implicit"});
  for (const char* other : {"backward_euler", "zhao", "schroeder", "semi_implicit", "fully_implicit"})
    if (other != integrator && body.has(other))
      body.at(other).fail(fmt::format("needs \"integrator\": \"{}\"", other));
  if (integrator == "backward_euler") {
    const SchemaObject f(body.at(integrator), integrator);
    BackwardEulerSettings s;
    if (auto m = f.integer("max_newton")) s.max_newton = static_cast<int>(*m);
    if (auto t = f.number("tolerance")) s.tolerance = *t;
    if (auto t = f.number("cg_tolerance")) s.cg_tolerance = *t;
    if (auto l = f.choice("linear_solver")) {
      const std::string& k = *l;
      s.linear = k == "cholesky" ? LinearSolverKind::Cholesky
                 : k == "cg"     ? LinearSolverKind::CG
                 : k == "pcg_jacobi" ? LinearSolverKind::PcgJacobi
                                     : LinearSolverKind::PcgIncompleteCholesky;
    }
    if (auto d = f.choice("definiteness")) {
      const std::string& k = *d;
      s.fix = k == "clamp" ? DefinitenessFix::LocalClamp
              : k == "regularize" ? DefinitenessFix::GlobalRegularization
                                  : DefinitenessFix::None;
    }
    if (auto d = f.choice("damping"))
      s.damping = *d == "tangent" ? RayleighDamping::TangentAtEnd : RayleighDamping::ProjectedAtStart;
    return BackwardEulerSpec{f.required_number("h"), s};
  }
  const SchemaObject f(body.at(integrator), "zhao");
  MultirateSettings s;
  s.h_L = f.required_number("h_L");
  if (auto sym = f.boolean("symmetric")) s.symmetric_schur = *sym;
  if (auto k = f.choice("symmetric_solver")) s.block_cholesky = *k == "block_cholesky";
  if (auto c = f.choice("coupling"))
    s.coupling = *c == "paper" ? MultirateCoupling::Paper : MultirateCoupling::Conservative;
  if (auto d = f.choice("damping"))
    s.damping = *d == "tangent" ? MultirateDamping::Tangent : MultirateDamping::Projected;
  const JsonField list = f.at("regions");
  if (list.array_size() == 0) list.fail("needs at least one small-step region");
  std::vector<MultirateRegion> regions;
  for (std::size_t i = 0; i < list.array_size(); ++i) {
    const JsonField r = list[i];
    SchemaObject(r, "zhao.region");
    MultirateRegion reg;
    const JsonField m = r.at("m");
    if (!m.raw().is_number_integer() || m.raw().get<long long>() < 1)
      m.fail("m (h_L / h_S) must be a positive integer");
    reg.m = static_cast<int>(m.integer_in(1, 1000000));
    const int given = int(r.has("regions")) + int(r.has("vertices")) + int(r.has("box"));
    if (given != 1) r.fail("give exactly one of \"regions\" (mesh region names), \"vertices\" or \"box\"");
    if (auto names = r.find("regions")) {
      if (names->array_size() == 0) names->fail("needs at least one region name");
      std::vector<int> ids;
      for (std::size_t k = 0; k < names->array_size(); ++k) {
        const JsonField nk = (*names)[k];
        const std::string name = nk.string();
        ids.push_back(at_field(nk, [&] { return find_region(mesh, name, "the mesh"); }));
      }
      reg.vertices = region_vertices(mesh, ids);
    } else if (auto v = r.find("vertices")) {
      reg.vertices = vertex_list(*v, mesh);
    } else {
      reg.vertices = vertices_in_box(r.at("box"), mesh);
    }
    reg.name = r.has("name") ? r.at("name").string() : fmt::format("S{}", i + 1);
    regions.push_back(std::move(reg));
  }
  return ZhaoSpec{s, std::move(regions)};
}

bool is_schroeder_integrator(const JsonField& body) {
  const auto f = body.find("integrator");
  if (!f || !f->raw().is_string()) return false;
  const std::string k = f->raw().get<std::string>();
  return k == "schroeder" || k == "semi_implicit" || k == "fully_implicit";
}

namespace {

/// One §6 static body: {"plane" | "sphere" | "capsule" | "box": {...}, "friction"?}.
StaticCollider read_static_collider(const JsonField& c) {
  const SchemaObject collider(c, "collision");
  int shapes = 0;
  for (const char* key : {"plane", "sphere", "capsule", "box"}) shapes += c.has(key) ? 1 : 0;
  if (shapes != 1) c.fail("needs exactly one of \"plane\", \"sphere\", \"capsule\", \"box\"");
  const double mu = collider.number("friction").value_or(0.0);
  if (auto plane = c.find("plane")) {
    SchemaObject(*plane, "collision.plane");
    const Vec3 n = plane->at("normal").vec3();
    if (!(n.norm() > 0.0)) plane->at("normal").fail("must be non-zero");
    return StaticCollider::plane(plane->at("point").vec3(), n.normalized(), mu);
  }
  if (auto sphere = c.find("sphere")) {
    const SchemaObject s(*sphere, "collision.sphere");
    return StaticCollider::sphere(sphere->at("center").vec3(), s.required_number("radius"), mu);
  }
  if (auto capsule = c.find("capsule")) {
    const SchemaObject s(*capsule, "collision.capsule");
    const Vec3 a = capsule->at("a").vec3(), b = capsule->at("b").vec3();
    if (!((b - a).norm() > 0.0)) capsule->at("b").fail("must differ from \"a\"");
    return StaticCollider::capsule(a, b, s.required_number("radius"), mu);
  }
  const JsonField box = c.at("box");
  SchemaObject(box, "collision.box");
  const Vec3 lo = box.at("min").vec3(), hi = box.at("max").vec3();
  if (!(lo.array() < hi.array()).all()) box.at("max").fail("must exceed \"min\" in every coordinate");
  return StaticCollider::box(lo, hi, mu);
}

}  // namespace

SchroederSpec read_schroeder_solid(const JsonField& body, const TetMesh& mesh) {
  const std::string integrator = body.at("integrator").string();
  for (const char* other : {"backward_euler", "zhao", "schroeder", "semi_implicit", "fully_implicit"})
    if (other != integrator && body.has(other))
      body.at(other).fail(fmt::format("needs \"integrator\": \"{}\"", other));
  const SchemaObject f(body.at(integrator), integrator);
  SchroederSettings s;
  std::optional<JsonField> substep;
  if (integrator == "fully_implicit") {
    s.scheme = SchroederScheme::FullyImplicit;
    s.frame_dt = f.required_number("frame_dt");
  } else {
    if (integrator == "schroeder") {
      s.frame_dt = f.required_number("frame_dt");
      if (auto e = f.number("epsilon")) s.epsilon = *e;
    } else {
      s.scheme = SchroederScheme::SemiImplicit;
      if (auto fr = f.number("frame_dt")) s.frame_dt = *fr;
    }
    substep = f.find("substep");
    if (auto h = f.number("substep")) s.substep = *h;  // "auto": the stability estimate
    if (auto sf = f.number("safety")) s.safety = *sf;
  }
  if (s.scheme == SchroederScheme::Asynchronous && s.substep > 0.0) {
    const double ratio = s.frame_dt / s.substep;
    if (ratio < 1.0 - 1e-9 || std::abs(ratio - std::round(ratio)) > 1e-9 * ratio)
      substep->fail(fmt::format("frame_dt {} s is not a multiple of the substep", s.frame_dt));
  }
  if (auto t = f.number("cg_tolerance")) s.cg_tolerance = *t;
  if (auto m = f.integer("cg_max_iterations")) s.cg_max_iterations = static_cast<int>(*m);
  if (auto list = f.find("collisions")) {
    for (std::size_t i = 0; i < list->array_size(); ++i)
      s.colliders.push_back(read_static_collider((*list)[i]));
  }
  if (auto k = f.boolean("constrain_collisions")) s.constrain_collisions = *k;
  // Semi-implicit tets: automatic (those touching the boundary surface, §7) or the
  // tets of the named mesh regions.
  std::vector<bool> semi;
  const auto partition = f.find("partition");
  if (!partition || (partition->raw().is_string() && partition->choice({"auto"}) == "auto")) {
    // Empty: the World takes the tets touching the boundary surface.
  } else {
    SchemaObject(*partition, "partition");
    const JsonField names = partition->at("semi_implicit_regions");
    if (names.array_size() == 0) names.fail("needs at least one region name");
    std::vector<bool> chosen(mesh.region_names.size(), false);
    for (std::size_t k = 0; k < names.array_size(); ++k) {
      const JsonField nk = names[k];
      const std::string region = nk.string();
      chosen[at_field(nk, [&] { return find_region(mesh, region, "the mesh"); })] = true;
    }
    semi.resize(mesh.tets.size());
    for (std::size_t t = 0; t < mesh.tets.size(); ++t) semi[t] = chosen[mesh.tet_region[t]];
  }
  return SchroederSpec{s, std::move(semi)};
}

}  // namespace clockwork
