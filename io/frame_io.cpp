#include "io/frame_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "io/scene_error.hpp"

namespace clockwork {

namespace {
struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File open_for_writing(const std::string& path) {
  File f(std::fopen(path.c_str(), "w"));
  if (!f) throw std::runtime_error(fmt::format("cannot open '{}' for writing", path));
  return f;
}
}  // namespace

void write_obj(const std::string& path, const std::vector<Vec3>& vertices,
               const std::vector<std::array<Index, 3>>& triangles,
               const std::vector<std::array<Index, 2>>& edges) {
  File f = open_for_writing(path);
  for (const Vec3& x : vertices) fmt::print(f.get(), "v {:.17g} {:.17g} {:.17g}\n", x.x(), x.y(), x.z());
  for (const auto& t : triangles) fmt::print(f.get(), "f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1);
  for (const auto& e : edges) fmt::print(f.get(), "l {} {}\n", e[0] + 1, e[1] + 1);
}

void write_ply(const std::string& path, const std::vector<FrameVertex>& vertices,
               const std::vector<std::array<Index, 3>>& triangles, bool with_events) {
  const bool with_phantom = !vertices.empty() && vertices.front().has_phantom;
  assert(std::all_of(vertices.begin(), vertices.end(),
                     [&](const FrameVertex& p) { return p.has_phantom == with_phantom; }));
  File f = open_for_writing(path);
  fmt::print(f.get(),
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
  for (const FrameVertex& p : vertices) {
    fmt::print(f.get(), "{:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g}", p.x.x(), p.x.y(),
               p.x.z(), p.v.x(), p.v.y(), p.v.z(), p.mass);
    if (with_events) fmt::print(f.get(), " {}", p.events);
    if (with_phantom)
      fmt::print(f.get(), " {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g}", p.phantom_x.x(), p.phantom_x.y(),
                 p.phantom_x.z(), p.phantom_v.x(), p.phantom_v.y(), p.phantom_v.z());
    fmt::print(f.get(), "\n");
  }
  for (const auto& t : triangles) fmt::print(f.get(), "3 {} {} {}\n", t[0], t[1], t[2]);
}

std::vector<FrameVertex> read_ply(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SceneError(fmt::format("{}: cannot open the PLY file", path));
  std::string line;
  std::size_t count = 0;
  std::vector<std::string> properties;  // of the vertex element, in file order
  std::string element;
  while (std::getline(in, line) && line != "end_header") {
    std::istringstream ls(line);
    std::string a, b, c;
    ls >> a >> b;
    if (a == "element") {
      element = b;
      if (b == "vertex") ls >> count;
    } else if (a == "property" && element == "vertex" && ls >> c) {
      properties.push_back(c);
    }
  }
  const auto column = [&](const char* name) {
    for (std::size_t k = 0; k < properties.size(); ++k)
      if (properties[k] == name) return static_cast<int>(k);
    return -1;
  };
  constexpr int kColumns = 14;
  int col[kColumns];
  const char* names[kColumns] = {"x",         "y",         "z",         "vx",         "vy",
                                 "vz",        "mass",      "events",    "phantom_x",  "phantom_y",
                                 "phantom_z", "phantom_vx", "phantom_vy", "phantom_vz"};
  for (int k = 0; k < kColumns; ++k) {
    col[k] = column(names[k]);
    if (col[k] < 0 && k < 7)
      throw SceneError(fmt::format("{}: no vertex property '{}' in the header", path, names[k]));
  }
  const bool phantom = std::all_of(col + 8, col + kColumns, [](int c) { return c >= 0; });
  std::vector<FrameVertex> out(count);
  std::vector<double> v(properties.size());
  for (auto& p : out) {
    for (auto& value : v) {
      std::string token;
      if (!(in >> token)) throw SceneError(fmt::format("{}: truncated vertex list", path));
      value = std::stod(token);
    }
    p.x = Vec3(v[col[0]], v[col[1]], v[col[2]]);
    p.v = Vec3(v[col[3]], v[col[4]], v[col[5]]);
    p.mass = v[col[6]];
    if (col[7] >= 0) p.events = static_cast<std::uint64_t>(v[col[7]]);
    if (phantom) {
      p.has_phantom = true;
      p.phantom_x = Vec3(v[col[8]], v[col[9]], v[col[10]]);
      p.phantom_v = Vec3(v[col[11]], v[col[12]], v[col[13]]);
    }
  }
  return out;
}

}  // namespace clockwork
