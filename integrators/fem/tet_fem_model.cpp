// TetFemModel: the element terms of tet_fem.cpp assembled over a mesh.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

#include "integrators/solvers/parallel_for.hpp"
#include "integrators/fem/tet_fem.hpp"

namespace clockwork {

namespace {
constexpr std::size_t kTetGrain = 128;
}  // namespace

struct TetFemModel::Impl {
  FemKind kind = FemKind::Linear;
  std::size_t n = 0;
  std::vector<std::array<Index, 4>> tets;
  Vector rest;
  std::vector<double> mass;
  std::vector<LinearTet> linear;
  std::vector<CorotationalTet> corotational;
  /// Every 3×3 vertex-pair block of the mesh plus every vertex's diagonal block, values 0.
  Sparse pattern;
  /// Per tet, for its 12×12 Hessian entry (column-major k = 12 c + r): the index of that
  /// entry in pattern's value array.
  std::vector<int> slots;
  // Element results before the ordered sum (scratch: the model is not reentrant).
  mutable std::vector<double> values, gradients, hessians;

  /// pattern and slots from tets and n.
  void build_pattern();

  StencilPositions<4> gather(const Vector& x, std::size_t e) const {
    StencilPositions<4> p;
    for (int i = 0; i < 4; ++i) p.col(i) = x.segment<3>(3 * tets[e][i]);
    return p;
  }
  double value(const Vector& x, std::size_t e) const {
    return kind == FemKind::Linear ? linear[e].value(gather(x, e))
                                   : corotational[e].value(gather(x, e));
  }
  StencilVector<4> gradient(const Vector& x, std::size_t e) const {
    return kind == FemKind::Linear ? linear[e].gradient(gather(x, e))
                                   : corotational[e].gradient(gather(x, e));
  }
  StencilVector<4> hessian_product(const Vector& x, const Vector& u, std::size_t e) const {
    const StencilVector<4> ue = gather(u, e).reshaped();
    return kind == FemKind::Linear ? linear[e].hessian_product(gather(x, e), ue)
                                   : corotational[e].hessian_product(gather(x, e), ue);
  }
  StencilMatrix<4> hessian(const Vector& x, std::size_t e, bool project) const {
    return kind == FemKind::Linear ? linear[e].hessian(gather(x, e), project)
                                   : corotational[e].hessian(gather(x, e), project);
  }
};

void TetFemModel::Impl::build_pattern() {
  const std::size_t m = tets.size();
  // The fixed sparsity pattern and the scatter slots of every element entry.
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(144 * m + 9 * n);
  for (const auto& tet : tets)
    for (Index va : tet)
      for (Index vb : tet)
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c)
            t.emplace_back(static_cast<int>(3 * va + r), static_cast<int>(3 * vb + c), 0.0);
  for (std::size_t a = 0; a < n; ++a)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        t.emplace_back(static_cast<int>(3 * a + r), static_cast<int>(3 * a + c), 0.0);
  const auto N = static_cast<Eigen::Index>(3 * n);
  pattern.resize(N, N);
  pattern.setFromTriplets(t.begin(), t.end());
  pattern.makeCompressed();
  const Sparse& P = pattern;
  slots.resize(144 * m);
  for (std::size_t e = 0; e < m; ++e)
    for (int c = 0; c < 12; ++c)
      for (int r = 0; r < 12; ++r) {
        const int row = static_cast<int>(3 * tets[e][r / 3] + r % 3);
        const int col = static_cast<int>(3 * tets[e][c / 3] + c % 3);
        const int* begin = P.innerIndexPtr() + P.outerIndexPtr()[col];
        const int* end = P.innerIndexPtr() + P.outerIndexPtr()[col + 1];
        const int* it = std::lower_bound(begin, end, row);
        assert(it != end && *it == row);
        slots[144 * e + 12 * c + r] = static_cast<int>(it - P.innerIndexPtr());
      }
}

TetFemModel::TetFemModel(std::vector<Vec3> rest, std::vector<std::array<Index, 4>> tets,
                         const std::vector<TetMaterial>& materials, FemKind kind) {
  if (materials.size() != tets.size())
    throw std::invalid_argument("TetFemModel: " + std::to_string(materials.size()) +
                                " materials for " + std::to_string(tets.size()) + " tets");
  auto impl = std::make_shared<Impl>();
  impl->kind = kind;
  impl->n = rest.size();
  impl->tets = std::move(tets);
  impl->rest.resize(3 * static_cast<Eigen::Index>(impl->n));
  for (std::size_t a = 0; a < impl->n; ++a) impl->rest.segment<3>(3 * a) = rest[a];
  impl->mass.assign(impl->n, 0.0);
  const std::size_t m = impl->tets.size();
  for (std::size_t e = 0; e < m; ++e) {
    for (Index v : impl->tets[e])
      if (v >= impl->n) throw std::invalid_argument("TetFemModel: vertex index out of range");
    const StencilPositions<4> X = impl->gather(impl->rest, e);
    const TetMaterial& mat = materials[e];
    if (kind == FemKind::Linear)
      impl->linear.push_back(LinearTet::from_rest(X, mat.young, mat.poisson));
    else
      impl->corotational.push_back(CorotationalTet::from_rest(X, mat.young, mat.poisson));
    // Lumped mass: a quarter of the tet's mass on each of its vertices.
    const double quarter = 0.25 * mat.density * signed_volume(X);
    for (Index v : impl->tets[e]) impl->mass[v] += quarter;
  }
  impl->build_pattern();
  impl_ = std::move(impl);
}

