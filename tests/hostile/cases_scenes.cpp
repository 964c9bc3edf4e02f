/// Hostile scenes (tests/hostile/hostile.hpp): every key of the scene format given a
/// wrong type, a value out of range, left out or joined by an unknown key. Each is
/// refused by `validate` with exit 3 and one message naming s.json and the field.
#include "tests/hostile/hostile.hpp"

namespace clockwork::hostile {

using nlohmann::json;

json cloth_scene() {
  return json::parse(R"({"name": "h", "end_time": 0.2, "frame_rate": 10, "gravity": [0, 0, -9.81],
    "bodies": [{"name": "cloth",
      "shape": {"type": "grid", "size": [1, 1], "resolution": [4, 4], "center": [0, 0, 1]},
      "material": {"area_density": 0.1, "young": 500, "poisson": 0.3, "bending": 1e-4},
      "pins": ["u0v1", "u1v1"]}]})");
}

json chain_scene() {
  return json::parse(R"({"name": "h", "end_time": 0.2, "frame_rate": 10,
    "bodies": [{"name": "chain",
      "shape": {"type": "chain", "start": [0, 0, 0], "end": [1, 0, 0], "segments": 4},
      "material": {"node_mass": 0.1, "stiffness": 100}, "pins": ["first"],
      "velocity": {"linear": [0, 0.1, 0]}}]})");
}

json solid_scene() {
  return json::parse(R"({"name": "h", "end_time": 0.1, "frame_rate": 10, "gravity": [0, 0, -9.81],
    "bodies": [{"name": "bar",
      "shape": {"type": "tet_bar", "origin": [0, 0, 0], "cells": [2, 1, 1], "cell": 0.1},
      "material": {"model": "corotational", "young": 1e5, "poisson": 0.3, "density": 100},
      "pins": {"box": {"min": [-0.01, -0.01, -0.01], "max": [0.01, 0.11, 0.11]}},
      "integrator": "backward_euler", "backward_euler": {"h": 0.01}}]})");
}

json contact_scene() {
  json s = cloth_scene();
  s["contact"] = json::object();
  s["obstacles"] = json::parse(
      R"([{"name": "ground", "shape": {"type": "ground", "center": [0, 0, 0], "half_size": 2, "divisions": 2}}])");
  return s;
}

std::string patched(json doc, const std::string& pointer, const std::string& raw) {
  const json::json_pointer p(pointer);
  if (raw == kDelete) {
    json& parent = doc[p.parent_pointer()];
    if (parent.is_object()) parent.erase(p.back());
    else parent.erase(std::stoul(p.back()));
    return doc.dump(1);
  }
  static const std::string kMark = "@@HOSTILE@@";
  doc[p] = kMark;
  std::string text = doc.dump(1);
  const std::string quoted = "\"" + kMark + "\"";
  text.replace(text.find(quoted), quoted.size(), raw);
  return text;
}

Case bad_field(std::string name, const json& base, const std::string& pointer, const std::string& raw,
               std::vector<std::string> more, std::string field) {
  Case c{std::move(name), {{"s.json", patched(base, pointer, raw)}}, {}, "validate s.json", kExitInput, {}};
  c.err_has.push_back("s.json: " + (field.empty() ? pointer : field));
  for (auto& m : more) c.err_has.push_back(std::move(m));
  return c;
}

Case good_field(std::string name, const json& base, const std::string& pointer, const std::string& raw) {
  return {std::move(name), {{"s.json", patched(base, pointer, raw)}}, {}, "validate s.json", kExitOk, {}};
}

namespace {

/// A key left out: the message names the object and the key.
Case missing(std::string name, const json& base, const std::string& pointer) {
  const json::json_pointer p(pointer);
  const std::string parent = p.parent_pointer().to_string();
  return bad_field(std::move(name), base, pointer, kDelete, {"missing required key '" + p.back() + "'"},
                   parent.empty() ? "/" : parent);
}

/// A key no one knows: refused by name, with the allowed ones listed.
Case unknown(std::string name, const json& base, const std::string& object) {
  return bad_field(std::move(name), base, object + "/colour", "1", {"unknown key 'colour'"});
}

}  // namespace

