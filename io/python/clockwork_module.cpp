/// The `clockwork` Python module: a second client of the World API (io/world/world.hpp).
/// It builds shells, tet solids and obstacles from NumPy arrays, runs them and returns
/// positions and velocities as NumPy arrays (docs/api.md).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "io/mesh/mesh.hpp"
#include "io/mesh/obstacle_meshes.hpp"
#include "io/run/run.hpp"
#include "io/mesh/tet_mesh.hpp"
#include "io/world/world.hpp"

namespace py = pybind11;
using namespace clockwork;

namespace {

using Points = py::array_t<double, py::array::c_style | py::array::forcecast>;
using Indices = py::array_t<long long, py::array::c_style | py::array::forcecast>;

std::vector<Vec3> points_in(const Points& a, const char* what) {
  if (a.ndim() != 2 || a.shape(1) != 3)
    throw py::value_error(std::string(what) + ": expected an array of shape (n, 3)");
  std::vector<Vec3> out(static_cast<std::size_t>(a.shape(0)));
  auto r = a.unchecked<2>();
  for (py::ssize_t i = 0; i < a.shape(0); ++i) out[i] = Vec3(r(i, 0), r(i, 1), r(i, 2));
  return out;
}

template <std::size_t N>
std::vector<std::array<Index, N>> indices_in(const Indices& a, std::size_t vertices, const char* what) {
  if (a.ndim() != 2 || a.shape(1) != static_cast<py::ssize_t>(N))
    throw py::value_error(std::string(what) + ": expected an integer array of shape (m, " + std::to_string(N) + ")");
  std::vector<std::array<Index, N>> out(static_cast<std::size_t>(a.shape(0)));
  auto r = a.unchecked<2>();
  for (py::ssize_t i = 0; i < a.shape(0); ++i)
    for (std::size_t k = 0; k < N; ++k) {
      const long long v = r(i, k);
      if (v < 0 || static_cast<std::size_t>(v) >= vertices)
        throw py::value_error(std::string(what) + ": row " + std::to_string(i) + " holds vertex " +
                              std::to_string(v) + ", out of range (0.." + std::to_string(vertices) + ")");
      out[i][k] = static_cast<Index>(v);
    }
  return out;
}

py::array_t<double> points_out(const std::vector<Vec3>& x) {
  py::array_t<double> out({static_cast<py::ssize_t>(x.size()), py::ssize_t(3)});
  auto w = out.mutable_unchecked<2>();
  for (std::size_t i = 0; i < x.size(); ++i)
    for (int k = 0; k < 3; ++k) w(i, k) = x[i][k];
  return out;
}

template <std::size_t N>
py::array_t<long long> indices_out(const std::vector<std::array<Index, N>>& t) {
  py::array_t<long long> out({static_cast<py::ssize_t>(t.size()), static_cast<py::ssize_t>(N)});
  auto w = out.mutable_unchecked<2>();
  for (std::size_t i = 0; i < t.size(); ++i)
    for (std::size_t k = 0; k < N; ++k) w(i, k) = t[i][k];
  return out;
}

Vec3 vec3(const std::array<double, 3>& a) { return Vec3(a[0], a[1], a[2]); }

VelocitySpec velocity_of(const std::optional<std::array<double, 3>>& linear,
                         const std::optional<std::array<double, 3>>& angular) {
  VelocitySpec v;
  if (linear) v.linear = vec3(*linear);
  if (angular) v.angular = vec3(*angular);
  v.given = linear.has_value() || angular.has_value();
  return v;
}

FemKind fem_kind(const std::string& model) {
  if (model == "linear") return FemKind::Linear;
  if (model == "corotational") return FemKind::Corotational;
  throw py::value_error("model: expected 'linear' or 'corotational', got '" + model + "'");
}

[[noreturn]] void refuse(const std::string& argument, const std::string& what) {
  throw py::value_error(argument + ": " + what);
}

std::string number(double x) { return py::str(py::float_(x)); }

/// add_solid's integrator arguments, each given only to the integrator it belongs to;
/// the defaults are the scene file's (docs/scene-format.md).
struct SolidIntegratorArgs {
  std::string integrator;
  std::optional<double> h;                                        // backward_euler
  std::optional<double> h_L;                                      // zhao
  std::optional<int> m;
  std::optional<std::array<double, 3>> region_min, region_max;
  std::string scheme;                                             // schroeder
  std::optional<double> frame_dt, epsilon, substep, safety;
};

std::variant<BackwardEulerSpec, ZhaoSpec, SchroederSpec> integrator_of(const SolidIntegratorArgs& a,
                                                                       const std::vector<Vec3>& x) {
  const auto only = [&](const char* name, bool given, const char* owner) {
    if (given && a.integrator != owner)
      refuse(name, std::string("only for integrator='") + owner + "' (this solid's is '" + a.integrator + "')");
  };
  only("h", a.h.has_value(), "backward_euler");
  for (const auto& [name, given] : {std::pair{"h_L", a.h_L.has_value()}, {"m", a.m.has_value()},
                                    {"region_min", a.region_min.has_value()}, {"region_max", a.region_max.has_value()}})
    only(name, given, "zhao");
  only("scheme", a.scheme != "asynchronous", "schroeder");
  for (const auto& [name, given] : {std::pair{"frame_dt", a.frame_dt.has_value()}, {"epsilon", a.epsilon.has_value()},
                                    {"substep", a.substep.has_value()}, {"safety", a.safety.has_value()}})
    only(name, given, "schroeder");
  const auto positive = [](const char* name, double v) {
    if (!(v > 0.0 && std::isfinite(v))) refuse(name, "must be > 0, got " + number(v));
  };
  if (a.integrator == "backward_euler") {
    const double h = a.h.value_or(0.005);
    positive("h", h);
    return BackwardEulerSpec{.h = h};
  }
  if (a.integrator == "zhao") {
    if (!a.h_L) refuse("h_L", "required by integrator='zhao'");
    positive("h_L", *a.h_L);
    if (!a.m) refuse("m", "required by integrator='zhao'");
    if (*a.m < 1) refuse("m", "h_L / h_S must be a positive integer, got " + std::to_string(*a.m));
    if (!a.region_min || !a.region_max) refuse(a.region_min ? "region_max" : "region_min", "required by integrator='zhao' (the small-step region S as an axis box)");
    const Vec3 lo = vec3(*a.region_min), hi = vec3(*a.region_max);
    if (!(lo.array() <= hi.array()).all()) refuse("region_max", "must not be below region_min in any coordinate");
    ZhaoSpec z;
    z.settings.h_L = *a.h_L;
    MultirateRegion r{.name = "S1", .vertices = {}, .m = *a.m};
    for (Index i = 0; i < x.size(); ++i)
      if ((x[i].array() >= lo.array()).all() && (x[i].array() <= hi.array()).all()) r.vertices.push_back(i);
    if (r.vertices.empty()) refuse("region_min, region_max", "the box contains no vertex of the solid");
    z.regions.push_back(std::move(r));
    return z;
  }
  if (a.integrator == "schroeder") {
    SchroederSettings s;
    if (a.scheme == "asynchronous") s.scheme = SchroederScheme::Asynchronous;
    else if (a.scheme == "semi_implicit") s.scheme = SchroederScheme::SemiImplicit;
    else if (a.scheme == "fully_implicit") s.scheme = SchroederScheme::FullyImplicit;
    else refuse("scheme", "expected 'asynchronous', 'semi_implicit' or 'fully_implicit', got '" + a.scheme + "'");
    if (a.frame_dt) positive("frame_dt", *a.frame_dt);
    else if (s.scheme != SchroederScheme::SemiImplicit) refuse("frame_dt", "required by scheme='" + a.scheme + "'");
    s.frame_dt = a.frame_dt.value_or(0.0);
    if (a.epsilon) {
      if (s.scheme != SchroederScheme::Asynchronous) refuse("epsilon", "only for scheme='asynchronous'");
      if (!(*a.epsilon >= 0.0 && *a.epsilon <= 1.0)) refuse("epsilon", "must be in [0, 1], got " + number(*a.epsilon));
      s.epsilon = *a.epsilon;
    }
    if (a.substep || a.safety) {
      if (s.scheme == SchroederScheme::FullyImplicit) refuse(a.substep ? "substep" : "safety", "not for scheme='fully_implicit' (its step is frame_dt)");
      if (a.substep) positive("substep", *a.substep);
      if (a.safety && !(*a.safety > 0.0 && *a.safety <= 1.0)) refuse("safety", "must be in (0, 1], got " + number(*a.safety));
    }
    s.substep = a.substep.value_or(0.0);  // 0: from the stability limit
    s.safety = a.safety.value_or(s.safety);
    return SchroederSpec{s, {}};
  }
  refuse("integrator", "expected 'backward_euler', 'zhao' or 'schroeder', got '" + a.integrator + "'");
}

/// add_obstacle's `surface`: {"type": "ground", "center", "half_size"} | {"type":
/// "sphere", "center", "radius"} | {"type": "capsule", "a", "b", "radius"}.
StaticCollider surface_of(const py::dict& d) {
  const auto key = [&](const char* k) -> py::handle {
    if (!d.contains(k)) refuse("surface", std::string("'") + k + "' is required");
    return d[k];
  };
  const auto point = [&](const char* k) {
    try {
      return vec3(key(k).cast<std::array<double, 3>>());
    } catch (const py::cast_error&) {
      refuse("surface", std::string("'") + k + "' must be 3 numbers");
    }
  };
  const auto real = [&](const char* k) {
    try {
      return key(k).cast<double>();
    } catch (const py::cast_error&) {
      refuse("surface", std::string("'") + k + "' must be a number");
    }
  };
  const std::string type = py::str(key("type"));
  std::vector<std::string> keys;
  StaticCollider c;
  if (type == "ground") {
    keys = {"type", "center", "half_size"};
    const double s = real("half_size");
    if (!(s > 0.0 && std::isfinite(s))) refuse("surface", "half_size must be > 0, got " + number(s));
    c = StaticCollider::ground(point("center"), s);
  } else if (type == "sphere") {
    keys = {"type", "center", "radius"};
    c = StaticCollider::sphere(point("center"), real("radius"));
  } else if (type == "capsule") {
    keys = {"type", "a", "b", "radius"};
    c = StaticCollider::capsule(point("a"), point("b"), real("radius"));
  } else {
    refuse("surface", "type: expected 'ground', 'sphere' or 'capsule', got '" + type + "'");
  }
  for (const auto& [k, v] : d)
    if (std::find(keys.begin(), keys.end(), std::string(py::str(k))) == keys.end())
      refuse("surface", "unknown key '" + std::string(py::str(k)) + "' for a " + type);
  try {
    validate_static_collider(c);
  } catch (const std::invalid_argument& e) {
    refuse("surface", e.what());
  }
  return c;
}

}  // namespace

