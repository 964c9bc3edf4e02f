// The vertex-block sparse Cholesky (integrators/block_cholesky.hpp) against Eigen's
// scalar one on the matrices it is used for: M + c K of a tet mesh.
#include <doctest/doctest.h>

#include "integrators/block_cholesky.hpp"
#include "integrators/tet_fem.hpp"
#include "io/tet_mesh.hpp"

namespace clockwork {
namespace {

TEST_CASE("vertex-block Cholesky: solves M + h² K of a tet bar to round-off") {
  const TetMesh mesh = make_tet_bar(Vec3::Zero(), 5, 3, 2, 0.05);
  std::vector<TetMaterial> mat(mesh.tets.size(), TetMaterial{1e6, 0.3, 1000.0});
  mat[3].young = 5e7;  // a stiff tet: the factor is not a scaled copy of a uniform one
  const TetFemModel model(mesh.vertices, mesh.tets, mat, FemKind::Linear);
  const std::size_t n = mesh.vertices.size();
  Eigen::VectorXd x(3 * n);
  for (std::size_t a = 0; a < n; ++a) x.segment<3>(3 * a) = mesh.vertices[a];
  Eigen::SparseMatrix<double> A;
  model.stiffness(x, A, false);
  A *= 1e-6;
  for (std::size_t a = 0; a < n; ++a)
    for (int c = 0; c < 3; ++c) A.coeffRef(3 * a + c, 3 * a + c) += model.lumped_mass()[a];

  VertexBlockCholesky chol;
  REQUIRE(chol.compute(A));
  CHECK(chol.rows() == A.rows());
  CHECK(chol.off_diagonal_blocks() > 0);
  std::srand(7);
  const Eigen::MatrixXd B = Eigen::MatrixXd::Random(A.rows(), 3);
  const Eigen::SimplicialLLT<Eigen::SparseMatrix<double>> reference(A);
  for (Eigen::Index j = 0; j < B.cols(); ++j) {
    Eigen::VectorXd y = B.col(j);
    chol.solve_in_place(y);
    const Eigen::VectorXd expected = reference.solve(B.col(j));
    CHECK((A * y - B.col(j)).norm() <= 1e-12 * B.col(j).norm());
    CHECK((y - expected).norm() <= 1e-10 * expected.norm());
  }
}

TEST_CASE("vertex-block Cholesky: refactorising new values on the analysed pattern") {
  const TetMesh mesh = make_tet_bar(Vec3::Zero(), 4, 2, 2, 0.05);
  const std::vector<TetMaterial> mat(mesh.tets.size(), TetMaterial{1e6, 0.3, 1000.0});
  const TetFemModel model(mesh.vertices, mesh.tets, mat, FemKind::Corotational);
  const std::size_t n = mesh.vertices.size();
  Eigen::VectorXd x(3 * n);
  for (std::size_t a = 0; a < n; ++a) x.segment<3>(3 * a) = mesh.vertices[a];
  VertexBlockCholesky chol;
  std::srand(11);
  for (int k = 0; k < 3; ++k) {
    CAPTURE(k);
    // A deformed state each time: other values, the same pattern.
    const Eigen::VectorXd y = x + 0.01 * Eigen::VectorXd::Random(3 * n);
    Eigen::SparseMatrix<double> A;
    model.stiffness(y, A, true);
    A *= 1e-5 * (k + 1);
    for (std::size_t a = 0; a < n; ++a)
      for (int c = 0; c < 3; ++c) A.coeffRef(3 * a + c, 3 * a + c) += model.lumped_mass()[a];
    A.makeCompressed();
    if (k == 0) REQUIRE(chol.analyze(A));
    REQUIRE(chol.factorize(A));
    const Eigen::VectorXd b = Eigen::VectorXd::Random(A.rows());
    Eigen::VectorXd z = b;
    chol.solve_in_place(z);
    CHECK((A * z - b).norm() <= 1e-12 * b.norm());
  }
}

TEST_CASE("vertex-block Cholesky: rejects indefinite and non-vertex-sized matrices") {
  Eigen::SparseMatrix<double> A(6, 6);
  A.setIdentity();
  A.coeffRef(4, 4) = -1.0;
  VertexBlockCholesky chol;
  CHECK_FALSE(chol.compute(A));
  Eigen::SparseMatrix<double> B(4, 4);
  B.setIdentity();
  CHECK_FALSE(chol.compute(B));
}

}  // namespace
}  // namespace clockwork
