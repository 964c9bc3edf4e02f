#include "io/frames/run_folder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "io/run/run.hpp"
#include "io/scene_error.hpp"
#include "io/text_input.hpp"

namespace clockwork {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFormats[2] = {"obj", "ply"};

struct Counts {
  std::size_t vertices = 0, faces = 0;
};

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SceneError(fmt::format("{}: cannot open the frame", path));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// "0-3 and 5-10": the frame numbers present, as ranges.
std::string describe(const std::set<int>& frames) {
  std::vector<std::string> ranges;
  for (auto it = frames.begin(); it != frames.end();) {
    const int first = *it;
    int last = first;
    while (++it != frames.end() && *it == last + 1) ++last;
    ranges.push_back(first == last ? fmt::format("{}", first) : fmt::format("{}-{}", first, last));
  }
  if (ranges.size() > 4) {
    const std::size_t n = ranges.size();
    return fmt::format("{}, {}, ..., {} ({} ranges)", ranges[0], ranges[1], ranges[n - 1], n);
  }
  std::string out;
  for (std::size_t i = 0; i < ranges.size(); ++i)
    out += (i == 0 ? "" : i + 1 == ranges.size() ? " and " : ", ") + ranges[i];
  return out;
}

/// Splits `text` into lines; `line` is the 1-based number of the current one.
class Lines {
 public:
  explicit Lines(const std::string& text) : text_(text) {}
  bool next(std::string_view* out) {
    if (pos_ >= text_.size()) return false;
    const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
    *out = std::string_view(text_).substr(pos_, end - pos_);
    pos_ = end + 1;
    ++line;
    return true;
  }
  int line = 0;

 private:
  const std::string& text_;
  std::size_t pos_ = 0;
};

/// The whitespace-separated tokens of `s` into `out` (reused: this runs per row).
void split(std::string_view s, std::vector<std::string_view>* tokens) {
  std::vector<std::string_view>& out = *tokens;
  out.clear();
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != '\r') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  split(s, &out);
  return out;
}

bool to_count(std::string_view token, std::size_t* n) {
  if (token.empty() || token.size() > 12) return false;
  *n = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
    *n = 10 * *n + std::size_t(c - '0');
  }
  return true;
}

