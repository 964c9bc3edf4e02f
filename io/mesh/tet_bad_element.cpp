#include "io/mesh/tet_bad_element.hpp"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>

namespace clockwork {

Index make_bad_interior_element(TetMesh& mesh, double ratio) {
  if (!(ratio > 0.0 && ratio < 1.0))
    throw std::invalid_argument(fmt::format("bad element: edge ratio {} is outside (0, 1)", ratio));
  const std::size_t n = mesh.vertices.size();
  std::vector<bool> boundary(n, false);
  for (const auto& f : boundary_faces(mesh))
    for (Index a : f) boundary[a] = true;
  std::vector<std::vector<Index>> neighbours(n);
  double shortest = std::numeric_limits<double>::infinity();
  for (const auto& t : mesh.tets)
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j) {
        neighbours[t[i]].push_back(t[j]);
        neighbours[t[j]].push_back(t[i]);
        shortest = std::min(shortest, (mesh.vertices[t[i]] - mesh.vertices[t[j]]).norm());
      }
  Vec3 centroid = Vec3::Zero();
  for (const Vec3& x : mesh.vertices) centroid += x;
  centroid /= double(n);
  Index best = static_cast<Index>(n);
  double best_d = std::numeric_limits<double>::infinity();
  for (Index a = 0; a < n; ++a) {
    if (boundary[a]) continue;
    bool deep = true;
    for (Index b : neighbours[a]) deep = deep && !boundary[b];
    const double d = (mesh.vertices[a] - centroid).norm();
    if (deep && d < best_d) {
      best = a;
      best_d = d;
    }
  }
  if (best == n) throw std::invalid_argument("bad element: the mesh has no deep interior vertex");
  Index other = neighbours[best].front();
  for (Index b : neighbours[best])
    if ((mesh.vertices[b] - mesh.vertices[best]).norm() <
        (mesh.vertices[other] - mesh.vertices[best]).norm())
      other = b;
  const Vec3 dir = (mesh.vertices[best] - mesh.vertices[other]).normalized();
  mesh.vertices[best] = mesh.vertices[other] + ratio * shortest * dir;
  validate_tet_mesh(mesh, "bad element");
  return best;
}

}  // namespace clockwork
