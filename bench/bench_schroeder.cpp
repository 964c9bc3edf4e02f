/// Schroeder et al.'s asynchronous evolution, measured (docs/performance.md "Schroeder
/// asynchronous evolution"). A documented driver rather than Google Benchmark: each
/// number is a whole simulated run through the kernel (scenes built with the World,
/// io/world/world.hpp, the API `clockwork run` builds a scene file's scene with).
///
///   bench_schroeder table2 [--frames F] [--runs R] [--only TEST] [--constrain 0|1]
///       the paper's Table 2: seconds per frame of semi-implicit, fully-implicit and asynchronous (ε = 0, .25, .5, .75, 1)
///       on one sphere dropped on the ground, two spheres colliding, the bunny dropped
///       on the ground, a sphere with one bad interior element dropped on the ground.
///       Median of R runs (3), the schemes interleaved within each run so that they
///       share the machine's load; ratios are of medians measured in this process.
///       `--constrain 0`: the §6 response after the solves only, as printed in the
///       paper (default 1: contacts as constraints of the solves, docs/schroeder.md).
///   bench_schroeder sweep --csv FILE [--frames F]    the Figure 3 analogue: the sphere
///       drop at each ε (and the synchronous schemes), its height over time, as CSV
///       (scripts/plot_schroeder_sweep.py draws docs/images/schroeder_eps_sweep.png).
///   bench_schroeder bad-sphere DIR                   writes the bad-element sphere as
///       DIR/bad_sphere.{node,ele} (TetGen; demos/schroeder_bad_sphere.json reads it).
///
/// Scenes: spheres of radius 0.1 m, 10 cells across (3 312 tets), corotational FEM,
/// E = 1e5 Pa, ν = 0.3, ρ = 1000 kg/m³, Rayleigh β = 2e-3 s; frames of 1/24 s; the
/// ground is a §6 collision plane (friction 0.3) 5 cm below the dropped bodies (they
/// land in the third frame); the bunny (tests/io/data/bunny, 0.2 m, 10 170 tets) too;
/// the two spheres meet head-on at 2 m/s relative, without gravity, through
/// the penalty layers (docs/contact.md). The sweep drops the sphere from 0.2 m.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/timing.hpp"
#include "io/mesh/tet_bad_element.hpp"
#include "io/mesh/tet_mesh.hpp"
#include "io/world/world.hpp"

using namespace clockwork;

