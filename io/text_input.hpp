#pragma once
/// Shared by the text readers (scene JSON, OBJ, PLY, TetGen, Gmsh): opening an input
/// file so that a directory or a missing file is named as such, and reading a real
/// number from a token so that a bad one is refused instead of surfacing as `stod`.
#include <fstream>
#include <string>
#include <string_view>

namespace clockwork {

/// Opens `path` for reading. Throws SceneError "PATH: is a directory, expected a file"
/// or "PATH: cannot open the KIND file" ("the file" when `kind` is empty).
std::ifstream open_input(const std::string& path, std::string_view kind);

/// The whole of `token` as a double (decimal or "inf"/"nan", a leading '+' allowed).
/// False when the token is not entirely a number or is out of double's range: too
/// large (|x| > DBL_MAX), or so small that it rounds to zero (1e-400). Subnormals
/// (5e-309) are finite doubles and are returned as they are; callers that refuse them
/// say so.
bool parse_double(std::string_view token, double& value);

/// `text` for a message: control characters and bytes that are not printable ASCII
/// as \n, \t, \xHH; at most `max` characters, "..." after a cut.
std::string printable(std::string_view text, std::size_t max = 80);

}  // namespace clockwork
