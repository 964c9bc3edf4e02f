// The vertex-block sparse Cholesky (integrators/solvers/block_cholesky.hpp) against Eigen's
// scalar one on the matrices it is used for: M + c K of a tet mesh.
#include <doctest/doctest.h>

#include <Eigen/SparseCholesky>

#include "integrators/solvers/block_cholesky.hpp"
#include "integrators/fem/tet_fem.hpp"
#include "io/mesh/tet_mesh.hpp"

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
  model.hessian(x, A, false);
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
    model.hessian(y, A, true);
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

// A random vertex graph (a cloth-like ring of neighbours plus random long-range
// couplings): the elimination tree branches and fill appears far from the diagonal, so
// the block symbolic analysis and the left-looking updates are both exercised.
Eigen::SparseMatrix<double> random_vertex_matrix(int n, unsigned seed) {
  std::srand(seed);
  std::vector<Eigen::Triplet<double>> t;
  const auto couple = [&](int a, int b) {
    const Eigen::Vector3d u = Eigen::Vector3d::Random();
    const Eigen::Matrix3d K = 10.0 * u * u.transpose();  // a PSD spring-like block
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        t.emplace_back(3 * a + r, 3 * a + c, K(r, c));
        t.emplace_back(3 * b + r, 3 * b + c, K(r, c));
        t.emplace_back(3 * a + r, 3 * b + c, -K(r, c));
        t.emplace_back(3 * b + r, 3 * a + c, -K(r, c));
      }
  };
  for (int a = 0; a < n; ++a) {
    couple(a, (a + 1) % n);
    couple(a, (a + 7) % n);
    if (std::rand() % 4 == 0) couple(a, std::rand() % n == a ? (a + 2) % n : std::rand() % n);
    for (int r = 0; r < 3; ++r) t.emplace_back(3 * a + r, 3 * a + r, 1.0);  // mass
  }
  Eigen::SparseMatrix<double> A(3 * n, 3 * n);
  A.setFromTriplets(t.begin(), t.end());
  A.makeCompressed();
  return A;
}

TEST_CASE("vertex-block Cholesky: factor of a random vertex graph matches Eigen's to round-off") {
  for (unsigned seed = 1; seed <= 4; ++seed) {
    CAPTURE(seed);
    const Eigen::SparseMatrix<double> A = random_vertex_matrix(300, seed);
    VertexBlockCholesky chol;
    REQUIRE(chol.compute(A));
    // Fill: the factor has blocks A has not (the long-range couplings).
    CHECK(chol.off_diagonal_blocks() > static_cast<std::size_t>(A.nonZeros() / 18));
    const Eigen::SimplicialLLT<Eigen::SparseMatrix<double>> reference(A);
    REQUIRE(reference.info() == Eigen::Success);
    const Eigen::VectorXd b = Eigen::VectorXd::Random(A.rows());
    Eigen::VectorXd z = b;
    chol.solve_in_place(z);
    const Eigen::VectorXd expected = reference.solve(b);
    CHECK((A * z - b).norm() <= 1e-11 * b.norm());
    CHECK((z - expected).norm() <= 1e-9 * expected.norm());
  }
}

TEST_CASE("vertex-block Cholesky: an indefinite Schur complement fails, then a good matrix refactors") {
  const Eigen::SparseMatrix<double> A = random_vertex_matrix(60, 9);
  VertexBlockCholesky chol;
  REQUIRE(chol.analyze(A));
  // A − σ I with σ just above A's smallest eigenvalue: every diagonal entry stays
  // positive, so only an eliminated (Schur complement) pivot can reveal it.
  const Eigen::MatrixXd dense(A);
  const double lowest = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(dense).eigenvalues()(0);
  Eigen::SparseMatrix<double> B = A;
  for (Eigen::Index i = 0; i < B.rows(); ++i) B.coeffRef(i, i) -= lowest * 1.01;
  REQUIRE(B.diagonal().minCoeff() > 0.0);
  CHECK_FALSE(chol.factorize(B));
  REQUIRE(chol.factorize(A));
  const Eigen::VectorXd b = Eigen::VectorXd::Random(A.rows());
  Eigen::VectorXd z = b;
  chol.solve_in_place(z);
  CHECK((A * z - b).norm() <= 1e-11 * b.norm());
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
