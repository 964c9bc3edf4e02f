#pragma once
/// Zhao, Li and Barbič's asynchronous implicit backward Euler (DESIGN §4): regions
/// S_1..S_k of a tet solid take m_i substeps h_i = h_L / m_i inside one large step
/// h_L of the rest, L, coupled in one linear system per large step.
///
/// Per region the unknowns are the cumulative velocity changes Δv^S_{0,r}, r = 1..m
/// (eq. 32), plus Δv^L_{0,m} for L; the system is eq. 23 with the blocks of eq. 24–28
/// and right-hand sides eq. 29–30. Lumped masses (M^SL = 0) and Rayleigh damping
/// D = α M + β K make every coupling block a multiple of K^SL:
///   B_r = c_r K^SL, c_r = (r h_S β + r² h_S²) / m        (eq. 26),
///   E = h_L h_S K^LS,  F = (h_L β + h_L h_S) K^LS          (eq. 28),
/// i.e. the S blocks of L's row are E_i = e_i K^LS; the conservative coupling (below,
/// the default) changes only c_r, e_i and A^L, so everything here holds for both.
/// Regions S_i and S_j must not share a tet (the paper's "smaller timestep regions do
/// not interact"), so the S blocks of different regions are uncoupled and the Schur
/// complement sums over regions:
///   H^LL* = A^L − Σ_i H^{LS_i} (H^{S_iS_i})⁻¹ H^{S_iL}      (eq. 35),
///   b^L*  = b^L − Σ_i H^{LS_i} (H^{S_iS_i})⁻¹ b̄^{S_i}       (eq. 36),
///   Δv̄^{S_i} = (H^{S_iS_i})⁻¹ (b̄^{S_i} − H^{S_iL} Δv^L)     (eq. 37).
/// (H^SS)⁻¹ is the block forward substitution of Algorithm 1 (its text is not in our
/// copy of the paper; derived here from eq. 23): with P_r = Σ_{i≤r} X_i and C = G − M,
///   A^S X_r = Y_r − G P_{r−1} + M X_{r−1},   r = 1..m,
/// m solves with one factored A^S. H^{S_iL} and H^{LS_i} are non-zero only at the
/// interface DOFs J_i of L, so the J_i rows of H^LS (H^SS)⁻¹ — the adjoint (backward)
/// substitution of the dense block K^SL[:, J_i], columns in parallel (TBB: Algorithm 2)
/// — give both the correction to H^LL, a dense |J_i| × |J_i| block, and eq. 36 as dense
/// products; a step needs one forward substitution (eq. 37).
///
/// Linear FEM: K is constant, so A^S, the Schur complement and its factorisation are
/// computed once. Corotational: re-linearised at every large step (Algorithm 2) with
/// the PSD-projected tangent stiffness (so that A^S stays positive definite) or, with
/// MultirateDamping::Tangent, the exact tangent K(x_n) of eq. 5 as printed (below).
/// Prescribed (fixed) vertices are in no region: their velocity is given and enters
/// the right-hand sides through K v_0 and D v_0 (eq. 29–30 over all columns).
#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseLU>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "integrators/fem/tet_fem.hpp"
#include "integrators/energy/tick_plane.hpp"

