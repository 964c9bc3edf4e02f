// Hostile inputs to the readers (issue 42): numbers in scene JSON, deep nesting,
// directories given as files, OBJ faces, PLY frames, names that would become paths,
// and the frame writers' round trip and full disk. Each case asserts the message
// (file, field or line, value) and, where the path is the tool's, its exit status.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "io/exit_codes.hpp"
#include "io/frames/frame_io.hpp"
#include "io/scene/json_reader.hpp"
#include "io/mesh/mesh.hpp"
#include "io/run/run.hpp"
#include "io/mesh/tet_mesh.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/files.hpp"

using namespace clockwork;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::string kCloth = std::string(CLOCKWORK_SOURCE_DIR) + "/demos/hanging_cloth.json";

/// `text` with its one occurrence of `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

/// The hanging cloth demo with `from` replaced by `to` (literals that no JSON library
/// writes, so the file is edited as text), written to DIR/NAME.
fs::path cloth_with(const fs::path& dir, const std::string& name, const std::string& from,
                    const std::string& to) {
  const fs::path file = dir / name;
  std::ofstream(file, std::ios::binary) << replaced(test::read_file(kCloth), from, to);
  return file;
}

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
}

/// A PLY header of the frames' vertex properties (x y z vx vy vz mass) and N vertices.
std::string ply_header(int n, const std::string& format = "ascii") {
  return "ply\nformat " + format + " 1.0\nelement vertex " + std::to_string(n) +
         "\nproperty double x\nproperty double y\nproperty double z\n"
         "property double vx\nproperty double vy\nproperty double vz\n"
         "property double mass\nelement face 0\nproperty list uchar int vertex_indices\n"
         "end_header\n";
}

}  // namespace

TEST_CASE("hostile: scene numbers out of range, rounding to zero, subnormal or NaN name file, pointer and literal") {
  const fs::path dir = test::fresh_dir("hostile_numbers");
  const struct {
    std::string literal, what;
  } cases[] = {
      {"1e400", "number out of the range of a double (above 1.7976931348623157e308)"},
      {"-1e400", "number out of the range of a double (above 1.7976931348623157e308)"},
      {"1e-400", "number too small for a double (it would round to 0)"},
      {"1e-310", "subnormal number (nonzero, below 2.2250738585072014e-308 in magnitude) is not supported"},
      {"NaN", "JSON has no NaN or infinity (numbers must be finite)"},
      {"nan", "JSON has no NaN or infinity (numbers must be finite)"},
      {"Infinity", "JSON has no NaN or infinity (numbers must be finite)"},
      {"-Infinity", "JSON has no NaN or infinity (numbers must be finite)"},
  };
  int k = 0;
  for (const auto& c : cases) {
    CAPTURE(c.literal);
    const fs::path file = cloth_with(dir, fmt::format("young_{}.json", k++), "\"young\": 500.0",
                                     "\"young\": " + c.literal);
    const auto r = test::run_cli("validate " + file.string());
    CHECK(r.exit_code == kExitInput);
    CHECK(contains(r.err, fmt::format("{}: /bodies/0/material/young: {}, got {}", file.string(),
                                      c.what, c.literal)));
  }
  // In an array: the pointer names the element.
  const fs::path gravity = cloth_with(dir, "gravity.json", "[0, 0, -9.81]", "[0, 0, -9e999]");
  CHECK(test::what_thrown([&] { parse_json_file(gravity.string()); }) ==
        gravity.string() + ": /gravity/2: number out of the range of a double (above "
                           "1.7976931348623157e308), got -9e999");
  // The smallest normal double and a huge finite one are numbers like any other.
  const nlohmann::json ok = parse_json_text(R"({"a": [2.2250738585072014e-308, 1.7e308, 0e-400, -0.0]})", "ok.json");
  CHECK(ok["a"][0].get<double>() == DBL_MIN);
  CHECK(ok["a"][2].get<double>() == 0.0);
  // A syntax error keeps nlohmann's position.
  CHECK(contains(test::what_thrown([] { parse_json_text("{\"a\": [1, }", "bad.json"); }),
                 "bad.json: not valid JSON: [json.exception.parse_error.101] parse error at line 1, column 11"));
}

