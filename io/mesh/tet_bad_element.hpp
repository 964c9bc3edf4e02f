#pragma once
/// A deliberately bad interior element, for Schroeder et al.'s Figure 8 / Table 2 test
/// ("a single bad spring element inside the object, whose length is 0.001 times that of
/// the shortest length spring in the original mesh").
#include "io/mesh/tet_mesh.hpp"

namespace clockwork {

/// Moves one interior vertex along one of its edges towards the edge's other end so
/// that this edge becomes `ratio` × the mesh's shortest edge (0 < ratio < 1). The vertex
/// is the one nearest the centroid whose neighbours are all interior too (so every tet
/// that changes is away from the boundary), the edge its shortest; the tets around the
/// vertex keep positive volume (the vertex stays on the segment inside its star), and
/// the result passes validate_tet_mesh. Returns the moved vertex. Throws
/// std::invalid_argument if ratio is outside (0, 1) or no such vertex exists.
Index make_bad_interior_element(TetMesh& mesh, double ratio);

}  // namespace clockwork
