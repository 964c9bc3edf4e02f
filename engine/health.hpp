#pragma once
/// The run's health check (DESIGN §8): a vertex whose velocity is not finite or above
/// `max_speed` stops the run at the event that gave it that velocity (the kernel checks
/// every velocity change, Kernel::velocity_changed, and throws NumericalFailure after
/// the event); a position not finite or farther than `max_extent` from the origin stops
/// it at the next frame, before the frame is written. Frames written before stay on disk.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "engine/types.hpp"

namespace clockwork {

/// What the health check allows; docs/exit-codes.md "What the health check watches".
struct HealthLimits {
  /// m/s. Cloth, shells and solids never move at 10 km/s; an explicit step past its
  /// stability limit gets there within a few periods (its velocities grow geometrically).
  double max_speed = 1e4;
  /// m from the origin; far beyond any scene, far below where double spacing (1e-10 m
  /// at 1e6 m) would swallow the contact layers' thicknesses.
  double max_extent = 1e6;
};

/// Where and why a run was stopped. `what()` is the whole message; the fields let a
/// caller rename the vertex (global index -> body and local index).
class NumericalFailure : public std::runtime_error {
 public:
  NumericalFailure(std::string message, std::string kind, double at, Index a, std::string what_is_wrong)
      : std::runtime_error(std::move(message)), event_kind(std::move(kind)), time(at), vertex(a),
        problem(std::move(what_is_wrong)) {}
  std::string event_kind;  ///< the source's name, e.g. "force:membrane"
  double time;             ///< s, the event's time
  Index vertex;            ///< global vertex index (kNoVertex: not a vertex's state)
  std::string problem;     ///< e.g. "velocity (nan, 0, 0) m/s is not finite"
  static constexpr Index kNoVertex = ~Index(0);
};

}  // namespace clockwork
