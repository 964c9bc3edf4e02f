// Tet meshes: validation messages, boundary extraction (closed, outward, divergence
// theorem), regions, the voxel shapes, and the TetGen / Gmsh readers with their errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <numbers>
#include <set>
#include <stdexcept>

#include "io/scene_error.hpp"
#include "io/mesh/tet_mesh.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/files.hpp"

namespace clockwork {
namespace {

const std::string kData = std::string(CLOCKWORK_SOURCE_DIR) + "/tests/io/data/";

/// The unit cube's 5-tet split, corners numbered x + 2y + 4z.
TetMesh cube5() {
  TetMesh m;
  for (int c = 0; c < 8; ++c) m.vertices.emplace_back(c & 1, c >> 1 & 1, c >> 2);
  m.tets = {{0, 1, 2, 4}, {3, 2, 1, 7}, {5, 1, 4, 7}, {6, 4, 2, 7}, {1, 2, 4, 7}};
  m.region_names = {"corners", "core"};
  m.tet_region = {0, 0, 0, 0, 1};
  return m;
}

/// Order-free form of a mesh: per tet, its region name and its sorted corner
/// positions. Two meshes are the same when these agree (vertex numbering aside).
std::multiset<std::pair<std::string, std::vector<std::array<double, 3>>>> canonical(
    const TetMesh& m) {
  std::multiset<std::pair<std::string, std::vector<std::array<double, 3>>>> out;
  for (std::size_t t = 0; t < m.tets.size(); ++t) {
    std::vector<std::array<double, 3>> corners;
    for (const Index i : m.tets[t])
      corners.push_back({m.vertices[i].x(), m.vertices[i].y(), m.vertices[i].z()});
    std::sort(corners.begin(), corners.end());
    out.emplace(m.region_names[m.tet_region[t]], corners);
  }
  return out;
}

void check_positive(const TetMesh& m) {
  for (const auto& t : m.tets)
    CHECK(tet_signed_volume(m.vertices[t[0]], m.vertices[t[1]], m.vertices[t[2]],
                            m.vertices[t[3]]) > 0);
}

/// The boundary is a closed, consistently oriented 2-manifold of Euler characteristic
/// 2 (a ball): every directed edge once and its reverse once, and around every vertex
/// the faces form one fan; each face points away from its tet's centroid; the volume
/// enclosed (divergence theorem, V = Σ x0 · (x1 × x2) / 6) is the tets' total.
void check_ball_boundary(const TetMesh& m) {
  const auto faces = boundary_faces(m);
  REQUIRE(!faces.empty());
  std::map<std::pair<Index, Index>, int> directed;
  std::map<Index, std::map<Index, Index>> fan;  // vertex → (next → next-next) around it
  double enclosed = 0;
  for (const auto& f : faces) {
    for (int k = 0; k < 3; ++k) {
      ++directed[{f[k], f[(k + 1) % 3]}];
      fan[f[k]][f[(k + 1) % 3]] = f[(k + 2) % 3];
    }
    enclosed += m.vertices[f[0]].dot(m.vertices[f[1]].cross(m.vertices[f[2]])) / 6.0;
  }
  int bad_edges = 0;
  for (const auto& [e, count] : directed)
    if (count != 1 || directed.count({e.second, e.first}) != 1) ++bad_edges;
  CHECK(bad_edges == 0);
  int pinched = 0;  // vertices whose faces form more than one fan
  for (const auto& [v, next] : fan) {
    std::size_t steps = 0;
    Index a = next.begin()->first;
    do {
      a = next.at(a);
      ++steps;
    } while (a != next.begin()->first && steps <= next.size());
    if (steps != next.size()) ++pinched;
  }
  CHECK(pinched == 0);
  const long chi = static_cast<long>(fan.size()) - static_cast<long>(directed.size() / 2) +
                   static_cast<long>(faces.size());
  CHECK(chi == 2);
  const double volume = tet_mesh_volume(m);
  CHECK(std::abs(enclosed - volume) <= 1e-12 * volume);

  // Outward: the face's normal points away from the centroid of the one tet it bounds.
  std::map<std::array<Index, 3>, Index> owner;
  for (Index t = 0; t < m.tets.size(); ++t)
    for (int skip = 0; skip < 4; ++skip) {
      std::array<Index, 3> key;
      for (int k = 0, j = 0; k < 4; ++k)
        if (k != skip) key[j++] = m.tets[t][k];
      std::sort(key.begin(), key.end());
      owner[key] = t;
    }
  int inward = 0;
  for (const auto& f : faces) {
    auto key = f;
    std::sort(key.begin(), key.end());
    const auto& t = m.tets[owner.at(key)];
    const Vec3 centroid =
        (m.vertices[t[0]] + m.vertices[t[1]] + m.vertices[t[2]] + m.vertices[t[3]]) / 4;
    const Vec3 n = (m.vertices[f[1]] - m.vertices[f[0]]).cross(m.vertices[f[2]] - m.vertices[f[0]]);
    if (n.dot(m.vertices[f[0]] - centroid) <= 0) ++inward;
  }
  CHECK(inward == 0);
}

TEST_CASE("validate_tet_mesh accepts the 5-tet cube and names every defect") {
  const TetMesh good = cube5();
  CHECK_NOTHROW(validate_tet_mesh(good, "cube"));
  CHECK(tet_mesh_volume(good) == doctest::Approx(1.0).epsilon(1e-15));

  TetMesh m = good;
  std::swap(m.tets[1][0], m.tets[1][1]);
  CHECK_THROWS_WITH_AS(validate_tet_mesh(m, "cube"),
                       "cube: tet 1 (2 3 1 7): inverted, volume -0.16666666666666666", SceneError);
  m = good;
  m.vertices[4] = Vec3(0.5, 0.5, 0);  // tet 0's apex into its base plane z = 0
  CHECK_THROWS_WITH_AS(validate_tet_mesh(m, "cube"), "cube: tet 0 (0 1 2 4): degenerate, volume 0",
                       SceneError);
  m = good;
  m.tets[2][3] = 8;
  CHECK_THROWS_WITH_AS(validate_tet_mesh(m, "cube"),
                       "cube: tet 2 (5 1 4 8): vertex index 8 out of range (the mesh has 8 "
                       "vertices)",
                       SceneError);
  m = good;
  m.vertices.emplace_back(2, 2, 2);
  CHECK_THROWS_WITH_AS(validate_tet_mesh(m, "cube"), "cube: vertex 8 is used by no tet",
                       SceneError);
  m = good;
  m.vertices[3].y() = std::nan("");
  CHECK_THROWS_WITH_AS(validate_tet_mesh(m, "cube"),
                       "cube: vertex 3 has a non-finite coordinate, got (1 nan 0)", SceneError);
  m = good;
  m.tets.push_back({3, 2, 1, 7});  // tet 1 again: its faces now belong to three tets
  m.tet_region.push_back(0);
  CHECK(test::what_thrown([&] { validate_tet_mesh(m, "cube"); }).find("duplicates tet 1 (the same four vertices)") !=
        std::string::npos);
  m = good;
  m.tet_region[4] = 2;
  CHECK_THROWS_WITH_AS(validate_tet_mesh(m, "cube"),
                       "cube: tet 4 (1 2 4 7): region 2 out of range (there are 2 regions)",
                       SceneError);
}

/// `m` with a tet on `corners` (positions), oriented positively, its vertices new ones.
TetMesh with_tet(TetMesh m, std::array<Vec3, 4> corners) {
  if (tet_signed_volume(corners[0], corners[1], corners[2], corners[3]) < 0) std::swap(corners[0], corners[1]);
  const Index first = static_cast<Index>(m.vertices.size());
  for (const Vec3& x : corners) m.vertices.push_back(x);
  m.tets.push_back({first, first + 1, first + 2, first + 3});
  m.tet_region.push_back(0);
  return m;
}

/// The unit corner tet (0 0 0), (1 0 0), (0 1 0), (0 0 1) as vertices 0..3, and a second
/// tet sharing its vertices `shared` (indices into 0..3) and new ones at `others`.
TetMesh corner_and(const std::vector<Index>& shared, const std::vector<Vec3>& others) {
  TetMesh m;
  m.vertices = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)};
  m.tets = {{0, 1, 2, 3}};
  m.region_names = {"all"};
  m.tet_region = {0, 0};
  std::array<Index, 4> t{};
  std::size_t k = 0;
  for (const Index i : shared) t[k++] = i;
  for (const Vec3& x : others) {
    t[k++] = static_cast<Index>(m.vertices.size());
    m.vertices.push_back(x);
  }
  const auto& x = m.vertices;
  if (tet_signed_volume(x[t[0]], x[t[1]], x[t[2]], x[t[3]]) < 0) std::swap(t[2], t[3]);
  m.tets.push_back(t);
  return m;
}

