#pragma once
/// Issue 42's hostile-input battery: a table of cases, each the `clockwork` tool run in
/// a fresh folder on files written for it, with the exit status and the stderr
/// substrings (file, field, value) it must give. tests/hostile/test_hostile.cpp runs
/// them; every case also checks that no file the tool wrote holds NaN or inf.
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "io/exit_codes.hpp"

namespace clockwork::hostile {

struct Case {
  std::string name;
  /// Files to create in the case's folder: relative path, text.
  std::vector<std::pair<std::string, std::string>> files;
  /// Run first, each must succeed: a tool command line, or with a leading "$ " a
  /// shell command (edits of a run folder: sed, rm, truncate).
  std::vector<std::string> setup;
  std::string args;  ///< the tool's command line, in the case's folder
  int exit_code = kExitOk;
  std::vector<std::string> err_has;  ///< substrings of stderr
};

/// Base scenes (compact JSON): small, valid, and quick to run (tenths of a second).
nlohmann::json cloth_scene();   ///< a 4×4 grid hanging from two corners
nlohmann::json chain_scene();   ///< a 4-spring chain pinned at one end
nlohmann::json solid_scene();   ///< a 2×1×1 tet bar, backward Euler
nlohmann::json contact_scene(); ///< the cloth above a ground obstacle, with contact

inline const std::string kDelete = "<delete>";  ///< as a raw value: remove the key

/// `doc` with the value at JSON pointer `pointer` replaced by the raw text `raw`
/// (written into the text, so it may be what JSON cannot hold: 1e400, NaN, duplicate
/// keys) or, for kDelete, removed.
std::string patched(nlohmann::json doc, const std::string& pointer, const std::string& raw);

/// `validate s.json` of `base` patched at `pointer`: exit kExitInput, stderr naming
/// s.json, the pointer (or `field` if given) and the extra substrings.
Case bad_field(std::string name, const nlohmann::json& base, const std::string& pointer,
               const std::string& raw, std::vector<std::string> more = {}, std::string field = {});
/// `validate s.json` of `base` patched: exits 0 (a value at its limit, a key left out).
Case good_field(std::string name, const nlohmann::json& base, const std::string& pointer,
                const std::string& raw);

std::vector<Case> scene_cases();         ///< top level, bodies, materials, shapes
std::vector<Case> solid_contact_cases(); ///< tet solids and contact
std::vector<Case> file_cases();          ///< OBJ meshes, TetGen and Gmsh files
std::vector<Case> run_cases();           ///< runs, PLY frames on --resume, run folders
std::vector<Case> cli_cases();           ///< command lines
/// One or more cases per failure class of issue 42 (numbers, names, limits, the
/// health check, readers, obstacles, run folders, command lines).
std::vector<Case> failure_class_cases();

}  // namespace clockwork::hostile