/// An ASCII PLY frame as io/frames/frame_io.cpp writes it, checked whole: the header, then
/// exactly the declared vertex rows (one finite number per property) and face rows
/// (a count >= 3 and that many indices of existing vertices).
Counts check_ply(const std::string& path) {
  const std::string text = read_whole(path);
  if (text.empty()) throw SceneError(fmt::format("{}: empty file", path));
  if (text.find("\nend_header\n") == std::string::npos && text.rfind("ply\n", 0) == 0)
    throw SceneError(fmt::format("{}: truncated header (no end_header)", path));
  Lines lines(text);
  std::string_view line;
  const auto fail = [&](std::string_view what) {
    throw SceneError(fmt::format("{}:{}: {}", path, lines.line, what));
  };
  if (!lines.next(&line) || split(line) != std::vector<std::string_view>{"ply"})
    fail("not a PLY file (the first line is not 'ply')");
  Counts n;
  std::vector<std::string> properties;  // of the vertex element
  std::string element;
  bool ended = false, format = false;
  while (lines.next(&line)) {
    const auto w = split(line);
    if (w.empty() || w[0] == "comment" || w[0] == "obj_info") continue;
    if (w[0] == "end_header") {
      ended = true;
      break;
    }
    if (w[0] == "format") {
      if (w.size() != 3 || w[1] != "ascii")
        fail(fmt::format("format '{}': only ASCII PLY frames are read", line));
      format = true;
    } else if (w[0] == "element" && w.size() == 3) {
      element = w[1];
      std::size_t* count = element == "vertex" ? &n.vertices : element == "face" ? &n.faces : nullptr;
      if (!count) fail(fmt::format("element '{}': a frame has only vertex and face elements", element));
      if (!to_count(w[2], count)) fail(fmt::format("element {}: bad count '{}'", element, w[2]));
    } else if (w[0] == "property" && element == "vertex") {
      properties.emplace_back(w.back());
    } else if (w[0] != "property") {
      fail(fmt::format("unexpected header line '{}'", line));
    }
  }
  if (!ended) throw SceneError(fmt::format("{}: truncated header (no end_header)", path));
  if (!format) throw SceneError(fmt::format("{}: no format line in the header", path));
  if (n.vertices > 0 && (properties.size() < 3 || properties[0] != "x" || properties[1] != "y" ||
                         properties[2] != "z"))
    throw SceneError(fmt::format("{}: the vertex properties do not start with x, y, z", path));
  const auto truncated = [&](std::size_t vertex_rows, std::size_t face_rows) {
    throw SceneError(fmt::format(
        "{}: truncated: {} of the {} vertex rows and {} of the {} face rows the header declares",
        path, vertex_rows, n.vertices, face_rows, n.faces));
  };
  std::vector<std::string_view> w;
  for (std::size_t a = 0; a < n.vertices; ++a) {
    if (!lines.next(&line)) truncated(a, 0);
    split(line, &w);
    if (w.size() != properties.size())
      fail(fmt::format("vertex {}: {} values, the header declares {} properties", a, w.size(),
                       properties.size()));
    for (std::size_t k = 0; k < w.size(); ++k) {
      // A kinematic vertex's mass is written as inf (io/frames/frame_io.hpp).
      double x;
      if (!parse_double(w[k], x) || std::isnan(x) ||
          (std::isinf(x) && !(properties[k] == "mass" && x > 0)))
        fail(fmt::format("vertex {}: {}: '{}' is not a finite number", a, properties[k], w[k]));
    }
  }
  for (std::size_t t = 0; t < n.faces; ++t) {
    if (!lines.next(&line)) truncated(n.vertices, t);
    split(line, &w);
    std::size_t k = 0;
    if (w.empty() || !to_count(w[0], &k) || k < 3 || w.size() != k + 1)
      fail(fmt::format("face {}: expected a vertex count >= 3 and that many indices, got '{}'", t,
                       line));
    for (std::size_t i = 1; i <= k; ++i) {
      std::size_t index;
      if (!to_count(w[i], &index) || index >= n.vertices)
        fail(fmt::format("face {}: vertex index '{}' is not one of the {} vertices", t, w[i],
                         n.vertices));
    }
  }
  while (lines.next(&line))
    if (!split(line).empty())
      fail(fmt::format("more rows than the header declares ({} vertices, {} faces)", n.vertices,
                       n.faces));
  // io/frames/frame_io.cpp ends every row with a newline: a file cut inside its last number
  // would otherwise pass.
  if (text.back() != '\n') throw SceneError(fmt::format("{}: truncated inside its last row", path));
  return n;
}

/// An OBJ frame's vertex and face rows. The readers that use OBJ frames parse them in
/// full (read_obj names the line of a bad row); counting finds frames cut short.
Counts count_obj(const std::string& path) {
  const std::string text = read_whole(path);
  Counts n;
  Lines lines(text);
  std::string_view line;
  std::vector<std::string_view> w;
  while (lines.next(&line)) {
    split(line, &w);
    if (w.empty()) continue;
    n.vertices += w[0] == "v";
    n.faces += w[0] == "f";
  }
  if (n.vertices == 0) throw SceneError(fmt::format("{}: OBJ frame has no vertices", path));
  if (text.back() != '\n') throw SceneError(fmt::format("{}: truncated inside its last row", path));
  return n;
}

