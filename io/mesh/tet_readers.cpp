// Readers of TetGen (.node/.ele) and Gmsh (.msh ASCII 2.2 and 4.1) tet meshes.
// Orientation: both tools write positively oriented tets in our sense, det[x1 − x0,
// x2 − x0, x3 − x0] > 0: Gmsh's reference tet (type 4) is (0,0,0), (1,0,0), (0,1,0),
// (0,0,1), and TetGen 1.5.0 wrote all 10170 tets of tests/io/data/bunny.ele that way.
// Hand-written or converted files need not be, so every tet is oriented by its volume:
// a negative one gets two vertices swapped; a degenerate one (|V| <= 1e-12 L³, L its
// longest edge) is an error naming its line.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include "io/scene_error.hpp"
#include "io/mesh/tet_mesh.hpp"
#include "io/text_input.hpp"

namespace clockwork {

namespace {

/// Non-blank lines of a text file, split into whitespace-separated tokens, with their
/// line numbers; every error names "FILE:LINE".
class LineReader {
 public:
  LineReader(const std::string& path, const char* kind, bool strip_comments)
      : path_(path), in_(open_input(path, kind)), strip_comments_(strip_comments) {}

  /// Advances to the next non-blank line; false at the end of the file.
  bool next() {
    while (std::getline(in_, text_)) {
      ++line_;
      if (!text_.empty() && text_.back() == '\r') text_.pop_back();
      if (strip_comments_) text_ = text_.substr(0, text_.find('#'));
      tokens_.clear();
      std::istringstream s(text_);
      for (std::string t; s >> t;) tokens_.push_back(t);
      if (!tokens_.empty()) return true;
    }
    return false;
  }
  /// Advances to the next non-blank line; a truncated file is an error.
  void expect(std::string_view what) {
    if (!next()) fail(fmt::format("truncated file, expected {}", what), "end of file");
  }

  [[noreturn]] void fail(std::string_view what, std::string_view got) const {
    throw SceneError(fmt::format("{}:{}: {}, got {}", path_, line_, what, got));
  }
  const std::vector<std::string>& tokens() const { return tokens_; }
  const std::string& text() const { return text_; }
  int line() const { return line_; }
  const std::string& path() const { return path_; }

  const std::string& token(std::size_t k, std::string_view what) const {
    if (k >= tokens_.size()) fail(fmt::format("missing {}", what), fmt::format("'{}'", printable(text_)));
    return tokens_[k];
  }
  long long integer(std::size_t k, std::string_view what) const {
    const std::string& t = token(k, what);
    long long value = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    if (ec != std::errc() || end != t.data() + t.size())
      fail(fmt::format("{} is not an integer", what), fmt::format("'{}'", printable(t)));
    return value;
  }
  long long count(std::size_t k, std::string_view what) const {
    const long long n = integer(k, what);
    if (n < 0 || n > 100'000'000) fail(fmt::format("{} out of range 0..1e8", what), tokens_[k]);
    return n;
  }
  double real(std::size_t k, std::string_view what) const {
    const std::string& t = token(k, what);
    double value = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(value))
      fail(fmt::format("{} is not a finite number", what), fmt::format("'{}'", printable(t)));
    return value;
  }

 private:
  std::string path_;
  std::ifstream in_;
  bool strip_comments_;
  std::string text_;
  std::vector<std::string> tokens_;
  int line_ = 0;
};

/// Orients every tet positively by its volume (see the file comment); `lines[t]` is
/// where tet t was read, for the message about a degenerate one.
void orient_tets(TetMesh& mesh, const std::string& path, const std::vector<int>& lines) {
  for (std::size_t t = 0; t < mesh.tets.size(); ++t) {
    auto& tet = mesh.tets[t];
    double volume = 0.0;
    if (tet_is_degenerate(mesh, tet, volume))
      throw SceneError(fmt::format("{}:{}: degenerate tet ({} {} {} {}), got volume {}", path,
                                   lines[t], tet[0], tet[1], tet[2], tet[3], volume));
    if (volume < 0) std::swap(tet[2], tet[3]);
  }
}

/// Region labels from integer keys (TetGen attributes, Gmsh physical tags), in
/// increasing key order; `name_of` names a key.
void label_regions(TetMesh& mesh, const std::string& path, const std::vector<long long>& keys,
                   auto&& name_of) {
  std::map<long long, std::uint16_t> index;
  for (const long long k : keys) index.emplace(k, 0);
  if (index.size() > 65535)
    throw SceneError(fmt::format("{}: more than 65535 regions, got {}", path, index.size()));
  for (auto& [k, i] : index) {
    i = static_cast<std::uint16_t>(mesh.region_names.size());
    mesh.region_names.push_back(name_of(k));
  }
  mesh.tet_region.clear();
  for (const long long k : keys) mesh.tet_region.push_back(index[k]);
}

}  // namespace