std::vector<Case> scene_cases() {
  const json cloth = cloth_scene(), chain = chain_scene();
  const std::string b = "/bodies/0", mat = "/bodies/0/material", shape = "/bodies/0/shape";
  std::vector<Case> v = {
      // The valid bases themselves, so that every refusal below is the patch's doing.
      good_field("cloth base scene is valid", cloth, "/name", "\"h\""),
      good_field("chain base scene is valid", chain, "/name", "\"h\""),
      // --- top level --------------------------------------------------------------
      bad_field("name: a number", cloth, "/name", "5", {"expected a string"}),
      bad_field("name: empty", cloth, "/name", "\"\""),
      bad_field("name: a slash", cloth, "/name", "\"a/b\""),
      bad_field("name: an array", cloth, "/name", "[\"h\"]"),
      missing("name: missing", cloth, "/name"),
      bad_field("description: a number", cloth, "/description", "5", {"expected a string"}),
      bad_field("end_time: a string", cloth, "/end_time", "\"1\"", {"expected a number"}),
      bad_field("end_time: negative", cloth, "/end_time", "-1", {"must be > 0"}),
      bad_field("end_time: zero", cloth, "/end_time", "0", {"must be > 0"}),
      bad_field("end_time: negative zero", cloth, "/end_time", "-0.0", {"must be > 0"}),
      bad_field("end_time: null", cloth, "/end_time", "null"),
      missing("end_time: missing", cloth, "/end_time"),
      bad_field("frame_rate: zero", cloth, "/frame_rate", "0", {"must be > 0"}),
      bad_field("frame_rate: negative", cloth, "/frame_rate", "-30", {"must be > 0"}),
      bad_field("frame_rate: a boolean", cloth, "/frame_rate", "true", {"expected a number"}),
      missing("frame_rate: missing", cloth, "/frame_rate"),
      bad_field("seed: negative", cloth, "/seed", "-1"),
      bad_field("seed: fractional", cloth, "/seed", "1.5", {"expected an integer"}),
      bad_field("seed: a string", cloth, "/seed", "\"x\""),
      bad_field("seed: past 2^62", cloth, "/seed", "4611686018427387905"),
      good_field("seed: 2^62 is the largest", cloth, "/seed", "4611686018427387904"),
      bad_field("gravity: two components", cloth, "/gravity", "[0, -9.81]", {"expected an array of 3 numbers"}),
      bad_field("gravity: a string", cloth, "/gravity", "\"down\""),
      bad_field("gravity: a string component", cloth, "/gravity", "[0, 0, \"a\"]", {"expected a number"},
                "/gravity/2"),
      bad_field("gravity: four components", cloth, "/gravity", "[0, 0, -9.81, 0]"),
      bad_field("wind: a number", cloth, "/wind", "3", {"expected an object"}),
      bad_field("wind: negative drag", cloth, "/wind", R"({"velocity": [1, 0, 0], "drag": -1})", {},
                "/wind/drag"),
      bad_field("wind: unknown key", cloth, "/wind", R"({"velocity": [1, 0, 0], "drag": 1, "gust": 2})",
                {"unknown key 'gust'"}, "/wind/gust"),
      bad_field("output: obj not a boolean", cloth, "/output", R"({"obj": 1})", {"expected true or false"},
                "/output/obj"),
      bad_field("output: unknown format", cloth, "/output", R"({"png": true})", {"unknown key 'png'"},
                "/output/png"),
      bad_field("output: a string", cloth, "/output", "\"yes\"", {"expected an object"}),
      bad_field("bodies: not an array", cloth, "/bodies", "{}"),
      bad_field("bodies: a string", cloth, "/bodies", "\"cloth\""),
      missing("bodies: missing", cloth, "/bodies"),
      unknown("top level: unknown key", cloth, ""),
      // --- a body -------------------------------------------------------------------
      bad_field("body name: a number", cloth, b + "/name", "5", {"expected a string"}),
      bad_field("body name: empty", cloth, b + "/name", "\"\""),
      bad_field("body name: a space", cloth, b + "/name", "\"a b\""),
      bad_field("body name: a slash", cloth, b + "/name", "\"a/b\""),
      missing("body name: missing", cloth, b + "/name"),
      bad_field("body: not an object", cloth, b, "[1, 2]", {"expected an object"}),
      unknown("body: unknown key", cloth, b),
      bad_field("body collide: a string", contact_scene(), b + "/collide", "\"yes\"", {"expected true or false"}),
      missing("body shape: missing", cloth, b + "/shape"),
      missing("body material: missing", cloth, b + "/material"),
      // --- grid shape ------------------------------------------------------------------
      bad_field("shape type: unknown", cloth, shape + "/type", "\"cube\"", {"expected one of"}),
      bad_field("shape type: a number", cloth, shape + "/type", "5"),
      missing("shape type: missing", cloth, shape + "/type"),
      unknown("grid: unknown key", cloth, shape),
      bad_field("grid size: one number", cloth, shape + "/size", "[1]"),
      bad_field("grid size: negative", cloth, shape + "/size/0", "-1", {"must be > 0"}),
      bad_field("grid size: zero", cloth, shape + "/size/1", "0", {"must be > 0"}),
      bad_field("grid resolution: zero", cloth, shape + "/resolution/0", "0", {"must be an integer in [1, 1024]"}),
      bad_field("grid resolution: past 1024", cloth, shape + "/resolution/1", "1025",
                {"must be an integer in [1, 1024]"}),
      bad_field("grid resolution: fractional", cloth, shape + "/resolution/0", "1.5", {"expected an integer"}),
      bad_field("grid resolution: a string", cloth, shape + "/resolution/0", "\"4\""),
      bad_field("grid resolution: negative", cloth, shape + "/resolution/0", "-4"),
      bad_field("grid resolution: 2^32 + 4", cloth, shape + "/resolution/0", "4294967300"),
      bad_field("grid center: two numbers", cloth, shape + "/center", "[0, 0]"),
      missing("grid center: missing", cloth, shape + "/center"),
      bad_field("grid axes: one axis", cloth, shape + "/axes", "[[1, 0, 0]]", {}, shape + "/axes"),
      // --- disk, hat, chain, inline mesh ----------------------------------------------
      bad_field("disk rings: zero", cloth, shape,
                R"({"type": "disk", "radius": 0.5, "rings": 0, "center": [0, 0, 1]})", {}, shape + "/rings"),
      bad_field("disk rings: past 2048", cloth, shape,
                R"({"type": "disk", "radius": 0.5, "rings": 2049, "center": [0, 0, 1]})", {}, shape + "/rings"),
      bad_field("disk radius: negative", cloth, shape,
                R"({"type": "disk", "radius": -0.5, "rings": 3, "center": [0, 0, 1]})", {}, shape + "/radius"),
      bad_field("hat segments: 5", cloth, shape,
                R"({"type": "hat", "center": [0, 0, 1], "crown_radius": 0.1, "crown_height": 0.1,
                    "brim_radius": 0.2, "segments": 5})", {}, shape + "/segments"),
      bad_field("hat brim inside the crown", cloth, shape,
                R"({"type": "hat", "center": [0, 0, 1], "crown_radius": 0.3, "crown_height": 0.1,
                    "brim_radius": 0.2, "segments": 8})", {}, shape + "/brim_radius"),
      bad_field("mesh: triangle index out of range", cloth, shape,
                R"({"type": "mesh", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]], "triangles": [[0, 1, 3]]})",
                {}, shape + "/triangles/0/2"),
      bad_field("mesh: negative index", cloth, shape,
                R"({"type": "mesh", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]], "triangles": [[0, -1, 2]]})",
                {}, shape + "/triangles/0/1"),
      bad_field("mesh: a vertex of two numbers", cloth, shape,
                R"({"type": "mesh", "vertices": [[0, 0], [1, 0, 0], [0, 1, 0]], "triangles": [[0, 1, 2]]})",
                {}, shape + "/vertices/0"),
      bad_field("mesh: degenerate triangle", cloth, shape,
                R"({"type": "mesh", "vertices": [[0, 0, 0], [1, 0, 0], [2, 0, 0]], "triangles": [[0, 1, 2]]})",
                {"degenerate"}, shape),
      bad_field("mesh: vertex on no triangle", cloth, shape,
                R"({"type": "mesh", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [5, 5, 5]],
                    "triangles": [[0, 1, 2]]})", {"belongs to no triangle"}, shape),
      bad_field("chain segments: zero", chain, shape + "/segments", "0"),
      bad_field("chain: end equals start", chain, shape + "/end", "[0, 0, 0]", {"must differ from start"}),
      bad_field("chain segments: a string", chain, shape + "/segments", "\"4\""),
      // --- cloth material ---------------------------------------------------------------
      bad_field("young: negative", cloth, mat + "/young", "-5", {"must be > 0", "-5"}),
      bad_field("young: zero", cloth, mat + "/young", "0", {"must be > 0"}),
      bad_field("young: a string", cloth, mat + "/young", "\"stiff\"", {"expected a number"}),
      missing("young: missing", cloth, mat + "/young"),
      bad_field("poisson: 0.5", cloth, mat + "/poisson", "0.5"),
      bad_field("poisson: negative", cloth, mat + "/poisson", "-0.1"),
      bad_field("poisson: a string", cloth, mat + "/poisson", "\"0.3\""),
      bad_field("area_density: zero", cloth, mat + "/area_density", "0", {"must be > 0"}),
      bad_field("area_density: an object", cloth, mat + "/area_density", "{}"),
      bad_field("bending: negative", cloth, mat + "/bending", "-1", {"must be >= 0"}),
      good_field("bending: zero is no bending", cloth, mat + "/bending", "0"),
      unknown("cloth material: unknown key", cloth, mat),
      bad_field("cloth material: a spring key", cloth, mat + "/node_mass", "0.1", {"unknown key 'node_mass'"}),
      // --- chain material -----------------------------------------------------------------
      bad_field("node_mass: zero", chain, mat + "/node_mass", "0", {"must be > 0"}),
      bad_field("stiffness: negative in a list", chain, mat + "/stiffness", "[100, -1]", {}, mat + "/stiffness/1"),
      bad_field("quartic: negative", chain, mat + "/quartic", "-1"),
      bad_field("rest_length: zero", chain, mat + "/rest_length", "0", {"must be > 0"}),
      missing("stiffness: missing", chain, mat + "/stiffness"),
      // --- pins, velocities, periods, scripts ---------------------------------------------
      bad_field("pins: a string", cloth, b + "/pins", "\"u0v0\""),
      bad_field("pins: index out of range", cloth, b + "/pins/0", "99"),
      bad_field("pins: negative index", cloth, b + "/pins/0", "-1"),
      bad_field("pins: unknown name", cloth, b + "/pins/0", "\"nowhere\""),
      bad_field("pins: fractional index", cloth, b + "/pins/0", "1.5"),
      bad_field("velocity: linear of two numbers", cloth, b + "/velocity", R"({"linear": [0, 0]})", {},
                b + "/velocity/linear"),
      bad_field("velocity: negative random", cloth, b + "/velocity", R"({"random": -1})", {},
                b + "/velocity/random"),
      bad_field("velocity: vertex out of range", cloth, b + "/velocity",
                R"({"vertices": [{"vertex": 99, "velocity": [0, 0, 0]}]})", {}, b + "/velocity/vertices/0/vertex"),
      bad_field("velocity: unknown key", cloth, b + "/velocity", R"({"spin": 1})", {"unknown key 'spin'"},
                b + "/velocity/spin"),
      bad_field("periods: negative membrane", cloth, b + "/periods", R"({"membrane": -1})", {},
                b + "/periods/membrane"),
      bad_field("periods: zero membrane", cloth, b + "/periods", R"({"membrane": 0})", {}, b + "/periods/membrane"),
      bad_field("periods: a word", cloth, b + "/periods", R"({"bending": "fast"})", {}, b + "/periods/bending"),
      bad_field("periods: safety zero", cloth, b + "/periods", R"({"safety": 0})", {}, b + "/periods/safety"),
      bad_field("periods: safety 2", cloth, b + "/periods", R"({"safety": 2})", {}, b + "/periods/safety"),
      bad_field("periods: unknown key", cloth, b + "/periods", R"({"hinge": 1e-3})", {"unknown key 'hinge'"},
                b + "/periods/hinge"),
      bad_field("integrator: unknown", cloth, b + "/integrator", "\"implicit\"", {"expected one of"}),
      bad_field("integrator: phantom without its object", cloth, b + "/integrator", "\"phantom\"",
                {"missing required key 'phantom'"}, b),
      bad_field("phantom object without the integrator", cloth, b + "/phantom", R"({"h_imp": 1e-3})",
                {"needs \"integrator\": \"phantom\""}),
      bad_field("pin_motion: one keyframe", cloth, b + "/pin_motion",
                R"({"keyframes": [{"time": 0, "offset": [0, 0, 0]}]})", {}, b + "/pin_motion/keyframes"),
      bad_field("pin_motion: first keyframe after 0", cloth, b + "/pin_motion",
                R"({"keyframes": [{"time": 0.1, "offset": [0, 0, 0]}, {"time": 0.2, "offset": [0, 0, 1]}]})", {},
                b + "/pin_motion/keyframes/0/time"),
      bad_field("pin_motion: times not increasing", cloth, b + "/pin_motion",
                R"({"keyframes": [{"time": 0, "offset": [0, 0, 0]}, {"time": 0, "offset": [0, 0, 1]}]})", {},
                b + "/pin_motion/keyframes/1/time"),
      bad_field("pin_motion: negative release", cloth, b + "/pin_motion",
                R"({"keyframes": [{"time": 0, "offset": [0, 0, 0]}, {"time": 0.1, "offset": [0, 0, 1]}],
                    "release": -1})", {}, b + "/pin_motion/release"),
  };
  // Duplicate body names: frames would overwrite each other.
  json two = cloth;
  two["bodies"].push_back(two["bodies"][0]);
  two["bodies"][1]["shape"]["center"] = {0, 0, 3};
  v.push_back(bad_field("body name: duplicate", two, "/bodies/1/name", "\"cloth\"", {"duplicate"}));
  // Trailing garbage and empty documents: not a scene, by file.
  v.push_back({"document: empty file", {{"s.json", ""}}, {}, "validate s.json", kExitInput, {"s.json"}});
  v.push_back({"document: an array", {{"s.json", "[]"}}, {}, "validate s.json", kExitInput, {"s.json"}});
  v.push_back({"document: null", {{"s.json", "null"}}, {}, "validate s.json", kExitInput, {"s.json"}});
  v.push_back({"document: trailing garbage", {{"s.json", cloth.dump() + " }"}}, {}, "validate s.json", kExitInput,
               {"s.json", "not valid JSON"}});
  v.push_back({"document: truncated", {{"s.json", cloth.dump().substr(0, 60)}}, {}, "validate s.json", kExitInput,
               {"s.json", "not valid JSON"}});
  v.push_back({"document: binary bytes", {{"s.json", std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10)}}, {},
               "validate s.json", kExitInput, {"s.json"}});
  v.push_back({"document: missing file", {}, {}, "validate nowhere.json", kExitInput, {"nowhere.json"}});
  return v;
}

