#include "io/world/spec_origin.hpp"

#include <fmt/format.h>

namespace clockwork {

void SpecField::fail(std::string_view what) const {
  origin->fail(path, what);
  throw SceneError(std::string(what));  // fail() throws; this keeps [[noreturn]] honest
}

JsonField JsonOrigin::field(std::string_view path) const {
  JsonField f = object_;
  while (!path.empty()) {
    const std::size_t slash = path.find('/');
    const std::string_view key = path.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
    if (f.has(key)) {
      f = f.at(key);
    } else if (f.has("advanced") && f.at("advanced").has(key)) {
      f = f.at("advanced").at(key);  // a numerical knob (io/scene/scene_schema.hpp)
    } else {
      break;
    }
  }
  return f;
}

void JsonOrigin::fail(std::string_view path, std::string_view what) const { field(path).fail(what); }

std::string JsonOrigin::file() const { return object_.file(); }

std::string JsonOrigin::pointer(std::string_view path) const {
  const std::string p = field(path).pointer();
  return p.empty() ? "/" : p;
}

void CodeOrigin::fail(std::string_view path, std::string_view what) const {
  throw SceneError(fmt::format("World: {}: {}", pointer(path), what));
}

std::string CodeOrigin::pointer(std::string_view path) const {
  return path.empty() ? call_ : fmt::format("{}: {}", call_, path);
}

}  // namespace clockwork