namespace {

using bench::Clock;
using bench::median;
using bench::since;

constexpr double kFrame = 1.0 / 24.0;

struct Scheme {
  std::string label;
  std::string integrator;
  double epsilon = 0.0;
};

std::vector<Scheme> schemes() {
  std::vector<Scheme> s{{"semi-implicit", "semi_implicit", 0.0},
                        {"fully-implicit", "fully_implicit", 0.0}};
  for (double e : {0.0, 0.25, 0.5, 0.75, 1.0})
    s.push_back({fmt::format("async eps={}", e), "schroeder", e});
  return s;
}

/// Corotational, E = 1e5 Pa, ν = 0.3, ρ = 1000 kg/m³, Rayleigh β = 2e-3 s, on every tet.
SolidMaterial material(const TetMesh& mesh) {
  SolidMaterial m;
  m.kind = FemKind::Corotational;
  m.per_tet.assign(mesh.tets.size(), TetMaterial{1e5, 0.3, 1000});
  m.rayleigh_beta = 0.002;
  return m;
}

bool g_constrain = true;  // §6 contacts as constraints of the solves

SchroederSpec integrator_settings(const Scheme& s, bool ground) {
  SchroederSpec spec;
  SchroederSettings& f = spec.settings;
  f.frame_dt = kFrame;
  if (s.integrator == "semi_implicit") f.scheme = SchroederScheme::SemiImplicit;
  if (s.integrator == "fully_implicit") f.scheme = SchroederScheme::FullyImplicit;
  if (s.integrator == "schroeder") f.epsilon = s.epsilon;
  if (ground) {
    f.colliders.push_back(StaticCollider::plane(Vec3::Zero(), Vec3::UnitZ(), 0.3));
    f.constrain_collisions = g_constrain;
  }
  return spec;
}

SolidSpec body(const std::string& name, TetMesh mesh, const Scheme& s, bool ground) {
  SolidSpec b;
  b.name = name;
  b.material = material(mesh);
  b.mesh = std::move(mesh);
  b.integrator = integrator_settings(s, ground);
  return b;
}

TetMesh sphere_shape(const Vec3& c) { return make_tet_sphere(c, 0.1, 10); }

/// A TetGen mesh read from `base`.{node,ele}, translated by `t`.
TetMesh tetgen_shape(const std::string& base, const Vec3& t) {
  TetMesh mesh = read_tetgen(base);
  for (Vec3& x : mesh.vertices) x = 1.0 * x + t;  // the scene reader's scale · x + translate
  return mesh;
}

std::string g_bad_sphere;  // base path of the bad-element sphere's TetGen files

World scene(const std::string& test, const Scheme& s, double drop_center = 0.15) {
  // Scene names are file-name safe (issue 42): the test's name with '_' for spaces.
  std::string name = test;
  std::replace(name.begin(), name.end(), ' ', '_');
  const bool collide = test == "2 spheres";
  World w({.name = name, .end_time = 1.0, .frame_rate = 24,
           .gravity = collide ? Vec3::Zero() : Vec3(0, 0, -9.81)});
  if (test == "1 sphere") {
    w.add_solid(body("sphere", sphere_shape(Vec3(0, 0, drop_center)), s, true));
  } else if (collide) {
    SolidSpec a = body("left", sphere_shape(Vec3(-0.12, 0, 0.5)), s, false);
    SolidSpec b = body("right", sphere_shape(Vec3(0.12, 0.03, 0.5)), s, false);
    a.velocity = {.linear = {1.0, 0, 0}, .given = true};
    b.velocity = {.linear = {-1.0, 0, 0}, .given = true};
    w.add_solid(std::move(a));
    w.add_solid(std::move(b));
    w.enable_contact({});  // frictionless
  } else if (test == "bunny") {
    w.add_solid(body("bunny", tetgen_shape(std::string(CLOCKWORK_SOURCE_DIR) + "/tests/io/data/bunny",
                                           {0, 0, 0.13}),
                     s, true));
  } else {
    w.add_solid(body("bad_sphere", tetgen_shape(g_bad_sphere, {0, 0, 0.15}), s, true));
  }
  return w;
}

/// The bad-element sphere (centred at the origin) as TetGen files.
void write_bad_sphere(const std::string& base) {
  TetMesh mesh = make_tet_sphere(Vec3::Zero(), 0.1, 10);
  const Index moved = make_bad_interior_element(mesh, 1e-3);
  std::ofstream node(base + ".node"), ele(base + ".ele");
  node << fmt::format(
      "# make_tet_sphere(0, 0.1 m, 10 cells) with vertex {} moved along its "
      "shortest edge to 0.001 x the shortest edge (io/mesh/tet_bad_element.hpp)\n",
      moved);
  node << fmt::format("{} 3 0 0\n", mesh.vertices.size());
  for (std::size_t a = 0; a < mesh.vertices.size(); ++a)
    node << fmt::format("{} {:.17g} {:.17g} {:.17g}\n", a, mesh.vertices[a].x(),
                        mesh.vertices[a].y(), mesh.vertices[a].z());
  ele << fmt::format("{} 4 0\n", mesh.tets.size());
  for (std::size_t t = 0; t < mesh.tets.size(); ++t)
    ele << fmt::format("{} {} {} {} {}\n", t, mesh.tets[t][0], mesh.tets[t][1], mesh.tets[t][2],
                       mesh.tets[t][3]);
}

struct RunStats {
  double seconds = 0.0;
  double substeps = 0.0;  ///< per frame
  double cg = 0.0;        ///< CG iterations per frame
};

RunStats run(const std::string& test, const Scheme& s, int frames) {
  Scene sc = scene(test, s).release();
  const auto t0 = Clock::now();
  sc.kernel->run_until(frames * kFrame - 1e-9);
  RunStats r;
  r.seconds = since(t0) / frames;
  for (const SchroederSource* src : sc.bodies_of<SchroederSource>()) {
    r.substeps = double(src->stepper().substeps_per_frame());
    r.cg += double(src->stepper().counters().cg_iterations) / frames;
  }
  return r;
}

int table2(int frames, int runs, const std::string& only) {
  std::vector<std::string> tests;
  for (const char* t : {"1 sphere", "2 spheres", "bunny", "1 sphere with a bad element"})
    if (std::string(t).find(only) != std::string::npos) tests.push_back(t);
  const auto all = schemes();
  fmt::print("Table 2 analogue: seconds per frame (1/24 s), median of {} runs of {} frames\n", runs,
             frames);
  fmt::print("{:<30}", "test");
  for (const Scheme& s : all) fmt::print(" {:>14}", s.label);
  fmt::print("\n");
  for (const std::string& test : tests) {
    std::vector<std::vector<double>> t(all.size());
    std::vector<RunStats> last(all.size());
    for (int r = 0; r < runs; ++r)
      for (std::size_t i = 0; i < all.size(); ++i) {
        last[i] = run(test, all[i], frames);
        t[i].push_back(last[i].seconds);
      }
    fmt::print("{:<30}", test);
    std::vector<double> med(all.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
      med[i] = median(t[i]);
      fmt::print(" {:>14.4f}", med[i]);
    }
    fmt::print("\n{:<30}", "  substeps/frame");
    for (std::size_t i = 0; i < all.size(); ++i) fmt::print(" {:>14.0f}", last[i].substeps);
    fmt::print("\n{:<30}", "  CG iterations/frame");
    for (std::size_t i = 0; i < all.size(); ++i) fmt::print(" {:>14.0f}", last[i].cg);
    fmt::print("\n{:<30}", "  semi-implicit / this");
    for (std::size_t i = 0; i < all.size(); ++i) fmt::print(" {:>14.2f}", med[0] / med[i]);
    fmt::print("\n");
    std::fflush(stdout);
  }
  return 0;
}

/// Height of the sphere drop (vertical extent of the body) against time, per scheme.
int sweep(const std::string& csv, int frames) {
  std::ofstream out(csv);
  out << "scheme,epsilon,t,height,bottom\n";
  for (const Scheme& s : schemes()) {
    Scene sc = scene("1 sphere", s, 0.3).release();
    const VertexState& st = sc.kernel->state();
    for (int k = 0; k <= 4 * frames; ++k) {
      const double t = 0.25 * k * kFrame;
      sc.kernel->run_until(t);
      double lo = kNever, hi = -kNever;
      for (Index a = 0; a < st.size(); ++a) {
        lo = std::min(lo, st.position_at(a, t).z());
        hi = std::max(hi, st.position_at(a, t).z());
      }
      out << fmt::format("{},{},{:.6f},{:.6f},{:.6f}\n", s.integrator, s.epsilon, t, hi - lo, lo);
    }
    fmt::print("{}: done\n", s.label);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr,
               "usage: bench_schroeder table2 [--frames F] [--runs R] [--only TEST] [--constrain 0|1] | sweep --csv FILE "
               "[--frames F] | bad-sphere DIR\n");
    return 2;
  }
  const std::string what = argv[1];
  int frames = 6, runs = 3;  // 0.25 s: the fall, the impact and the rebound
  std::string csv = "schroeder_sweep.csv", only;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--frames") == 0)
      frames = std::stoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--runs") == 0)
      runs = std::stoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--csv") == 0)
      csv = argv[i + 1];
    else if (std::strcmp(argv[i], "--only") == 0)
      only = argv[i + 1];
    else if (std::strcmp(argv[i], "--constrain") == 0)
      g_constrain = std::strcmp(argv[i + 1], "0") != 0;
  }
  if (what == "bad-sphere") {
    if (argc < 3) return 2;
    write_bad_sphere((std::filesystem::path(argv[2]) / "bad_sphere").string());
    return 0;
  }
  const auto dir = std::filesystem::temp_directory_path() / "clockwork_bench_schroeder";
  std::filesystem::create_directories(dir);
  g_bad_sphere = (dir / "bad_sphere").string();
  write_bad_sphere(g_bad_sphere);
  if (what == "table2") return table2(frames, runs, only);
  if (what == "sweep") return sweep(csv, frames);
  fmt::print(stderr, "unknown command {}\n", what);
  return 2;
}
