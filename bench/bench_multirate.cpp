/// Zhao et al.'s multi-rate backward Euler, measured (docs/performance.md "Multi-rate
/// backward Euler"). A documented driver rather than Google Benchmark: each table
/// needs whole simulated runs. Linear FEM (the paper's Table 1 setting), times are
/// medians over the frames of a run (one frame = one large step h_L, as in the paper)
/// of the solver's time (right-hand sides, forward substitutions, the H^LL* solve;
/// factorisations happen in frame 0, which is left out).
///
///   bench_multirate figure3 [--cell C]   solve time against m: Schur + forward
///                                        substitution vs the direct LU of eq. 23
///   bench_multirate table1 [--cell C] [--reps R]
///                                        dragon, m = 10, |S| from the jaw to the whole:
///                                        s/frame of multi-rate, single-rate h_L and h_S
///   bench_multirate accuracy [--cell C] [--reps R] [--csv FILE]
///                            [--p h_L E_body rho_body E_jaw rho_jaw E_head rho_head frames]
///                                        a jaw vertex's displacement over time after a
///                                        pull and release: multi-rate, single-rate at
///                                        h_L / k (k = 1, 2, 5), reference single-rate h_S;
///                                        default setting 0.01 2e5 1000 4e4 1000 2e5 1000 100
///                                        (Table 1's: 0.03 2e6 1000 2e8 1000 2e6 1000 20)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "integrators/zhao/multirate_solver.hpp"
#include "bench/timing.hpp"
#include "io/mesh/tet_mesh.hpp"

using namespace clockwork;

