/// The `clockwork` Python module: a second client of the World API (io/world/world.hpp).
/// It builds shells, tet solids and obstacles from NumPy arrays, runs them and returns
/// positions and velocities as NumPy arrays (docs/api.md).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
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
              double poisson, double density, const std::string& model, double h,
              std::optional<std::array<double, 3>> velocity, std::optional<std::array<double, 3>> angular,
              double rayleigh_alpha, double rayleigh_beta, bool collide) {
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
             s.integrator = BackwardEulerSpec{.h = h};
             s.collide = collide;
             return w.add_solid(std::move(s));
           },
           py::arg("name"), py::arg("vertices"), py::arg("tets"), py::arg("young"), py::arg("poisson"),
           py::arg("density"), py::arg("model") = "corotational", py::arg("h") = 0.005,
           py::arg("velocity") = py::none(), py::arg("angular_velocity") = py::none(),
           py::arg("rayleigh_alpha") = 0.0, py::arg("rayleigh_beta") = 0.0, py::arg("collide") = true,
           "A tet solid integrated by backward Euler at step h (contact inside its solve).")
      .def("add_obstacle",
           [](World& w, const std::string& name, const Points& vertices, const Indices& triangles) {
             ObstacleSpec s;
             s.name = name;
             s.mesh.vertices = points_in(vertices, "vertices");
             s.mesh.triangles = indices_in<3>(triangles, s.mesh.vertices.size(), "triangles");
             return w.add_obstacle(std::move(s));
           },
           py::arg("name"), py::arg("vertices"), py::arg("triangles"))
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
