#pragma once
/// Where the wall time of a run went, in the columns of the phantom-mesh paper's
/// Table 1: elastic forces (explicit force events, implicit phantom solves, or a solid's
/// coarse and fine steps),
/// penalty layers, and certificate maintenance (certificate events plus the
/// rescheduling of certificates after velocity changes), from an EventProfiler
/// (engine/event_profiler.hpp) attached to the kernel for the run.
#include <string>

#include "engine/event_profiler.hpp"
#include "engine/kernel.hpp"

namespace clockwork {

struct TimeShares {
  double wall = 0.0;            ///< s, the run's wall time
  double elastic = 0.0;         ///< fractions of `wall`
  double penalties = 0.0;
  double certificate_events = 0.0;
  double rescheduling = 0.0;    ///< contingency flushes after velocity changes
  double certificates() const { return certificate_events + rescheduling; }
  double other() const { return 1.0 - elastic - penalties - certificates(); }
};

/// Classifies the kernel's event kinds by name: `force:*` and `implicit:*` are
/// elastic, `penalty` the layers, `certificate:*` certificates.
TimeShares time_shares(const Kernel& kernel, const EventProfiler& profiler, double wall_seconds);

/// One line for the CLI.
std::string describe(const TimeShares& shares);

}  // namespace clockwork
