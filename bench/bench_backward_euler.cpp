/// Synchronous backward Euler on the bunny (tests/io/data/bunny: 2616 vertices, 10 170
/// tets; issue 41's peer comparison): CPU seconds per step, one thread, for linear and
/// corotational FEM, sparse Cholesky and PCG, Rayleigh β = 0 and β > 0.
///
///   bench_backward_euler [--runs R] [--steps S] [--only TEXT] [--dump DIR]
///
/// Setting: the bunny standing on its lowest 5 mm (those vertices pinned), gravity,
/// E = 5e4 Pa, ν = 0.4, ρ = 1000 kg/m³, lumped masses, Rayleigh α = 0.1/s (β 0 or
/// 2e-3 s), h = 5 ms, a shearing initial velocity (1 m/s at the top) so that the
/// corotational elements rotate. Each case is run R times (default 3) from the same
/// initial state for S steps (default 6 corotational, 20 linear) after one warm-up
/// step that is not timed (it builds patterns and orderings); the median CPU time per
/// step is printed with the Newton and CG iterations per step and a checksum of the
/// final positions (to compare two builds' results). The cases are interleaved within
/// each run. It uses only the settings that existed before issue 41, so that the same
/// source builds at an older commit (docs/performance.md).
///
/// `--dump DIR`: writes each case's final positions as text (17 digits) to DIR/<case>.txt.
///
///   bench_backward_euler --assembly R
///
/// instead times one corotational stiffness assembly, projected and not, at the state
/// after 6 steps (median of R), and counts the elements whose tangent is indefinite.
#include <fmt/format.h>
#include <tbb/global_control.h>

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "bench/timing.hpp"
#include "integrators/implicit/backward_euler.hpp"
#include "io/mesh/tet_mesh.hpp"

using namespace clockwork;

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Case {
  std::string name;
  FemKind kind;
  LinearSolverKind linear;
  double beta;
};

struct Bunny {
  TetMesh mesh;
  std::vector<bool> fixed;
  Eigen::VectorXd x0, v0;
};

Bunny load_bunny() {
  Bunny b;
  b.mesh = read_tetgen(std::string(CLOCKWORK_SOURCE_DIR) + "/tests/io/data/bunny");
  double zmin = 1e300, zmax = -1e300;
  for (const Vec3& p : b.mesh.vertices) {
    zmin = std::min(zmin, p.z());
    zmax = std::max(zmax, p.z());
  }
  const auto n = static_cast<Eigen::Index>(b.mesh.vertices.size());
  b.fixed.assign(b.mesh.vertices.size(), false);
  b.x0.resize(3 * n);
  b.v0.setZero(3 * n);
  for (Eigen::Index a = 0; a < n; ++a) {
    const Vec3& p = b.mesh.vertices[static_cast<std::size_t>(a)];
    b.x0.segment<3>(3 * a) = p;
    b.fixed[static_cast<std::size_t>(a)] = p.z() < zmin + 0.005;
    if (!b.fixed[static_cast<std::size_t>(a)]) b.v0[3 * a] = (p.z() - zmin) / (zmax - zmin);
  }
  return b;
}

struct Result {
  double seconds_per_step = 0.0;
  double newton_per_step = 0.0;
  double cg_per_step = 0.0;
  int unconverged = 0;
  Eigen::VectorXd x;
};

Result run_case(const Case& c, const TetFemModel& model, const Bunny& b, int steps) {
  BackwardEulerSettings s;
  s.linear = c.linear;
  s.rayleigh_alpha = 0.1;
  s.rayleigh_beta = c.beta;
  BackwardEuler be(model, s);
  const double h = 0.005;
  Eigen::VectorXd f_ext = Eigen::VectorXd::Zero(b.x0.size());
  for (std::size_t a = 0; a < model.vertex_count(); ++a)
    if (!b.fixed[a]) f_ext[static_cast<Eigen::Index>(3 * a + 2)] = -9.81 * model.lumped_mass()[a];
  Result r;
  r.x = b.x0;
  Eigen::VectorXd v = b.v0;
  be.step(h, r.x, v, f_ext, b.fixed);  // warm-up: patterns, orderings
  const double t0 = cpu_seconds();
  long newton = 0, cg = 0;
  for (int k = 0; k < steps; ++k) {
    const BackwardEulerReport rep = be.step(h, r.x, v, f_ext, b.fixed);
    newton += rep.newton_iterations;
    cg += rep.linear_iterations;
    if (!rep.converged) ++r.unconverged;
  }
  r.seconds_per_step = (cpu_seconds() - t0) / steps;
  r.newton_per_step = static_cast<double>(newton) / steps;
  r.cg_per_step = static_cast<double>(cg) / steps;
  return r;
}