namespace clockwork {

class VertexBlockCholesky;

struct MultirateRegion {
  std::string name;
  std::vector<Index> vertices;  ///< model vertex indices (fixed ones are dropped)
  int m = 1;                    ///< h_L / h_S, a positive integer
};

/// How L and the regions exchange forces inside a large step.
enum class MultirateCoupling {
  /// Zhao et al. as published: S sees L's velocity interpolated linearly (eq. 14) and
  /// its displacement r h_S v_r^L (eq. 26's r²); L sees S at the end of the step (eq. 19).
  /// The two sides' impulses differ for m > 1, so linear momentum is not conserved, and
  /// a stiff interface with large m makes the step matrix's spectral radius exceed 1
  /// (docs/zhao.md "Coupling").
  Paper,
  /// Every tet with a vertex in S (S's and the interface's) is integrated at h_S on all
  /// of its vertices, L's moving with its end-of-step velocity v_m^L (u_r^L = u_0^L +
  /// r h_S v_m^L, the path the kernel draws); the rest of L's tets at h_L. Each tet's
  /// forces then cancel at every substep: momentum is conserved exactly. Same block
  /// structure as eq. 23 with B_r = h_S (β + r h_S) K^SL, E_i = h_S (β + (m − i + 1) h_S)
  /// K^LS and A^L = M + h_L D + h_L² (K^LL − (m − 1)/(2m) K_F^LL), K_F the stiffness of
  /// the region's tets. m = 1 is the paper's scheme.
  Conservative,
};

/// Which stiffness K(x_n) the step linearises with — the K of the stiffness terms and
/// of Rayleigh damping D = α M + β K alike. Every block of eq. 23 is a multiple of one
/// K (B_r = c_r K^SL, E_i = e_i K^LS, A^S = (1 + h α) M + (h β + h²) K^SS, G = h² K^SS),
/// which is what the Schur path is built on (Algorithm 1's G X_r = γ (A^S X_r − …),
/// the rank-|I| interface of W = K^SL[:, J]); a D with another K than the stiffness
/// terms would double every coupling block, so the choice of D's K is the choice of
/// the step's K. The step solved (all regions at m = 1: backward Euler's linearised
/// step, BackwardEuler with max_newton = 1) is
///   ((1 + hα) M + (hβ + h²) K) Δv = h (f_ext − f_int(x_n) − α M v_n − (β + h) K v_n).
/// Linear FEM: K is constant and PSD, so both are the same step, bit for bit.
enum class MultirateDamping {
  /// K = K̂(x_n), each element block projected to PSD (default; the solver's behaviour
  /// before the choice existed): D is PSD, so the damping force β K̂ v never does
  /// positive work, and A^S, A^L (and substep_change's matrix) are positive definite in
  /// any state. The same step as BackwardEuler {max_newton 1, fix LocalClamp, damping
  /// ProjectedAtStart}. Differs from eq. 5 wherever an element's tangent is indefinite
  /// (corotational elements under compression).
  Projected,
  /// K = K(x_n), the unprojected tangent at the linearisation point: Zhao's eq. 5 as
  /// printed (BackwardEuler {max_newton 1, fix None, damping TangentAtEnd}); the
  /// multi-rate step is one linear solve at x_n, so the tangent "at the end" of
  /// backward Euler's Newton iteration is the tangent at x_n here. Where K(x_n) is
  /// indefinite β vᵀ K v can be negative (damping that adds energy), and A^S can lose
  /// definiteness: its Cholesky fails and step() throws NumericalFailure ("multirate:
  /// A^S is not positive definite"; substep_change() likewise for its matrix). H^LL* is
  /// factored by LU (or LDLᵀ if symmetric), which needs no
  /// definiteness: it throws only where H^LL* is singular, and an indefinite H^LL* is
  /// solved as it is.
  Tangent,
};

struct MultirateSettings {
  double h_L = 0.0;              ///< s, > 0
  double rayleigh_alpha = 0.0;   ///< 1/s
  double rayleigh_beta = 0.0;    ///< s
  /// Treat H^LL* as symmetric (½(H + Hᵀ), LDLᵀ) instead of sparse LU (the paper's
  /// "symmetric solver" option; Figure 2: almost no difference). With our lumped
  /// masses and Rayleigh damping H^LL* is symmetric up to round-off (every block of
  /// (H^SS)⁻¹ is a function of M⁻¹K^SS times M⁻¹, and H^LS, H^SL are multiples of
  /// K^LS = (K^SL)ᵀ), so this is exact and its solve is cheaper (test_multirate).
  bool symmetric_schur = false;
  /// Symmetric H^LL*: factored by the vertex-block Cholesky (block_cholesky.hpp; LDLᵀ if
  /// it is not positive definite) or by Eigen's scalar LDLᵀ. The block solve is ~2×
  /// faster here; docs/performance.md's Table 1 analogue reports both.
  bool block_cholesky = true;
  MultirateCoupling coupling = MultirateCoupling::Conservative;
  MultirateDamping damping = MultirateDamping::Projected;
};

/// Result of one large step.
struct MultirateStep {
  Eigen::VectorXd dv_L;  ///< 3n: Δv^L_{0,m} on L vertices, zero elsewhere
  /// Per region i: Δv^{S_i}_{0,r} for r = 1..m_i, each 3n with zeros outside S_i.
  std::vector<std::vector<Eigen::VectorXd>> dv_S;
  /// The solver whose layout the vectors hold: its next step() writes only the entries
  /// of L and of the regions (the zeros elsewhere are already there), not 3n per substep.
  /// Callers read the vectors; they must not write them.
  const void* layout = nullptr;
};

/// Wall time summed over steps, s.
struct MultirateTimings {
  double linearise = 0.0;  ///< K, D assembly and block extraction
  double factor = 0.0;     ///< A^S factorisations, Schur complement and its factorisation
  double solve = 0.0;      ///< a step's right-hand sides, substitutions and H^LL* solve:
  double rhs = 0.0;        ///<   of which the right-hand sides (eq. 29–30),
  double schur_solve = 0.0;  ///<   the H^LL* solve (eq. 34),
  double schur_rhs = 0.0;    ///<   eq. 36's products (b^L*)
};

class MultirateSolver {
 public:
  using Vector = Eigen::VectorXd;
  using Sparse = Eigen::SparseMatrix<double>;

