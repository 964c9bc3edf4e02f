#pragma once
/// The scene format's one description of every key (docs/scene-format.md): object,
/// type, unit, range, default, meaning and module. The readers (io/scene*.cpp) take
/// their allowed keys and range checks from it, and `clockwork schema` writes the key
/// tables of docs/scene-format.md from it (a test compares them with the committed
/// file). Numerical knobs sit in an `"advanced"` object of their module; a knob at its
/// place before issue 43 is still read, with one warning naming its new place.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/scene/json_reader.hpp"

namespace clockwork {

/// How a key's value is checked; the message forms are JsonField's.
enum class KeyCheck {
  Custom,           ///< read by the reader's own code (objects, arrays, vectors, names)
  Number,           ///< finite
  Positive,         ///< finite, > 0
  NonNegative,      ///< finite, >= 0
  UnitInterval,     ///< in (0, 1]
  HalfOpen,         ///< in [lo, hi)
  Closed,           ///< in [lo, hi]
  Integer,          ///< integer in [lo, hi]
  Boolean,
  String,
  Choice,           ///< one of `choices` ('|'-separated)
  AutoPositive,     ///< "auto" or > 0
  AutoNonNegative,  ///< "auto" or >= 0
};

struct KeyInfo {
  std::string_view object;  ///< a SchemaObjectInfo name
  std::string_view key;
  KeyCheck check;
  double lo = 0.0, hi = 0.0;     ///< HalfOpen, Closed, Integer
  std::string_view choices;      ///< Choice: "a|b|c", the first listed is not implied default
  std::string_view type;         ///< Custom: the type as the docs show it
  std::string_view unit;         ///< SI unit, "" when none
  /// The default as the docs show it: "required"; a constant (test_scene_schema_defaults
  /// compares it with the code's); "derived: ..." for one computed from the scene; or, for
  /// an object or list, what its absence means ("none", "at rest").
  std::string_view fallback;
  std::string_view meaning;      ///< one line
  bool advanced = false;         ///< lives in the object's "advanced" object
};

struct SchemaObjectInfo {
  std::string_view name;     ///< "contact", "phantom", ...
  std::string_view pointer;  ///< where it sits, e.g. "/bodies/N/phantom"
  std::string_view module;   ///< the module and its reference page
};

/// Every object and every key, in the order of the docs.
std::span<const SchemaObjectInfo> schema_objects();
std::span<const KeyInfo> schema_keys();
const KeyInfo& schema_key(std::string_view object, std::string_view key);

/// One JSON object of the scene read through the schema: its keys are checked against
/// the schema's list for `object` (unknown keys fail as before); a knob at its old place
/// (directly in the object instead of its "advanced" object) is accepted with one
/// spdlog warning naming its new place, unless `warn` is false (a second reader of the
/// same object); a knob given at both places is an error.
class SchemaObject {
 public:
  SchemaObject(const JsonField& field, std::string_view object, bool warn = true);

  const JsonField& field() const { return field_; }
  /// The key at its place (advanced knobs: in "advanced", else at the old place).
  std::optional<JsonField> find(std::string_view key) const;
  JsonField at(std::string_view key) const;  ///< required
  bool has(std::string_view key) const { return find(key).has_value(); }

  /// Schema-checked values; std::nullopt when absent (and, for Auto* keys, "auto").
  std::optional<double> number(std::string_view key) const;
  std::optional<long long> integer(std::string_view key) const;
  std::optional<bool> boolean(std::string_view key) const;
  std::optional<std::string> choice(std::string_view key) const;
  double required_number(std::string_view key) const;
  std::string required_choice(std::string_view key) const;

 private:
  /// The schema object `key` belongs to: this one or its ".advanced".
  std::string_view schema_key_object(std::string_view key) const;

  JsonField field_;
  std::optional<JsonField> advanced_;
  std::string_view object_;
};

/// The schema-checked value of `f` for `info` (a number for Number..AutoNonNegative;
/// nullopt for "auto").
std::optional<double> checked_number(const JsonField& f, const KeyInfo& info);

/// The Markdown key table of `object` (docs/scene-format.md).
std::string schema_table(std::string_view object);
/// `text` (docs/scene-format.md) with every generated table between
/// "<!-- schema OBJECT -->" and "<!-- end schema -->" rewritten from the schema.
/// Throws std::invalid_argument naming an unknown object or an unclosed marker.
std::string update_schema_tables(const std::string& text);

}  // namespace clockwork
