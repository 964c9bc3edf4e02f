#include "io/mesh/tet_mesh.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "io/scene_error.hpp"

namespace clockwork {

namespace {

/// The four faces of a positively oriented tet (0 1 2 3), each counter-clockwise seen
/// from outside: face k is opposite vertex k.
constexpr int kFaces[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};

struct FaceRecord {
  std::array<Index, 3> key;  ///< sorted vertex indices
  Index tet;
  int face;  ///< index into kFaces
};

/// Every tet face, sorted by key so that the faces shared by two tets are adjacent.
std::vector<FaceRecord> sorted_faces(const TetMesh& mesh) {
  std::vector<FaceRecord> faces;
  faces.reserve(4 * mesh.tets.size());
  for (Index t = 0; t < mesh.tets.size(); ++t)
    for (int f = 0; f < 4; ++f) {
      std::array<Index, 3> key;
      for (int k = 0; k < 3; ++k) key[k] = mesh.tets[t][kFaces[f][k]];
      std::sort(key.begin(), key.end());
      faces.push_back({key, t, f});
    }
  std::sort(faces.begin(), faces.end(), [](const FaceRecord& a, const FaceRecord& b) {
    return a.key != b.key ? a.key < b.key : a.tet < b.tet;
  });
  return faces;
}

std::string tet_text(Index t, const std::array<Index, 4>& tet) {
  return fmt::format("tet {} ({} {} {} {})", t, tet[0], tet[1], tet[2], tet[3]);
}

}  // namespace

double tet_signed_volume(const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec3& x3) {
  return (x1 - x0).dot((x2 - x0).cross(x3 - x0)) / 6.0;
}

bool tet_is_degenerate(const TetMesh& mesh, const std::array<Index, 4>& tet, double& volume) {
  const Vec3 &x0 = mesh.vertices[tet[0]], &x1 = mesh.vertices[tet[1]],
             &x2 = mesh.vertices[tet[2]], &x3 = mesh.vertices[tet[3]];
  const double longest = std::max({(x1 - x0).norm(), (x2 - x0).norm(), (x3 - x0).norm(),
                                   (x2 - x1).norm(), (x3 - x1).norm(), (x3 - x2).norm()});
  volume = tet_signed_volume(x0, x1, x2, x3);
  return std::abs(volume) <= 1e-12 * longest * longest * longest;
}

void validate_tet_mesh(const TetMesh& mesh, const std::string& source) {
  const auto fail = [&](const std::string& what) {
    throw SceneError(fmt::format("{}: {}", source, what));
  };
  if (mesh.tets.empty()) fail("the mesh has no tets");
  for (std::size_t i = 0; i < mesh.vertices.size(); ++i)
    if (!mesh.vertices[i].allFinite())
      fail(fmt::format("vertex {} has a non-finite coordinate, got ({} {} {})", i,
                       mesh.vertices[i].x(), mesh.vertices[i].y(), mesh.vertices[i].z()));
  if (mesh.tet_region.size() != mesh.tets.size())
    fail(fmt::format("{} tets but {} region labels", mesh.tets.size(), mesh.tet_region.size()));
  std::vector<char> used(mesh.vertices.size(), 0);
  for (Index t = 0; t < mesh.tets.size(); ++t) {
    const auto& tet = mesh.tets[t];
    for (const Index i : tet)
      if (i >= mesh.vertices.size())
        fail(fmt::format("{}: vertex index {} out of range (the mesh has {} vertices)",
                         tet_text(t, tet), i, mesh.vertices.size()));
    if (mesh.tet_region[t] >= mesh.region_names.size())
      fail(fmt::format("{}: region {} out of range (there are {} regions)", tet_text(t, tet),
                       mesh.tet_region[t], mesh.region_names.size()));
    double volume = 0.0;
    if (tet_is_degenerate(mesh, tet, volume))
      fail(fmt::format("{}: degenerate, volume {}", tet_text(t, tet), volume));
    if (volume < 0) fail(fmt::format("{}: inverted, volume {}", tet_text(t, tet), volume));
    for (const Index i : tet) used[i] = 1;
  }
  for (std::size_t i = 0; i < used.size(); ++i)
    if (!used[i]) fail(fmt::format("vertex {} is used by no tet", i));
  // The same four vertices twice: the volume counted twice, its mass doubled.
  std::vector<std::pair<std::array<Index, 4>, Index>> sets(mesh.tets.size());
  for (Index t = 0; t < mesh.tets.size(); ++t) {
    sets[t] = {mesh.tets[t], t};
    std::sort(sets[t].first.begin(), sets[t].first.end());
  }
  std::sort(sets.begin(), sets.end());
  for (std::size_t k = 0; k + 1 < sets.size(); ++k)
    if (sets[k].first == sets[k + 1].first)
      fail(fmt::format("{} duplicates tet {} (the same four vertices)",
                       tet_text(sets[k + 1].second, mesh.tets[sets[k + 1].second]), sets[k].second));
  // A conforming mesh has no face shared by three tets (two would overlap).
  const auto faces = sorted_faces(mesh);
  for (std::size_t k = 0; k + 2 < faces.size(); ++k)
    if (faces[k].key == faces[k + 2].key)
      fail(fmt::format("face ({} {} {}) is shared by more than two tets ({}, {}, {})",
                       faces[k].key[0], faces[k].key[1], faces[k].key[2], faces[k].tet,
                       faces[k + 1].tet, faces[k + 2].tet));
  // Two positively oriented tets on either side of a face see it with opposite
  // windings; the same winding puts both on one side: they overlap.
  const auto odd = [&](const FaceRecord& f) {
    const auto& tet = mesh.tets[f.tet];
    const Index a = tet[kFaces[f.face][0]], b = tet[kFaces[f.face][1]], c = tet[kFaces[f.face][2]];
    return ((a > b) + (a > c) + (b > c)) % 2 == 1;
  };
  for (std::size_t k = 0; k + 1 < faces.size(); ++k)
    if (faces[k].key == faces[k + 1].key && odd(faces[k]) == odd(faces[k + 1]))
      fail(fmt::format("{} overlaps tet {}: both lie on the same side of their face ({} {} {})",
                       tet_text(faces[k + 1].tet, mesh.tets[faces[k + 1].tet]), faces[k].tet,
                       faces[k].key[0], faces[k].key[1], faces[k].key[2]));
  // Overlaps sharing no face: a tet inside others, or folded over a shared edge or corner.
  if (const auto pair = find_overlapping_tets(mesh))
    fail(fmt::format("{} overlaps {}: their interiors intersect", tet_text(pair->first, mesh.tets[pair->first]),
                     tet_text(pair->second, mesh.tets[pair->second])));
}

int find_region(const TetMesh& mesh, const std::string& name, const std::string& source) {
  const auto it = std::find(mesh.region_names.begin(), mesh.region_names.end(), name);
  if (it == mesh.region_names.end()) {
    std::string existing;
    for (const auto& n : mesh.region_names) existing += (existing.empty() ? "" : ", ") + n;
    throw SceneError(
        fmt::format("{}: no region '{}' in the tet mesh (regions: {})", source, name, existing));
  }
  return static_cast<int>(it - mesh.region_names.begin());
}

std::vector<Index> region_vertices(const TetMesh& mesh, const std::vector<int>& regions) {
  std::vector<char> wanted(mesh.region_names.size(), 0), used(mesh.vertices.size(), 0);
  for (const int r : regions) wanted.at(r) = 1;
  for (std::size_t t = 0; t < mesh.tets.size(); ++t)
    if (wanted[mesh.tet_region[t]])
      for (const Index i : mesh.tets[t]) used[i] = 1;
  std::vector<Index> out;
  for (Index i = 0; i < used.size(); ++i)
    if (used[i]) out.push_back(i);
  return out;
}

std::vector<std::size_t> nested_region_vertex_counts(const TetMesh& mesh,
                                                     const std::vector<std::string>& names,
                                                     const std::string& source) {
  std::vector<int> regions;
  std::vector<std::size_t> counts;
  for (const auto& name : names) {
    regions.push_back(find_region(mesh, name, source));
    counts.push_back(region_vertices(mesh, regions).size());
  }
  return counts;
}

std::vector<std::array<Index, 3>> boundary_faces(const TetMesh& mesh) {
  const auto faces = sorted_faces(mesh);
  std::vector<std::array<Index, 3>> boundary;
  for (std::size_t k = 0; k < faces.size();) {
    std::size_t end = k + 1;
    while (end < faces.size() && faces[end].key == faces[k].key) ++end;
    if (end == k + 1) {
      const auto& tet = mesh.tets[faces[k].tet];
      const int* f = kFaces[faces[k].face];
      boundary.push_back({tet[f[0]], tet[f[1]], tet[f[2]]});
    }
    k = end;
  }
  return boundary;
}

double tet_mesh_volume(const TetMesh& mesh) {
  double volume = 0;
  for (const auto& t : mesh.tets)
    volume += tet_signed_volume(mesh.vertices[t[0]], mesh.vertices[t[1]], mesh.vertices[t[2]],
                                mesh.vertices[t[3]]);
  return volume;
}

int count_components(const TetMesh& mesh) {
  std::vector<Index> parent(mesh.tets.size());
  std::iota(parent.begin(), parent.end(), Index{0});
  const auto root = [&](Index t) {
    while (parent[t] != t) t = parent[t] = parent[parent[t]];
    return t;
  };
  const auto faces = sorted_faces(mesh);
  int components = static_cast<int>(mesh.tets.size());
  for (std::size_t k = 0; k + 1 < faces.size(); ++k)
    if (faces[k].key == faces[k + 1].key) {
      const Index a = root(faces[k].tet), b = root(faces[k + 1].tet);
      if (a != b) {
        parent[a] = b;
        --components;
      }
    }
  return components;
}

}  // namespace clockwork
