#include "io/frame_io.hpp"

#include <fmt/format.h>

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
               const std::vector<std::array<Index, 3>>& triangles) {
  File f = open_for_writing(path);
  fmt::print(f.get(),
             "ply\nformat ascii 1.0\ncomment Clockwork frame: SI units\n"
             "element vertex {}\nproperty double x\nproperty double y\nproperty double z\n"
             "property double vx\nproperty double vy\nproperty double vz\n"
             "property double mass\nelement face {}\nproperty list uchar int vertex_indices\n"
             "end_header\n",
             vertices.size(), triangles.size());
  for (const FrameVertex& p : vertices)
    fmt::print(f.get(), "{:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g}\n", p.x.x(),
               p.x.y(), p.x.z(), p.v.x(), p.v.y(), p.v.z(), p.mass);
  for (const auto& t : triangles) fmt::print(f.get(), "3 {} {} {}\n", t[0], t[1], t[2]);
}

std::vector<FrameVertex> read_ply(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SceneError(fmt::format("{}: cannot open the PLY file", path));
  std::string line;
  std::size_t count = 0;
  while (std::getline(in, line) && line != "end_header") {
    std::istringstream ls(line);
    std::string a, b;
    ls >> a >> b;
    if (a == "element" && b == "vertex") ls >> count;
  }
  std::vector<FrameVertex> out(count);
  for (auto& p : out) {
    std::string tok[7];
    for (auto& t : tok)
      if (!(in >> t)) throw SceneError(fmt::format("{}: truncated vertex list", path));
    double v[7];
    for (int k = 0; k < 7; ++k) v[k] = std::stod(tok[k]);
    p.x = Vec3(v[0], v[1], v[2]);
    p.v = Vec3(v[3], v[4], v[5]);
    p.mass = v[6];
  }
  return out;
}

}  // namespace clockwork
