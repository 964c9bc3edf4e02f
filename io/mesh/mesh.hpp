#pragma once
/// Triangle meshes and procedural generators for scenes.
#include <array>
#include <string>
#include <vector>

#include "engine/types.hpp"

namespace clockwork {

struct TriangleMesh {
  std::vector<Vec3> vertices;
  std::vector<std::array<Index, 3>> triangles;  ///< counter-clockwise = front
  std::vector<std::array<Index, 2>> edges;      ///< springs (chains); empty for cloth
};

/// Rectangular grid of `nu` by `nv` cells spanning `size_u` by `size_v` metres,
/// centred at `center`, in the plane of unit axes `axis_u`, `axis_v`. Vertex (i, j),
/// 0 <= i <= nu, 0 <= j <= nv, has index j (nu + 1) + i. Cells are split along
/// alternating diagonals so the mesh has no preferred shear direction.
TriangleMesh make_grid(double size_u, double size_v, int nu, int nv, const Vec3& center,
                       const Vec3& axis_u, const Vec3& axis_v);

/// Disk of radius `radius` in the plane of `axis_u`, `axis_v`: a centre vertex and
/// `rings` rings, ring r having 6 r vertices (near-equilateral, irregular triangles).
TriangleMesh make_disk(double radius, int rings, const Vec3& center, const Vec3& axis_u,
                       const Vec3& axis_v);

/// A hat (the phantom-mesh paper's hat cascade): a surface of revolution about the
/// axis w = axis_u × axis_v through `center` (the middle of the brim's plane), made
/// of a flat top at height `crown_height` (radius `crown_radius`), the crown's wall
/// down to the brim, and the flat brim out to `brim_radius`. `segments` vertices per
/// ring; the profile is divided into rings of about one segment's arc length at the
/// crown. One pole vertex at the top centre; open at the brim's rim. Normals point
/// out (up on the top, out on the wall, up on the brim).
TriangleMesh make_hat(const Vec3& center, const Vec3& axis_u, const Vec3& axis_v,
                      double crown_radius, double crown_height, double brim_radius,
                      int segments);

/// Straight chain of `segments` springs from `start` to `end` (segments + 1 vertices).
TriangleMesh make_chain(const Vec3& start, const Vec3& end, int segments);

/// What read_obj checks of the faces beyond their indices.
enum class ObjFaces {
  kAny,      ///< frames the tool wrote: as they are (a crushed cloth may hold slivers)
  kSurface,  ///< a scene's mesh: no vertex twice in a face, no face twice (the same vertex
             ///< set), no degenerate triangle (MembraneStVK::is_degenerate's test), no
             ///< triangle whose area overflows (coordinates ~1e200)
};

/// Reads the vertices and faces of a Wavefront OBJ (polygons fan-triangulated,
/// negative indices resolved). Coordinates must be finite (subnormals are accepted).
/// Throws SceneError naming the file, line, face number (1-based, in file order) and
/// the line's text; a directory is named as such.
TriangleMesh read_obj(const std::string& path, ObjFaces faces = ObjFaces::kAny);

/// Unique undirected edges shared by exactly two triangles, as hinge stencils
/// (x0, x1 shared edge; x2 opposite in the triangle where (x0, x1) is counter-
/// clockwise; x3 opposite in the other).
std::vector<std::array<Index, 4>> interior_hinges(const TriangleMesh& mesh);

}  // namespace clockwork
