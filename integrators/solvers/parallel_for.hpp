#pragma once
/// Element loops run in parallel (TBB) into per-element slots; callers sum the slots
/// in a fixed order so results do not depend on the thread count.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstddef>

namespace clockwork {

/// Calls f(i) for i in [0, count), in parallel chunks of about `grain` indices.
template <typename F>
void for_each_index(std::size_t count, std::size_t grain, F&& f) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, grain),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      for (std::size_t i = r.begin(); i != r.end(); ++i) f(i);
                    });
}

}  // namespace clockwork
