#pragma once
/// Times of a periodic event from its count (never accumulated): step n of length h
/// from t0, and substep r of m inside it. A run's frames are at i / frame_rate; where
/// a step's time equals a frame's as real numbers, it must equal it as doubles too, or
/// the frame includes the step in one run and not in the next (the queue orders equal
/// times by sequence number, times one ulp apart by time). So when the step rate 1/h is
/// a whole number R (h = 5 ms, 1/24 s, ...) the times are (n0 + n) / R and
/// (m (n0 + n) + r) / (m R): a quotient of whole numbers, correctly rounded, is the same
/// double however the real was reached. Otherwise t0 + n h + r (h / m).
#include <cmath>
#include <cstdint>

namespace clockwork {

class StepClock {
 public:
  StepClock() = default;
  /// `t0`: the time of step 0; `h` > 0: the step.
  StepClock(double t0, double h) : t0_(t0), h_(h) {
    const double rate = std::round(1.0 / h);
    if (rate >= 1.0 && rate < 1e15 && std::abs(1.0 / h - rate) <= 1e-9 * rate) {
      // t0 on the grid (a run started at 0, or resumed at a step's time): count from 0.
      const double n0 = std::round(t0 * rate);
      if (std::abs(t0 * rate - n0) <= 1e-6) {
        rate_ = rate;
        n0_ = n0;
      }
    }
  }
  /// Time of step n.
  double time(std::uint64_t n) const {
    return rate_ > 0.0 ? (n0_ + double(n)) / rate_ : t0_ + double(n) * h_;
  }
  /// Time of substep r (0 ≤ r < m) of step n.
  double time(std::uint64_t n, int r, int m) const {
    return rate_ > 0.0 ? (double(m) * (n0_ + double(n)) + double(r)) / (double(m) * rate_)
                       : t0_ + double(n) * h_ + double(r) * (h_ / double(m));
  }
  double step() const { return h_; }

 private:
  double t0_ = 0.0, h_ = 0.0;
  double rate_ = 0.0;  ///< 1/h when it is a whole number and t0 on its grid, else 0
  double n0_ = 0.0;    ///< t0 * rate
};

}  // namespace clockwork
