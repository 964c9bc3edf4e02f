#include "integrators/energy/body_potential.hpp"

#include "integrators/solvers/parallel_for.hpp"

#include <algorithm>
#include <utility>

namespace clockwork {

namespace {
constexpr std::size_t kElementGrain = 256;
}  // namespace

double BodyPotential::value(const Vector& X) const {
  const std::size_t nm = membranes_.size(), nh = hinges_.size();
  element_values_.resize(nm + nh);
  for_each_index(nm, kElementGrain, [&](std::size_t e) {
    element_values_[e] = membranes_[e].term.value(gather<3>(X, membranes_[e].v));
  });
  for_each_index(nh, kElementGrain, [&](std::size_t e) {
    element_values_[nm + e] = hinges_[e].term.value(gather<4>(X, hinges_[e].v));
  });
  return sum_values(X);
}

void BodyPotential::gradient(const Vector& X, Vector& out) const {
  const std::size_t nm = membranes_.size(), nh = hinges_.size();
  element_gradients_.resize(9 * nm + 12 * nh);
  for_each_index(nm, kElementGrain, [&](std::size_t e) {
    Eigen::Map<StencilVector<3>> out_e(&element_gradients_[9 * e]);
    out_e = membranes_[e].term.gradient(gather<3>(X, membranes_[e].v));
  });
  for_each_index(nh, kElementGrain, [&](std::size_t e) {
    Eigen::Map<StencilVector<4>> out_e(&element_gradients_[9 * nm + 12 * e]);
    out_e = hinges_[e].term.gradient(gather<4>(X, hinges_[e].v));
  });
  sum_gradients(X, out);
}

double BodyPotential::value_and_gradient(const Vector& X, Vector& out) const {
  const std::size_t nm = membranes_.size(), nh = hinges_.size();
  element_values_.resize(nm + nh);
  element_gradients_.resize(9 * nm + 12 * nh);
  for_each_index(nm, kElementGrain, [&](std::size_t e) {
    StencilVector<3> g;
    element_values_[e] = membranes_[e].term.value_and_gradient(gather<3>(X, membranes_[e].v), g);
    Eigen::Map<StencilVector<3>> out_e(&element_gradients_[9 * e]);
    out_e = g;
  });
  for_each_index(nh, kElementGrain, [&](std::size_t e) {
    StencilVector<4> g;
    element_values_[nm + e] = hinges_[e].term.value_and_gradient(gather<4>(X, hinges_[e].v), g);
    Eigen::Map<StencilVector<4>> out_e(&element_gradients_[9 * nm + 12 * e]);
    out_e = g;
  });
  sum_gradients(X, out);
  return sum_values(X);
}

double BodyPotential::sum_values(const Vector& X) const {
  double sum = 0.0;
  for (double v : element_values_) sum += v;
  for (std::size_t a = 0; a < n_; ++a) sum -= mass_[a] * gravity_.dot(X.segment<3>(3 * a));
  if (external_.size() == X.size()) sum -= external_.dot(X);
  return sum;
}

void BodyPotential::sum_gradients(const Vector& X, Vector& out) const {
  const std::size_t nm = membranes_.size(), nh = hinges_.size();
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
  entries_.resize(81 * nm + 144 * nh);
  const auto store = [&](std::size_t base, const auto& H) {
    const int N = static_cast<int>(H.rows() / 3);
    std::size_t k = base;
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j)
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) entries_[k++] = H(3 * i + r, 3 * j + c);
  };
  for_each_index(nm, kElementGrain, [&](std::size_t e) {
    store(81 * e, membrane(membranes_[e].term, gather<3>(X, membranes_[e].v)));
  });
  for_each_index(nh, kElementGrain, [&](std::size_t e) {
    store(81 * nm + 144 * e, hinge(hinges_[e].term, gather<4>(X, hinges_[e].v)));
  });
  if (slot_.size() != entries_.size() || pattern_.rows() != static_cast<Eigen::Index>(3 * n_))
    build_pattern();
  const auto same = [](const Sparse& a, const Sparse& b) {
    return a.isCompressed() && a.rows() == b.rows() && a.cols() == b.cols() &&
           a.nonZeros() == b.nonZeros() &&
           std::equal(a.outerIndexPtr(), a.outerIndexPtr() + a.outerSize() + 1, b.outerIndexPtr()) &&
           std::equal(a.innerIndexPtr(), a.innerIndexPtr() + a.nonZeros(), b.innerIndexPtr());
  };
  if (!same(out, pattern_)) out = pattern_;
  double* values = out.valuePtr();
  std::fill(values, values + out.nonZeros(), 0.0);
  for (std::size_t k = 0; k < entries_.size(); ++k) values[slot_[k]] += entries_[k];
}

void BodyPotential::build_pattern() const {
  const std::size_t nm = membranes_.size(), nh = hinges_.size();
  std::vector<std::pair<int, int>> at;  // (row, column) of each entry, in entries_' order
  at.reserve(81 * nm + 144 * nh);
  const auto add = [&](const auto& v) {
    for (std::size_t i = 0; i < v.size(); ++i)
      for (std::size_t j = 0; j < v.size(); ++j)
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c)
            at.emplace_back(static_cast<int>(3 * v[i] + r), static_cast<int>(3 * v[j] + c));
  };
  for (const auto& e : membranes_) add(e.v);
  for (const auto& e : hinges_) add(e.v);
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(at.size());
  for (const auto& [r, c] : at) t.emplace_back(r, c, 0.0);
  pattern_.resize(static_cast<Eigen::Index>(3 * n_), static_cast<Eigen::Index>(3 * n_));
  pattern_.setFromTriplets(t.begin(), t.end());
  pattern_.makeCompressed();
  slot_.resize(at.size());
  for (std::size_t k = 0; k < at.size(); ++k) {
    const int* begin = pattern_.innerIndexPtr() + pattern_.outerIndexPtr()[at[k].second];
    const int* end = pattern_.innerIndexPtr() + pattern_.outerIndexPtr()[at[k].second + 1];
    slot_[k] = static_cast<int>(std::lower_bound(begin, end, at[k].first) - pattern_.innerIndexPtr());
  }
}

void BodyPotential::hessian(const Vector& X, Sparse& out, bool project_psd) const {
  assemble(
      X, out, [&](const MembraneStVK& t, const auto& x) { return t.hessian(x, project_psd); },
      [&](const HingeBending& t, const auto& x) { return t.hessian(x, project_psd); });
}

void BodyPotential::material_stiffness(const Vector& X, Sparse& out) const {
  assemble(
      X, out, [](const MembraneStVK& t, const auto& x) { return t.material_stiffness(x); },
      [](const HingeBending& t, const auto& x) { return t.material_stiffness(x); });
}

}  // namespace clockwork
