/// SolidFineSource: a multi-rate solid's fine events, which apply each region's planned
/// substep increments (Zhao eq. 20) or, off the plan, re-solve them from the kernel's
/// state (docs/zhao.md "Contact inside the large step"). Kept apart from solid_source.cpp,
/// which plans the large step.
#include "integrators/implicit/solid_source.hpp"

#include <cassert>

namespace clockwork {

int SolidFineSource::stencil_size(EventSlot slot) const {
  return static_cast<int>(coarse_.region_global_[slot].size());
}

/// Substep r of region i applies Δv^S_{r,r+1} = Δv^S_{0,r+1} − Δv^S_{0,r} (eq. 20). Off
/// the plan it adds the response of the region's tets to the state's difference from
/// the plan, on S and (conservative coupling) its L neighbours
/// (MultirateSolver::substep_change).
double SolidFineSource::process(EventSlot slot, double time, Kernel& kernel) {
  SolidSource& c = coarse_;
  MultirateSolver& solver = *c.multirate_;
  const MultirateRegion& region = solver.regions()[slot];
  const auto& dv = c.step_.dv_S[slot];
  const int r = next_[slot];
  assert(r >= 1 && r < region.m);
  char& off = c.off_plan_[slot];
  if (!off) off = left_plan(slot, r, kernel.state());
  const Eigen::Index n3 = c.x_.size();
  dv_.resize(n3);  // only the region's entries are written and read
  if (off) {
    if (dx_plan_.size() != n3) {  // zeros off the stencils, which are never written
      dx_plan_.setZero(n3);
      dv_plan_.setZero(n3);
    }
    c.gather(kernel.state(), time);
    plan_difference(slot, r);
    const bool with_neighbours = solver.substep_change(slot, dx_plan_, dv_plan_, dv_);
    // The planned increment lands at x, not at the plan's x − δx: the step's rotation
    // (keep_angular_momentum_multirate) counted x_plan × m Δv; the rest is cancelled too.
    Vec3 moved = Vec3::Zero();
    const std::vector<double>& mass = c.model_->lumped_mass();
    for (Index a : region.vertices)
      moved += Vec3(dx_plan_.segment<3>(3 * a)).cross(mass[a] * Vec3((dv[r] - dv[r - 1]).segment<3>(3 * a)));
    c.cancel_response_torque(region.vertices, with_neighbours ? &solver.region_interface(slot) : nullptr, dv_,
                             moved);
    for (Index a : region.vertices)
      dv_.segment<3>(3 * a) += (dv[r] - dv[r - 1]).segment<3>(3 * a);
    c.kick(kernel, time, dv_, region.vertices);
    if (with_neighbours) c.kick(kernel, time, dv_, solver.region_interface(slot));
    ++c.counters_.resolved_substeps;
  } else {
    for (Index a : region.vertices) dv_.segment<3>(3 * a) = (dv[r] - dv[r - 1]).segment<3>(3 * a);
    c.kick(kernel, time, dv_, region.vertices);
  }
  ++c.counters_.fine_steps;
  next_[slot] = r + 1;
  if (r + 1 >= region.m) return kNever;
  return c.clock_.time(c.current_, r + 1, region.m);
}

/// The plan (step()) puts every vertex on v_q = v(t_n) + Δv^L + Δv^S_{0,q} during
/// substep q = 1..m (Δv^L zero on S, Δv^S zero off it; eq. 20–22), so the one after
/// fine event r starts at x(t_n) + h_S Σ_{q≤r} v_q; before its kick S is on v_r.
void SolidFineSource::plan_difference(EventSlot slot, int r) {
  const SolidSource& c = coarse_;
  const MultirateSolver& solver = *c.multirate_;
  const double hS = c.h_ / solver.regions()[slot].m;
  const auto& dv_S = c.step_.dv_S[slot];
  for (Index a : solver.region_stencil(slot)) {
    const Eigen::Index o = 3 * static_cast<Eigen::Index>(a);
    const Vec3 v_L = c.v_start_.segment<3>(o) + c.step_.dv_L.segment<3>(o);
    Vec3 x_plan = c.x_start_.segment<3>(o) + (r * hS) * v_L;
    for (int q = 0; q < r; ++q) x_plan += hS * dv_S[q].segment<3>(o);
    dx_plan_.segment<3>(o) = c.x_.segment<3>(o) - x_plan;
    dv_plan_.segment<3>(o) = c.v_.segment<3>(o) - (v_L + dv_S[r - 1].segment<3>(o));
  }
}

bool SolidFineSource::left_plan(EventSlot region, int r, const VertexState& state) const {
  const SolidSource& c = coarse_;
  const auto& dv_S = c.step_.dv_S[region][r - 1];
  for (Index a : c.multirate_->region_stencil(region)) {
    const Vec3 planned = (c.v_start_ + c.step_.dv_L + dv_S).segment<3>(3 * a);
    // Round-off of the kernel's sums of increments is ~1e-16 |v|; an impulse worth a
    // re-solve is far above 1e-9 m/s.
    if ((state.velocity(c.vertices_[a]) - planned).norm() > 1e-9 * (1.0 + planned.norm()))
      return true;
  }
  return false;
}

}  // namespace clockwork