namespace {

using bench::Clock;
using bench::median;
using bench::since;

constexpr double kHL = 0.03;  // the paper's dragon: h_L = 0.03 s, m = 10

struct Dragon {
  TetMesh mesh;
  std::unique_ptr<TetFemModel> model;
  std::vector<bool> fixed;
  Eigen::VectorXd x0, v0;
  std::vector<std::vector<int>> s_sets;  // region unions: jaw, +head, +neck, +front, all
  std::vector<std::string> s_names;
  Index probe = 0;  // a jaw vertex far from the head
  std::vector<Index> head_only;  // head vertices not on a jaw tet (in L when S = jaw)
};

/// Table 1 and Figure 3: soft body, stiffer jaw (the paper's collision example makes
/// the jaw stiffer; here it is what asks for the small step).
constexpr TetMaterial kBody{2e6, 0.4, 1000.0}, kJaw{2e8, 0.4, 1000.0};

Dragon make_dragon(double cell, TetMaterial body = kBody, TetMaterial jaw_material = kJaw,
                   TetMaterial head_material = kBody) {
  Dragon d;
  d.mesh = make_tet_dragon(Vec3::Zero(), 1.0, cell);
  const int jaw = find_region(d.mesh, "jaw", "dragon"), head = find_region(d.mesh, "head", "dragon");
  std::vector<TetMaterial> mat(d.mesh.tets.size(), body);
  for (std::size_t t = 0; t < mat.size(); ++t) {
    if (d.mesh.tet_region[t] == jaw) mat[t] = jaw_material;
    if (d.mesh.tet_region[t] == head) mat[t] = head_material;
  }
  d.model = std::make_unique<TetFemModel>(d.mesh.vertices, d.mesh.tets, mat, FemKind::Linear);
  const std::size_t n = d.mesh.vertices.size();
  double zmin = 1e300;
  for (const Vec3& x : d.mesh.vertices) zmin = std::min(zmin, x.z());
  d.fixed.assign(n, false);
  for (std::size_t a = 0; a < n; ++a) d.fixed[a] = d.mesh.vertices[a].z() < zmin + 0.5 * cell;
  d.x0.resize(3 * n);
  d.v0.setZero(3 * n);
  for (std::size_t a = 0; a < n; ++a) d.x0.segment<3>(3 * a) = d.mesh.vertices[a];
  const char* order[] = {"jaw", "head", "neck", "front", "body"};
  std::vector<int> acc;
  for (const char* name : order) {
    acc.push_back(find_region(d.mesh, name, "dragon"));
    d.s_sets.push_back(acc);
    d.s_names.push_back(name);
  }
  // Probe: the jaw vertex farthest from the head's vertices' centroid.
  const std::vector<Index> jv = region_vertices(d.mesh, {jaw});
  const std::vector<Index> hv = region_vertices(d.mesh, {find_region(d.mesh, "head", "dragon")});
  for (Index a : hv)
    if (!std::binary_search(jv.begin(), jv.end(), a)) d.head_only.push_back(a);
  Vec3 hc = Vec3::Zero();
  for (Index a : hv) hc += d.mesh.vertices[a];
  hc /= double(hv.size());
  double best = -1;
  for (Index a : jv)
    if ((d.mesh.vertices[a] - hc).norm() > best) {
      best = (d.mesh.vertices[a] - hc).norm();
      d.probe = a;
    }
  return d;
}

/// The pull: a downward force on the jaw for the first 5 frames, then released.
Eigen::VectorXd pull(const Dragon& d, int frame) {
  Eigen::VectorXd f = Eigen::VectorXd::Zero(3 * d.mesh.vertices.size());
  if (frame >= 5) return f;
  const std::vector<Index> jv = region_vertices(d.mesh, {find_region(d.mesh, "jaw", "dragon")});
  for (Index a : jv) f[3 * a + 2] = -5.0 * d.model->lumped_mass()[a] * 9.81;
  return f;
}

struct RunResult {
  double seconds_per_frame = 0.0;
  /// Probe displacement every `sample_dt` (kick + drift: positions move linearly
  /// between a step's velocity updates, eq. 21–22), when asked for.
  std::vector<Vec3> samples;
  std::vector<Vec3> head_samples;  ///< mean displacement of Dragon::head_only, likewise
};

/// v after a large step: v0 + Δv^L + Δv^S_{0,m} (each vertex is in one of them).
Eigen::VectorXd end_velocity(const MultirateStep& step, const Eigen::VectorXd& v) {
  Eigen::VectorXd vL = v + step.dv_L;
  for (const auto& region : step.dv_S) vL += region.back();
  return vL;
}

/// Positions after a large step (eq. 21–22): S drifts h_S with each v^S_{r+1}, L h_L
/// with v^L_m; fixed vertices stay.
void drift(const MultirateSolver& solver, const MultirateStep& step, const Eigen::VectorXd& v,
           const Eigen::VectorXd& vL, Eigen::VectorXd& x) {
  const double h = solver.settings().h_L;
  for (std::size_t i = 0; i < step.dv_S.size(); ++i) {
    const auto& reg = solver.regions()[i];
    const double hS = h / reg.m;
    for (Index a : reg.vertices)
      for (int r = 0; r < reg.m; ++r) x.segment<3>(3 * a) += hS * (v + step.dv_S[i][r]).segment<3>(3 * a);
  }
  for (Index a : solver.large_vertices()) x.segment<3>(3 * a) += h * vL.segment<3>(3 * a);
}

/// One frame of h_L: `substeps` large steps of the solver (1 for the multi-rate scheme
/// and single-rate h_L; m for single-rate h_S) under f_ext. Returns the solver's time.
double advance_frame(MultirateSolver& solver, int substeps, const Eigen::VectorXd& fe,
                     Eigen::VectorXd& x, Eigen::VectorXd& v, MultirateStep& step) {
  double t = 0.0;
  for (int k = 0; k < substeps; ++k) {
    const auto t0 = Clock::now();
    solver.step(x, v, fe, step);
    t += since(t0);
    const Eigen::VectorXd vL = end_velocity(step, v);
    drift(solver, step, v, vL, x);
    v = vL;
  }
  return t;
}

/// `frames` frames from (x0, v0) under `force(frame)`, sampling the probe every
/// sample_dt > 0 (which must divide every step and substep) when asked.
template <typename Force>
RunResult run_once(const Dragon& d, MultirateSolver& solver, int frames, int substeps,
                   const Eigen::VectorXd& x0, const Eigen::VectorXd& v0, Force&& force,
                   double sample_dt = 0.0) {
  RunResult out;
  Eigen::VectorXd x = x0, v = v0;
  MultirateStep step;
  std::vector<double> times;
  const double h = solver.settings().h_L;
  const Index p = d.probe;
  int probe_region = -1;
  for (std::size_t i = 0; i < solver.regions().size(); ++i)
    for (Index a : solver.regions()[i].vertices)
      if (a == p) probe_region = static_cast<int>(i);
  const auto head_mean = [&](const Eigen::VectorXd& y) {
    Vec3 c = Vec3::Zero();
    for (Index a : d.head_only) c += y.segment<3>(3 * a);
    return Vec3(c / double(d.head_only.size()));
  };
  for (Index a : sample_dt > 0.0 ? d.head_only : std::vector<Index>{})
    for (std::size_t i = 0; i < solver.regions().size(); ++i)
      if (std::binary_search(solver.regions()[i].vertices.begin(),
                             solver.regions()[i].vertices.end(), a))
        throw std::invalid_argument("head samples need the head in L");
  if (sample_dt > 0.0) {
    out.samples.push_back((x - d.x0).segment<3>(3 * p));
    out.head_samples.push_back(head_mean(x - d.x0));
  }
  for (int f = 0; f < frames; ++f) {
    const Eigen::VectorXd fe = force(f);
    double t = 0.0;
    for (int k = 0; k < substeps; ++k) {
      const Eigen::VectorXd x_before = x, v_before = v;
      t += advance_frame(solver, 1, fe, x, v, step);
      if (sample_dt > 0.0) {
        const int per_step = static_cast<int>(std::lround(h / sample_dt));
        const Vec3 u0 = (x_before - d.x0).segment<3>(3 * p), c0 = head_mean(x_before - d.x0),
                   vc = head_mean(v);
        Vec3 u = u0;
        for (int j = 1; j <= per_step; ++j) {
          if (probe_region >= 0) {
            const int m = solver.regions()[probe_region].m;
            if (m != per_step) throw std::invalid_argument("sample_dt must be the probe's h_S");
            u += sample_dt * (v_before + step.dv_S[probe_region][j - 1]).segment<3>(3 * p);
          } else {
            u = u0 + j * sample_dt * v.segment<3>(3 * p);
          }
          out.samples.push_back(u);
          out.head_samples.push_back(c0 + j * sample_dt * vc);
        }
      }
    }
    if (f > 0) times.push_back(t);  // frame 0 includes the factorisations
  }
  out.seconds_per_frame = median(times);
  return out;
}

MultirateSettings settings(double h, bool symmetric,
                           MultirateCoupling coupling = MultirateCoupling::Conservative,
                           bool block_cholesky = true) {
  MultirateSettings s;
  s.h_L = h;
  s.rayleigh_beta = 1e-4;
  s.symmetric_schur = symmetric;
  s.coupling = coupling;
  s.block_cholesky = block_cholesky;
  return s;
}

std::vector<MultirateRegion> regions_of(const Dragon& d, std::size_t set, int m) {
  return {{d.s_names[set], region_vertices(d.mesh, d.s_sets[set]), m}};
}

/// Every variant's frames are timed in turn within each repetition (the machine is
/// shared: load changes between repetitions move all variants alike), and ratios are
/// taken per repetition before the median.
int table1(double cell, int reps) {
  const Dragon d = make_dragon(cell);
  const int m = 10, frames = 21;
  struct Variant {
    std::string name;
    std::unique_ptr<MultirateSolver> solver;
    int substeps;
    std::vector<double> t;
  };
  std::vector<Variant> v;
  const auto add = [&](std::string name, std::vector<MultirateRegion> regions, double h,
                       bool symmetric, int substeps, bool block = true) {
    v.push_back({std::move(name),
                 std::make_unique<MultirateSolver>(
                     *d.model, std::move(regions), d.fixed,
                     settings(h, symmetric, MultirateCoupling::Conservative, block)),
                 substeps, {}});
  };
  // Two symmetric factorisations of H^LL* (and of the single-rate matrices): the
  // vertex-block Cholesky (default) and Eigen's LDLᵀ; each is compared with the
  // single-rate runs that use the same one. LU is the unsymmetric option.
  add("single h_L", {}, kHL, true, 1);
  add("single h_S", {}, kHL / m, true, m);
  add("ldlt h_L", {}, kHL, true, 1, false);
  add("ldlt h_S", {}, kHL / m, true, m, false);
  for (std::size_t set = 0; set < d.s_sets.size(); ++set) {
    add(d.s_names[set] + " LU", regions_of(d, set, m), kHL, false, 1);
    add(d.s_names[set] + " sym", regions_of(d, set, m), kHL, true, 1);
    add(d.s_names[set] + " ldlt", regions_of(d, set, m), kHL, true, 1, false);
  }
  // Frame by frame in turn: the machine's speed drifts by tens of per cent over
  // seconds (a shared VM), which whole runs one after the other turned into ratios
  // that varied by ±15 % between invocations. Each timed frame follows one untimed
  // step of the same solver (results discarded) so that its factors are in cache, as
  // when it runs alone: without it every variant's first solve of a frame is cold,
  // which favoured single-rate h_S (its next m − 1 solves are warm) by 15–25 %.
  MultirateStep scratch;
  for (int rep = 0; rep < reps; ++rep) {
    std::vector<Eigen::VectorXd> x(v.size(), d.x0), vel(v.size(), d.v0);
    std::vector<MultirateStep> step(v.size());
    for (int f = 0; f < frames; ++f) {
      const Eigen::VectorXd fe = pull(d, f);
      for (std::size_t i = 0; i < v.size(); ++i) {
        v[i].solver->step(x[i], vel[i], fe, scratch);
        const double t = advance_frame(*v[i].solver, v[i].substeps, fe, x[i], vel[i], step[i]);
        if (f > 0) v[i].t.push_back(t);  // frame 0 includes the factorisations
      }
    }
  }
  const auto ratio = [&](const Variant& a, const Variant& b) {  // median over frames of a / b
    std::vector<double> r;
    for (std::size_t i = 0; i < a.t.size(); ++i) r.push_back(a.t[i] / b.t[i]);
    return median(r);
  };
  // Phase breakdown per solver step (all frames of all repetitions, factorisation left out).
  for (const Variant& x : v) {
    const MultirateTimings& tm = x.solver->timings();
    const double steps = double(reps) * frames * (x.substeps + 1);  // with the warm-ups
    fmt::print(stderr,
               "  {:>12}: per step {:.3f} ms: rhs {:.3f}, eq. 36 {:.3f}, H^LL* solve {:.3f}, "
               "rest (eq. 37, results) {:.3f}\n",
               x.name, 1e3 * tm.solve / steps, 1e3 * tm.rhs / steps, 1e3 * tm.schur_rhs / steps,
               1e3 * tm.schur_solve / steps,
               1e3 * (tm.solve - tm.rhs - tm.schur_rhs - tm.schur_solve) / steps);
  }
  const Variant &sL = v[0], &sS = v[1], &lL = v[2], &lS = v[3];
  fmt::print("dragon: {} vertices, {} tets, h_L = {} s, m = {}; medians over {} repetitions "
             "of {} frames (frame 0 left out), variants timed frame by frame in turn\n\n",
             d.mesh.vertices.size(), d.mesh.tets.size(), kHL, m, reps, frames - 1);
  fmt::print("| S | \\|S\\| | share | interface DOFs | multi-rate s/frame: LU | block | LDLᵀ | "
             "single h_L: block | LDLᵀ | single h_S: block | LDLᵀ | multi / h_L: block | LDLᵀ | "
             "h_S / multi: block | LDLᵀ |\n"
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (std::size_t set = 0; set < d.s_sets.size(); ++set) {
    const Variant &lu = v[4 + 3 * set], &sym = v[5 + 3 * set], &ld = v[6 + 3 * set];
    const std::size_t s = lu.solver->regions()[0].vertices.size();
    fmt::print("| +{} | {} | {:.1f}% | {} | {:.5f} | {:.5f} | {:.5f} | {:.5f} | {:.5f} | {:.5f} | "
               "{:.5f} | {:.2f}× | {:.2f}× | {:.1f}× | {:.1f}× |\n",
               d.s_names[set], s, 100.0 * s / d.mesh.vertices.size(), lu.solver->interface_dofs(),
               median(lu.t), median(sym.t), median(ld.t), median(sL.t), median(lL.t),
               median(sS.t), median(lS.t), ratio(sym, sL), ratio(ld, lL), ratio(sS, sym),
               ratio(lS, ld));
  }
  fmt::print("\nsingle h_S / single h_L per frame: {:.2f} (block), {:.2f} (LDLᵀ) (m = {} steps)\n",
             ratio(sS, sL), ratio(lS, lL), m);
  return 0;
}

int figure3(double cell) {
  const Dragon d = make_dragon(cell);
  fmt::print("dragon: {} vertices; S = jaw + head; per large step, median of 5\n\n",
             d.mesh.vertices.size());
  fmt::print("| m | Schur+FS factor s | Schur+FS solve s | direct factor s | direct solve s |\n"
             "|---|---|---|---|---|\n");
  for (int m : {1, 2, 4, 8, 16, 32}) {
    std::vector<double> fs, ss, fd, sd;
    for (int rep = 0; rep < 5; ++rep) {
      MultirateSolver solver(*d.model, regions_of(d, 1, m), d.fixed, settings(kHL, false));
      MultirateStep step;
      solver.step(d.x0, d.v0, pull(d, 0), step);  // linearise + factor + solve
      const MultirateTimings first = solver.timings();
      solver.step(d.x0, d.v0, pull(d, 0), step);  // solve only
      fs.push_back(first.factor);
      ss.push_back(solver.timings().solve - first.solve);
      if (m <= 16 || rep == 0) {
        double f = 0, s = 0;
        solver.step_direct(d.x0, d.v0, pull(d, 0), step, &f, &s);
        fd.push_back(f);
        sd.push_back(s);
      }
    }
    fmt::print("| {} | {:.4f} | {:.5f} | {:.4f} | {:.5f} |\n", m, median(fs), median(ss),
               median(fd), median(sd));
  }
  return 0;
}

/// Selector rows of the free DOFs of `vertices` (3|free| × 3n).
Eigen::SparseMatrix<double> dof_selector(const Dragon& d, const std::vector<Index>& vertices) {
  std::vector<Eigen::Triplet<double>> t;
  Eigen::Index row = 0;
  for (Index a : vertices)
    if (!d.fixed[a])
      for (int c = 0; c < 3; ++c) t.emplace_back(row++, 3 * a + c, 1.0);
  Eigen::SparseMatrix<double> P(row, d.x0.size());
  P.setFromTriplets(t.begin(), t.end());
  return P;
}

/// Lowest eigenfrequency (Hz) of K φ = ω² M φ on the DOFs P selects (the others held),
/// by inverse iteration on M^{-1/2} K M^{-1/2}.
double lowest_frequency(const Dragon& d, const Eigen::SparseMatrix<double>& K,
                        const Eigen::SparseMatrix<double>& P) {
  Eigen::VectorXd m3(d.x0.size());
  for (std::size_t a = 0; a < d.mesh.vertices.size(); ++a)
    m3.segment<3>(3 * a).setConstant(1.0 / std::sqrt(d.model->lumped_mass()[a]));
  const Eigen::SparseMatrix<double> Ps = P * m3.asDiagonal();
  const Eigen::SparseMatrix<double> A = Ps * K * Ps.transpose();
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> f(A);
  Eigen::VectorXd x = Eigen::VectorXd::Ones(A.rows());
  for (int it = 0; it < 100; ++it) x = f.solve(x).normalized();
  return std::sqrt(x.dot(A * x)) / (2.0 * M_PI);
}

/// Accuracy at equal cost (the paper's Figures 4 and 7). The jaw is a small appendage
/// that vibrates on its own: by default its first mode with the rest of the dragon held
/// is ~9 Hz and the whole dragon's (feet pinned) ~0.35 Hz; h_L = 10 ms (ω h_L ≈ 0.57:
/// backward Euler loses ~3/4 of the jaw's amplitude per period), m = 10 (ω h_S ≈ 0.057).
/// The jaw is softer than the body here (E 4e4 against 2e5 Pa): its size, not its
/// material, makes it the fast part; `--p 0.003 2e5 1000 1e6 1000 2e5 1000 100` is the
/// same ω h with a jaw 5× stiffer than the body. Pull and release: the jaw starts in
/// its static shape under a downward pull with the rest of the dragon held, everything
/// at rest, and is released at t = 0 (no external force after). The reference is
/// single-rate h_S; single-rate h_L / k for k = 1, 2, 5 brackets the multi-rate cost.
/// The error of a run is the RMS over time of the probe's displacement difference to
/// the reference (vectors, sampled every h_S, positions linear between velocity
/// updates) divided by the reference's RMS displacement; also relative to the head's
/// mean displacement. scripts/plot_multirate_accuracy.py plots the CSV and separates
/// the jaw's vibration from slower motion.
int accuracy(double cell, int reps, const std::string& csv_path, const std::vector<double>& p) {
  const double hL = p[0];
  const int m = 10, frames = int(p[7]);
  const double hS = hL / m;
  const Dragon d = make_dragon(cell, {p[1], 0.4, p[2]}, {p[3], 0.4, p[4]}, {p[5], 0.4, p[6]});
  const std::size_t n = d.mesh.vertices.size();
  Eigen::SparseMatrix<double> K;
  d.model->hessian(d.x0, K);
  const std::vector<Index> jaw = region_vertices(d.mesh, d.s_sets[0]);
  const Eigen::SparseMatrix<double> PS = dof_selector(d, jaw);
  std::vector<Index> all(n);
  for (Index a = 0; a < n; ++a) all[a] = a;
  const double f_jaw = lowest_frequency(d, K, PS);
  const double f_all = lowest_frequency(d, K, dof_selector(d, all));
  // The pull: K^SS u^S = f^S (1 N/kg downward), the rest held; scaled to 1 cm at the probe.
  Eigen::VectorXd f = Eigen::VectorXd::Zero(3 * n);
  for (Index a : jaw) f[3 * a + 2] = -d.model->lumped_mass()[a];
  const Eigen::SparseMatrix<double> K_SS = PS * K * PS.transpose();
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> K_SS_f(K_SS);
  Eigen::VectorXd u = PS.transpose() * K_SS_f.solve(PS * f);
  u *= 0.01 / u.segment<3>(3 * d.probe).norm();
  const Eigen::VectorXd x_pulled = d.x0 + u;
  const auto released = [&](int) { return Eigen::VectorXd::Zero(3 * n).eval(); };

  struct Variant {
    std::string name;
    std::unique_ptr<MultirateSolver> solver;
    int substeps;
    std::vector<double> t;
    RunResult result;
  };
  std::vector<Variant> v;
  // H^LL* factored as symmetric (the paper's option, exact here, the faster one in
  // Table 1); the conservative coupling (the default) and the paper's.
  for (MultirateCoupling c : {MultirateCoupling::Conservative, MultirateCoupling::Paper})
    v.push_back({c == MultirateCoupling::Paper ? "multirate_paper" : "multirate",
                 std::make_unique<MultirateSolver>(*d.model, regions_of(d, 0, m), d.fixed,
                                                   settings(hL, true, c)),
                 1, {}, {}});
  for (int k : {1, 2, 5, m})
    v.push_back({k == m ? std::string("reference") : fmt::format("single_hL_{}", k),
                 std::make_unique<MultirateSolver>(*d.model, std::vector<MultirateRegion>{},
                                                   d.fixed, settings(hL / k, true)),
                 k, {}, {}});
  for (int rep = 0; rep < reps; ++rep)
    for (Variant& x : v) {
      x.result = run_once(d, *x.solver, frames, x.substeps, x_pulled, d.v0, released, hS);
      x.t.push_back(x.result.seconds_per_frame);
    }
  const RunResult& ref = v.back().result;
  // Relative RMS difference to the reference of the probe's displacement, absolute
  // or relative to the head's mean displacement (the jaw's own motion).
  const auto error = [&](const RunResult& r, bool relative) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < ref.samples.size(); ++i) {
      const Vec3 a = relative ? Vec3(r.samples[i] - r.head_samples[i]) : r.samples[i];
      const Vec3 b = relative ? Vec3(ref.samples[i] - ref.head_samples[i]) : ref.samples[i];
      num += (a - b).squaredNorm();
      den += b.squaredNorm();
    }
    return std::sqrt(num / den);
  };
  // Linear momentum after one step from the pulled state with nothing pinned: backward
  // Euler conserves it (K 1 = 0); eq. 19 gives L the S forces of the end of the large
  // step while S takes them at every substep, so the multi-rate step does not.
  const auto momentum = [&](int m_jaw, MultirateCoupling c) {
    MultirateSolver free(*d.model, regions_of(d, 0, m_jaw), std::vector<bool>(n, false),
                         settings(hL, false, c));
    MultirateStep st;
    free.step(x_pulled, d.v0, Eigen::VectorXd::Zero(3 * n), st);
    Eigen::VectorXd dv = st.dv_L + st.dv_S[0].back();
    Vec3 total = Vec3::Zero(), jaw_part = Vec3::Zero();
    for (Index a = 0; a < n; ++a) total += d.model->lumped_mass()[a] * dv.segment<3>(3 * a);
    for (Index a : jaw) jaw_part += d.model->lumped_mass()[a] * dv.segment<3>(3 * a);
    return std::pair{total.norm(), jaw_part.norm()};
  };
  fmt::print("dragon: {} vertices; body E = {:g} Pa, rho = {:g}; jaw E = {:g} Pa, rho = {:g}; "
             "head E = {:g} Pa, rho = {:g}; nu = 0.4, Rayleigh beta = 1e-4, feet pinned\n",
             n, p[1], p[2], p[3], p[4], p[5], p[6]);
  fmt::print("first eigenfrequency: jaw with the rest held {:.1f} Hz, whole dragon {:.3f} Hz\n",
             f_jaw, f_all);
  fmt::print("h_L = {:g} s, m = {}, h_S = {:g} s; jaw pulled (probe vertex {} at 1 cm) and "
             "released; {:g} s; medians of {} repetitions\n",
             hL, m, hS, d.probe, frames * hL, reps);
  for (MultirateCoupling c : {MultirateCoupling::Paper, MultirateCoupling::Conservative})
    for (int mj : {1, 2, m}) {
      const auto [total, jaw_part] = momentum(mj, c);
      fmt::print("one step from the pulled state, nothing pinned, {} coupling, jaw m = {}: "
                 "|total momentum| {:.3e} kg m/s, |jaw momentum| {:.3e}\n",
                 c == MultirateCoupling::Paper ? "paper's" : "conservative", mj, total,
                 jaw_part);
    }
  fmt::print("\n| run | step | s/frame | cost / multi-rate | error | error relative to head |\n"
             "|---|---|---|---|---|---|\n");
  const Variant& multi = v[0];
  for (const Variant& x : v) {
    std::vector<double> r;
    for (int rep = 0; rep < reps; ++rep) r.push_back(x.t[rep] / multi.t[rep]);
    const bool is_multi = x.solver->regions().size() == 1;
    fmt::print("| {} | {} | {:.5f} | {:.2f} | {:.3f} | {:.3f} |\n", x.name,
               is_multi ? fmt::format("h_L = {:g} s, jaw h_S = {:g} s", hL, hS)
                        : fmt::format("{:g} s", hL / x.substeps),
               median(x.t), median(r), error(x.result, false), error(x.result, true));
  }
  std::FILE* out = csv_path.empty() ? stdout : std::fopen(csv_path.c_str(), "w");
  if (!out) throw std::runtime_error("cannot write " + csv_path);
  if (out == stdout) fmt::print("\n");
  fmt::print(out, "t");
  for (const Variant& x : v) fmt::print(out, ",{0}_uz,{0}_norm,{0}_rel_uz", x.name);
  fmt::print(out, "\n");
  for (std::size_t i = 0; i < ref.samples.size(); ++i) {
    fmt::print(out, "{:.4f}", i * hS);
    for (const Variant& x : v) {
      const RunResult& r = x.result;
      fmt::print(out, ",{:.6e},{:.6e},{:.6e}", r.samples[i].z(), r.samples[i].norm(),
                 r.samples[i].z() - r.head_samples[i].z());
    }
    fmt::print(out, "\n");
  }
  if (out != stdout) std::fclose(out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: bench_multirate figure3|table1|accuracy [--cell C]\n");
    return 2;
  }
  double cell = 0.0;
  int reps = 5;
  std::string csv;
  std::vector<double> acc = {0.01, 2e5, 1000, 4e4, 1000, 2e5, 1000, 100};
  for (int i = 2; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--p") == 0)
      for (int j = 0; j < 8 && i + 1 + j < argc; ++j) acc[j] = std::stod(argv[i + 1 + j]);
    if (std::strcmp(argv[i], "--csv") == 0) csv = argv[i + 1];
    if (std::strcmp(argv[i], "--cell") == 0) cell = std::stod(argv[i + 1]);
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::max(1, std::stoi(argv[i + 1]));
  }
  if (cell <= 0.0) cell = kDragonCell;
  const std::string what = argv[1];
  if (what == "figure3") return figure3(cell);
  if (what == "table1") return table1(cell, reps);
  if (what == "accuracy") return accuracy(cell, reps, csv, acc);
  fmt::print(stderr, "unknown benchmark '{}'\n", what);
  return 2;
}
