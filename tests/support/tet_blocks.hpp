#pragma once
/// A box of nx × ny × nz cubes, each split into 6 tets around its main diagonal (Kuhn),
/// consistently across shared faces, all positively oriented. Built by hand so the FEM
/// tests do not depend on io's tet-mesh readers.
#include <array>
#include <vector>

#include "integrators/fem/tet_fem.hpp"

namespace clockwork::test {

struct TetBlock {
  std::vector<Vec3> vertices;
  std::vector<std::array<Index, 4>> tets;
};

inline TetBlock tet_block(int nx, int ny, int nz, double side) {
  TetBlock b;
  const auto id = [&](int i, int j, int k) {
    return static_cast<Index>(i + (nx + 1) * (j + (ny + 1) * k));
  };
  for (int k = 0; k <= nz; ++k)
    for (int j = 0; j <= ny; ++j)
      for (int i = 0; i <= nx; ++i) b.vertices.emplace_back(side * i, side * j, side * k);
  constexpr int kPermutations[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                       {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i)
        for (const auto& p : kPermutations) {
          // Path 0 → e_p0 → e_p0 + e_p1 → (1,1,1) along the cube's edges.
          std::array<int, 3> c{0, 0, 0};
          std::array<Index, 4> t;
          t[0] = id(i, j, k);
          for (int s = 0; s < 3; ++s) {
            c[p[s]] = 1;
            t[s + 1] = id(i + c[0], j + c[1], k + c[2]);
          }
          StencilPositions<4> x;
          for (int a = 0; a < 4; ++a) x.col(a) = b.vertices[t[a]];
          if (signed_volume(x) < 0.0) std::swap(t[2], t[3]);
          b.tets.push_back(t);
        }
  return b;
}

inline Eigen::VectorXd stacked(const std::vector<Vec3>& p) {
  Eigen::VectorXd x(3 * static_cast<Eigen::Index>(p.size()));
  for (std::size_t a = 0; a < p.size(); ++a) x.segment<3>(3 * a) = p[a];
  return x;
}

}  // namespace clockwork::test