/// `m` moved by `shift` and scaled by `scale`: the verdicts must not change.
TetMesh moved(TetMesh m, const Vec3& shift, double scale) {
  for (Vec3& x : m.vertices) x = scale * x + shift;
  return m;
}

TEST_CASE("validate_tet_mesh: tets overlapping without a shared face are refused, naming both") {
  // A small tet inside the cube's central tet 4, sharing no vertex (hostile battery
  // "tetgen: overlapping tets"); the same after a shift of 1e3 and a scale of 1e-3.
  const TetMesh inner = with_tet(cube5(), {Vec3(0.4, 0.4, 0.4), Vec3(0.6, 0.4, 0.4), Vec3(0.4, 0.6, 0.4),
                                           Vec3(0.4, 0.4, 0.6)});
  const std::string message = "cube: tet 5 (8 9 10 11) overlaps tet 4 (1 2 4 7): their interiors intersect";
  CHECK_THROWS_WITH_AS(validate_tet_mesh(inner, "cube"), message.c_str(), SceneError);
  CHECK_THROWS_WITH_AS(validate_tet_mesh(moved(inner, Vec3(1e3, -1e3, 1e3), 1e-3), "cube"), message.c_str(),
                       SceneError);
  CHECK(find_overlapping_tets(inner) == std::make_pair(Index{5}, Index{4}));
  // A fold over a shared edge: the second tet on edge 0-1 reaches into the first.
  const TetMesh edge_fold = corner_and({0, 1}, {Vec3(0.3, 0.3, 0.3), Vec3(0.3, -0.5, 0.5)});
  CHECK(test::what_thrown([&] { validate_tet_mesh(edge_fold, "fold"); }) ==
        "fold: tet 1 (0 1 4 5) overlaps tet 0 (0 1 2 3): their interiors intersect");
  // Folded by 1e-3 only, across the face y = 0 of the first.
  CHECK(find_overlapping_tets(corner_and({0, 1}, {Vec3(0.3, 1e-3, 0.3), Vec3(0.3, -0.5, 0.6)})));
  // A fold at a shared corner.
  CHECK(find_overlapping_tets(corner_and({0}, {Vec3(0.2, 0.2, 0.1), Vec3(-1, 0.3, 0.3), Vec3(0.3, -1, 0.3)})));
  // A face pressed 1e-3 into another, no vertex shared.
  CHECK(find_overlapping_tets(
      corner_and({}, {Vec3(0.1, 0.1, 1e-3), Vec3(0.6, 0.1, 1e-3), Vec3(0.1, 0.6, 1e-3), Vec3(0.2, 0.2, -1)})));
  // The bar with a copy of itself shifted by half a cell: overlaps everywhere.
  TetMesh bar = make_tet_bar(Vec3::Zero(), 6, 3, 2, 0.1), doubled = bar;
  for (std::size_t t = 0; t < bar.tets.size(); ++t) {
    const auto& tet = bar.tets[t];
    doubled = with_tet(doubled, {bar.vertices[tet[0]] + Vec3(0.05, 0.05, 0), bar.vertices[tet[1]] + Vec3(0.05, 0.05, 0),
                                 bar.vertices[tet[2]] + Vec3(0.05, 0.05, 0), bar.vertices[tet[3]] + Vec3(0.05, 0.05, 0)});
  }
  CHECK(test::what_thrown([&] { validate_tet_mesh(doubled, "bars"); }).find("their interiors intersect") != std::string::npos);
}

