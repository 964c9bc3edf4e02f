#pragma once
/// Tetrahedral meshes for elastic solids (issue 6): the data type, validation,
/// boundary extraction, procedural voxel shapes with named regions, and readers for
/// TetGen (.node/.ele) and Gmsh (.msh v2 and v4 ASCII) files.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/types.hpp"

namespace clockwork {

struct TetMesh {
  std::vector<Vec3> vertices;
  /// Positively oriented: det[x1 − x0, x2 − x0, x3 − x0] > 0.
  std::vector<std::array<Index, 4>> tets;
  /// Every tet carries one region label; region_names[tet_region[t]] names it.
  /// Generators label their parts ("body", "head", "tail", "jaw", ...); readers take
  /// TetGen's region attribute or Gmsh's physical names; "all" when there is none.
  std::vector<std::string> region_names;
  std::vector<std::uint16_t> tet_region;
};

/// Signed volume (1/6) det[x1 − x0, x2 − x0, x3 − x0].
double tet_signed_volume(const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec3& x3);
/// Whether tet `tet` of `mesh` is degenerate: |volume| ≤ 1e-12 × (its longest edge)³,
/// a height ~1e-11 of its edges (scale-free); its signed volume goes to `volume`.
bool tet_is_degenerate(const TetMesh& mesh, const std::array<Index, 4>& tet, double& volume);

/// Checks indices, finite coordinates, and that every tet has a positive volume above
/// 1e-12 × (its longest edge)³ — throws SceneError "SOURCE: tet T (a b c d): inverted,
/// volume V" / "degenerate" / "vertex index I out of range" — that every vertex is
/// used by some tet, and that no two tets overlap: none repeats another's four
/// vertices ("tet T (...) duplicates tet U"), no face is shared by three tets, no
/// two tets lie on the same side of a shared face, and no two tets' interiors
/// intersect ("tet T (...) overlaps tet U (...): their interiors intersect", from
/// find_overlapping_tets). `source` names the file or generator in the message.
void validate_tet_mesh(const TetMesh& mesh, const std::string& source);

/// Two tets whose interiors intersect deeper than 1e-9 × the mesh's bounding-box
/// diagonal, as (later, earlier) tet indices, or nothing. Tets that touch — conforming
/// neighbours sharing a face, edge or corner, or faces, edges and corners that merely
/// coincide — are not reported; tets sharing an edge or a corner are tested (a fold).
/// Pairs sharing a face are skipped: validate_tet_mesh's winding check covers them.
/// A grid of median-tet-sized cells over the tets' boxes finds the candidate pairs
/// (~O(T) for meshes of comparable tets), the separating axis theorem (4 + 4 face
/// normals, 6 × 6 edge cross products) tests each. Needs indices in range and
/// non-degenerate tets (validate_tet_mesh checks both before calling it).
std::optional<std::pair<Index, Index>> find_overlapping_tets(const TetMesh& mesh);

/// Index of the region called `name`; throws SceneError naming `source` and the
/// region, and listing the ones that exist, if there is none.
int find_region(const TetMesh& mesh, const std::string& name, const std::string& source);
/// Sorted vertices of the tets labelled with any of `regions` (region indices).
std::vector<Index> region_vertices(const TetMesh& mesh, const std::vector<int>& regions);
/// Zhao et al. Table 1's sweep: entry k is |vertices of the tets in regions
/// names[0..k]| (nested unions). Throws SceneError (via find_region) for an unknown name.
std::vector<std::size_t> nested_region_vertex_counts(const TetMesh& mesh,
                                                     const std::vector<std::string>& names,
                                                     const std::string& source);

/// Boundary faces (faces of exactly one tet), counter-clockwise seen from outside.
std::vector<std::array<Index, 3>> boundary_faces(const TetMesh& mesh);
/// Sum of the tets' signed volumes (m³).
double tet_mesh_volume(const TetMesh& mesh);
/// Number of connected components, two tets being connected when they share a face.
int count_components(const TetMesh& mesh);

// --- procedural shapes: voxels of edge `cell` metres, each split into 6 tets -------
// A voxel is in the shape when its centre is; only vertices of kept voxels exist;
// region of a tet = region of its voxel. Bad arguments, or a cell so coarse that the
// voxels fall apart or a region vanishes, throw std::invalid_argument.
/// A box bar of `nx × ny × nz` cells, cell size `cell`, its corner at `origin`,
/// region "all". The cantilever of the tests.
TetMesh make_tet_bar(const Vec3& origin, int nx, int ny, int nz, double cell);
/// Voxelised ball of `radius` with about `cells_per_diameter` cells across; "all".
TetMesh make_tet_sphere(const Vec3& center, double radius, int cells_per_diameter);
/// A voxel dinosaur (body, legs; regions "body", "neck_head", "tail"), `cell` sets the
/// resolution; about 1.1 m long at scale 1 (x forward, z up, feet at origin.z).
TetMesh make_tet_dinosaur(const Vec3& origin, double scale = 1.0, double cell = 0.04);
inline constexpr double kDragonCell = 0.029;
/// The dragon's regions from the head back, for nested_region_vertex_counts.
inline const std::vector<std::string> kDragonRegionOrder = {"jaw", "head", "neck", "front", "body"};
/// A voxel dragon (regions "body", "front", "neck", "head", "jaw", partitioning the
/// tets so that jaw ⊂ jaw+head ⊂ … grows from ~6% of the vertices to all), at the
/// default resolution about 2.7k vertices and 8k tets (Zhao et al. Table 1's dragon:
/// 2717 vertices, 8252 tets). About 1.45 m long at scale 1 (x forward, z up, feet at
/// origin.z). At the default cell: 2831 vertices, 10206 tets; nested regions jaw 160
/// (5.7%), +head 576 (20.3%), +neck 899 (31.8%), +front 1754 (62.0%), +body 2831
/// (Zhao: 156, 574, 814, 1403 or 1904, 2717).
TetMesh make_tet_dragon(const Vec3& origin, double scale = 1.0, double cell = kDragonCell);

// --- readers (throw SceneError naming the file and line) ---------------------------
// Tets of either orientation are accepted (negative ones get two vertices swapped);
// a degenerate tet is an error. The result passes validate_tet_mesh.
/// TetGen: `base`.node and `base`.ele (0- or 1-based, from the first point's index;
/// comments '#'; the first .ele attribute k names region "region_<k>", else "all").
/// Vertex i is point i of the file; a point used by no tet is an error.
TetMesh read_tetgen(const std::string& base);
/// Gmsh .msh, ASCII format 2.2 or 4.1: nodes and 4-node tetrahedra (type 4); other
/// element types ignored; physical groups name the regions ($PhysicalNames, else
/// "physical_<tag>"; "all" for tets in none; in 4.1 a tet's group is its volume
/// entity's, from $Entities). Nodes of no tet are dropped; the rest are numbered in
/// order of first use by the tets (node tags may be sparse).
TetMesh read_gmsh(const std::string& path);

}  // namespace clockwork