/// Median CPU seconds of R corotational assemblies, projected and unprojected.
int time_assembly(const TetFemModel& corot, const Bunny& b, int reps) {
  Result r = run_case({"corotational cholesky", FemKind::Corotational, LinearSolverKind::Cholesky, 0.0},
                      corot, b, 5);
  TetFemModel::Sparse K;
  for (bool project : {false, true}) {
    std::vector<double> t;
    for (int k = 0; k < reps; ++k) {
      const double t0 = cpu_seconds();
      corot.hessian(r.x, K, project);
      t.push_back(cpu_seconds() - t0);
    }
    fmt::print("corotational assembly, {:<11} {:.5f} s (median of {})\n",
               project ? "projected:" : "exact:", bench::median(t), reps);
  }
  int indefinite = 0;
  for (std::size_t e = 0; e < b.mesh.tets.size(); ++e) {
    StencilPositions<4> x, X;
    for (int i = 0; i < 4; ++i) {
      x.col(i) = r.x.segment<3>(3 * static_cast<Eigen::Index>(b.mesh.tets[e][i]));
      X.col(i) = b.mesh.vertices[b.mesh.tets[e][i]];
    }
    const CorotationalTet tet = CorotationalTet::from_rest(X, 5e4, 0.4);
    const StencilMatrix<4> H = tet.hessian(x);
    if (Eigen::SelfAdjointEigenSolver<StencilMatrix<4>>(H).eigenvalues()[0] < -1e-10 * H.norm())
      ++indefinite;
  }
  fmt::print("elements with an indefinite tangent: {} of {}\n", indefinite, b.mesh.tets.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 3, steps = 0, assembly = 0;
  std::string only, dump;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--runs") runs = std::stoi(argv[i + 1]);
    else if (key == "--steps") steps = std::stoi(argv[i + 1]);
    else if (key == "--only") only = argv[i + 1];
    else if (key == "--dump") dump = argv[i + 1];
    else if (key == "--assembly") assembly = std::stoi(argv[i + 1]);
    else {
      fmt::print(stderr,
                 "usage: bench_backward_euler [--runs R] [--steps S] [--only TEXT] [--dump DIR]"
                 " | --assembly R\n");
      return 2;
    }
  }
  const tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
  const Bunny b = load_bunny();
  std::vector<TetMaterial> materials(b.mesh.tets.size(), TetMaterial{5e4, 0.4, 1000.0});
  const TetFemModel linear(b.mesh.vertices, b.mesh.tets, materials, FemKind::Linear);
  const TetFemModel corot(b.mesh.vertices, b.mesh.tets, materials, FemKind::Corotational);

  if (assembly > 0) return time_assembly(corot, b, assembly);

  std::vector<Case> cases;
  for (FemKind kind : {FemKind::Linear, FemKind::Corotational})
    for (LinearSolverKind solver : {LinearSolverKind::Cholesky, LinearSolverKind::PcgJacobi,
                                    LinearSolverKind::PcgIncompleteCholesky})
      for (double beta : {0.0, 2e-3}) {
        const std::string name =
            fmt::format("{} {} beta={}", kind == FemKind::Linear ? "linear" : "corotational",
                        solver == LinearSolverKind::Cholesky ? "cholesky"
                        : solver == LinearSolverKind::PcgJacobi ? "pcg_jacobi"
                                                                : "pcg_ic",
                        beta);
        if (name.find(only) != std::string::npos) cases.push_back({name, kind, solver, beta});
      }
  std::vector<std::vector<double>> seconds(cases.size());
  std::vector<Result> last(cases.size());
  for (int run = 0; run < runs; ++run)
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      const int n = steps > 0 ? steps : (c.kind == FemKind::Linear ? 20 : 6);
      last[i] = run_case(c, c.kind == FemKind::Linear ? linear : corot, b, n);
      seconds[i].push_back(last[i].seconds_per_step);
    }
  fmt::print("bunny: {} vertices, {} tets, {} pinned; median of {} runs, one thread\n",
             b.mesh.vertices.size(), b.mesh.tets.size(),
             std::count(b.fixed.begin(), b.fixed.end(), true), runs);
  fmt::print("{:<32} {:>12} {:>8} {:>9} {:>6} {:>24}\n", "case", "cpu s/step", "newton",
             "cg", "unconv", "checksum |x - x0|");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Result& r = last[i];
    fmt::print("{:<32} {:>12.5f} {:>8.2f} {:>9.1f} {:>6} {:>24.17g}\n", cases[i].name,
               bench::median(seconds[i]), r.newton_per_step, r.cg_per_step, r.unconverged,
               (r.x - b.x0).norm());
    if (!dump.empty()) {
      std::string file = cases[i].name;
      for (char& ch : file)
        if (ch == ' ' || ch == '=') ch = '_';
      std::ofstream out(dump + "/" + file + ".txt");
      for (Eigen::Index k = 0; k < r.x.size(); ++k) out << fmt::format("{:.17g}\n", r.x[k]);
    }
  }
  return 0;
}