  /// Throws std::invalid_argument naming the problem: m < 1, an empty region, a vertex
  /// in two regions, two regions sharing a tet, a vertex index out of range.
  MultirateSolver(const TetFemModel& model, std::vector<MultirateRegion> regions,
                  const std::vector<bool>& fixed, MultirateSettings settings);
  ~MultirateSolver();

  /// One large step from positions x0 and velocities v0 (3n) under the constant
  /// external force f_ext (3n), by the Schur complement and forward substitution.
  void step(const Vector& x0, const Vector& v0, const Vector& f_ext, MultirateStep& out);
  /// Contact planes for the next step() (DESIGN §7, docs/zhao.md "Contact inside the
  /// large step"): each enters the linearised system as the two-sided spring
  /// (k/2)(offset − n·y(x))² — its stiffness k w_i w_j n nᵀ added to K (so to the L
  /// system, the S blocks, their substeps and the damping β K alike) and its force at
  /// x0 to f_int — exact, since a plane is linear in x. A plane's vertices must all be
  /// in L or all in one region (SolidSource keeps such planes; prescribed ones aside).
  /// A region's plane with TickPlane::first_substep = q > 1 acts from substep q on: it
  /// is in K and f_int for the substeps r ≥ q only (their A_r, G_r and b̄_r, each
  /// factored on its own; multirate_planes.cpp), so that it does not pull a point that
  /// reaches it late in the step towards it before (q > m: it does not act). On L, or
  /// across groups, first_substep is ignored (the plane acts from the start).
  /// A step with planes, or the first one after, re-linearises and refactors (linear
  /// FEM too). An empty span clears them.
  void set_planes(std::span<const TickPlane> planes) { planes_.assign(planes.begin(), planes.end()); }
  /// −2 prescribed, −1 L, i ≥ 0 region i.
  int group(Index vertex) const { return group_[vertex]; }
  /// The same system (eq. 23) assembled whole and solved by sparse LU: the reference
  /// for tests and the "direct" curve of the paper's Figure 3. `factor_seconds` and
  /// `solve_seconds` receive the times of the two phases.
  void step_direct(const Vector& x0, const Vector& v0, const Vector& f_ext, MultirateStep& out,
                   double* factor_seconds = nullptr, double* solve_seconds = nullptr);

  /// One substep of region i from the kernel's current state (x, v: 3n, at a substep
  /// boundary of the large step last taken by step()), by backward Euler at h_S on the
  /// region's tets with every other vertex moving with its velocity in v:
  ///   A^S Δv = h_S [f_ext − f_int(x_0) − K (x − x_0) − α M v − (β + h_S) K v]^S,
  /// K linearised at x_0 as in step(). This is the conservative coupling's substep
  /// recursion, so when nothing else changed a velocity since step() it reproduces
  /// Δv^S_{0,r+1} − Δv^S_{0,r} (test_multirate); after a contact impulse on the region
  /// or its neighbours it is the response the precomputed increments lack. Writes the
  /// region's vertices' entries of `dv` (3n), leaves the others.
  void substep(std::size_t region, const Vector& x, const Vector& v, const Vector& f_ext,
               Vector& dv);
  /// Vertices of the tets with a vertex in region i (the region, its L neighbours and
  /// prescribed ones): whose velocities the region's substeps depend on.
  const std::vector<Index>& region_stencil(std::size_t region) const;

