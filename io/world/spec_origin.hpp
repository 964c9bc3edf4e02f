#pragma once
/// Where a spec's values came from, so that a value the World refuses is named the way
/// its user wrote it. The JSON front-end names the file and the JSON pointer
/// ("scene.json: /bodies/0/material/young: must be > 0, got -5"); specs built in C++
/// name the World call and the spec's field ("World: add_shell 'cloth': material/young:
/// must be > 0, got -5"). Paths are the spec's field names, which are the scene
/// format's keys ("material/young", "periods/membrane", "zhao/h_L", "" for the spec
/// itself); an origin that does not hold a path names its closest holder (a default
/// that was not written names the object it belongs to).
#include <memory>
#include <string>
#include <string_view>

#include "io/scene/json_reader.hpp"

namespace clockwork {

class SpecOrigin {
 public:
  virtual ~SpecOrigin() = default;
  /// Throws SceneError naming the field at `path`.
  [[noreturn]] virtual void fail(std::string_view path, std::string_view what) const = 0;
  /// The file (or "World") the messages start with.
  virtual std::string file() const = 0;
  /// The field's name without the file: a JSON pointer, or "add_shell 'cloth': shape".
  virtual std::string pointer(std::string_view path = {}) const = 0;
};

/// One field of a spec: what SceneBudget and the initial-state checks fail at.
struct SpecField {
  const SpecOrigin* origin;
  std::string path;
  [[noreturn]] void fail(std::string_view what) const;
  std::string pointer() const { return origin->pointer(path); }
};

/// Specs read from a scene file: paths resolve to the JSON value under `object`.
class JsonOrigin final : public SpecOrigin {
 public:
  explicit JsonOrigin(JsonField object) : object_(std::move(object)) {}
  [[noreturn]] void fail(std::string_view path, std::string_view what) const override;
  std::string file() const override;
  std::string pointer(std::string_view path = {}) const override;
  /// The deepest field along `path` that the document holds.
  JsonField field(std::string_view path) const;

 private:
  JsonField object_;
};

/// Specs built in C++: "World: <call>: <path>: what, got <value>" — the value is in
/// `what`, since the World knows it.
class CodeOrigin final : public SpecOrigin {
 public:
  explicit CodeOrigin(std::string call) : call_(std::move(call)) {}
  [[noreturn]] void fail(std::string_view path, std::string_view what) const override;
  std::string file() const override { return "World"; }
  std::string pointer(std::string_view path = {}) const override;

 private:
  std::string call_;
};

/// A JsonField as a one-field origin (for the checks shared by both front-ends).
inline std::shared_ptr<const SpecOrigin> json_origin(const JsonField& f) {
  return std::make_shared<JsonOrigin>(f);
}

}  // namespace clockwork
