#include "engine/diagnostics.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace clockwork {

Diagnostics measure(const Kernel& kernel, double t) {
  const VertexState& s = kernel.state();
  Diagnostics d;
  d.time = t;
  for (Index a = 0; a < s.size(); ++a) {
    if (s.kinematic(a)) continue;
    add_vertex_motion(s, a, t, d.linear_momentum, d.angular_momentum, d.kinetic);
  }
  for (std::size_t k = 0; k < kernel.source_count(); ++k) {
    const EventSource& src = kernel.source(static_cast<EventKind>(k));
    d.potential += src.potential_energy(s, t);
    src.add_carried(s, t, d.linear_momentum, d.angular_momentum, d.kinetic);
  }
  return d;
}

DiagnosticsCsv::DiagnosticsCsv(const std::string& path, const std::vector<std::string>& extra,
                               const std::vector<std::string>& earlier_rows)
    : file_(std::fopen(path.c_str(), "w")), path_(path) {
  if (!file_) throw std::system_error(errno, std::generic_category(), fmt::format("{}: cannot open for writing", path));
  fmt::print(file_, "{}\n", header(extra));
  for (const std::string& row : earlier_rows) fmt::print(file_, "{}\n", row);
  flush();
}

void DiagnosticsCsv::flush() {
  // A full disk shows at the flush: the row is not on disk, and the run must not go on
  // as if it were.
  if (std::fflush(file_) != 0 || std::ferror(file_))
    throw std::system_error(errno, std::generic_category(), fmt::format("{}: cannot write", path_));
}

std::string DiagnosticsCsv::header(const std::vector<std::string>& extra) {
  std::string h = "time,px,py,pz,Lx,Ly,Lz,kinetic,potential,total,events";
  for (const std::string& name : extra) h += "," + name;
  return h;
}

DiagnosticsCsv::~DiagnosticsCsv() {
  if (file_) std::fclose(file_);
}

void DiagnosticsCsv::write(const Diagnostics& d, std::uint64_t events,
                           const std::vector<double>& extra) {
  const auto& p = d.linear_momentum;
  const auto& L = d.angular_momentum;
  fmt::print(file_, "{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{}",
             d.time, p.x(), p.y(), p.z(), L.x(), L.y(), L.z(), d.kinetic, d.potential,
             d.total(), events);
  for (double v : extra) fmt::print(file_, ",{:.17g}", v);
  fmt::print(file_, "\n");
  flush();
}

}  // namespace clockwork