TetMesh read_tetgen(const std::string& base) {
  TetMesh mesh;
  long long first_index = 0;
  {
    LineReader in(base + ".node", "TetGen .node", true);
    in.expect("the header '<points> 3 <attributes> <markers>'");
    const long long n = in.count(0, "number of points");
    if (n == 0) in.fail("a .node file needs points", "0");
    if (in.integer(1, "dimension") != 3) in.fail("dimension must be 3", in.tokens()[1]);
    const long long attributes = in.count(2, "number of attributes");
    const long long markers = in.count(3, "number of boundary markers");
    if (markers > 1) in.fail("boundary markers must be 0 or 1", in.tokens()[3]);
    for (long long i = 0; i < n; ++i) {
      in.expect(fmt::format("point {} of {}", i + 1, n));
      const long long id = in.integer(0, "point index");
      if (i == 0) {
        if (id != 0 && id != 1) in.fail("the first point index must be 0 or 1", in.tokens()[0]);
        first_index = id;
      } else if (id != first_index + i) {
        in.fail(fmt::format("point index out of sequence, expected {}", first_index + i),
                in.tokens()[0]);
      }
      mesh.vertices.emplace_back(in.real(1, "x"), in.real(2, "y"), in.real(3, "z"));
      in.token(3 + attributes + markers, "point attribute or marker");
    }
  }
  std::vector<long long> regions;
  std::vector<int> lines;
  bool has_region = false;
  {
    LineReader in(base + ".ele", "TetGen .ele", true);
    in.expect("the header '<tets> 4 <attributes>'");
    const long long n = in.count(0, "number of tets");
    if (n == 0) in.fail("an .ele file needs tets", "0");
    if (in.integer(1, "nodes per tet") != 4)
      in.fail("only 4-node tets are supported", in.tokens()[1]);
    has_region = in.tokens().size() > 2 && in.count(2, "number of attributes") > 0;
    const long long last = first_index + static_cast<long long>(mesh.vertices.size()) - 1;
    for (long long t = 0; t < n; ++t) {
      in.expect(fmt::format("tet {} of {}", t + 1, n));
      std::array<Index, 4> tet;
      for (int k = 0; k < 4; ++k) {
        const long long v = in.integer(1 + k, "node index");
        if (v < first_index || v > last)
          in.fail(fmt::format("node index out of range {}..{}", first_index, last),
                  in.tokens()[1 + k]);
        tet[k] = static_cast<Index>(v - first_index);
      }
      long long region = 0;
      if (has_region) {
        const double a = in.real(5, "region attribute");
        if (a != std::round(a) || std::abs(a) > 1e15)
          in.fail("the region attribute must be an integer", in.tokens()[5]);
        region = static_cast<long long>(a);
      }
      mesh.tets.push_back(tet);
      regions.push_back(region);
      lines.push_back(in.line());
    }
  }
  orient_tets(mesh, base + ".ele", lines);
  label_regions(mesh, base + ".ele", regions, [&](long long k) {
    return has_region ? fmt::format("region_{}", k) : std::string("all");
  });
  validate_tet_mesh(mesh, base + ".node/.ele");
  return mesh;
}