TEST_CASE("hostile: JSON nested 60000 levels deep is refused with line and column, and messages stay short") {
  const fs::path dir = test::fresh_dir("hostile_nesting");
  const std::string deep = std::string(60000, '[') + std::string(60000, ']');
  const fs::path file = cloth_with(dir, "deep.json", "\"bending\": 1e-4", "\"bending\": " + deep);
  const auto r = test::run_cli("validate " + file.string());
  CHECK(r.exit_code == kExitInput);
  // Line 12 of the demo holds the material, at depth 4 (the root, "bodies", the body,
  // the material): its "[" number 253 is level 257, the one refused.
  const std::string line12 = "      \"material\": {\"area_density\": 0.1, \"young\": 500.0, \"poisson\": 0.3, \"bending\": ";
  CHECK(contains(r.err, fmt::format("{}: line 12, column {}: arrays and objects nested deeper than 256 levels",
                                    file.string(), line12.size() + 253)));

  // 200 levels parse; the wrong type is reported with the value cut, not dumped.
  const fs::path shallow = cloth_with(dir, "shallow.json", "\"bending\": 1e-4",
                                      "\"bending\": " + std::string(200, '[') + std::string(200, ']'));
  const auto s = test::run_cli("validate " + shallow.string());
  CHECK(s.exit_code == kExitInput);
  CHECK(contains(s.err, shallow.string() + ": /bodies/0/material/bending: expected a number, got [[[["));
  CHECK(s.err.size() < 400);

  // A document built in memory (no parse-time limit) is never serialised whole.
  nlohmann::json v = nlohmann::json::array();
  nlohmann::json* innermost = &v;
  for (int i = 0; i < 100000; ++i) {
    innermost->push_back(nlohmann::json::array());
    innermost = &innermost->back();
  }
  const std::string message = test::what_thrown([&] { JsonField(v, "memory.json").number(); });
  CHECK(message.starts_with("memory.json: /: expected a number, got [[[["));
  CHECK(message.ends_with("..."));
  CHECK(message.size() < 140);
  // A huge string too.
  const nlohmann::json big = std::string(10'000'000, 'x');
  CHECK(test::what_thrown([&] { JsonField(big, "memory.json").number(); }).size() < 140);
}

TEST_CASE("hostile: a directory given as a file is named as such by every reader") {
  const fs::path dir = test::fresh_dir("hostile_directory");
  const std::string d = dir.string();
  const std::string expected = d + ": is a directory, expected a file";
  CHECK(test::what_thrown([&] { parse_json_file(d); }) == expected);
  CHECK(test::what_thrown([&] { read_obj(d); }) == expected);
  CHECK(test::what_thrown([&] { read_ply(d); }) == expected);
  CHECK(test::what_thrown([&] { read_gmsh(d); }) == expected);
  fs::create_directories(dir / "mesh.node");
  CHECK(test::what_thrown([&] { read_tetgen((dir / "mesh").string()); }) ==
        (dir / "mesh.node").string() + ": is a directory, expected a file");

  const auto scene = test::run_cli("validate " + d);
  CHECK(scene.exit_code == kExitInput);
  CHECK(contains(scene.err, expected));
  // A scene whose OBJ is a directory.
  fs::create_directories(dir / "mesh.obj");
  const fs::path file = cloth_with(dir, "obj.json", R"("shape": {"type": "grid", "size": [1.0, 1.0], "resolution": [24, 24],
                "center": [0, 0, 1.5], "axes": [[1, 0, 0], [0, 1, 0]]})",
                                   R"("shape": {"type": "obj", "file": "mesh.obj"})");
  const auto obj = test::run_cli("validate " + file.string());
  CHECK(obj.exit_code == kExitInput);
  CHECK(contains(obj.err, "/bodies/0/shape/file: " + (dir / "mesh.obj").string() +
                              ": is a directory, expected a file"));
  // A solid whose TetGen .node is a directory (mesh.node, made above).
  const fs::path solid = dir / "solid.json";
  write_text(solid, replaced(test::read_file(std::string(CLOCKWORK_SOURCE_DIR) + "/demos/schroeder_bad_sphere.json"),
                             "\"data/bad_sphere\"", "\"mesh\""));
  const auto tet = test::run_cli("validate " + solid.string());
  CHECK(tet.exit_code == kExitInput);
  CHECK(contains(tet.err, solid.string() + ": /bodies/0/shape/file: " + (dir / "mesh.node").string() +
                              ": is a directory, expected a file"));
}