TEST_CASE("validate_tet_mesh: conforming meshes and tets that only touch pass") {
  std::vector<std::pair<std::string, TetMesh>> meshes = {
      {"cube", cube5()},
      {"bar", make_tet_bar(Vec3(1, -2, 0.5), 8, 2, 3, 0.05)},
      {"sphere 6", make_tet_sphere(Vec3::Zero(), 1.0, 6)},
      {"sphere 24", make_tet_sphere(Vec3(0.1, 0.2, 0.3), 0.1, 24)},
      {"dinosaur", make_tet_dinosaur(Vec3::Zero())},
      {"bunny", read_tetgen(kData + "bunny")},
      // Touching across the first tet's face y = 0: a triangle of it lies in that face.
      {"edge neighbour touching a face", corner_and({0, 1}, {Vec3(0.3, 0, 0.3), Vec3(0.3, -0.5, 0.6)})},
      {"edge neighbour apart", corner_and({0, 1}, {Vec3(0.3, -0.2, 0.6), Vec3(0.3, -0.5, 0.5)})},
      {"corner neighbour", corner_and({0}, {Vec3(-1, 0, 0), Vec3(0, -1, 0), Vec3(0, 0, -1)})},
      // Face against face without shared vertices: coincident, shifted within the
      // plane, and 1e-3 apart.
      {"coincident faces", corner_and({}, {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, -1)})},
      {"faces shifted in their plane",
       corner_and({}, {Vec3(0.2, 0.2, 0), Vec3(1.2, 0.2, 0), Vec3(0.2, 1.2, 0), Vec3(0.2, 0.2, -1)})},
      {"faces 1e-3 apart",
       corner_and({}, {Vec3(0.1, 0.1, -1e-3), Vec3(0.6, 0.1, -1e-3), Vec3(0.1, 0.6, -1e-3), Vec3(0.2, 0.2, -1)})},
  };
  // Two bars side by side, one of them shifted half a cell along their shared face.
  TetMesh bars = make_tet_bar(Vec3::Zero(), 4, 2, 2, 0.1);
  const TetMesh second = make_tet_bar(Vec3(0.05, 0.2, 0.05), 4, 2, 2, 0.1);
  for (const auto& tet : second.tets)
    bars = with_tet(bars, {second.vertices[tet[0]], second.vertices[tet[1]], second.vertices[tet[2]],
                           second.vertices[tet[3]]});
  meshes.emplace_back("bars face to face", bars);
  for (const auto& [name, m] : meshes) {
    CAPTURE(name);
    CHECK_NOTHROW(validate_tet_mesh(m, name));
    CHECK(!find_overlapping_tets(m));
    CHECK(!find_overlapping_tets(moved(m, Vec3(1e3, 1e3, -1e3), 1e-3)));
  }
}