  /// A substep of region i after an outside change (contact) made the state differ
  /// from the plan of the last step() by dx (positions at the substep's start) and dv
  /// (velocities before it; 3n, read on the region's stencil): the change of the
  /// substep's increments, to add to the planned Δv^S_{0,r+1} − Δv^S_{0,r}.
  ///
  /// Conservative coupling, m > 1: step() gave L at once its share of the region tets'
  /// forces over all m substeps along the plan, per substep r
  ///   −h_S [f_int,F(x_0) + K_F (x_{r−1} + h_S v_r − x_0) + β K_F v_r]^L
  /// (the sums behind e_i, eq. 28, and A^L's w K_F^LL), while S takes its rows of the
  /// same forces substep by substep. Were S alone to answer the difference (substep()
  /// from the state), L's share would stay the plan's and the tets' forces would no
  /// longer sum to zero: linear momentum lost (issue 41). So the difference is answered
  /// by one backward-Euler substep of the region's tets (K_F) on S *and* its L
  /// neighbours (region_interface(i)), every other vertex held on its velocity:
  ///   [(1 + h_S α) M + h_S (β + h_S) K_F] δ = −h_S [K_F (dx + (β + h_S) dv) + α M dv]
  /// on those vertices. With α = 0, Σ M δ = −h_S 1ᵀ K_F (…) = 0 (a translation exerts
  /// no force): the plan's exchange, exact by construction, plus one that sums to zero.
  /// Implicit in the L neighbours too: kicking them explicitly with their rows of the
  /// same forces is unstable when h_S² K/m ≫ 1 (test_multirate). The L neighbours' own
  /// tets see their velocity change at the next large step, as they see a contact
  /// impulse. Writes δ on the region's vertices and on region_interface(i), returns
  /// true; the matrix is factored on the first call after a linearisation.
  ///
  /// Paper's coupling or m = 1 (no momentum to keep: eq. 19 already loses it): δ from
  /// substep()'s system on S alone, A^S δ = −h_S [K (dx + (β + h_S) dv) + α M dv]^S,
  /// written on the region's vertices; returns false.
  bool substep_change(std::size_t region, const Vector& dx, const Vector& dv, Vector& out);
  /// The L vertices of region i's stencil (its tets' other free vertices): those
  /// substep_change() moves with S under the conservative coupling.
  const std::vector<Index>& region_interface(std::size_t region) const;

  const std::vector<MultirateRegion>& regions() const { return regions_; }
  const MultirateSettings& settings() const { return settings_; }
  /// Vertices of L (neither fixed nor in a region).
  const std::vector<Index>& large_vertices() const { return large_; }
  /// Interface DOFs of L coupled to any region (sum of |J_i|).
  std::size_t interface_dofs() const;
  const MultirateTimings& timings() const { return timings_; }

 private:
  struct RegionData;
  void linearise(const Vector& x0);
  void factor();
  /// Right-hand sides eq. 29–30 at (x0, v0): b^L, and per region a, k with
  /// b_r^S = a − r k.
  void rhs(const Vector& x0, const Vector& v0, const Vector& f_ext);
  // Planes acting from a later substep (multirate_planes.cpp).
  /// The region whose substeps q ≥ p.first_substep > 1 alone the plane acts in; −1 if
  /// it acts from the start (on L, across groups, or first_substep ≤ 1).
  int delayed_region(const TickPlane& p) const;
  /// Per region: the delayed planes' Kd_S, Kd_SS per substep (RegionData), at x0.
  void linearise_delayed(const Vector& x0);
  /// Factors the region's A_r that differ from A^S.
  void factor_delayed(RegionData& d) const;
  /// Per region: shift_r = h (f_d,r(x0) + β Kd_r v0) + r h² Kd_r v0.
  void delayed_rhs(const Vector& x0, const Vector& v0);
  /// b^L* += H^LS (H^SS)⁻¹ shift (the part of eq. 36 that S0, S1 do not cover).
  void add_delayed_schur_rhs(RegionData& d);

  const TetFemModel& model_;
  std::vector<MultirateRegion> regions_;
  MultirateSettings settings_;
  std::vector<int> group_;        ///< per vertex: -2 fixed, -1 L, i ≥ 0 region i
  std::vector<Index> large_;
  std::vector<std::unique_ptr<RegionData>> data_;
  Sparse K_, P_L_;                ///< full stiffness at the linearisation point; L selector
  Sparse A_L_;                    ///< M^LL + h_L D^LL + h_L² K^LL
  Sparse schur_;                  ///< H^LL*
  Eigen::SparseLU<Sparse> schur_lu_;
  Eigen::SimplicialLDLT<Sparse> schur_ldlt_;
  std::unique_ptr<VertexBlockCholesky> schur_block_;  ///< symmetric H^LL*, when SPD
  Vector x0_;  ///< the last step's start positions (its linearisation point)
  Vector mass3_, f_int0_, b_L_, Kv_, Dv_, common_, b_star_, dv_L_;  ///< per-step buffers
  Eigen::MatrixXd uv_, Kuv_;  ///< linear FEM: [x0 − X, v0] and K times it
  bool linearised_ = false, factored_ = false;
  std::vector<TickPlane> planes_;  ///< the next step's contact planes
  Sparse Kc_;                      ///< their stiffness, in K_ too
  bool had_planes_ = false;        ///< the last linearisation holds planes
  MultirateTimings timings_;
};

}  // namespace clockwork