TEST_CASE("hostile: OBJ duplicated, repeated-vertex, degenerate and overflowing faces name file, line and face") {
  const fs::path dir = test::fresh_dir("hostile_obj");
  const std::string square = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n";
  const auto error = [&](const std::string& name, const std::string& text) {
    write_text(dir / name, text);
    return test::what_thrown([&] { read_obj((dir / name).string(), ObjFaces::kSurface); });
  };
  CHECK(error("dup.obj", square + "f 1 2 3\nf 1 3 4\nf 3 1 2\n") ==
        (dir / "dup.obj").string() + ":7: face 3 has the vertices of face 1 (line 5): a duplicated face: 'f 3 1 2'");
  CHECK(error("twice.obj", square + "f 1 2 2\n") ==
        (dir / "twice.obj").string() + ":5: face 1 uses a vertex twice (a degenerate face): 'f 1 2 2'");
  CHECK(error("line.obj", square + "v 2 0 0\nf 1 2 5\n") ==
        (dir / "line.obj").string() + ":6: face 1 (vertices 1 2 5) is degenerate (zero area): 'f 1 2 5'");
  CHECK(error("huge.obj", "v 0 0 0\nv 1e200 0 0\nv 0 1e200 0\nf 1 2 3\n") ==
        (dir / "huge.obj").string() +
            ":4: face 1: its area is not finite (coordinates too large to compute it): 'f 1 2 3'");
  CHECK(error("nan.obj", "v 0 nan 0\n") ==
        (dir / "nan.obj").string() + ":1: vertex coordinate is not finite: 'v 0 nan 0'");
  CHECK(error("over.obj", "v 0 1e400 0\n") ==
        (dir / "over.obj").string() + ":1: vertex coordinate is not a number within a double's range: 'v 0 1e400 0'");
  CHECK(error("index.obj", square + "f 1 2 3x\n") ==
        (dir / "index.obj").string() + ":5: face index is not an integer: 'f 1 2 3x'");
  // Frames are read as written: a sliver of a crushed cloth is no error there, and
  // subnormal coordinates (in frames of earlier versions) are finite numbers.
  write_text(dir / "frame.obj", "v 0 0 0\nv 1 0 0\nv 5.08e-309 0 0\nf 1 2 3\n");
  const TriangleMesh frame = read_obj((dir / "frame.obj").string());
  CHECK(frame.vertices[2].x() == 5.08e-309);

  // Through a scene: the field, the file, the line.
  write_text(dir / "mesh.obj", square + "f 1 2 3\nf 1 3 4\nf 1 2 3\n");
  const fs::path scene = cloth_with(dir, "scene.json", R"("shape": {"type": "grid", "size": [1.0, 1.0], "resolution": [24, 24],
                "center": [0, 0, 1.5], "axes": [[1, 0, 0], [0, 1, 0]]})",
                                    R"("shape": {"type": "obj", "file": "mesh.obj"})");
  const auto r = test::run_cli("validate " + scene.string());
  CHECK(r.exit_code == kExitInput);
  CHECK(contains(r.err, scene.string() + ": /bodies/0/shape/file: " + (dir / "mesh.obj").string() +
                            ":7: face 3 has the vertices of face 1 (line 5): a duplicated face"));
}