/// Data rows of diagnostics.csv (one per written frame), each with the header's number
/// of fields, all finite numbers.
std::size_t diagnostics_rows(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw SceneError(fmt::format("{}: missing (every run writes one row per frame)", path));
  const std::string text = read_whole(path);
  Lines lines(text);
  std::string_view line;
  const auto fields = [](std::string_view row) {
    std::vector<std::string_view> out;
    for (std::size_t start = 0;;) {
      const std::size_t comma = row.find(',', start);
      out.push_back(row.substr(start, comma == std::string_view::npos ? comma : comma - start));
      if (comma == std::string_view::npos) return out;
      start = comma + 1;
    }
  };
  if (!lines.next(&line) || line.rfind("time,", 0) != 0)
    throw SceneError(fmt::format("{}: no header row (expected 'time,...')", path));
  const std::size_t columns = fields(line).size();
  std::size_t rows = 0;
  while (lines.next(&line)) {
    if (split(line).empty()) continue;
    const auto f = fields(line);
    if (f.size() != columns)
      throw SceneError(fmt::format("{}:{}: {} fields, the header has {}", path, lines.line,
                                   f.size(), columns));
    for (std::size_t k = 0; k < f.size(); ++k) {
      double x;
      if (!parse_double(f[k], x) || !std::isfinite(x))
        throw SceneError(fmt::format("{}:{}: field {}: '{}' is not a finite number", path,
                                     lines.line, k + 1, f[k]));
    }
    ++rows;
  }
  if (text.back() != '\n') throw SceneError(fmt::format("{}: truncated inside its last row", path));
  return rows;
}

}  // namespace

