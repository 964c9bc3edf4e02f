#pragma once
/// What the kernel tells about velocity changes (DESIGN §1). The kernel itself only
/// checks a changed velocity's health; a watch installed on it — contact's
/// certificate contingency (contact/certificates/contingency.hpp) — learns of each
/// change as it happens and is flushed once at the end of every event, after the
/// event's own next time is in the queue (the order the contingency's reschedules,
/// and so the queue's tie-breaking, depend on). With no watch installed a velocity
/// change costs the health check and one branch.
#include "engine/types.hpp"

namespace clockwork {

class Kernel;

class VelocityWatch {
 public:
  virtual ~VelocityWatch() = default;
  /// Vertex a's velocity changed (after it was synced to now).
  virtual void velocity_changed(Index a) = 0;
  /// The end of an event (or of a burst of changes outside one): act on the changes.
  virtual void flush() = 0;
};

}  // namespace clockwork
