#pragma once
/// The voxel ball of the Schroeder tests (tests/integrators/test_schroeder*.cpp).
#include <memory>
#include <vector>

#include "integrators/schroeder/schroeder_scheme.hpp"
#include "integrators/fem/tet_fem.hpp"
#include "io/mesh/tet_mesh.hpp"

namespace clockwork::test {

inline const Vec3 kGravity(0, 0, -9.81);

struct Ball {
  TetMesh mesh;
  std::vector<TetMaterial> materials;
  std::unique_ptr<TetFemModel> model;
  std::vector<bool> surface;  ///< automatic partition: tets touching the boundary
};

/// A voxel ball of radius 0.1 m (8 cells across), rubber-like, centred 1 m up.
inline Ball make_ball(FemKind kind, double young = 1e5) {
  Ball b;
  b.mesh = make_tet_sphere(Vec3(0.3, -0.2, 1.0), 0.1, 8);
  b.materials.assign(b.mesh.tets.size(), TetMaterial{young, 0.3, 1000.0});
  b.model = std::make_unique<TetFemModel>(b.mesh.vertices, b.mesh.tets, b.materials, kind);
  b.surface = tets_touching_faces(b.mesh.tets, boundary_faces(b.mesh), b.mesh.vertices.size());
  return b;
}

inline Eigen::VectorXd stacked(const std::vector<Vec3>& p) {
  Eigen::VectorXd x(3 * p.size());
  for (std::size_t a = 0; a < p.size(); ++a) x.segment<3>(3 * a) = p[a];
  return x;
}

/// Σ m_a v_a with the model's lumped masses.
inline Vec3 momentum(const TetFemModel& model, const Eigen::VectorXd& v) {
  Vec3 p = Vec3::Zero();
  for (std::size_t a = 0; a < model.vertex_count(); ++a)
    p += model.lumped_mass()[a] * v.segment<3>(3 * a);
  return p;
}

}  // namespace clockwork::test
