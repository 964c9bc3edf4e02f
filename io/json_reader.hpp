#pragma once
/// Strict reading of a JSON scene: every access names its JSON pointer, so an error
/// says "FILE: /bodies/0/material/young: must be > 0, got -3".
#include <nlohmann/json.hpp>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "engine/types.hpp"
#include "io/scene_error.hpp"

namespace clockwork {

class JsonField {
 public:
  JsonField(const nlohmann::json& value, std::string file, std::string pointer = "")
      : value_(&value), file_(std::move(file)), pointer_(std::move(pointer)) {}

  const std::string& pointer() const { return pointer_; }
  const nlohmann::json& raw() const { return *value_; }

  /// Throws SceneError("FILE: POINTER: what, got VALUE").
  [[noreturn]] void fail(std::string_view what) const;

  // --- objects ------------------------------------------------------------------
  /// Requires an object whose keys are all in `allowed`.
  void expect_keys(std::initializer_list<std::string_view> allowed) const;
  JsonField at(std::string_view key) const;  ///< required member
  std::optional<JsonField> find(std::string_view key) const;
  bool has(std::string_view key) const;

  // --- arrays -------------------------------------------------------------------
  std::size_t array_size() const;  ///< requires an array
  JsonField operator[](std::size_t i) const;

  // --- scalars ------------------------------------------------------------------
  double number() const;           ///< finite number
  double positive() const;         ///< finite, > 0
  double non_negative() const;     ///< finite, >= 0
  double in_range(double lo, double hi) const;  ///< finite, in [lo, hi]
  long long integer() const;
  long long integer_in(long long lo, long long hi) const;
  bool boolean() const;
  std::string string() const;
  /// One of `choices`.
  std::string choice(std::initializer_list<std::string_view> choices) const;
  Vec3 vec3() const;  ///< array of three finite numbers

 private:
  JsonField child(std::string pointer, const nlohmann::json& value) const {
    return JsonField(value, file_, std::move(pointer));
  }
  const nlohmann::json* value_;
  std::string file_;
  std::string pointer_;
};

/// Parses a JSON document, throwing SceneError with the file and the parser's position.
nlohmann::json parse_json_file(const std::string& path);

}  // namespace clockwork
