#pragma once
/// Common numeric types of Clockwork: double precision, SI units, Eigen.
#include <Eigen/Dense>
#include <cstdint>
#include <limits>

namespace clockwork {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Index = std::uint32_t;

/// Positions of the N vertices of a stencil, one column per vertex (3 by N).
template <int N>
using StencilPositions = Eigen::Matrix<double, 3, N>;
/// Gradient over a stencil, vertex-major: [d/dx_0 (3), d/dx_1 (3), ...] (3N by 1).
template <int N>
using StencilVector = Eigen::Matrix<double, 3 * N, 1>;
/// Hessian over a stencil, same vertex-major ordering (3N by 3N).
template <int N>
using StencilMatrix = Eigen::Matrix<double, 3 * N, 3 * N>;

inline constexpr double kNever = std::numeric_limits<double>::infinity();

}  // namespace clockwork