TEST_CASE("regions: lookup, a missing one named with those that exist, nested counts") {
  const TetMesh m = cube5();
  CHECK(find_region(m, "core", "cube") == 1);
  CHECK_THROWS_WITH_AS(find_region(m, "tail", "cube.msh"),
                       "cube.msh: no region 'tail' in the tet mesh (regions: corners, core)",
                       SceneError);
  CHECK(region_vertices(m, {1}) == std::vector<Index>{1, 2, 4, 7});
  CHECK(region_vertices(m, {0}).size() == 8);
  CHECK(nested_region_vertex_counts(m, {"core", "corners"}, "cube") ==
        std::vector<std::size_t>{4, 8});
  CHECK(count_components(m) == 1);
}

TEST_CASE("boundary of the 5-tet cube: 12 outward triangles, volume 1") {
  const TetMesh m = cube5();
  CHECK(boundary_faces(m).size() == 12);
  check_ball_boundary(m);
}

TEST_CASE("bar: counts, exact volume, closed boundary, one component") {
  const double cell = 0.05;
  const TetMesh m = make_tet_bar(Vec3(1, -2, 0.5), 8, 2, 3, cell);
  CHECK_NOTHROW(validate_tet_mesh(m, "bar"));
  CHECK(m.vertices.size() == 9 * 3 * 4);
  CHECK(m.tets.size() == 6 * 8 * 2 * 3);
  CHECK(m.region_names == std::vector<std::string>{"all"});
  // Every Kuhn tet of a cube of edge h has volume h³/6 exactly.
  CHECK(std::abs(tet_mesh_volume(m) - 48 * cell * cell * cell) <= 1e-14 * 48 * cell * cell * cell);
  // Faces: 2 per boundary square; squares 2(8·2 + 8·3 + 2·3) = 92.
  CHECK(boundary_faces(m).size() == 2 * 92);
  CHECK(count_components(m) == 1);
  check_ball_boundary(m);
  CHECK(m.vertices.front().isApprox(Vec3(1, -2, 0.5)));
  CHECK(m.vertices.back().isApprox(Vec3(1.4, -1.9, 0.65)));
  CHECK_THROWS_WITH_AS(make_tet_bar(Vec3::Zero(), 0, 1, 1, 0.1),
                       "make_tet_bar: nx must be >= 1, got 0", std::invalid_argument);
  CHECK_THROWS_WITH_AS(make_tet_bar(Vec3::Zero(), 1, 1, 1, -0.1),
                       "make_tet_bar: cell must be > 0, got -0.1", std::invalid_argument);
}