TetFemModel TetFemModel::joined(std::span<const TetFemModel* const> parts) {
  if (parts.empty()) throw std::invalid_argument("TetFemModel::joined: no parts");
  auto impl = std::make_shared<Impl>();
  impl->kind = parts.front()->kind();
  for (const TetFemModel* part : parts) {
    const Impl& p = *part->impl_;
    if (p.kind != impl->kind) throw std::invalid_argument("TetFemModel::joined: linear and corotational parts");
    const auto first = static_cast<Index>(impl->n);
    for (std::array<Index, 4> tet : p.tets) {
      for (Index& v : tet) v += first;
      impl->tets.push_back(tet);
    }
    impl->linear.insert(impl->linear.end(), p.linear.begin(), p.linear.end());
    impl->corotational.insert(impl->corotational.end(), p.corotational.begin(), p.corotational.end());
    impl->mass.insert(impl->mass.end(), p.mass.begin(), p.mass.end());
    impl->n += p.n;
  }
  impl->rest.resize(3 * static_cast<Eigen::Index>(impl->n));
  Eigen::Index at = 0;
  for (const TetFemModel* part : parts) {
    impl->rest.segment(at, part->impl_->rest.size()) = part->impl_->rest;
    at += part->impl_->rest.size();
  }
  impl->build_pattern();
  TetFemModel model;
  model.impl_ = std::move(impl);
  return model;
}

FemKind TetFemModel::kind() const { return impl_->kind; }
std::size_t TetFemModel::vertex_count() const { return impl_->n; }
std::size_t TetFemModel::tet_count() const { return impl_->tets.size(); }
const std::vector<std::array<Index, 4>>& TetFemModel::tets() const { return impl_->tets; }
const TetFemModel::Vector& TetFemModel::rest_positions() const { return impl_->rest; }
const std::vector<double>& TetFemModel::lumped_mass() const { return impl_->mass; }

double TetFemModel::value(const Vector& x) const {
  const Impl& m = *impl_;
  assert(x.size() == m.rest.size());
  m.values.resize(m.tets.size());
  for_each_index(m.tets.size(), kTetGrain, [&](std::size_t e) { m.values[e] = m.value(x, e); });
  double sum = 0.0;
  for (double v : m.values) sum += v;
  return sum;
}

void TetFemModel::gradient(const Vector& x, Vector& out) const {
  const Impl& m = *impl_;
  assert(x.size() == m.rest.size());
  m.gradients.resize(12 * m.tets.size());
  for_each_index(m.tets.size(), kTetGrain, [&](std::size_t e) {
    Eigen::Map<StencilVector<4>>(&m.gradients[12 * e]) = m.gradient(x, e);
  });
  out.setZero(m.rest.size());
  for (std::size_t e = 0; e < m.tets.size(); ++e)
    for (int i = 0; i < 4; ++i)
      out.segment<3>(3 * m.tets[e][i]) += Eigen::Map<const Vec3>(&m.gradients[12 * e + 3 * i]);
}

void TetFemModel::stiffness_product(const Vector& x, const Vector& u, Vector& out) const {
  const Impl& m = *impl_;
  assert(x.size() == m.rest.size() && u.size() == m.rest.size());
  m.gradients.resize(12 * m.tets.size());
  for_each_index(m.tets.size(), kTetGrain, [&](std::size_t e) {
    Eigen::Map<StencilVector<4>>(&m.gradients[12 * e]) = m.hessian_product(x, u, e);
  });
  out.setZero(m.rest.size());
  for (std::size_t e = 0; e < m.tets.size(); ++e)
    for (int i = 0; i < 4; ++i)
      out.segment<3>(3 * m.tets[e][i]) += Eigen::Map<const Vec3>(&m.gradients[12 * e + 3 * i]);
}

void TetFemModel::hessian(const Vector& x, Sparse& out, bool project_psd) const {
  const Impl& m = *impl_;
  assert(x.size() == m.rest.size());
  m.hessians.resize(144 * m.tets.size());
  for_each_index(m.tets.size(), kTetGrain, [&](std::size_t e) {
    Eigen::Map<StencilMatrix<4>>(&m.hessians[144 * e]) = m.hessian(x, e, project_psd);
  });
  // Reuse `out` when it already has the pattern (the usual case: no allocation).
  if (out.rows() != m.pattern.rows() || out.nonZeros() != m.pattern.nonZeros() ||
      !out.isCompressed())
    out = m.pattern;
  double* values = out.valuePtr();
  std::fill(values, values + out.nonZeros(), 0.0);
  for (std::size_t k = 0; k < m.slots.size(); ++k) values[m.slots[k]] += m.hessians[k];
}

void TetFemModel::stiffness_of(const Vector& x, const std::vector<std::size_t>& tets, Sparse& out,
                               bool project_psd) const {
  const Impl& m = *impl_;
  assert(x.size() == m.rest.size());
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(144 * tets.size());
  for (std::size_t e : tets) {
    assert(e < m.tets.size());
    const StencilMatrix<4> H = m.hessian(x, e, project_psd);
    for (int c = 0; c < 12; ++c)
      for (int r = 0; r < 12; ++r)
        t.emplace_back(static_cast<int>(3 * m.tets[e][r / 3] + r % 3),
                       static_cast<int>(3 * m.tets[e][c / 3] + c % 3), H(r, c));
  }
  out.resize(m.rest.size(), m.rest.size());
  out.setFromTriplets(t.begin(), t.end());
  out.makeCompressed();
}

}  // namespace clockwork