RunFolder scan_run_folder(const std::string& out_dir, std::string_view need) {
  RunFolder run;
  run.bodies = read_manifest(out_dir);
  const std::string manifest = out_dir + "/bodies.json";
  if (run.bodies.empty())
    throw SceneError(fmt::format("{}: /bodies: empty (a run has at least one body)", manifest));
  std::map<std::string, std::size_t> body_index;
  for (std::size_t b = 0; b < run.bodies.size(); ++b) body_index[run.bodies[b].name] = b;

  // present[format][body]: the frame numbers found, for files named exactly as
  // frame_path names them. Other files (of other bodies, other names) are not read.
  const std::string frames_dir = out_dir + "/frames";
  std::error_code ec;
  if (!fs::is_directory(frames_dir, ec))
    throw SceneError(fmt::format("{}: no such folder (a run writes its frames there)", frames_dir));
  std::vector<std::vector<std::set<int>>> present(2, std::vector<std::set<int>>(run.bodies.size()));
  for (fs::directory_iterator it(frames_dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code file_ec;
    if (!it->is_regular_file(file_ec)) continue;
    const std::string name = it->path().filename().string();
    const std::size_t dot = name.rfind('.'), bar = name.rfind('_', dot);
    if (dot == std::string::npos || bar == std::string::npos) continue;
    const std::string ext = name.substr(dot + 1), digits = name.substr(bar + 1, dot - bar - 1);
    const auto body = body_index.find(name.substr(0, bar));
    std::size_t frame = 0;
    if (body == body_index.end() || !to_count(digits, &frame) || frame > 99'999'999 ||
        fmt::format("{:05d}", frame) != digits)
      continue;
    for (int k = 0; k < 2; ++k)
      if (ext == kFormats[k]) present[k][body->second].insert(static_cast<int>(frame));
  }
  if (ec) throw SceneError(fmt::format("{}: cannot list the folder: {}", frames_dir, ec.message()));

  int frames = 0;
  for (int k = 0; k < 2; ++k)
    for (const auto& found : present[k])
      if (!found.empty()) frames = std::max(frames, *found.rbegin() + 1);
  run.obj = frames > 0 && std::any_of(present[0].begin(), present[0].end(),
                                      [](const auto& s) { return !s.empty(); });
  run.ply = frames > 0 && std::any_of(present[1].begin(), present[1].end(),
                                      [](const auto& s) { return !s.empty(); });
  if (frames == 0) {
    std::string names;
    for (const ManifestBody& b : run.bodies) names += (names.empty() ? "" : ", ") + b.name;
    throw SceneError(fmt::format("{}: no frames of the bodies of bodies.json ({}): no {}_00000.obj "
                                 "or .ply",
                                 frames_dir, names, run.bodies[0].name));
  }
  for (std::string_view format : {"obj", "ply"})
    if (need == format && !(format == "obj" ? run.obj : run.ply))
      throw SceneError(fmt::format("{}: no {} frames (was output.{} false?)", frames_dir,
                                   format == "obj" ? "OBJ" : "PLY", format));

  // In frame order, so that the message names the first damaged file.
  std::vector<std::vector<Counts>> first(2, std::vector<Counts>(run.bodies.size()));
  for (int f = 0; f < frames; ++f)
    for (std::size_t b = 0; b < run.bodies.size(); ++b)
      for (int k = 0; k < 2; ++k) {
        if (!(k == 0 ? run.obj : run.ply)) continue;
        const std::string path = frame_path(out_dir, run.bodies[b].name, f, kFormats[k]);
        const std::set<int>& found = present[k][b];
        if (!found.count(f)) {
          if (found.empty())
            throw SceneError(fmt::format("{}: missing (body '{}' of bodies.json has no .{} frames; "
                                         "the run has frames 0-{})",
                                         path, run.bodies[b].name, kFormats[k], frames - 1));
          throw SceneError(fmt::format("{}: missing (frames {} exist)", path, describe(found)));
        }
        const Counts n = k == 0 ? count_obj(path) : check_ply(path);
        if (f == 0) {
          first[k][b] = n;
          if (k == 1 && run.obj && (n.vertices != first[0][b].vertices || n.faces != first[0][b].faces))
            throw SceneError(fmt::format("{}: {} vertices and {} faces, {} has {} and {}", path,
                                         n.vertices, n.faces,
                                         frame_path(out_dir, run.bodies[b].name, 0, "obj"),
                                         first[0][b].vertices, first[0][b].faces));
          continue;
        }
        const Counts& n0 = first[k][b];
        if (n.vertices != n0.vertices)
          throw SceneError(
              fmt::format("{}: {} vertices, frame 0 has {}", path, n.vertices, n0.vertices));
        if (n.faces == 0 && n0.faces > 0)
          throw SceneError(fmt::format("{}: no faces (frame 0 has {})", path, n0.faces));
        if (n0.faces == 0 && n.faces > 0)
          throw SceneError(fmt::format("{}: no faces (frame {} has {})",
                                       frame_path(out_dir, run.bodies[b].name, 0, kFormats[k]), f,
                                       n.faces));
        if (n.faces != n0.faces)
          throw SceneError(fmt::format("{}: {} faces, frame 0 has {}", path, n.faces, n0.faces));
      }
  run.frames = frames;
  const int k0 = run.obj ? 0 : 1;
  for (std::size_t b = 0; b < run.bodies.size(); ++b) {
    run.vertices.push_back(first[k0][b].vertices);
    run.faces.push_back(first[k0][b].faces);
  }

  // One diagnostics row per frame: more rows than frames is a run whose last frames
  // were lost; fewer, frames left over from a longer run into the same folder.
  const std::string diagnostics = out_dir + "/diagnostics.csv";
  const std::size_t rows = diagnostics_rows(diagnostics);
  if (rows > std::size_t(frames))
    throw SceneError(fmt::format("{}: missing (frames 0-{} exist, diagnostics.csv has {} rows)",
                                 frame_path(out_dir, run.bodies[0].name, frames,
                                            run.ply ? "ply" : "obj"),
                                 frames - 1, rows));
  if (rows < std::size_t(frames))
    throw SceneError(fmt::format("{}: {} rows, but frames 0-{} exist (frames left over from a "
                                 "longer run into the same folder?)",
                                 diagnostics, rows, frames - 1));
  return run;
}

}  // namespace clockwork
