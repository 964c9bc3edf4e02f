#pragma once
/// The contact scene tests' runs (tests/contact/test_contact_*.cpp): a demo's document,
/// shortened; a run whose frames must hold no intersecting triangles; and readings of a
/// run's frames and diagnostics.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/frames/check_frames.hpp"
#include "io/scene/json_reader.hpp"
#include "io/mesh/mesh.hpp"
#include "io/run/run.hpp"
#include "io/scene/scene.hpp"
#include "tests/support/files.hpp"

namespace clockwork::test {

/// Runs `scene` to its end writing frames to a fresh folder `name`; checks that it
/// wrote `frames` frames, none with an intersecting triangle pair. Returns the folder.
inline std::filesystem::path run_without_intersections(Scene& scene, const std::string& name,
                                                std::size_t frames) {
  const auto out = fresh_dir(name);
  RunOptions options;
  options.out_dir = out.string();
  run_scene(scene, options);
  const auto checked = check_frames(out.string());
  REQUIRE(checked.size() == frames);
  for (const auto& f : checked) {
    CAPTURE(f.frame);
    CHECK(f.pairs.empty());
  }
  return out;
}

/// Largest edge strain of `body` over frames 0 .. frames − 1 of a run, against frame 0
/// (a flat grid's rest shape).
inline double max_edge_strain(const std::filesystem::path& out, const std::string& body, int frames) {
  const TriangleMesh rest = read_obj(frame_path(out.string(), body, 0, "obj"));
  std::vector<std::array<Index, 2>> edges;
  for (const auto& t : rest.triangles)
    for (int i = 0; i < 3; ++i) edges.push_back({std::min(t[i], t[(i + 1) % 3]), std::max(t[i], t[(i + 1) % 3])});
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  double strain = 0.0;
  for (int i = 0; i < frames; ++i) {
    const TriangleMesh now = read_obj(frame_path(out.string(), body, i, "obj"));
    for (const auto& e : edges)
      strain = std::max(strain, (now.vertices[e[1]] - now.vertices[e[0]]).norm() /
                                    (rest.vertices[e[1]] - rest.vertices[e[0]]).norm() - 1.0);
  }
  return strain;
}

/// Field `column` (0-based) of diagnostics.csv's row `row` (0: the header) in `out`.
inline double diagnostics_field(const std::filesystem::path& out, int row, int column) {
  std::ifstream in(out / "diagnostics.csv");
  std::string line;
  for (int r = 0; r <= row; ++r) std::getline(in, line);
  std::size_t at = 0;
  for (int c = 0; c < column; ++c) at = line.find(',', at) + 1;
  return std::stod(line.substr(at));
}

inline nlohmann::json demo_json(const std::string& name) {
  return parse_json_file(std::string(CLOCKWORK_SOURCE_DIR) + "/demos/" + name);
}

/// demos/NAME run to `span` at `rate` frames per second; explicit AVI (the phantom
/// keys removed, as bench/table1.py does) unless `phantom`.
inline nlohmann::json shortened_demo(const std::string& name, bool phantom, double span, double rate) {
  nlohmann::json doc = demo_json(name);
  if (!phantom)
    for (auto& b : doc["bodies"]) b.erase("integrator"), b.erase("phantom");
  doc["end_time"] = span;
  doc["frame_rate"] = rate;
  return doc;
}

}  // namespace clockwork::test
