#pragma once
// Scenes built from JSON in tests, and the message of the error a bad one raises.
#include <string>

#include "io/scene/scene.hpp"
#include "io/scene_error.hpp"

namespace clockwork::test {

/// Builds a scene from a document named "test.json" in errors.
inline Scene build(const nlohmann::json& doc) { return build_scene(doc, "test.json", "."); }

/// The SceneError message building `doc` raises, or "(no error)".
inline std::string error_of(const nlohmann::json& doc) {
  try {
    build(doc);
  } catch (const SceneError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace clockwork::test
