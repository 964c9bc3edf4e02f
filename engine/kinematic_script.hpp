#pragma once
/// Scripted kinematic vertices (infinite mass): each group follows a piecewise-linear
/// translation through keyframes. A keyframe is an event that places the group's
/// vertices exactly and sets the velocity of the next segment — kick + drift, so
/// certificates see linear trajectories between keyframes (DESIGN §1).
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
};

class KinematicScriptSource final : public EventSource {
 public:
  std::string_view name() const override { return "script"; }

  EventSlot add(ScriptGroup group) {
    groups_.push_back(std::move(group));
    next_key_.push_back(0);
    return static_cast<EventSlot>(groups_.size() - 1);
  }
  /// Schedules every group at its first keyframe (which must be at time >= 0).
  void start(EventKind my_kind, Kernel& kernel) {
    for (EventSlot g = 0; g < groups_.size(); ++g)
      if (!groups_[g].keyframes.empty())
        kernel.schedule(my_kind, g, groups_[g].keyframes.front().time);
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
    const std::size_t k = next_key_[g]++;
    const Keyframe& key = group.keyframes[k];
    const bool last = k + 1 == group.keyframes.size();
    const Vec3 velocity =
        last ? Vec3::Zero().eval()
             : Vec3((group.keyframes[k + 1].offset - key.offset) /
                    (group.keyframes[k + 1].time - key.time));
    VertexState& s = kernel.state();
    for (std::size_t i = 0; i < group.vertices.size(); ++i) {
      const Index a = group.vertices[i];
      s.place(a, group.reference[i] + key.offset, time);
      s.velocity_ref(a) = velocity;
      kernel.velocity_changed(a);
    }
    return last ? kNever : group.keyframes[k + 1].time;
  }

 private:
  std::vector<ScriptGroup> groups_;
  std::vector<std::size_t> next_key_;
};

}  // namespace clockwork
