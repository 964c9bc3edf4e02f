#include "io/json_reader.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

namespace clockwork {

namespace {
std::string shown(const nlohmann::json& v) {
  std::string s = v.dump();
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}
std::string escape_pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}
}  // namespace

void JsonField::fail(std::string_view what) const {
  throw SceneError(fmt::format("{}: {}: {}, got {}", file_, pointer_.empty() ? "/" : pointer_,
                               what, shown(*value_)));
}

void JsonField::expect_keys(std::initializer_list<std::string_view> allowed) const {
  if (!value_->is_object()) fail("expected an object");
  for (const auto& [key, value] : value_->items()) {
    bool known = false;
    for (auto a : allowed) known = known || key == a;
    if (!known) {
      std::string list;
      for (auto a : allowed) list += fmt::format("{}{}", list.empty() ? "" : ", ", a);
      throw SceneError(fmt::format("{}: {}/{}: unknown key '{}' (allowed: {})", file_, pointer_,
                                   escape_pointer_token(key), key, list));
    }
  }
}

bool JsonField::has(std::string_view key) const {
  return value_->is_object() && value_->contains(key);
}

JsonField JsonField::at(std::string_view key) const {
  if (!value_->is_object()) fail("expected an object");
  auto it = value_->find(key);
  if (it == value_->end())
    throw SceneError(fmt::format("{}: {}: missing required key '{}'", file_,
                                 pointer_.empty() ? "/" : pointer_, key));
  return child(pointer_ + "/" + escape_pointer_token(key), *it);
}

std::optional<JsonField> JsonField::find(std::string_view key) const {
  if (!value_->is_object()) fail("expected an object");
  auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return child(pointer_ + "/" + escape_pointer_token(key), *it);
}

std::size_t JsonField::array_size() const {
  if (!value_->is_array()) fail("expected an array");
  return value_->size();
}

JsonField JsonField::operator[](std::size_t i) const {
  if (!value_->is_array()) fail("expected an array");
  return child(fmt::format("{}/{}", pointer_, i), (*value_)[i]);
}

double JsonField::number() const {
  if (!value_->is_number()) fail("expected a number");
  const double x = value_->get<double>();
  if (!std::isfinite(x)) fail("expected a finite number");
  return x;
}

double JsonField::positive() const {
  const double x = number();
  if (!(x > 0.0)) fail("must be > 0");
  return x;
}

double JsonField::non_negative() const {
  const double x = number();
  if (!(x >= 0.0)) fail("must be >= 0");
  return x;
}

double JsonField::in_range(double lo, double hi) const {
  const double x = number();
  if (!(x >= lo && x <= hi)) fail(fmt::format("must be in [{}, {}]", lo, hi));
  return x;
}

long long JsonField::integer() const {
  if (!value_->is_number_integer()) fail("expected an integer");
  return value_->get<long long>();
}

long long JsonField::integer_in(long long lo, long long hi) const {
  const long long x = integer();
  if (x < lo || x > hi) fail(fmt::format("must be an integer in [{}, {}]", lo, hi));
  return x;
}

bool JsonField::boolean() const {
  if (!value_->is_boolean()) fail("expected true or false");
  return value_->get<bool>();
}

std::string JsonField::string() const {
  if (!value_->is_string()) fail("expected a string");
  return value_->get<std::string>();
}

std::string JsonField::choice(std::initializer_list<std::string_view> choices) const {
  std::string s = string();
  for (auto c : choices)
    if (s == c) return s;
  std::string list;
  for (auto c : choices) list += fmt::format("{}'{}'", list.empty() ? "" : ", ", c);
  fail(fmt::format("expected one of {}", list));
}

Vec3 JsonField::vec3() const {
  if (!value_->is_array() || value_->size() != 3) fail("expected an array of 3 numbers");
  return Vec3((*this)[0].number(), (*this)[1].number(), (*this)[2].number());
}

nlohmann::json parse_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SceneError(fmt::format("{}: cannot open the file", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  try {
    return nlohmann::json::parse(buffer.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw SceneError(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
}

}  // namespace clockwork
