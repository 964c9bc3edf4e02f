#pragma once
/// Conserved quantities and energies of the whole system at a time `t` (DESIGN §1).
#include <cstdio>
#include <string>
#include <vector>

#include "engine/kernel.hpp"

namespace clockwork {

struct Diagnostics {
  double time = 0.0;
  Vec3 linear_momentum = Vec3::Zero();   ///< Σ m v over finite-mass vertices, kg·m/s
  Vec3 angular_momentum = Vec3::Zero();  ///< Σ x(t) × m v about the origin, kg·m²/s
  double kinetic = 0.0;                  ///< Σ ½ m |v|², J
  double potential = 0.0;                ///< Σ over sources of their potential, J
  double total() const { return kinetic + potential; }
};

/// Reads positions at `t` without syncing (every event before `t` was processed).
Diagnostics measure(const Kernel& kernel, double t);

/// Adds free vertex a's momentum m v, its angular momentum x(t) × m v about the origin
/// and its kinetic energy ½ m |v|² (measure; a body's share, measure_body).
inline void add_vertex_motion(const VertexState& s, Index a, double t, Vec3& p, Vec3& L, double& kinetic) {
  const Vec3 pa = s.mass(a) * s.velocity(a);
  p += pa;
  L += s.position_at(a, t).cross(pa);
  kinetic += 0.5 * s.mass(a) * s.velocity(a).squaredNorm();
}

/// Diagnostics CSV: one header line, one row per observer time, values written
/// with 17 significant digits so they round-trip.
class DiagnosticsCsv {
 public:
  /// Throws std::system_error naming the path if it cannot be opened or written (each
  /// row is flushed: a full disk stops the run at the row it could not write). `extra`
  /// names further columns (e.g. contact counters) appended after `events`.
  /// `earlier_rows` are written verbatim after the header (a resumed run continuing
  /// the rows of the run it resumes).
  explicit DiagnosticsCsv(const std::string& path, const std::vector<std::string>& extra = {},
                          const std::vector<std::string>& earlier_rows = {});
  /// The header line (without newline) of a file with these extra columns.
  static std::string header(const std::vector<std::string>& extra = {});
  ~DiagnosticsCsv();
  DiagnosticsCsv(const DiagnosticsCsv&) = delete;
  DiagnosticsCsv& operator=(const DiagnosticsCsv&) = delete;
  void write(const Diagnostics& d, std::uint64_t events, const std::vector<double>& extra = {});

 private:
  void flush();
  std::FILE* file_ = nullptr;
  std::string path_;
};

}  // namespace clockwork