namespace {

/// What the sections of a .msh file say, before the tets are assembled.
struct GmshData {
  int major = 0;
  std::map<long long, std::string> volume_names;    ///< physical tag → name (dim 3)
  std::map<long long, long long> volume_physical;   ///< v4 volume entity → physical tag
  std::unordered_map<long long, Index> node_index;  ///< node tag → position in `nodes`
  std::vector<Vec3> nodes;
  std::vector<std::array<long long, 4>> tets;  ///< node tags
  std::vector<long long> tet_physical;
  std::vector<int> tet_lines;
};

void add_node(GmshData& d, LineReader& in, long long tag, const Vec3& x) {
  if (!d.node_index.emplace(tag, static_cast<Index>(d.nodes.size())).second)
    in.fail("duplicate node tag", std::to_string(tag));
  d.nodes.push_back(x);
}

void expect_end(LineReader& in, const std::string& section) {
  in.expect("$End" + section);
  if (in.tokens()[0] != "$End" + section)
    in.fail(fmt::format("expected $End{}", section), fmt::format("'{}'", in.text()));
}

void read_mesh_format(GmshData& d, LineReader& in) {
  in.expect("'version file-type data-size'");
  const std::string& version = in.token(0, "version");
  if (version != "2.2" && version != "4.1")
    in.fail("unsupported .msh version (2.2 or 4.1 are read)", version);
  d.major = version == "2.2" ? 2 : 4;
  if (in.token(1, "file-type") != "0")
    in.fail("binary .msh files are not supported (save as ASCII), file-type", in.tokens()[1]);
  expect_end(in, "MeshFormat");
}

void read_physical_names(GmshData& d, LineReader& in) {
  in.expect("the number of physical names");
  const long long n = in.count(0, "number of physical names");
  for (long long i = 0; i < n; ++i) {
    in.expect("a physical name 'dim tag \"name\"'");
    const long long dim = in.integer(0, "physical dimension");
    const long long tag = in.integer(1, "physical tag");
    const auto open = in.text().find('"'), close = in.text().rfind('"');
    if (open == std::string::npos || close == open)
      in.fail("a physical name must be quoted", fmt::format("'{}'", in.text()));
    if (dim == 3) d.volume_names[tag] = in.text().substr(open + 1, close - open - 1);
  }
  expect_end(in, "PhysicalNames");
}

/// v4.1 entities: only the volumes' physical tags matter (the elements of a volume
/// entity belong to its physical group).
void read_entities(GmshData& d, LineReader& in) {
  in.expect("'points curves surfaces volumes'");
  long long count[4];
  for (int dim = 0; dim < 4; ++dim) count[dim] = in.count(dim, "number of entities");
  for (int dim = 0; dim < 4; ++dim)
    for (long long e = 0; e < count[dim]; ++e) {
      in.expect(fmt::format("entity {} of dimension {}", e + 1, dim));
      const long long tag = in.integer(0, "entity tag");
      const std::size_t at = dim == 0 ? 4 : 7;  // after x y z, or the bounding box
      const long long physicals = in.count(at, "number of physical tags");
      if (dim == 3 && physicals > 1)
        in.fail("a volume in more than one physical group is ambiguous, physical tags",
                std::to_string(physicals));
      const long long physical = physicals == 1 ? in.integer(at + 1, "physical tag") : 0;
      if (dim == 3) d.volume_physical[tag] = physical;
    }
  expect_end(in, "Entities");
}

void read_nodes(GmshData& d, LineReader& in) {
  in.expect("the nodes header");
  if (d.major == 2) {
    const long long n = in.count(0, "number of nodes");
    for (long long i = 0; i < n; ++i) {
      in.expect(fmt::format("node {} of {}", i + 1, n));
      add_node(d, in, in.integer(0, "node tag"),
               {in.real(1, "x"), in.real(2, "y"), in.real(3, "z")});
    }
  } else {
    const long long blocks = in.count(0, "number of node blocks");
    for (long long b = 0; b < blocks; ++b) {
      in.expect("a node block header 'dim tag parametric count'");
      const long long dim = in.integer(0, "entity dimension");
      const long long parametric = in.integer(2, "parametric flag");
      const long long n = in.count(3, "number of nodes in the block");
      if (parametric != 0 && parametric != 1) in.fail("parametric must be 0 or 1", in.tokens()[2]);
      std::vector<long long> tags;
      for (long long i = 0; i < n; ++i) {
        in.expect("a node tag");
        tags.push_back(in.integer(0, "node tag"));
      }
      for (long long i = 0; i < n; ++i) {
        in.expect("node coordinates");
        add_node(d, in, tags[i], {in.real(0, "x"), in.real(1, "y"), in.real(2, "z")});
        if (parametric) in.token(2 + dim, "parametric coordinate");
      }
    }
  }
  expect_end(in, "Nodes");
}

void add_tet(GmshData& d, LineReader& in, std::size_t first_node, long long physical) {
  std::array<long long, 4> tags;
  for (int k = 0; k < 4; ++k) tags[k] = in.integer(first_node + k, "node tag");
  d.tets.push_back(tags);
  d.tet_physical.push_back(physical);
  d.tet_lines.push_back(in.line());
}

void read_elements(GmshData& d, LineReader& in) {
  constexpr long long kTet = 4;
  in.expect("the elements header");
  if (d.major == 2) {
    const long long n = in.count(0, "number of elements");
    for (long long i = 0; i < n; ++i) {
      in.expect(fmt::format("element {} of {}", i + 1, n));
      const long long type = in.integer(1, "element type");
      const long long tags = in.count(2, "number of tags");
      if (type == kTet) add_tet(d, in, 3 + tags, tags > 0 ? in.integer(3, "physical tag") : 0);
    }
  } else {
    const long long blocks = in.count(0, "number of element blocks");
    for (long long b = 0; b < blocks; ++b) {
      in.expect("an element block header 'dim tag type count'");
      const long long dim = in.integer(0, "entity dimension");
      const long long entity = in.integer(1, "entity tag");
      const long long type = in.integer(2, "element type");
      const long long n = in.count(3, "number of elements in the block");
      long long physical = 0;
      if (type == kTet) {
        if (dim != 3) in.fail("tets must belong to a volume entity, dimension", in.tokens()[0]);
        const auto it = d.volume_physical.find(entity);
        if (!d.volume_physical.empty() && it == d.volume_physical.end())
          in.fail("volume entity not in $Entities", in.tokens()[1]);
        if (it != d.volume_physical.end()) physical = it->second;
      }
      for (long long i = 0; i < n; ++i) {
        in.expect(fmt::format("element {} of {} in the block", i + 1, n));
        if (type == kTet) add_tet(d, in, 1, physical);
      }
    }
  }
  expect_end(in, "Elements");
}

}  // namespace

