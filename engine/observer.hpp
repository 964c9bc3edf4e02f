#pragma once
/// Observer events: at frame times i / frame_rate, hand the kernel to a callback that
/// writes frames and diagnostics (reading positions without syncing).
#include <functional>
#include <string_view>

#include "engine/kernel.hpp"

namespace clockwork {

class ObserverSource final : public EventSource {
 public:
  using Callback = std::function<void(int frame, double time, Kernel& kernel)>;

  /// Frames first_frame..frame_count at times frame / frame_rate (computed, not
  /// accumulated); first_frame > 0 for a run resumed at time first_frame / frame_rate.
  ObserverSource(double frame_rate, int frame_count, Callback callback, int first_frame = 0)
      : frame_rate_(frame_rate), frame_count_(frame_count), callback_(std::move(callback)),
        frame_(first_frame) {}

  std::string_view name() const override { return "observer"; }
  double process(EventSlot /*slot*/, double time, Kernel& kernel) override {
    callback_(frame_, time, kernel);
    ++frame_;
    return frame_ <= frame_count_ ? frame_ / frame_rate_ : kNever;
  }
  /// Observes the first frame now (the initial state, before any event at its time)
  /// and schedules the next. Later frames are observed before the force ticks at their
  /// time, since those were scheduled after the previous frame.
  void start(EventKind my_kind, Kernel& kernel) {
    callback_(frame_, kernel.now(), kernel);
    ++frame_;
    if (frame_ <= frame_count_) kernel.schedule(my_kind, 0, frame_ / frame_rate_);
  }

 private:
  double frame_rate_;
  int frame_count_;
  Callback callback_;
  int frame_ = 0;
};

}  // namespace clockwork
