#include "integrators/solvers/nonlinear.hpp"

namespace clockwork {

std::vector<int> diagonal_positions(const Eigen::SparseMatrix<double>& H) {
  std::vector<int> diagonal(static_cast<std::size_t>(H.rows()), -1);
  for (Eigen::Index c = 0; c < H.outerSize(); ++c)
    for (Eigen::SparseMatrix<double>::InnerIterator it(H, c); it; ++it)
      if (it.row() == c) diagonal[static_cast<std::size_t>(c)] = static_cast<int>(&it.value() - H.valuePtr());
  return diagonal;
}

}  // namespace clockwork