std::vector<Case> solid_contact_cases() {
  const json solid = solid_scene(), contact = contact_scene();
  const std::string b = "/bodies/0", mat = "/bodies/0/material", shape = "/bodies/0/shape";
  return {
      good_field("solid base scene is valid", solid, "/name", "\"h\""),
      good_field("contact base scene is valid", contact, "/name", "\"h\""),
      bad_field("tet_bar cells: zero", solid, shape + "/cells/0", "0"),
      bad_field("tet_bar cells: past 1024", solid, shape + "/cells/2", "1025"),
      bad_field("tet_bar cells: two numbers", solid, shape + "/cells", "[2, 1]"),
      bad_field("tet_bar cell: negative", solid, shape + "/cell", "-0.1", {"must be > 0"}),
      unknown("tet_bar: unknown key", solid, shape),
      bad_field("tet_sphere: cells_per_diameter 1", solid, shape,
                R"({"type": "tet_sphere", "center": [0, 0, 0], "radius": 0.1, "cells_per_diameter": 1})", {},
                shape + "/cells_per_diameter"),
      bad_field("tet_sphere: cells_per_diameter 513", solid, shape,
                R"({"type": "tet_sphere", "center": [0, 0, 0], "radius": 0.1, "cells_per_diameter": 513})", {},
                shape + "/cells_per_diameter"),
      bad_field("tet_dinosaur: zero cell", solid, shape, R"({"type": "tet_dinosaur", "origin": [0, 0, 0], "cell": 0})",
                {}, shape + "/cell"),
      bad_field("solid model: unknown", solid, mat + "/model", "\"nonlinear\"", {"expected one of"}),
      bad_field("solid young: negative", solid, mat + "/young", "-1e5", {"must be > 0"}),
      bad_field("solid density: zero", solid, mat + "/density", "0", {"must be > 0"}),
      bad_field("solid poisson: 0.5", solid, mat + "/poisson", "0.5"),
      bad_field("solid rayleigh: negative alpha", solid, mat + "/rayleigh", R"({"alpha": -1})", {},
                mat + "/rayleigh/alpha"),
      bad_field("solid regions: unknown region", solid, mat + "/regions", R"({"tail": {"young": 1e5}})", {"tail"}),
      unknown("solid material: unknown key", solid, mat),
      bad_field("solid pins: empty box", solid, b + "/pins",
                R"({"box": {"min": [5, 5, 5], "max": [6, 6, 6]}})", {}, b + "/pins/box"),
      bad_field("solid pins: index out of range", solid, b + "/pins", "[99]", {}, b + "/pins/0"),
      bad_field("solid: AVI periods", solid, b + "/periods", R"({"membrane": 1e-3})", {"a solid has no AVI periods"}),
      missing("solid integrator: missing", solid, b + "/integrator"),
      bad_field("solid integrator: explicit", solid, b + "/integrator", "\"explicit\""),
      bad_field("backward_euler h: zero", solid, b + "/backward_euler/h", "0", {"must be > 0"}),
      missing("backward_euler h: missing", solid, b + "/backward_euler/h"),
      bad_field("backward_euler max_newton: zero", solid, b + "/backward_euler/max_newton", "0"),
      bad_field("backward_euler linear_solver: unknown", solid, b + "/backward_euler/linear_solver", "\"lu\""),
      unknown("backward_euler: unknown key", solid, b + "/backward_euler"),
      bad_field("zhao: region m zero", solid, b,
                R"({"name": "bar", "shape": {"type": "tet_bar", "origin": [0, 0, 0], "cells": [2, 1, 1], "cell": 0.1},
                    "material": {"model": "linear", "young": 1e5, "poisson": 0.3, "density": 100},
                    "integrator": "zhao", "zhao": {"h_L": 0.01, "regions": [{"m": 0, "vertices": [0]}]}})",
                {}, b + "/zhao/regions/0/m"),
      bad_field("schroeder frame_dt: negative", solid, b,
                R"({"name": "bar", "shape": {"type": "tet_bar", "origin": [0, 0, 0], "cells": [2, 1, 1], "cell": 0.1},
                    "material": {"model": "linear", "young": 1e5, "poisson": 0.3, "density": 100},
                    "integrator": "schroeder", "schroeder": {"frame_dt": -0.04}})",
                {}, b + "/schroeder/frame_dt"),
      bad_field("contact: a number", contact, "/contact", "5", {"expected an object"}),
      unknown("contact: unknown key", contact, "/contact"),
      bad_field("contact thickness: negative", contact, "/contact/thickness", "-1"),
      bad_field("contact thickness: zero", contact, "/contact/thickness", "0"),
      bad_field("contact friction: negative", contact, "/contact/friction", "-0.1", {"must be >= 0"}),
      bad_field("contact cell_size below the thickness", contact, "/contact/cell_size", "1e-9",
                {"cell_size (1e-09 m) must exceed the thickness"}, "/contact"),
      bad_field("contact max_layers: zero", contact, "/contact/max_layers", "0"),
      bad_field("contact safety: 2", contact, "/contact/safety", "2"),
      bad_field("contact adaptive_slack: a number", contact, "/contact/adaptive_slack", "1",
                {"expected true or false"}),
      bad_field("obstacle: unknown shape", contact, "/obstacles/0/shape/type", "\"torus\""),
      bad_field("obstacle ground: divisions zero", contact, "/obstacles/0/shape/divisions", "0"),
      bad_field("obstacle ground: negative half_size", contact, "/obstacles/0/shape/half_size", "-2"),
      bad_field("obstacle: same name as a body", contact, "/obstacles/0/name", "\"cloth\"", {"duplicate"}),
      unknown("obstacle: unknown key", contact, "/obstacles/0"),
      bad_field("obstacles without contact", cloth_scene(), "/obstacles", contact["obstacles"].dump(), {},
                "/obstacles"),
      bad_field("cloth crossing the ground", contact, "/bodies/0/shape/center", "[0, 0, 0]", {"/obstacles/0"},
                "/bodies/0"),
  };
}

}  // namespace clockwork::hostile
