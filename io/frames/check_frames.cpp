#include "io/frames/check_frames.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "contact/intersections/intersection_check.hpp"
#include "io/scene/json_reader.hpp"
#include "io/scene_error.hpp"
#include "io/mesh/mesh.hpp"
#include "io/run/run.hpp"
#include "io/frames/run_folder.hpp"

namespace clockwork {

void write_manifest(const std::string& out_dir, const std::vector<ManifestBody>& bodies) {
  nlohmann::json doc;
  doc["bodies"] = nlohmann::json::array();
  for (const ManifestBody& b : bodies)
    doc["bodies"].push_back({{"name", b.name}, {"obstacle", b.obstacle}, {"collide", b.collide}});
  const std::string path = out_dir + "/bodies.json";
  std::ofstream out(path);
  if (!out) throw IoError(fmt::format("cannot open '{}' for writing", path));
  out << doc.dump(2) << '\n';
}

std::vector<ManifestBody> read_manifest(const std::string& out_dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(out_dir))
    throw SceneError(fmt::format("{}: no such folder (expected the output folder of 'clockwork run')",
                                 out_dir));
  const std::string manifest_path = out_dir + "/bodies.json";
  if (!fs::exists(manifest_path))
    throw SceneError(fmt::format("{}: no bodies.json: not an output folder of 'clockwork run'",
                                 out_dir));
  const nlohmann::json doc = parse_json_file(manifest_path);
  const JsonField root(doc, manifest_path);
  const JsonField list = root.at("bodies");
  std::vector<ManifestBody> bodies;
  for (std::size_t i = 0; i < list.array_size(); ++i)
    bodies.push_back({list[i].at("name").string(), list[i].at("obstacle").boolean(),
                      list[i].at("collide").boolean()});
  return bodies;
}

std::vector<FrameIntersections> check_frames(const std::string& out_dir) {
  // A gap, a frame cut short or a changed mesh is refused before any frame is checked:
  // a damaged run must not pass as an intersection-free one.
  const RunFolder run = scan_run_folder(out_dir, "obj");
  const std::vector<ManifestBody>& bodies = run.bodies;

  std::vector<FrameIntersections> out;
  std::vector<Vec3> x;
  std::vector<std::array<Index, 3>> tris;
  std::vector<std::pair<std::size_t, std::size_t>> owner;
  for (int frame = 0; frame < run.frames; ++frame) {
    x.clear();
    tris.clear();
    owner.clear();
    for (std::size_t b = 0; b < bodies.size(); ++b) {
      const TriangleMesh m = read_obj(frame_path(out_dir, bodies[b].name, frame, "obj"));
      const Index first = static_cast<Index>(x.size());
      x.insert(x.end(), m.vertices.begin(), m.vertices.end());
      for (std::size_t t = 0; t < m.triangles.size(); ++t) {
        const auto& tri = m.triangles[t];
        tris.push_back({first + tri[0], first + tri[1], first + tri[2]});
        owner.emplace_back(b, t);
      }
    }
    FrameIntersections f;
    f.frame = frame;
    f.triangles = tris.size();
    for (const IntersectingPair& p : find_intersections(x, tris)) {
      const auto [ba, ta] = owner[p.a];
      const auto [bb, tb] = owner[p.b];
      if (bodies[ba].obstacle && bodies[bb].obstacle) continue;
      f.pairs.push_back(fmt::format("{}:{} x {}:{}", bodies[ba].name, ta, bodies[bb].name, tb));
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace clockwork
