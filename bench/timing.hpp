#pragma once
/// Wall-clock helpers shared by the benchmark drivers.
#include <algorithm>
#include <chrono>
#include <vector>

namespace clockwork::bench {

using Clock = std::chrono::steady_clock;

/// Seconds elapsed since t0.
inline double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// The median (upper median for an even count); 0 for none.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace clockwork::bench