PYBIND11_MODULE(clockwork, m) {
  m.doc() = "Clockwork: asynchronous cloth, shells and elastic solids (docs/api.md)";
  py::register_exception<SceneError>(m, "SceneError", PyExc_ValueError);

  m.def("grid", [](double size_u, double size_v, int nu, int nv, std::array<double, 3> center) {
    const TriangleMesh g = make_grid(size_u, size_v, nu, nv, vec3(center), Vec3::UnitX(), Vec3::UnitY());
    return py::make_tuple(points_out(g.vertices), indices_out<3>(g.triangles));
  }, py::arg("size_u"), py::arg("size_v"), py::arg("cells_u"), py::arg("cells_v"), py::arg("center"),
     "A grid in the xy-plane: (vertices (n, 3), triangles (m, 3)); vertex (i, j) is j (cells_u + 1) + i.");
  m.def("tet_bar", [](std::array<double, 3> origin, int nx, int ny, int nz, double cell) {
    const TetMesh t = make_tet_bar(vec3(origin), nx, ny, nz, cell);
    return py::make_tuple(points_out(t.vertices), indices_out<4>(t.tets));
  }, py::arg("origin"), py::arg("nx"), py::arg("ny"), py::arg("nz"), py::arg("cell"),
     "A box of nx × ny × nz cubes of edge `cell`, six tets each: (vertices (n, 3), tets (m, 4)).");
  m.def("ground", [](std::array<double, 3> center, double half_size, int divisions) {
    const TriangleMesh g = make_ground(vec3(center), half_size, divisions);
    return py::make_tuple(points_out(g.vertices), indices_out<3>(g.triangles));
  }, py::arg("center"), py::arg("half_size"), py::arg("divisions") = 2);

  py::class_<World>(m, "World", "A simulation assembled body by body (io/world/world.hpp)")
      .def(py::init([](const std::string& name, double end_time, double frame_rate, std::array<double, 3> gravity) {
             WorldSettings s;
             s.name = name;
             s.end_time = end_time;
             s.frame_rate = frame_rate;
             s.gravity = vec3(gravity);
             return World(s);
           }),
           py::arg("name") = "world", py::arg("end_time") = 1.0, py::arg("frame_rate") = 30.0,
           py::arg("gravity") = std::array<double, 3>{0, 0, 0})
      .def("add_shell",
           [](World& w, const std::string& name, const Points& vertices, const Indices& triangles,
              double area_density, double young, double poisson, double bending, std::vector<long long> pins,
              std::optional<std::array<double, 3>> velocity, std::optional<double> phantom_h_imp, bool collide) {
             ShellSpec s;
             s.name = name;
             s.mesh.vertices = points_in(vertices, "vertices");
             s.mesh.triangles = indices_in<3>(triangles, s.mesh.vertices.size(), "triangles");
             s.material = ShellMaterial{area_density, young, poisson, bending};
             for (long long p : pins) {
               if (p < 0) throw py::value_error("pins: vertex " + std::to_string(p) + " is negative");
               s.pins.push_back(static_cast<Index>(p));
             }
             s.velocity = velocity_of(velocity, std::nullopt);
             if (phantom_h_imp) s.phantom = PhantomSpec{.h_imp = *phantom_h_imp};
             s.collide = collide;
             return w.add_shell(std::move(s));
           },
           py::arg("name"), py::arg("vertices"), py::arg("triangles"), py::arg("area_density"),
           py::arg("young"), py::arg("poisson"), py::arg("bending") = 0.0,
           py::arg("pins") = std::vector<long long>{}, py::arg("velocity") = py::none(),
           py::arg("phantom_h_imp") = py::none(), py::arg("collide") = true,
           "A cloth or shell: explicit AVI stencils, or the phantom mesh with ticks of phantom_h_imp s.")
      .def("add_solid",
           [](World& w, const std::string& name, const Points& vertices, const Indices& tets, double young,
              double poisson, double density, const std::string& model, std::optional<double> h,
              std::optional<std::array<double, 3>> velocity, std::optional<std::array<double, 3>> angular,
              double rayleigh_alpha, double rayleigh_beta, bool collide, const std::string& integrator,
              std::optional<double> h_L, std::optional<int> ratio, std::optional<std::array<double, 3>> region_min,
              std::optional<std::array<double, 3>> region_max, const std::string& scheme,
              std::optional<double> frame_dt, std::optional<double> epsilon, std::optional<double> substep,
              std::optional<double> safety) {
             SolidSpec s;
             s.name = name;
             s.mesh.vertices = points_in(vertices, "vertices");
             s.mesh.tets = indices_in<4>(tets, s.mesh.vertices.size(), "tets");
             s.mesh.region_names = {"all"};
             s.mesh.tet_region.assign(s.mesh.tets.size(), 0);
             s.material.kind = fem_kind(model);
             s.material.per_tet.assign(s.mesh.tets.size(), TetMaterial{young, poisson, density});
             s.material.rayleigh_alpha = rayleigh_alpha;
             s.material.rayleigh_beta = rayleigh_beta;
             s.velocity = velocity_of(velocity, angular);
             s.integrator = integrator_of({integrator, h, h_L, ratio, region_min, region_max, scheme, frame_dt, epsilon,
                                           substep, safety},
                                          s.mesh.vertices);
             s.collide = collide;
             return w.add_solid(std::move(s));
           },
           py::arg("name"), py::arg("vertices"), py::arg("tets"), py::arg("young"), py::arg("poisson"),
           py::arg("density"), py::arg("model") = "corotational", py::arg("h") = py::none(),
           py::arg("velocity") = py::none(), py::arg("angular_velocity") = py::none(),
           py::arg("rayleigh_alpha") = 0.0, py::arg("rayleigh_beta") = 0.0, py::arg("collide") = true,
           py::kw_only(), py::arg("integrator") = "backward_euler", py::arg("h_L") = py::none(),
           py::arg("m") = py::none(), py::arg("region_min") = py::none(), py::arg("region_max") = py::none(),
           py::arg("scheme") = "asynchronous", py::arg("frame_dt") = py::none(), py::arg("epsilon") = py::none(),
           py::arg("substep") = py::none(), py::arg("safety") = py::none(),
           "A tet solid: backward Euler at step h (default 0.005 s); integrator='zhao': h_L, the small-step "
           "region S (the vertices in the box region_min..region_max) at h_L / m; integrator='schroeder': "
           "scheme ('asynchronous', 'semi_implicit', 'fully_implicit'), frame_dt, epsilon (0.5), substep "
           "(from the stability limit), safety (0.8).")
      .def("add_obstacle",
           [](World& w, const std::string& name, const Points& vertices, const Indices& triangles,
              std::optional<py::dict> surface) {
             ObstacleSpec s;
             s.name = name;
             s.mesh.vertices = points_in(vertices, "vertices");
             s.mesh.triangles = indices_in<3>(triangles, s.mesh.vertices.size(), "triangles");
             if (surface) s.surface = surface_of(*surface);
             return w.add_obstacle(std::move(s));
           },
           py::arg("name"), py::arg("vertices"), py::arg("triangles"), py::arg("surface") = py::none(),
           "A static triangle-mesh obstacle. surface: the exact surface it approximates, "
           "{'type': 'ground', 'center', 'half_size'}, {'type': 'sphere', 'center', 'radius'} or "
           "{'type': 'capsule', 'a', 'b', 'radius'}; without one, Schroeder solids see the mesh itself.")
      .def("enable_contact",
           [](World& w, double friction, std::optional<double> thickness) {
             ContactSpec c;
             c.settings.friction = friction;
             c.settings.thickness = thickness;
             w.enable_contact(std::move(c));
           },
           py::arg("friction") = 0.0, py::arg("thickness") = py::none())
      .def("advance_to", &World::advance_to, py::arg("t"),
           "Processes every event before t; the state is then the one a frame at t holds.")
      .def_property_readonly("time", &World::time)
      .def("positions", [](World& w, const std::string& body) { return points_out(w.positions(body)); })
      .def("velocities", [](World& w, const std::string& body) { return points_out(w.velocities(body)); })
      .def("total_energy", &World::total_energy, "Kinetic + every potential energy, J.")
      .def("run",
           [](World& w, const std::string& out_dir, double until, bool overwrite) {
             if (w.time() != 0.0) throw py::value_error("run: the world was advanced; a run starts at t = 0");
             RunOptions o;
             o.out_dir = out_dir;
             o.until = until;
             o.overwrite = overwrite;
             const RunSummary r = run_scene(w.scene(), o);
             return py::dict(py::arg("events") = r.events, py::arg("frames") = r.frames);
           },
           py::arg("out_dir"), py::arg("until"), py::arg("overwrite") = false,
           "Runs from the start to `until`, writing frames and diagnostics.csv into out_dir.");
}
