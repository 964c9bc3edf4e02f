#pragma once
/// The backward Euler tests' bodies (tests/integrators/test_backward_euler*.cpp): a unit
/// cube of tets with per-tet materials, random, rotated and spinning states of it, and
/// a squeezed, spun block whose element tangents are indefinite.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "integrators/fem/tet_fem.hpp"
#include "tests/support/tet_blocks.hpp"

namespace clockwork::test {

using Vector = Eigen::VectorXd;
using Sparse = TetFemModel::Sparse;

inline TetFemModel block_model(FemKind kind, double young, int cells = 2) {
  const TetBlock b = tet_block(cells, cells, cells, 1.0 / cells);
  std::vector<TetMaterial> materials;
  for (std::size_t e = 0; e < b.tets.size(); ++e)  // per-tet materials
    materials.push_back({young * (1.0 + 0.5 * (e % 3)), 0.3, 1000.0 + 200.0 * (e % 2)});
  return TetFemModel(b.vertices, b.tets, materials, kind);
}

inline Vector mass_vector(const TetFemModel& model) {
  Vector m(3 * static_cast<Eigen::Index>(model.vertex_count()));
  for (std::size_t a = 0; a < model.vertex_count(); ++a)
    m.segment<3>(3 * a).setConstant(model.lumped_mass()[a]);
  return m;
}

inline Vector random_vector(Eigen::Index size, double scale, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  Vector r(size);
  for (Eigen::Index i = 0; i < size; ++i) r[i] = u(rng);
  return r;
}

/// Positions rigidly rotated by R about the centre, then perturbed.
inline Vector rotated(const TetFemModel& model, const Mat3& R, double noise, std::uint64_t seed) {
  Vector x = model.rest_positions();
  const Vec3 c(0.5, 0.5, 0.5);
  for (Eigen::Index a = 0; a < x.size() / 3; ++a)
    x.segment<3>(3 * a) = c + R * (Vec3(x.segment<3>(3 * a)) - c);
  return x + random_vector(x.size(), noise, seed);
}

/// Velocities of a spin ω about the centre plus a drift and noise.
inline Vector spinning(const Vector& x, const Vec3& omega, const Vec3& drift, double noise,
                       std::uint64_t seed) {
  Vector v = random_vector(x.size(), noise, seed);
  for (Eigen::Index a = 0; a < x.size() / 3; ++a)
    v.segment<3>(3 * a) += drift + omega.cross(Vec3(x.segment<3>(3 * a)) - Vec3(0.5, 0.5, 0.5));
  return v;
}

inline Sparse diagonal(const Vector& d) {
  Sparse D(d.size(), d.size());
  D.setIdentity();
  D.diagonal() = d;
  return D;
}

/// A corotational block squeezed to 80 % along z and spun, under gravity: some element
/// tangents are indefinite (compression), so projected and exact K differ.
struct Squeezed {
  TetFemModel model = block_model(FemKind::Corotational, 2e5);
  Vector x0, v0, f_ext, m;
  std::vector<bool> fixed;
  Squeezed() {
    const auto n = static_cast<Eigen::Index>(model.vertex_count());
    x0 = model.rest_positions();
    for (Eigen::Index a = 0; a < n; ++a) x0[3 * a + 2] *= 0.8;
    x0 = rotated_copy(x0);
    v0 = spinning(x0, Vec3(0.0, 2.0, 3.0), Vec3(0.5, 0.0, 0.0), 0.3, 11);
    m = mass_vector(model);
    f_ext = Vector::Zero(3 * n);
    for (Eigen::Index a = 0; a < n; ++a) f_ext[3 * a + 2] = -9.81 * m[3 * a];
    fixed.assign(static_cast<std::size_t>(n), false);
    fixed[0] = fixed[1] = true;  // pinned at rest
    v0.head<6>().setZero();
  }
  Vector rotated_copy(const Vector& x) { return x + random_vector(x.size(), 0.02, 10); }
  /// The free rows of a 3n vector.
  double free_norm(const Vector& r) const {
    double s = 0.0;
    for (Eigen::Index i = 0; i < r.size(); ++i)
      if (!fixed[static_cast<std::size_t>(i / 3)]) s += r[i] * r[i];
    return std::sqrt(s);
  }
};

}  // namespace clockwork::test