TEST_CASE("sphere: volume converges to 4/3 π r³ within the voxel bound, closed ball") {
  // Every voxel with its centre in the ball lies within r + δ of the centre, and every
  // point within r − δ lies in such a voxel (δ = √3 h / 2, the half-diagonal), so
  // |V_h − 4/3 π r³| <= 4/3 π ((r + δ)³ − r³) ~ 4π r² δ: first order in h. Over- and
  // under-counted voxels mostly cancel, so the error is far smaller (n = 6, 12, 24:
  // 20%, 0.80%, 0.42% against bounds of 114%, 50%, 23%) but not monotone in n (n = 16:
  // 1.5%); along doublings of n it decreases.
  const double r = 0.3;
  const Vec3 c(0.1, 0.2, -0.3);
  const double exact = 4.0 / 3.0 * std::numbers::pi * r * r * r;
  double previous_error = INFINITY;
  for (const int n : {6, 12, 24}) {
    const TetMesh m = make_tet_sphere(c, r, n);
    CHECK_NOTHROW(validate_tet_mesh(m, "sphere"));
    const double h = 2 * r / n, delta = std::sqrt(3.0) * h / 2;
    const double error = std::abs(tet_mesh_volume(m) - exact);
    const double bound = 4.0 / 3.0 * std::numbers::pi * (std::pow(r + delta, 3) - r * r * r);
    CAPTURE(n);
    CAPTURE(error / exact);
    CHECK(error <= bound);
    CHECK(error < previous_error);
    previous_error = error;
    for (const Vec3& x : m.vertices) CHECK((x - c).norm() <= r + 2 * delta);
    CHECK(count_components(m) == 1);
    check_ball_boundary(m);
  }
  CHECK_THROWS_AS(make_tet_sphere(c, 0.0, 8), std::invalid_argument);
  CHECK_THROWS_AS(make_tet_sphere(c, 1.0, 1), std::invalid_argument);
}

TEST_CASE("dinosaur: valid, one piece, closed ball-like boundary, its three regions") {
  const TetMesh m = make_tet_dinosaur(Vec3(0, 0, 0));
  CHECK_NOTHROW(validate_tet_mesh(m, "dinosaur"));
  CHECK(count_components(m) == 1);
  check_ball_boundary(m);
  CHECK(m.region_names == std::vector<std::string>{"body", "neck_head", "tail"});
  for (const char* name : {"neck_head", "tail"}) {
    const auto n = region_vertices(m, {find_region(m, name, "dinosaur")}).size();
    CAPTURE(name);
    CHECK(n > m.vertices.size() / 10);
    CHECK(n < m.vertices.size() / 3);
  }
  double zmin = INFINITY, xmin = INFINITY, xmax = -INFINITY;
  for (const Vec3& x : m.vertices) {
    zmin = std::min(zmin, x.z());
    xmin = std::min(xmin, x.x());
    xmax = std::max(xmax, x.x());
  }
  CHECK(std::abs(zmin) <= 0.04);  // the feet on the ground, to a cell
  CHECK(xmax - xmin == doctest::Approx(1.1).epsilon(0.1));
  // The head (largest x) is in neck_head, the tail's tip (smallest x) in tail.
  const auto region_at = [&](bool front) {
    for (std::size_t t = 0; t < m.tets.size(); ++t)
      for (const Index i : m.tets[t])
        if (m.vertices[i].x() == (front ? xmax : xmin)) return m.region_names[m.tet_region[t]];
    return std::string();
  };
  CHECK(region_at(true) == "neck_head");
  CHECK(region_at(false) == "tail");
}

