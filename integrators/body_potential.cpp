#include "integrators/body_potential.hpp"

#include "integrators/parallel_for.hpp"

namespace clockwork {

namespace {
constexpr std::size_t kGrain = 256;
}  // namespace

double BodyPotential::value(const Vector& X) const {
  const std::size_t nm = membranes_.size(), nh = hinges_.size();
  element_values_.resize(nm + nh);
  for_each_index(nm, kGrain, [&](std::size_t e) {
    element_values_[e] = membranes_[e].term.value(gather<3>(X, membranes_[e].v));
  });
  for_each_index(nh, kGrain, [&](std::size_t e) {
    element_values_[nm + e] = hinges_[e].term.value(gather<4>(X, hinges_[e].v));
  });
  double sum = 0.0;
  for (double v : element_values_) sum += v;
  for (std::size_t a = 0; a < n_; ++a) sum -= mass_[a] * gravity_.dot(X.segment<3>(3 * a));
  if (external_.size() == X.size()) sum -= external_.dot(X);
  return sum;
}

void BodyPotential::gradient(const Vector& X, Vector& out) const {
  const std::size_t nm = membranes_.size(), nh = hinges_.size();
  element_gradients_.resize(9 * nm + 12 * nh);
  for_each_index(nm, kGrain, [&](std::size_t e) {
    Eigen::Map<StencilVector<3>> out_e(&element_gradients_[9 * e]);
    out_e = membranes_[e].term.gradient(gather<3>(X, membranes_[e].v));
  });
  for_each_index(nh, kGrain, [&](std::size_t e) {
    Eigen::Map<StencilVector<4>> out_e(&element_gradients_[9 * nm + 12 * e]);
    out_e = hinges_[e].term.gradient(gather<4>(X, hinges_[e].v));
  });
  out.setZero(3 * n_);
  for (std::size_t e = 0; e < nm; ++e)
    for (int i = 0; i < 3; ++i)
      out.segment<3>(3 * membranes_[e].v[i]) += Eigen::Map<const Vec3>(&element_gradients_[9 * e + 3 * i]);
  for (std::size_t e = 0; e < nh; ++e)
    for (int i = 0; i < 4; ++i)
      out.segment<3>(3 * hinges_[e].v[i]) +=
          Eigen::Map<const Vec3>(&element_gradients_[9 * nm + 12 * e + 3 * i]);
  for (std::size_t a = 0; a < n_; ++a) out.segment<3>(3 * a) -= mass_[a] * gravity_;
  if (external_.size() == X.size()) out -= external_;
}

template <typename MembraneBlock, typename HingeBlock>
void BodyPotential::assemble(const Vector& X, Sparse& out, MembraneBlock membrane,
                             HingeBlock hinge) const {
  const std::size_t nm = membranes_.size(), nh = hinges_.size();
  triplets_.resize(81 * nm + 144 * nh);
  const auto scatter = [&](std::size_t base, const auto& v, const auto& H) {
    const int N = static_cast<int>(v.size());
    std::size_t k = base;
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j)
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c)
            triplets_[k++] = {static_cast<int>(3 * v[i] + r), static_cast<int>(3 * v[j] + c),
                              H(3 * i + r, 3 * j + c)};
  };
  for_each_index(nm, kGrain, [&](std::size_t e) {
    scatter(81 * e, membranes_[e].v, membrane(membranes_[e].term, gather<3>(X, membranes_[e].v)));
  });
  for_each_index(nh, kGrain, [&](std::size_t e) {
    scatter(81 * nm + 144 * e, hinges_[e].v, hinge(hinges_[e].term, gather<4>(X, hinges_[e].v)));
  });
  out.resize(static_cast<Eigen::Index>(3 * n_), static_cast<Eigen::Index>(3 * n_));
  out.setFromTriplets(triplets_.begin(), triplets_.end());
}

void BodyPotential::hessian(const Vector& X, Sparse& out) const {
  assemble(
      X, out, [](const MembraneStVK& t, const auto& x) { return t.hessian(x, true); },
      [](const HingeBending& t, const auto& x) { return t.hessian(x, true); });
}

void BodyPotential::material_stiffness(const Vector& X, Sparse& out) const {
  assemble(
      X, out, [](const MembraneStVK& t, const auto& x) { return t.material_stiffness(x); },
      [](const HingeBending& t, const auto& x) { return t.material_stiffness(x); });
}

}  // namespace clockwork
