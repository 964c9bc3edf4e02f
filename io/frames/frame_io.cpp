#include "io/frames/frame_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <system_error>

#include "io/scene_error.hpp"
#include "io/text_input.hpp"

namespace clockwork {

namespace {
struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

/// Writes a whole file through `body(FILE*)`: a failed open, a failed write (fmt
/// throws std::system_error when fwrite comes short: disk full), a failed flush or
/// close all throw IoError naming the file and the reason.
void write_file(const std::string& path, auto&& body) {
  File f(std::fopen(path.c_str(), "w"));
  if (!f) throw IoError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  try {
    body(f.get());
  } catch (const std::system_error& e) {
    throw IoError(fmt::format("{}: cannot write: {}", path, e.code().message()));
  }
  // Buffered output reaches the disk only here: a full disk shows at the flush or close.
  if (std::fflush(f.get()) != 0 || std::ferror(f.get()))
    throw IoError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  if (std::fclose(f.release()) != 0)
    throw IoError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
}

/// What a frame holds of `x`: subnormals (|x| < DBL_MIN, nonzero) become a zero of
/// their sign. They are noise of a vanishing quantity; flushing them keeps frames
/// free of values that other tools' readers (strtod sets ERANGE) refuse. Every other
/// double is written exactly ({:.17g} round-trips it).
double frame_value(double x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0, x) : x; }
}  // namespace