TEST_CASE("dragon: Zhao's Table 1 sizes and nested region fractions, one closed piece") {
  const TetMesh m = make_tet_dragon(Vec3(0, 0, 0));
  CHECK_NOTHROW(validate_tet_mesh(m, "dragon"));
  CHECK(count_components(m) == 1);
  check_ball_boundary(m);
  // The paper's dragon: 2717 vertices, 8252 tets; ours, exactly (the voxels are fixed).
  CHECK(m.vertices.size() == 2831);
  CHECK(m.tets.size() == 10206);
  const auto counts = nested_region_vertex_counts(m, kDragonRegionOrder, "dragon");
  REQUIRE(counts.size() == 5);
  const double n = static_cast<double>(m.vertices.size());
  CHECK(counts == std::vector<std::size_t>{160, 576, 899, 1754, 2831});
  // Zhao: |S| = 156, 574, 814, 1403 / 1904 of 2717 vertices → 6%, 21%, 30%, 52–70%.
  CHECK(counts[0] / n == doctest::Approx(0.06).epsilon(0.35));
  CHECK(counts[1] / n == doctest::Approx(0.20).epsilon(0.25));
  CHECK(counts[2] / n == doctest::Approx(0.30).epsilon(0.17));
  CHECK(counts[3] / n >= 0.5);
  CHECK(counts[3] / n <= 0.7);
  CHECK(counts[4] == m.vertices.size());
  // Scaling the model with the cell gives the same voxels.
  const TetMesh big = make_tet_dragon(Vec3(1, 2, 3), 2.0, 2 * kDragonCell);
  CHECK(big.tets == m.tets);
  CHECK(big.vertices[7].isApprox(Vec3(1, 2, 3) + 2 * m.vertices[7]));
  CHECK(test::what_thrown([] {
          make_tet_dragon(Vec3::Zero(), 1.0, 0.3);
        }).find("make_tet_dragon: cell 0.3") == 0);
}

TEST_CASE("read_tetgen: the 5-tet cube, 1-based, comments, regions, orientation fixed") {
  const TetMesh m = read_tetgen(kData + "cube5");
  CHECK(m.vertices.size() == 8);
  CHECK(m.region_names == std::vector<std::string>{"region_1", "region_2"});
  check_positive(m);
  TetMesh expected = cube5();
  expected.region_names = {"region_1", "region_2"};
  CHECK(canonical(m) == canonical(expected));
  // Vertex i is point i + 1 of the file.
  for (int c = 0; c < 8; ++c) CHECK(m.vertices[c] == expected.vertices[c]);
}

TEST_CASE("read_gmsh: msh 2.2 and 4.1 give the 5-tet cube with named physical volumes") {
  for (const char* file : {"cube5_v2.msh", "cube5_v4.msh"}) {
    CAPTURE(file);
    const TetMesh m = read_gmsh(kData + file);
    CHECK(m.vertices.size() == 8);
    CHECK(m.tets.size() == 5);
    CHECK(m.region_names == std::vector<std::string>{"corners", "core"});
    check_positive(m);
    CHECK(canonical(m) == canonical(cube5()));
  }
}

/// Writes `text` to a fresh file and returns its path.
std::string write_tet_file(const std::string& name, const std::string& text) {
  const auto path = test::fresh_dir("tet_mesh_" + name) / name;
  std::ofstream(path) << text;
  return path.string();
}

