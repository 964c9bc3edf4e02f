#pragma once
// Scene objects written the way the format asks (docs/scene-format.md): a module's
// numerical knobs inside its "advanced" object, so that tests print no moved-key
// warning (tests/doctest_main.cpp fails a test that does, unless it opts in).
#include <string>

#include <nlohmann/json.hpp>

#include "io/scene/scene_schema.hpp"

namespace clockwork::test {

/// `settings` (the object of schema object `module`: "phantom", "contact", ...) with
/// every key the schema lists under `module`.advanced moved into its "advanced" object.
inline nlohmann::json with_advanced(const std::string& module, nlohmann::json settings) {
  const std::string advanced = module + ".advanced";
  for (const KeyInfo& k : schema_keys()) {
    if (k.object != advanced) continue;
    const std::string key(k.key);
    if (!settings.contains(key)) continue;
    settings["advanced"][key] = settings[key];
    settings.erase(key);
  }
  return settings;
}

}  // namespace clockwork::test