void write_obj(const std::string& path, const std::vector<Vec3>& vertices,
               const std::vector<std::array<Index, 3>>& triangles,
               const std::vector<std::array<Index, 2>>& edges) {
  write_file(path, [&](std::FILE* f) {
    for (const Vec3& x : vertices)
      fmt::print(f, "v {:.17g} {:.17g} {:.17g}\n", frame_value(x.x()), frame_value(x.y()), frame_value(x.z()));
    for (const auto& t : triangles) fmt::print(f, "f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1);
    for (const auto& e : edges) fmt::print(f, "l {} {}\n", e[0] + 1, e[1] + 1);
  });
}

void write_ply(const std::string& path, const std::vector<FrameVertex>& vertices,
               const std::vector<std::array<Index, 3>>& triangles, bool with_events) {
  const bool with_phantom = !vertices.empty() && vertices.front().has_phantom;
  assert(std::all_of(vertices.begin(), vertices.end(),
                     [&](const FrameVertex& p) { return p.has_phantom == with_phantom; }));
  write_file(path, [&](std::FILE* f) {
    fmt::print(f,
               "ply\nformat ascii 1.0\ncomment Clockwork frame: SI units\n"
               "element vertex {}\nproperty double x\nproperty double y\nproperty double z\n"
               "property double vx\nproperty double vy\nproperty double vz\n"
               "property double mass\n{}{}element face {}\nproperty list uchar int vertex_indices\n"
               "end_header\n",
               vertices.size(), with_events ? "property double events\n" : "",
               with_phantom ? "property double phantom_x\nproperty double phantom_y\nproperty double phantom_z\n"
                              "property double phantom_vx\nproperty double phantom_vy\nproperty double phantom_vz\n"
                            : "",
               triangles.size());
    const auto v = frame_value;
    for (const FrameVertex& p : vertices) {
      fmt::print(f, "{:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g}", v(p.x.x()), v(p.x.y()),
                 v(p.x.z()), v(p.v.x()), v(p.v.y()), v(p.v.z()), v(p.mass));
      if (with_events) fmt::print(f, " {}", p.events);
      if (with_phantom)
        fmt::print(f, " {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g}", v(p.phantom_x.x()),
                   v(p.phantom_x.y()), v(p.phantom_x.z()), v(p.phantom_v.x()), v(p.phantom_v.y()),
                   v(p.phantom_v.z()));
      fmt::print(f, "\n");
    }
    for (const auto& t : triangles) fmt::print(f, "3 {} {} {}\n", t[0], t[1], t[2]);
  });
}

std::vector<FrameVertex> read_ply(const std::string& path) {
  std::ifstream in = open_input(path, "PLY");
  std::string line;
  int line_no = 0;
  const auto next_line = [&] {
    if (!std::getline(in, line)) return false;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  };
  const auto fail = [&](std::string_view what) -> void {
    throw SceneError(fmt::format("{}: line {}: {}", path, line_no, what));
  };
  if (!next_line() || line != "ply")
    throw SceneError(fmt::format("{}: not a PLY file (its first line is not 'ply')", path));
  std::size_t count = 0;
  bool vertex_element = false, header_done = false, format_seen = false;
  std::vector<std::string> properties;  // of the vertex element, in file order
  while (next_line()) {
    if (line == "end_header") {
      header_done = true;
      break;
    }
    std::istringstream ls(line);
    std::string a, b, c;
    ls >> a >> b;
    if (a == "format") {
      format_seen = true;
      if (b.starts_with("binary"))
        throw SceneError(fmt::format("{}: binary PLY is not supported, expected format ascii 1.0", path));
      if (b != "ascii") fail(fmt::format("unknown PLY format '{}', expected format ascii 1.0", printable(b)));
    } else if (a == "element") {
      vertex_element = b == "vertex";
      if (vertex_element) {
        std::string n;
        ls >> n;
        long long value = -1;
        const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), value);
        if (ec != std::errc() || end != n.data() + n.size() || value < 0 || value > 100'000'000)
          fail(fmt::format("expected a vertex count in 0..1e8, got '{}'", printable(n)));
        count = static_cast<std::size_t>(value);
      }
    } else if (a == "property" && vertex_element) {
      if (b == "list") fail("list properties of vertices are not supported");
      if (!(ls >> c)) fail(fmt::format("a property needs a type and a name, got '{}'", printable(line)));
      properties.push_back(c);
    }
  }
  if (!header_done) throw SceneError(fmt::format("{}: no end_header line (not a whole PLY header)", path));
  if (!format_seen) throw SceneError(fmt::format("{}: no format line, expected format ascii 1.0", path));
  const auto column = [&](const char* name) {
    for (std::size_t k = 0; k < properties.size(); ++k)
      if (properties[k] == name) return static_cast<int>(k);
    return -1;
  };
  constexpr int kColumns = 14, kMass = 6, kEvents = 7;
  int col[kColumns];
  const char* names[kColumns] = {"x",         "y",         "z",         "vx",         "vy",
                                 "vz",        "mass",      "events",    "phantom_x",  "phantom_y",
                                 "phantom_z", "phantom_vx", "phantom_vy", "phantom_vz"};
  for (int k = 0; k < kColumns; ++k) {
    col[k] = column(names[k]);
    if (col[k] < 0 && k <= kMass)
      throw SceneError(fmt::format("{}: no vertex property '{}' in the header", path, names[k]));
  }
  const bool phantom = std::all_of(col + 8, col + kColumns, [](int c) { return c >= 0; });
  std::vector<FrameVertex> out;
  out.reserve(std::min<std::size_t>(count, 1 << 16));  // the count is the file's word
  std::vector<double> v(properties.size());
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < count; ++i) {
    if (!next_line())
      throw SceneError(fmt::format("{}: truncated vertex list: {} of {} vertices", path, i, count));
    tokens.clear();
    std::istringstream ls(line);
    for (std::string t; ls >> t;) tokens.push_back(t);
    if (tokens.size() != properties.size())
      fail(fmt::format("expected {} values (one per vertex property), got {}", properties.size(),
                       tokens.size()));
    for (std::size_t k = 0; k < tokens.size(); ++k) {
      if (!parse_double(tokens[k], v[k]))
        fail(fmt::format("expected a number, got '{}'", printable(tokens[k])));
      // Kinematic vertices have mass +inf (frame_io.hpp); anything else must be finite.
      const bool kinematic = static_cast<int>(k) == col[kMass] && v[k] == HUGE_VAL;
      if (!std::isfinite(v[k]) && !kinematic)
        fail(fmt::format("vertex property '{}' is not finite, got {}", properties[k], printable(tokens[k])));
    }
    FrameVertex& p = out.emplace_back();
    p.x = Vec3(v[col[0]], v[col[1]], v[col[2]]);
    p.v = Vec3(v[col[3]], v[col[4]], v[col[5]]);
    p.mass = v[col[kMass]];
    if (col[kEvents] >= 0) {
      const double e = v[col[kEvents]];
      if (!(e >= 0.0 && e <= 9007199254740992.0 && e == std::floor(e)))
        fail(fmt::format("vertex property 'events' must be a whole number in 0..2^53, got {}",
                         printable(tokens[col[kEvents]])));
      p.events = static_cast<std::uint64_t>(e);
    }
    if (phantom) {
      p.has_phantom = true;
      p.phantom_x = Vec3(v[col[8]], v[col[9]], v[col[10]]);
      p.phantom_v = Vec3(v[col[11]], v[col[12]], v[col[13]]);
    }
  }
  return out;
}

}  // namespace clockwork
