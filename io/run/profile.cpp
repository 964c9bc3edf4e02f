#include "io/run/profile.hpp"

#include <fmt/format.h>

namespace clockwork {

TimeShares time_shares(const Kernel& kernel, const EventProfiler& profiler, double wall_seconds) {
  TimeShares s;
  s.wall = wall_seconds;
  if (!(wall_seconds > 0.0)) return s;
  for (std::size_t k = 0; k < kernel.source_count(); ++k) {
    const auto kind = static_cast<EventKind>(k);
    const std::string_view name = kernel.source(kind).name();
    const double f = profiler.seconds(kind) / wall_seconds;
    if (name.starts_with("force:") || name.starts_with("implicit:") ||
        name.starts_with("coarse:") || name.starts_with("fine:"))
      s.elastic += f;
    else if (name == "penalty")
      s.penalties += f;
    else if (name.starts_with("certificate:"))
      s.certificate_events += f;
  }
  s.rescheduling = profiler.contingency_seconds() / wall_seconds;
  return s;
}

std::string describe(const TimeShares& s) {
  return fmt::format(
      "profile: elastic {:.1f} %, penalties {:.1f} %, certificates {:.1f} % ({:.1f} % events, "
      "{:.1f} % rescheduling), other {:.1f} % of {:.3f} s wall",
      100 * s.elastic, 100 * s.penalties, 100 * s.certificates(), 100 * s.certificate_events,
      100 * s.rescheduling, 100 * s.other(), s.wall);
}

}  // namespace clockwork
