#include "io/scene/scene_limits.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace clockwork {

double memory_cap_bytes() {
  static const double cap = [] {
    const double gib16 = 16.0 * 1024 * 1024 * 1024;
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return gib16;
    return std::min(gib16, double(pages) * double(page));
  }();
  return cap;
}

std::string bytes_text(double bytes) {
  if (!(bytes < 1e300)) return "more than 1e300 bytes";
  if (bytes >= 1e9) return fmt::format("{:.3g} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.3g} MB", bytes / 1e6);
  return fmt::format("{:.3g} kB", bytes / 1e3);
}

std::optional<std::string> SceneBudget::add_memory(double bytes, const std::string& what) {
  memory_ += bytes;
  if (memory_ <= memory_cap_bytes()) return std::nullopt;
  return fmt::format("{}: an estimated {} of memory ({} for the whole scene so far), above the "
                     "memory limit of {} (16 GiB or the physical memory, whichever is "
                     "smaller; docs/scene-format.md \"Limits\")",
                     what, bytes_text(bytes), bytes_text(memory_), bytes_text(memory_cap_bytes()));
}

std::optional<std::string> SceneBudget::add_events(double rate, const std::string& what) {
  events_ += rate;
  if (events_ <= kMaxEventRate) return std::nullopt;
  return fmt::format("{}: an estimated {:.3g} events per simulated second ({:.3g} for "
                     "the whole scene so far), above the limit of {:.3g} "
                     "(docs/scene-format.md \"Limits\")",
                     what, rate, events_, kMaxEventRate);
}

std::optional<std::string> step_beyond_run(double step, double end_time) {
  if (step <= end_time) return std::nullopt;
  return fmt::format("the step must not exceed end_time ({} s)", end_time);
}

std::optional<InitialStateProblem> initial_state_problem(const std::vector<Vec3>& x,
                                                         const std::vector<Vec3>& v,
                                                         const HealthLimits& limits) {
  // stableNorm: |x| of 1e200 is 1e200, not the inf of sqrt(1e400).
  for (std::size_t a = 0; a < x.size(); ++a)
    if (!(x[a].allFinite() && x[a].stableNorm() <= limits.max_extent))
      return InitialStateProblem{
          fmt::format("vertex {} at ({:.6g}, {:.6g}, {:.6g}) m is {:.6g} m from the origin, beyond the "
                      "health limit max_extent = {:.6g} m (docs/exit-codes.md)",
                      a, x[a].x(), x[a].y(), x[a].z(), x[a].stableNorm(), limits.max_extent),
          false};
  for (std::size_t a = 0; a < v.size(); ++a)
    if (!(v[a].allFinite() && v[a].stableNorm() <= limits.max_speed))
      return InitialStateProblem{
          fmt::format("vertex {} starts at {:.6g} m/s, above the health limit max_speed = "
                      "{:.6g} m/s (docs/exit-codes.md)",
                      a, v[a].stableNorm(), limits.max_speed),
          true};
  return std::nullopt;
}

}  // namespace clockwork
