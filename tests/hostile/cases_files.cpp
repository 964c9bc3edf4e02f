/// Hostile files, runs, run folders and command lines (tests/hostile/hostile.hpp), and
/// the cases whose correct outcome waits for the rest of issue 42.
#include <fstream>
#include <string>

#include "tests/hostile/hostile.hpp"

namespace clockwork::hostile {

using nlohmann::json;

namespace {

const std::string kTriangle = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";

const std::string kCubeNode =
    "# unit cube, 1-based\n8 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 1 1 0\n5 0 0 1\n6 1 0 1\n7 0 1 1\n8 1 1 1\n";
const std::string kCubeEle = "5 4 1\n1 1 2 3 5 1\n2 4 2 3 8 1\n3 6 2 8 5 1\n4 7 3 5 8 1\n5 2 3 5 8 2\n";
const std::string kCubeMsh =
    "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n8\n80 1 1 1\n10 0 0 0\n20 1 0 0\n30 0 1 0\n40 1 1 0\n"
    "50 0 0 1\n60 1 0 1\n70 0 1 1\n$EndNodes\n$Elements\n5\n3 4 2 1 1 10 20 30 50\n4 4 2 1 1 40 20 30 80\n"
    "5 4 2 1 1 60 20 80 50\n6 4 2 1 1 70 30 50 80\n7 4 2 2 2 20 30 50 80\n$EndElements\n";

/// The cloth scene with an OBJ shape reading m.obj.
std::string obj_scene() {
  json s = cloth_scene();
  s["bodies"][0]["shape"] = {{"type", "obj"}, {"file", "m.obj"}};
  s["bodies"][0].erase("pins");
  return s.dump(1);
}

/// The solid scene with a tet shape of `type` reading `file`.
std::string tet_scene(const std::string& type, const std::string& file) {
  json s = solid_scene();
  s["bodies"][0]["shape"] = {{"type", type}, {"file", file}, {"scale", 0.1}};
  s["bodies"][0].erase("pins");
  return s.dump(1);
}

/// `text` with the first occurrence of `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

Case obj_case(std::string name, const std::string& obj, int code, std::vector<std::string> err) {
  return {std::move(name), {{"s.json", obj_scene()}, {"m.obj", obj}}, {}, "validate s.json", code, std::move(err)};
}
/// `c` with a valid m.obj beside its scene.
Case with_obj(Case c) {
  c.files.emplace_back("m.obj", kTriangle);
  return c;
}
Case tetgen_case(std::string name, const std::string& node, const std::string& ele, int code,
                 std::vector<std::string> err) {
  return {std::move(name), {{"s.json", tet_scene("tetgen", "t")}, {"t.node", node}, {"t.ele", ele}}, {},
          "validate s.json", code, std::move(err)};
}
Case gmsh_case(std::string name, const std::string& msh, int code, std::vector<std::string> err) {
  return {std::move(name), {{"s.json", tet_scene("gmsh", "t.msh")}, {"t.msh", msh}}, {}, "validate s.json", code,
          std::move(err)};
}

/// A run of `scene` (3 frames) into out/, then `edits` (shell), then `args`.
Case after_run(std::string name, const json& scene, std::vector<std::string> edits, std::string args, int code,
               std::vector<std::string> err) {
  Case c{std::move(name), {{"s.json", scene.dump(1)}}, {"run s.json --out out"}, std::move(args), code,
         std::move(err)};
  for (auto& e : edits) c.setup.push_back("$ " + e);
  return c;
}

const std::string kFrame2 = "out/frames/cloth_00002.ply";
const std::string kResume = "run s.json --resume out --until 0.3";

/// A shell edit of the first vertex line of frame 2 (line 16, after the 15 lines of its header).
std::string edit_vertex(const std::string& sed_expr) {
  return "sed -i '16s/" + sed_expr + "/' " + kFrame2;
}

}  // namespace

std::vector<Case> file_cases() {
  return {
      obj_case("obj: a valid triangle", kTriangle, kExitOk, {}),
      obj_case("obj: CRLF line ends, comments, quads, slashes", "# c\r\nv 0 0 0\r\nv 1 0 0\r\nv 1 1 0\r\n"
               "v 0 1 0\r\nvt 0 0\r\nvn 0 0 1\r\nf 1/1/1 2/1/1 3/1/1 4/1/1\r\n", kExitOk, {}),
      obj_case("obj: negative indices", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\n", kExitOk, {}),
      obj_case("obj: face index 0", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", kExitInput,
               {"m.obj:4", "face index out of range"}),
      obj_case("obj: face index past the vertices", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n", kExitInput,
               {"m.obj:4", "face index out of range"}),
      obj_case("obj: negative index before the first vertex", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -4 1 2\n", kExitInput,
               {"m.obj:4", "face index out of range"}),
      obj_case("obj: face index past 64 bits", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99999999999999999999\n",
               kExitInput, {"m.obj:4"}),
      obj_case("obj: face index a word", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf a b c\n", kExitInput,
               {"m.obj:4", "face index is not an integer"}),
      obj_case("obj: face of two vertices", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n", kExitInput,
               {"m.obj:4", "face needs at least 3 vertices"}),
      obj_case("obj: vertex of two coordinates", "v 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", kExitInput,
               {"m.obj:1", "vertex needs 3 coordinates"}),
      obj_case("obj: vertex coordinate a word", "v 0 zero 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", kExitInput,
               {"m.obj:1", "not a number"}),
      obj_case("obj: vertex coordinate with trailing letters", "v 0 0 0\nv 1x 0 0\nv 0 1 0\nf 1 2 3\n",
               kExitInput, {"m.obj:2", "not a number"}),
      obj_case("obj: vertex coordinate nan", "v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n", kExitInput,
               {"m.obj:2", "not finite"}),
      obj_case("obj: vertex coordinate inf", "v 0 0 0\nv 1 0 0\nv 0 -inf 0\nf 1 2 3\n", kExitInput,
               {"m.obj:3", "not finite"}),
      obj_case("obj: vertex coordinate 1e400", "v 0 0 0\nv 1e400 0 0\nv 0 1 0\nf 1 2 3\n", kExitInput,
               {"m.obj:2", "1e400"}),
      obj_case("obj: empty file", "", kExitInput, {"m.obj", "no vertices"}),
      obj_case("obj: binary bytes", std::string("\0\x01\x02\xff\xfe garbage\n", 14), kExitInput,
               {"m.obj", "no vertices"}),
      obj_case("obj: vertices without faces", "v 0 0 0\nv 1 0 0\nv 0 1 0\n", kExitInput,
               {"s.json: /bodies/0/shape/file", "no faces"}),
      obj_case("obj: collinear triangle", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n", kExitInput,
               {"s.json: /bodies/0/shape", "degenerate"}),
      {"obj: missing file", {{"s.json", obj_scene()}}, {}, "validate s.json", kExitInput, {"m.obj", "cannot open"}},
      with_obj(bad_field("obj: zero scale", json::parse(obj_scene()), "/bodies/0/shape/scale", "0", {"must be > 0"})),
      with_obj(bad_field("obj: translate of two numbers", json::parse(obj_scene()), "/bodies/0/shape/translate",
                         "[1, 2]")),
      // --- TetGen ------------------------------------------------------------------------
      tetgen_case("tetgen: the valid cube", kCubeNode, kCubeEle, kExitOk, {}),
      {"tetgen: missing .ele", {{"s.json", tet_scene("tetgen", "t")}, {"t.node", kCubeNode}}, {}, "validate s.json",
       kExitInput, {"t.ele", "cannot open"}},
      {"tetgen: missing .node", {{"s.json", tet_scene("tetgen", "t")}, {"t.ele", kCubeEle}}, {}, "validate s.json",
       kExitInput, {"t.node", "cannot open"}},
      tetgen_case("tetgen: coordinate a word", replaced(kCubeNode, "2 1 0 0", "2 one 0 0"), kCubeEle, kExitInput,
                  {"t.node:4", "one"}),
      tetgen_case("tetgen: coordinate nan", replaced(kCubeNode, "2 1 0 0", "2 nan 0 0"), kCubeEle, kExitInput, {"t.node"}),
      tetgen_case("tetgen: coordinate 1e400", replaced(kCubeNode, "2 1 0 0", "2 1e400 0 0"), kCubeEle, kExitInput,
                  {"t.node:4", "1e400"}),
      tetgen_case("tetgen: point of two coordinates", replaced(kCubeNode, "2 1 0 0", "2 1 0"), kCubeEle, kExitInput,
                  {"t.node:4"}),
      tetgen_case("tetgen: fewer points than the header says", replaced(kCubeNode, "8 1 1 1\n", ""), kCubeEle, kExitInput,
                  {"t.node"}),
      tetgen_case("tetgen: tet index past the points", kCubeNode, replaced(kCubeEle, "1 1 2 3 5 1", "1 1 2 3 9 1"),
                  kExitInput, {"t.ele:2"}),
      tetgen_case("tetgen: tet index a word", kCubeNode, replaced(kCubeEle, "1 1 2 3 5 1", "1 1 2 three 5 1"),
                  kExitInput, {"t.ele:2", "three"}),
      tetgen_case("tetgen: fewer tets than the header says", kCubeNode, replaced(kCubeEle, "5 2 3 5 8 2\n", ""),
                  kExitInput, {"t.ele"}),
      tetgen_case("tetgen: tet of three nodes", kCubeNode, replaced(kCubeEle, "5 4 1", "5 3 1"), kExitInput,
                  {"t.ele:1"}),
      tetgen_case("tetgen: degenerate tet", kCubeNode, replaced(kCubeEle, "1 1 2 3 5 1", "1 1 2 3 4 1"), kExitInput,
                  {"t.ele", "degenerate"}),
      tetgen_case("tetgen: a point of no tet", replaced(kCubeNode, "8 3 0 0", "9 3 0 0") + "9 5 5 5\n", kCubeEle,
                  kExitInput, {"t"}),
      tetgen_case("tetgen: a face of three tets", kCubeNode, replaced(kCubeEle, "5 4 1", "6 4 1") + "6 1 2 3 5 1\n",
                  kExitInput, {"t.node/.ele", "duplicates tet"}),
      // A tet inside the cube's central one, sharing no face with it.
      tetgen_case("tetgen: overlapping tets",
                  replaced(kCubeNode, "8 3 0 0", "12 3 0 0") +
                      "9 0.4 0.4 0.4\n10 0.6 0.4 0.4\n11 0.4 0.6 0.4\n12 0.4 0.4 0.6\n",
                  replaced(kCubeEle, "5 4 1", "6 4 1") + "6 9 10 11 12 2\n", kExitInput,
                  {"t.node/.ele: tet 5 (8 9 10 11) overlaps tet 4 (1 2 4 7): their interiors intersect"}),
      tetgen_case("tetgen: empty .node", "", kCubeEle, kExitInput, {"t.node"}),
      tetgen_case("tetgen: negative point count", replaced(kCubeNode, "8 3 0 0", "-8 3 0 0"), kCubeEle, kExitInput,
                  {"t.node:2"}),
      // --- Gmsh ----------------------------------------------------------------------------
      gmsh_case("gmsh: the valid cube", kCubeMsh, kExitOk, {}),
      gmsh_case("gmsh: format version 3", replaced(kCubeMsh, "2.2 0 8", "3.0 0 8"), kExitInput, {"t.msh"}),
      gmsh_case("gmsh: binary flag", replaced(kCubeMsh, "2.2 0 8", "2.2 1 8"), kExitInput, {"t.msh"}),
      gmsh_case("gmsh: no elements", kCubeMsh.substr(0, kCubeMsh.find("$Elements")), kExitInput,
                {"t.msh", "no $Elements section"}),
      gmsh_case("gmsh: tet of an unknown node", replaced(kCubeMsh, "3 4 2 1 1 10 20 30 50", "3 4 2 1 1 10 20 30 55"),
                kExitInput, {"t.msh"}),
      gmsh_case("gmsh: node tag a word", replaced(kCubeMsh, "20 1 0 0", "twenty 1 0 0"), kExitInput, {"t.msh"}),
      gmsh_case("gmsh: coordinate nan", replaced(kCubeMsh, "20 1 0 0", "20 nan 0 0"), kExitInput, {"t.msh"}),
      gmsh_case("gmsh: truncated nodes", kCubeMsh.substr(0, kCubeMsh.find("50 0 0 1")), kExitInput, {"t.msh"}),
      gmsh_case("gmsh: only triangles", kCubeMsh.substr(0, kCubeMsh.find("$Elements")) +
                "$Elements\n1\n1 2 2 5 1 10 30 20\n$EndElements\n", kExitInput, {"t.msh", "no 4-node tetrahedra"}),
      gmsh_case("gmsh: empty file", "", kExitInput, {"t.msh"}),
      {"gmsh: missing file", {{"s.json", tet_scene("gmsh", "t.msh")}}, {}, "validate s.json", kExitInput,
       {"t.msh", "cannot open"}},
  };
}

std::vector<Case> run_cases() {
  const json cloth = cloth_scene();
  json no_ply = cloth;
  no_ply["output"] = {{"ply", false}};
  return {
      // Correct runs: exit 0, every written number finite (checked for every case).
      {"run: the cloth", {{"s.json", cloth.dump()}}, {}, "run s.json --out out", kExitOk, {}},
      {"run: the chain", {{"s.json", chain_scene().dump()}}, {}, "run s.json --out out", kExitOk, {}},
      {"run: the tet bar", {{"s.json", solid_scene().dump()}}, {}, "run s.json --out out", kExitOk, {}},
      {"run: the cloth on the ground with contact", {{"s.json", contact_scene().dump()}}, {}, "run s.json --out out",
       kExitOk, {}},
      {"run: --until shorter than end_time", {{"s.json", cloth.dump()}}, {}, "run s.json --out out --until 0.05",
       kExitOk, {}},
      after_run("run: resumed from the last frame", cloth, {}, kResume, kExitOk, {}),
      after_run("run: resumed from frame 1 into another folder", cloth, {},
                "run s.json --resume out --resume-frame 1 --out out2", kExitOk, {}),
      after_run("check-intersections: a good run", cloth, {}, "check-intersections out", kExitOk, {}),
      // PLY frames on --resume.
      after_run("ply: truncated vertex list", cloth, {"head -c 900 " + kFrame2 + " > f && mv f " + kFrame2},
                kResume, kExitInput, {"cloth_00002.ply", "truncated"}),
      after_run("ply: no x property", cloth, {"sed -i 's/property double x$/property double q/' " + kFrame2}, kResume,
                kExitInput, {"cloth_00002.ply", "'x'"}),
      after_run("ply: a vertex short", cloth, {"sed -i 's/element vertex 25/element vertex 24/' " + kFrame2}, kResume,
                kExitInput, {"out"}),
      after_run("ply: a position nan", cloth, {edit_vertex("^[^ ]*/nan")}, kResume, kExitInput,
                {"out/frames/cloth_00002.ply: line 16: vertex property 'x' is not finite, got nan"}),
      after_run("ply: a coordinate inf", cloth, {edit_vertex(" [^ ]* / inf ")}, kResume, kExitInput,
                {"out/frames/cloth_00002.ply: line 16: vertex property 'y' is not finite, got inf"}),
      after_run("ply: a mass changed", cloth, {edit_vertex("0.0020833[0-9]*/0.5")}, kResume, kExitInput,
                {"--resume out", "vertex 0 has mass 0.5"}),
      // Run folders.
      after_run("resume: no frames folder", cloth, {"rm -r out/frames"}, kResume, kExitInput,
                {"--resume out", "no frames folder"}),
      after_run("resume: no diagnostics.csv", cloth, {"rm out/diagnostics.csv"}, kResume, kExitInput,
                {"diagnostics.csv"}),
      after_run("resume: diagnostics.csv of other columns", cloth, {"sed -i '1s/.*/time,other/' out/diagnostics.csv"},
                kResume, kExitInput, {"diagnostics.csv", "columns"}),
      after_run("resume: a frame past the last", cloth, {}, "run s.json --resume out --resume-frame 7", kExitInput,
                {"--resume-frame 7", "no such frame"}),
      after_run("resume: from an earlier frame in place", cloth, {}, "run s.json --resume out --resume-frame 1",
                kExitInput, {"--resume-frame 1", "later frames"}),
      {"resume: a run without PLY frames", {{"s.json", no_ply.dump()}}, {"run s.json --out out"}, kResume, kExitInput,
       {"no PLY frames of body 'cloth'"}},
      {"resume: a folder that is no run", {{"s.json", cloth.dump()}, {"out/x.txt", "x"}}, {}, kResume, kExitInput,
       {"--resume out", "no frames folder"}},
      {"check-intersections: no such folder", {}, {}, "check-intersections nowhere", kExitInput, {"nowhere"}},
      {"check-intersections: an empty folder", {{"out/.keep", ""}}, {}, "check-intersections out", kExitInput,
       {"out"}},
      {"render: no such folder", {}, {}, "render nowhere --no-video", kExitInput, {"nowhere"}},
      {"plot: no such folder", {}, {}, "plot nowhere", kExitInput, {"nowhere", "no such folder"}},
      {"view: a folder that is no run", {{"out/x.txt", "x"}}, {}, "view out --port 0", kExitInput, {"out"}},
      {"run: --out is a file", {{"s.json", cloth.dump()}, {"out", "a file"}}, {}, "run s.json --out out", kExitIo,
       {"out"}},
  };
}

std::vector<Case> cli_cases() {
  const std::vector<std::pair<std::string, std::string>> scene = {{"s.json", cloth_scene().dump()}};
  const auto usage = [&](std::string name, std::string args, std::vector<std::string> err = {}) {
    return Case{std::move(name), scene, {}, std::move(args), kExitUsage, std::move(err)};
  };
  return {
      usage("cli: no arguments", "", {"A subcommand is required"}),
      usage("cli: run without a scene", "run", {"SCENE"}),
      usage("cli: validate without a scene", "validate", {"SCENE"}),
      usage("cli: validate two scenes", "validate s.json s.json"),
      usage("cli: run with an extra argument", "run s.json extra"),
      usage("cli: unknown option", "run s.json --bogus", {"--bogus"}),
      usage("cli: --until negative", "run s.json --until -1", {"--until"}),
      usage("cli: --until zero", "run s.json --until 0", {"--until"}),
      usage("cli: --until a word", "run s.json --until soon", {"--until"}),
      usage("cli: --until infinite", "run s.json --until inf", {"--until"}),
      usage("cli: --until without a value", "run s.json --until", {"--until"}),
      usage("cli: --out without a value", "run s.json --out", {"--out"}),
      usage("cli: --resume-frame negative", "run s.json --resume out --resume-frame -1", {"--resume-frame"}),
      usage("cli: --resume-frame without --resume", "run s.json --resume-frame 1", {"--resume-frame"}),
      usage("cli: --trace-format unknown", "run s.json --trace-format xml", {"--trace-format"}),
      usage("cli: check-intersections without a folder", "check-intersections", {"OUTDIR"}),
      usage("cli: render --fov zero", "render out --fov 0", {"--fov"}),
      usage("cli: render --eye of two numbers", "render out --eye 1 2", {"--eye"}),
      usage("cli: render --eye without --target", "render out --eye 1 2 3", {"--eye and --target"}),
      usage("cli: render --width a word", "render out --width wide", {"--width"}),
      usage("cli: view --port past 65535", "view out --port 70000", {"--port"}),
      usage("cli: view --port negative", "view out --port -1", {"--port"}),
      usage("cli: two subcommands' options mixed", "validate s.json --until 1", {"--until"}),
      Case{"cli: --version", {}, {}, "--version", kExitOk, {}},
      Case{"cli: --help", {}, {}, "--help", kExitOk, {}},
      Case{"cli: run --help", {}, {}, "run --help", kExitOk, {}},
  };
}

std::vector<Case> failure_class_cases() {
  const json cloth = cloth_scene(), solid = solid_scene(), contact = contact_scene();
  json cloth_without_pins = cloth;
  cloth_without_pins["bodies"][0].erase("pins");
  const json fpu_walls = json::parse(std::ifstream(CLOCKWORK_SOURCE_DIR "/demos/fpu_walls.json"));
  json far_obstacle = contact;  // a grid obstacle, as fuzz_readers found it
  far_obstacle["contact"] = {{"thickness", 0.1}, {"advanced", {{"cell_size", 5}}}};
  far_obstacle["obstacles"][0]["shape"] = json::parse(
      R"({"type": "grid", "size": [3, 0.3], "resolution": [1, 1], "center": [0, 0, 0]})");
  const std::string b = "/bodies/0", mat = "/bodies/0/material", shape = "/bodies/0/shape";
  const auto run_field = [](std::string name, const json& base, const std::string& ptr, const std::string& raw,
                            int code, std::vector<std::string> err) {
    // The message names the field (refusals) or the body (the health check).
    if (code == kExitInput) err.push_back("s.json: " + ptr);
    return Case{std::move(name), {{"s.json", patched(base, ptr, raw)}}, {}, "run s.json --out out", code,
                std::move(err)};
  };
  std::string nested = std::string(60000, '[') + std::string(60000, ']');
  return {
      // Numbers parsed with the file and the JSON pointer (issue 42: "all numbers").
      bad_field("number: end_time 1e400", cloth, "/end_time", "1e400"),
      bad_field("number: young -1e400", cloth, mat + "/young", "-1e400"),
      bad_field("number: NaN literal", cloth, "/end_time", "NaN"),
      bad_field("number: subnormal young", cloth, mat + "/young", "1e-310"),
      // Refused by the parser, before any field is read: the message gives the position.
      {"number: deep nesting of the wrong type", {{"s.json", patched(cloth, "/end_time", nested)}}, {}, "validate s.json",
       kExitInput, {"s.json: line ", "nested deeper than 256 levels"}},
      // Names restricted to a safe file-name alphabet.
      bad_field("name: ..", cloth, "/name", "\"..\""),
      bad_field("name: .", cloth, "/name", "\".\""),
      bad_field("body name: a newline", cloth, b + "/name", "\"a\\nb\""),
      bad_field("body name: a NUL", cloth, b + "/name", "\"a\\u0000b\""),
      bad_field("body name: ..", cloth, b + "/name", "\"..\""),
      // Up-front refusal of what cannot run: memory, events per second.
      bad_field("grid at 4096 x 4096 cells", cloth, shape + "/resolution", "[4096, 4096]"),
      bad_field("disk at 2048 rings", cloth_without_pins, shape,
                R"({"type": "disk", "radius": 0.5, "rings": 2048, "center": [0, 0, 1]})"),
      bad_field("tet bar of 1024^3 cells", solid, shape + "/cells", "[1024, 1024, 1024]"),
      bad_field("contact cell_size 1e-9", contact, "/contact", R"({"thickness": 1e-10, "advanced": {"cell_size": 1e-9}})", {},
                "/contact/advanced/cell_size"),
      bad_field("membrane period 1e-300", cloth, b + "/periods", R"({"membrane": 1e-300})", {}, b + "/periods"),
      // The events of the stencils are charged to the material their periods come from.
      bad_field("area_density 1e-300", cloth, mat + "/area_density", "1e-300", {"events per simulated second"}, mat),
      bad_field("young 1e308: stencils that vanish", cloth, mat + "/young", "1e308"),
      bad_field("backward Euler step 1e308", solid, b + "/backward_euler/h", "1e308"),
      bad_field("schroeder frame_dt 1e308", solid, b,
                R"({"name": "bar", "shape": {"type": "tet_bar", "origin": [0, 0, 0], "cells": [2, 1, 1], "cell": 0.1},
                    "material": {"model": "linear", "young": 1e5, "poisson": 0.3, "density": 100},
                    "integrator": "schroeder", "schroeder": {"frame_dt": 1e308}})", {}, b + "/schroeder/frame_dt"),
      run_field("frame_rate 1e10 overflows the frame count", cloth, "/frame_rate", "1e10", kExitInput, {}),
      run_field("explicit periods far above the stability estimate", cloth, b + "/periods", R"({"membrane": 0.1})",
                kExitInput, {}),
      // The health check: a run that blows up stops with exit 4, naming the body; a
      // state it would stop at its first event is refused as input.
      run_field("health: gravity 1e30", cloth, "/gravity", "[0, 0, -1e30]", kExitNumerical,
                {"in event 'force:gravity': body 'cloth' vertex", "above the health limit max_speed"}),
      run_field("health: velocity 1e200", cloth, b + "/velocity", R"({"linear": [1e200, 0, 0]})", kExitInput,
                {"starts at 1e+200 m/s, above the health limit max_speed"}),
      // Readers: duplicates, overlaps, binary files, directories, bad tokens.
      obj_case("obj: a duplicated face", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 3\n", kExitInput,
               {"m.obj:5", "duplicate"}),
      {"obj: a directory", {{"s.json", obj_scene()}, {"m.obj/x", ""}}, {}, "validate s.json", kExitInput,
       {"m.obj", "directory"}},
      {"scene: a directory", {{"s.json/x", ""}}, {}, "validate s.json", kExitInput, {"s.json", "directory"}},
      after_run("ply: a bad token", cloth, {edit_vertex(" / abc ")}, kResume, kExitInput, {"cloth_00002.ply"}),
      after_run("ply: a position 1e400", cloth, {edit_vertex("^[^ ]*/1e400")}, kResume, kExitInput,
                {"cloth_00002.ply"}),

      after_run("ply: a position 1e300", cloth, {edit_vertex("^[^ ]*/1e300")}, kResume, kExitInput,
                {"out/frames/cloth_00002.ply: vertex 0: position (1e+300", "beyond the health limit max_extent"}),
      after_run("ply: binary format", cloth, {"sed -i 's/format ascii/format binary_little_endian/' " + kFrame2},
                kResume, kExitInput, {"cloth_00002.ply", "binary"}),
      after_run("ply: a vertex count of 2^31 - 1", cloth,
                {"sed -i 's/element vertex 25/element vertex 2147483647/' " + kFrame2}, kResume, kExitInput,
                {"cloth_00002.ply"}),
      // Obstacles far out or huge (fuzz_readers: a runtime_error from the layers, a hang
      // building the contact grid).
      bad_field("obstacle at 1.7e308", far_obstacle, "/obstacles/0/shape/center", "[0, 1.7e308, 0]", {},
                "/obstacles/0"),
      bad_field("obstacle sphere of radius 2^32", contact, "/obstacles/0/shape",
                R"({"type": "sphere", "center": [0, 0, -1], "radius": 4294967296})", {"max_extent"},
                "/obstacles/0/shape"),
      // A chain starting on a wall (fuzz_readers: a runtime_error from the layers at load).
      {"contact: a chain vertex on a wall at the start", {{"s.json", patched(fpu_walls, "/bodies/0/shape/start", "[-0.2, 0, 0]")}},
       {}, "validate s.json", kExitInput,
       {"s.json: /bodies/0 (vertex 0 of 'chain'): the initial geometry touches", "reached 4096 penalty layers"}},
      // Damaged run folders.
      after_run("check-intersections: a frame missing", cloth, {"rm out/frames/cloth_00001.obj"},
                "check-intersections out", kExitInput, {"cloth_00001.obj"}),
      after_run("check-intersections: a frame without faces", cloth,
                {"grep -v '^f' out/frames/cloth_00001.obj > f && mv f out/frames/cloth_00001.obj"},
                "check-intersections out", kExitInput, {"cloth_00001.obj"}),
      after_run("check-intersections: the vertex count changes", cloth,
                {"echo 'v 9 9 9' >> out/frames/cloth_00001.obj"}, "check-intersections out", kExitInput,
                {"cloth_00001.obj"}),
      after_run("run: into the folder of a longer run", cloth, {}, "run s.json --out out --until 0.1", kExitInput,
                {"--out: 'out' is not empty", "--overwrite"}),
      after_run("run: --overwrite clears the folder of a longer run", cloth, {},
                "run s.json --out out --until 0.1 --overwrite", kExitOk, {}),
      // Command lines.
      {"cli: an unknown subcommand named", {}, {}, "frobnicate", kExitUsage, {"frobnicate"}},
      {"cli: --until nan", {{"s.json", cloth.dump()}}, {}, "run s.json --out out --until nan", kExitUsage,
       {"--until"}},
  };
}

}  // namespace clockwork::hostile