TEST_CASE("hostile: PLY frames refuse binary files, bad tokens and non-finite values by file and line") {
  const fs::path dir = test::fresh_dir("hostile_ply");
  const auto error = [&](const std::string& name, const std::string& text) {
    write_text(dir / name, text);
    return test::what_thrown([&] { read_ply((dir / name).string()); });
  };
  const std::string f = dir.string() + "/";
  CHECK(error("binary.ply", ply_header(1, "binary_little_endian") + std::string(56, '\0')) ==
        f + "binary.ply: binary PLY is not supported, expected format ascii 1.0");
  CHECK(error("token.ply", ply_header(2) + "0 0 0 0 0 0 1\n0 xyz 0 0 0 0 1\n") ==
        f + "token.ply: line 15: expected a number, got 'xyz'");
  CHECK(error("nan.ply", ply_header(1) + "0 0 0 nan 0 0 1\n") ==
        f + "nan.ply: line 14: vertex property 'vx' is not finite, got nan");
  CHECK(error("inf.ply", ply_header(1) + "inf 0 0 0 0 0 1\n") ==
        f + "inf.ply: line 14: vertex property 'x' is not finite, got inf");
  CHECK(error("minf.ply", ply_header(1) + "0 0 0 0 0 0 -inf\n") ==
        f + "minf.ply: line 14: vertex property 'mass' is not finite, got -inf");
  CHECK(error("over.ply", ply_header(1) + "0 0 1e400 0 0 0 1\n") ==
        f + "over.ply: line 14: expected a number, got '1e400'");
  CHECK(error("short.ply", ply_header(1) + "0 0 0 0 0 1\n") ==
        f + "short.ply: line 14: expected 7 values (one per vertex property), got 6");
  CHECK(error("truncated.ply", ply_header(3) + "0 0 0 0 0 0 1\n") ==
        f + "truncated.ply: truncated vertex list: 1 of 3 vertices");
  CHECK(error("count.ply", ply_header(0) + "") == "(no error)");
  CHECK(error("huge.ply", replaced(ply_header(1), "vertex 1", "vertex 99999999999")) ==
        f + "huge.ply: line 3: expected a vertex count in 0..1e8, got '99999999999'");
  CHECK(error("header.ply", "ply\nformat ascii 1.0\nelement vertex 1\n") ==
        f + "header.ply: no end_header line (not a whole PLY header)");
  // A kinematic vertex's mass is +inf; subnormals are finite and read as they are.
  write_text(dir / "ok.ply", ply_header(1) + "5.08e-309 -1e-320 0 0 0 0 inf\n");
  const auto ok = read_ply((dir / "ok.ply").string());
  REQUIRE(ok.size() == 1);
  CHECK(ok[0].x.x() == 5.08e-309);
  CHECK(ok[0].x.y() == -1e-320);
  CHECK(ok[0].mass == HUGE_VAL);

  // `run --resume` from a folder whose last frame holds a bad token.
  const fs::path run_dir = test::fresh_dir("hostile_ply_resume");
  fs::create_directories(run_dir / "frames");
  write_text(frame_path(run_dir.string(), "cloth", 0, "ply"), ply_header(2) + "0 0 0 0 0 0 1\n0 0 0 xyz 0 0 1\n");
  const fs::path out = test::fresh_dir("hostile_ply_resume_out");
  const auto r = test::run_cli("run " + kCloth + " --resume " + run_dir.string() + " --out " + out.string());
  CHECK(r.exit_code == kExitInput);
  CHECK(contains(r.err, frame_path(run_dir.string(), "cloth", 0, "ply") + ": line 15: expected a number, got 'xyz'"));
  // ... and from one whose frame is binary.
  write_text(frame_path(run_dir.string(), "cloth", 0, "ply"), ply_header(2, "binary_big_endian"));
  const auto b = test::run_cli("run " + kCloth + " --resume " + run_dir.string() + " --out " + out.string());
  CHECK(b.exit_code == kExitInput);
  CHECK(contains(b.err, frame_path(run_dir.string(), "cloth", 0, "ply") +
                            ": binary PLY is not supported, expected format ascii 1.0"));
}

TEST_CASE("hostile: frame writers round-trip every finite double and flush subnormals to signed zero") {
  const fs::path dir = test::fresh_dir("hostile_round_trip");
  const double values[] = {0.0,     -0.0,      DBL_MIN,  DBL_MAX,       -DBL_MAX, 1.0 / 3.0,
                           0.1,     -2.5e-300, 1e300,    std::nextafter(1.0, 2.0), 5.08e-309,
                           -1e-320, DBL_TRUE_MIN};
  std::vector<FrameVertex> vertices;
  for (const double x : values) {
    FrameVertex p;
    p.x = Vec3(x, -x, 1.0);
    p.v = Vec3(x, 0.0, x);
    p.mass = 1.0;
    vertices.push_back(p);
  }
  vertices.back().mass = HUGE_VAL;  // a kinematic vertex
  const std::string ply = (dir / "frame.ply").string(), obj = (dir / "frame.obj").string();
  write_ply(ply, vertices, {}, true);
  std::vector<Vec3> positions;
  for (const auto& p : vertices) positions.push_back(p.x);
  write_obj(obj, positions, {{0, 1, 2}}, {});
  const auto back = read_ply(ply);
  const TriangleMesh mesh = read_obj(obj);
  REQUIRE(back.size() == vertices.size());
  REQUIRE(mesh.vertices.size() == vertices.size());
  const auto same_bits = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  const auto written = [](double x) {
    return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0, x) : x;
  };
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    CAPTURE(values[i]);
    for (int k = 0; k < 3; ++k) {
      CHECK(same_bits(back[i].x[k], written(vertices[i].x[k])));
      CHECK(same_bits(back[i].v[k], written(vertices[i].v[k])));
      CHECK(same_bits(mesh.vertices[i][k], written(vertices[i].x[k])));
    }
    CHECK(same_bits(back[i].mass, vertices[i].mass));
  }
  CHECK(std::signbit(back[11].x.x()));  // -1e-320 became -0
  CHECK(!contains(test::read_file(ply), "e-309"));
  CHECK(!contains(test::read_file(ply), "e-32"));
}