TetMesh read_gmsh(const std::string& path) {
  LineReader in(path, "Gmsh .msh", false);
  GmshData d;
  bool nodes = false, elements = false;
  while (in.next()) {
    const std::string& section = in.tokens()[0];
    if (d.major == 0 && section != "$MeshFormat")
      in.fail("a .msh file starts with $MeshFormat", fmt::format("'{}'", in.text()));
    if (section == "$MeshFormat") {
      read_mesh_format(d, in);
    } else if (section == "$PhysicalNames") {
      read_physical_names(d, in);
    } else if (section == "$Entities" && d.major == 4) {
      read_entities(d, in);
    } else if (section == "$Nodes") {
      read_nodes(d, in);
      nodes = true;
    } else if (section == "$Elements") {
      if (!nodes) in.fail("$Elements before $Nodes", section);
      read_elements(d, in);
      elements = true;
    } else if (section.starts_with("$")) {  // other sections ($Comments, $Periodic, ...)
      const std::string end = "$End" + section.substr(1);
      do in.expect(end);
      while (in.tokens()[0] != end);
    } else {
      in.fail("expected a section ($Name)", fmt::format("'{}'", in.text()));
    }
  }
  if (!elements) throw SceneError(fmt::format("{}: no $Elements section", path));
  if (d.tets.empty())
    throw SceneError(fmt::format("{}: no 4-node tetrahedra (element type 4)", path));

  // Keep only the nodes of tets, numbered in order of first use (node tags may be
  // anything: sparse, unordered).
  TetMesh mesh;
  std::vector<Index> vertex(d.nodes.size(), ~Index{0});
  for (std::size_t t = 0; t < d.tets.size(); ++t) {
    std::array<Index, 4> tet;
    for (int k = 0; k < 4; ++k) {
      const auto it = d.node_index.find(d.tets[t][k]);
      if (it == d.node_index.end())
        throw SceneError(
            fmt::format("{}:{}: unknown node tag, got {}", path, d.tet_lines[t], d.tets[t][k]));
      Index& v = vertex[it->second];
      if (v == ~Index{0}) {
        v = static_cast<Index>(mesh.vertices.size());
        mesh.vertices.push_back(d.nodes[it->second]);
      }
      tet[k] = v;
    }
    mesh.tets.push_back(tet);
  }
  orient_tets(mesh, path, d.tet_lines);
  label_regions(mesh, path, d.tet_physical, [&](long long tag) {
    if (tag == 0) return std::string("all");
    const auto it = d.volume_names.find(tag);
    return it != d.volume_names.end() ? it->second : fmt::format("physical_{}", tag);
  });
  validate_tet_mesh(mesh, path);
  return mesh;
}

}  // namespace clockwork
