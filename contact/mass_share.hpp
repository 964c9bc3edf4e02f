#pragma once
/// A vertex whose mass the kernel holds only in part: a phantom body's primary vertex
/// carries m/2 in the kernel's state and its phantom copy the other half
/// (integrators/phantom/phantom_source.hpp). An impulse meant for the whole vertex (a contact
/// impulse, with "contact_mass": "whole") changes both copies' velocities by J/m: the
/// caller applies dv = J/m to the kernel's copy and reports it here for the other.
/// The contact system keeps who shares which vertex (ContactSystem::share_mass); the
/// scene registers the sharers that own such vertices.
#include "engine/types.hpp"

namespace clockwork {

class MassShare {
 public:
  virtual ~MassShare() = default;
  /// The kernel's copy of the sharer's vertex `local` changed velocity by dv at time t.
  virtual void share_velocity_change(Index local, const Vec3& dv, double t) = 0;
};

/// Per vertex: who holds the rest of its mass (none: the kernel holds it all).
struct SharedMass {
  MassShare* share = nullptr;
  Index local = 0;
};

}  // namespace clockwork
