#pragma once
/// Strict reading of a JSON scene: every access names its JSON pointer, so an error
/// says "FILE: /bodies/0/material/young: must be > 0, got -3".
#include <nlohmann/json.hpp>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
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
  const std::string& file() const { return file_; }
  const nlohmann::json& raw() const { return *value_; }

  /// Throws SceneError("FILE: POINTER: what, got VALUE").
  [[noreturn]] void fail(std::string_view what) const;

  // --- objects ------------------------------------------------------------------
  /// Requires an object whose keys are all in `allowed`.
  void expect_keys(std::initializer_list<std::string_view> allowed) const {
    expect_keys(std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  /// `also` are accepted too but not listed in the message (keys at an old place).
  void expect_keys(std::span<const std::string_view> allowed,
                   std::span<const std::string_view> also = {}) const;
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
  /// A string that is safe as (part of) a file name, since scene and body names make
  /// the paths of the outputs: 1 to 64 characters of A-Z a-z 0-9 '.' '_' '-', not
  /// starting with '.' (no "..", no hidden files, no '/', no control characters).
  std::string file_name() const;
  /// One of `choices`.
  std::string choice(std::initializer_list<std::string_view> choices) const {
    return choice(std::span<const std::string_view>(choices.begin(), choices.size()));
  }
  std::string choice(std::span<const std::string_view> choices) const;
  Vec3 vec3() const;  ///< array of three finite numbers

 private:
  JsonField child(std::string pointer, const nlohmann::json& value) const {
    return JsonField(value, file_, std::move(pointer));
  }
  const nlohmann::json* value_;
  std::string file_;
  std::string pointer_;
};

/// Deepest nesting of arrays and objects a scene file may have: scenes need 6 levels;
/// the limit keeps hostile files (60 000 levels of [[[...]]]) away from recursion.
inline constexpr int kMaxJsonDepth = 256;

/// Parses a JSON document, throwing SceneError with the file and, for syntax errors,
/// the parser's line and column. Every number is checked as it is read, the message
/// naming the file, its JSON pointer and the literal: out of double's range (1e400),
/// rounding to zero (1e-400), subnormal (1e-310, below 2.2250738585072014e-308); NaN
/// and infinity literals (NaN, nan, Infinity), which JSON does not have, are named as
/// such. Nesting deeper than kMaxJsonDepth is refused with the line and column.
nlohmann::json parse_json_file(const std::string& path);
/// The same for a document already in memory; `file` names it in messages.
nlohmann::json parse_json_text(const std::string& text, const std::string& file);

}  // namespace clockwork
