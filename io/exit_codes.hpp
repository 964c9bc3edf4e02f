#pragma once
/// Exit statuses of the `clockwork` tool (docs/exit-codes.md). Distinct per failure
/// class, so that a script can tell bad input from a run that blew up.
namespace clockwork {

enum ExitCode : int {
  kExitOk = 0,
  kExitIntersections = 1,  ///< check-intersections: some frame has intersecting triangles
  kExitUsage = 2,          ///< bad command line (the usage is printed)
  kExitInput = 3,          ///< bad input: scene, mesh, tet file, PLY frame, run folder
  kExitNumerical = 4,      ///< the health check stopped a run (engine/health.hpp)
  kExitIo = 5,             ///< an output could not be written (disk full, permissions)
  kExitInterrupted = 130,  ///< SIGINT/SIGTERM: the run stopped after its last whole frame
};

}  // namespace clockwork