TEST_CASE("tet readers: bad input is named by file, line and value") {
  const std::string node = "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n";
  const std::string node_path = write_tet_file("t.node", node);
  const std::string base = node_path.substr(0, node_path.size() - std::string(".node").size());
  const auto ele = [&](const std::string& text) {
    std::ofstream(base + ".ele") << text;
    return test::what_thrown([&] { read_tetgen(base); });
  };
  CHECK(ele("1 4 0\n0 0 1 2 3\n") == "(no error)");
  CHECK(ele("2 4 0\n0 0 1 2 3\n") ==
        base + ".ele:2: truncated file, expected tet 2 of 2, got end of file");
  CHECK(ele("1 4 0\n0 0 1 2 4\n") == base + ".ele:2: node index out of range 0..3, got 4");
  CHECK(ele("1 4 0\n0 0 1 2 x\n") == base + ".ele:2: node index is not an integer, got 'x'");
  CHECK(ele("1 10 0\n") == base + ".ele:1: only 4-node tets are supported, got 10");
  CHECK(ele("1 4 1\n0 0 1 2 3 1.5\n") ==
        base + ".ele:2: the region attribute must be an integer, got 1.5");
  std::ofstream(base + ".node") << "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 1 1 0\n";
  CHECK(ele("1 4 0\n\n0 0 1 2 3\n") == base + ".ele:3: degenerate tet (0 1 2 3), got volume 0");
  std::ofstream(base + ".node") << "4 3 0 0\n0 0 0 0\n1 nan 0 0\n2 0 1 0\n3 0 0 1\n";
  CHECK(ele("1 4 0\n0 0 1 2 3\n") == base + ".node:3: x is not a finite number, got 'nan'");
  std::ofstream(base + ".node") << "4 3 0 0\n2 0 0 0\n";
  CHECK(ele("1 4 0\n0 0 1 2 3\n") == base + ".node:2: the first point index must be 0 or 1, got 2");
  std::ofstream(base + ".node") << "5 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n4 1 1 1\n";
  CHECK(ele("1 4 0\n0 0 1 2 3\n") == base + ".node/.ele: vertex 4 is used by no tet");
  CHECK(test::what_thrown([] { read_tetgen("/nonexistent/mesh"); }) ==
        "/nonexistent/mesh.node: cannot open the TetGen .node file");
  CHECK_THROWS_AS(read_tetgen("/nonexistent/mesh"), SceneError);

  const auto msh = [&](const std::string& text) {
    const std::string path = write_tet_file("m.msh", text);
    return std::make_pair(path, test::what_thrown([&] { read_gmsh(path); }));
  };
  const std::string format = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n";
  auto [path, error] = msh("$MeshFormat\n3.0 0 8\n$EndMeshFormat\n");
  CHECK(error == path + ":2: unsupported .msh version (2.2 or 4.1 are read), got 3.0");
  std::tie(path, error) = msh("$MeshFormat\n4.1 1 8\n$EndMeshFormat\n");
  CHECK(error ==
        path + ":2: binary .msh files are not supported (save as ASCII), file-type, got 1");
  std::tie(path, error) = msh(format + "$Nodes\n2\n1 0 0 0\n");
  CHECK(error == path + ":6: truncated file, expected node 2 of 2, got end of file");
  std::tie(path, error) = msh(format +
                              "$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n"
                              "$Elements\n1\n1 4 0 1 2 3 9\n$EndElements\n");
  CHECK(error == path + ":13: unknown node tag, got 9");
  std::tie(path, error) =
      msh(format + "$Nodes\n1\n1 0 0 0\n$EndNodes\n$Elements\n0\n$EndElements\n");
  CHECK(error == path + ": no 4-node tetrahedra (element type 4)");
  std::tie(path, error) = msh("$Nodes\n");
  CHECK(error == path + ":1: a .msh file starts with $MeshFormat, got '$Nodes'");
  CHECK(test::what_thrown([] { read_gmsh("/nonexistent/mesh.msh"); }) ==
        "/nonexistent/mesh.msh: cannot open the Gmsh .msh file");
}

TEST_CASE("bunny (TetGen fixture): counts, closed surface kept, plausible volume") {
  const TetMesh m = read_tetgen(kData + "bunny");  // validates
  CHECK(m.vertices.size() == 2616);
  CHECK(m.tets.size() == 10170);
  CHECK(m.region_names == std::vector<std::string>{"all"});
  CHECK(count_components(m) == 1);
  // -Y kept the package's 3674 surface triangles as the boundary.
  CHECK(boundary_faces(m).size() == 3674);
  check_ball_boundary(m);
  // 0.2 m tall; a bunny fills about a quarter of its box: 1.73 litres here.
  Vec3 lo = m.vertices[0], hi = m.vertices[0];
  for (const Vec3& x : m.vertices) {
    lo = lo.cwiseMin(x);
    hi = hi.cwiseMax(x);
  }
  CHECK(hi.y() - lo.y() == doctest::Approx(0.2));
  const double box = (hi - lo).prod(), volume = tet_mesh_volume(m);
  CHECK(volume == doctest::Approx(1.7254e-3).epsilon(1e-4));
  CHECK(volume > 0.2 * box);
  CHECK(volume < 0.35 * box);
}

}  // namespace
}  // namespace clockwork
