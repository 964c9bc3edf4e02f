#pragma once
/// Scripted kinematic vertices (infinite mass): each group follows a piecewise-linear
/// translation through keyframes. A keyframe is an event that places the group's
/// vertices exactly and sets the velocity of the next segment — kick + drift, so
/// certificates see linear trajectories between keyframes (DESIGN §1).
///
/// A group may be released at a time `release`: its vertices then get the masses
/// `release_mass` (finite, > 0) and keep the velocity of the script segment they were
/// on, free from then on (a riffled card let go by the thumb). Whoever caches
/// "kinematic" must look again at the vertex's mass after that time: explicit force
/// stencils do at every tick (they read inv_mass), a phantom body at its next tick.
#include <algorithm>
#include <cassert>
#include <string_view>
#include <vector>

#include "engine/kernel.hpp"

namespace clockwork {

struct Keyframe {
  double time;   ///< s, strictly increasing within a group
  Vec3 offset;   ///< m, translation from the reference positions
};

struct ScriptGroup {
  std::vector<Index> vertices;   ///< kinematic vertices
  std::vector<Vec3> reference;   ///< their reference positions (offset zero)
  std::vector<Keyframe> keyframes;
  double release = kNever;            ///< s: the vertices become free at this time
  std::vector<double> release_mass{};  ///< kg, > 0, per vertex (with a finite release)
};

class KinematicScriptSource final : public EventSource {
 public:
  std::string_view name() const override { return "script"; }

  EventSlot add(ScriptGroup group) {
    groups_.push_back(std::move(group));
    next_key_.push_back(0);
    return static_cast<EventSlot>(groups_.size() - 1);
  }
  /// Schedules every group at its first keyframe (which must be at time >= 0). A run
  /// resumed at t0 = kernel.now() (Kernel::start_at) starts a group already under
  /// way mid-segment instead: its vertices are placed where the script has them at
  /// t0 and given the segment's velocity, and the next keyframe is scheduled; a group
  /// released before t0 gets its masses and no more events.
  void start(EventKind my_kind, Kernel& kernel) {
    const double t0 = kernel.now();
    for (EventSlot g = 0; g < groups_.size(); ++g) {
      const ScriptGroup& group = groups_[g];
      if (group.keyframes.empty()) continue;
      if (group.keyframes.front().time >= t0) {
        kernel.schedule(my_kind, g, group.keyframes.front().time);
        continue;
      }
      if (group.release <= t0) {
        for (std::size_t i = 0; i < group.vertices.size(); ++i)
          kernel.state().set_mass(group.vertices[i], group.release_mass[i]);
        continue;
      }
      std::size_t k = 0;  // the segment [k, k + 1) holding t0, or the last keyframe
      while (k + 1 < group.keyframes.size() && group.keyframes[k + 1].time <= t0) ++k;
      const bool last = k + 1 == group.keyframes.size();
      const Keyframe& key = group.keyframes[k];
      const Vec3 velocity = last ? Vec3::Zero().eval() : segment_velocity(group, k);
      for (std::size_t i = 0; i < group.vertices.size(); ++i) {
        const Index a = group.vertices[i];
        kernel.state().place(a, group.reference[i] + key.offset + (t0 - key.time) * velocity, t0);
        kernel.state().velocity_ref(a) = velocity;
      }
      next_key_[g] = k + 1;
      const double next = std::min(last ? kNever : group.keyframes[k + 1].time, group.release);
      if (next < kNever) kernel.schedule(my_kind, g, next);
    }
  }
  std::size_t size() const { return groups_.size(); }
  int stencil_size(EventSlot g) const override {
    return static_cast<int>(groups_[g].vertices.size());
  }

  std::span<const Index> stencil_vertices(EventSlot g) const override {
    return groups_[g].vertices;
  }

  double process(EventSlot g, double time, Kernel& kernel) override {
    const ScriptGroup& group = groups_[g];
    VertexState& s = kernel.state();
    if (time >= group.release) {
      // Release: the vertices keep their position and the velocity of the current
      // segment (rest after the last keyframe) and get their mass back.
      assert(group.release_mass.size() == group.vertices.size());
      for (std::size_t i = 0; i < group.vertices.size(); ++i) {
        const Index a = group.vertices[i];
        s.sync(a, time);
        s.set_mass(a, group.release_mass[i]);
        kernel.velocity_changed(a);
      }
      return kNever;
    }
    const std::size_t k = next_key_[g]++;
    const Keyframe& key = group.keyframes[k];
    const bool last = k + 1 == group.keyframes.size();
    const Vec3 velocity = last ? Vec3::Zero().eval() : segment_velocity(group, k);
    for (std::size_t i = 0; i < group.vertices.size(); ++i) {
      const Index a = group.vertices[i];
      s.place(a, group.reference[i] + key.offset, time);
      s.velocity_ref(a) = velocity;
      kernel.velocity_changed(a);
    }
    return std::min(last ? kNever : group.keyframes[k + 1].time, group.release);
  }

 private:
  static Vec3 segment_velocity(const ScriptGroup& group, std::size_t k) {
    return (group.keyframes[k + 1].offset - group.keyframes[k].offset) /
           (group.keyframes[k + 1].time - group.keyframes[k].time);
  }

  std::vector<ScriptGroup> groups_;
  std::vector<std::size_t> next_key_;
};

}  // namespace clockwork