TEST_CASE("hostile: frame writers name the file and the reason on a full disk or an unwritable path") {
  std::vector<FrameVertex> vertices(2000);
  for (auto& p : vertices) p = {Vec3(1.0 / 3.0, 2.0, 3.0), Vec3::Zero(), 1.0};
  const auto io_error = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const IoError& e) {
      return e.what();
    } catch (const std::exception& e) {
      return std::string("not an IoError: ") + e.what();
    }
    return "(no error)";
  };
  CHECK(io_error([&] { write_ply("/dev/full", vertices, {}); }) ==
        "/dev/full: cannot write: No space left on device");
  // A small file fails only when it is flushed at the end.
  CHECK(io_error([&] { write_obj("/dev/full", {Vec3::Zero()}, {}, {}); }) ==
        "/dev/full: cannot write: No space left on device");
  CHECK(io_error([&] { write_obj("/nonexistent/dir/cloth_00000.obj", {Vec3::Zero()}, {}, {}); }) ==
        "/nonexistent/dir/cloth_00000.obj: cannot open for writing: No such file or directory");
}

TEST_CASE("hostile: scene and body names outside the file-name alphabet are refused with the value escaped") {
  const fs::path dir = test::fresh_dir("hostile_names");
  const std::string what =
      "must be a name usable in file names: 1 to 64 characters of A-Z a-z 0-9 . _ -, not starting with '.'";
  const struct {
    std::string json, shown;
  } bad[] = {
      {R"("..")", R"("..")"},           {R"(".hidden")", R"(".hidden")"},
      {R"("a/b")", R"("a/b")"},         {R"("a\nb")", R"("a\nb")"},
      {R"("a\u0000b")", R"("a\u0000b")"}, {R"("")", R"("")"},
      {R"("with space")", R"("with space")"},
      {"\"" + std::string(65, 'n') + "\"", "\"" + std::string(65, 'n') + "\""},
      {R"("caf\u00e9")", "\"café\""},
  };
  int k = 0;
  for (const auto& b : bad) {
    CAPTURE(b.json);
    const fs::path scene = cloth_with(dir, fmt::format("scene_{}.json", k), "\"name\": \"hanging_cloth\"",
                                      "\"name\": " + b.json);
    const auto r = test::run_cli("validate " + scene.string());
    CHECK(r.exit_code == kExitInput);
    CHECK(contains(r.err, fmt::format("{}: /name: {}, got {}", scene.string(), what, b.shown)));
    const fs::path body = cloth_with(dir, fmt::format("body_{}.json", k++), "\"name\": \"cloth\"",
                                     "\"name\": " + b.json);
    const auto s = test::run_cli("validate " + body.string());
    CHECK(s.exit_code == kExitInput);
    CHECK(contains(s.err, fmt::format("{}: /bodies/0/name: {}, got {}", body.string(), what, b.shown)));
  }
  // The whole alphabet, 64 characters, is a name.
  const fs::path good = cloth_with(dir, "good.json", "\"name\": \"cloth\"",
                                   "\"name\": \"A-Za-z_0.9-" + std::string(53, 'x') + "\"");
  CHECK(test::run_cli("validate " + good.string()).exit_code == kExitOk);
}

TEST_CASE("hostile: every demo scene still validates under the stricter readers and names") {
  for (const auto& entry : fs::directory_iterator(std::string(CLOCKWORK_SOURCE_DIR) + "/demos")) {
    if (entry.path().extension() != ".json") continue;
    CAPTURE(entry.path().string());
    const auto r = test::run_cli("validate " + entry.path().string());
    CHECK(r.exit_code == kExitOk);
    CHECK(r.err.empty());
  }
}
