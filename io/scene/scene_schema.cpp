#include "io/scene/scene_schema.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

namespace clockwork {

namespace {

std::vector<std::string_view> split_choices(std::string_view s) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const auto bar = s.find('|');
    out.push_back(s.substr(0, bar));
    s = bar == std::string_view::npos ? std::string_view() : s.substr(bar + 1);
  }
  return out;
}

/// Keys of `object`, in schema order; with `advanced` only the knobs that live in its
/// "advanced" object (or, with `!advanced`, only those that do not).
std::vector<std::string_view> keys_of(std::string_view object, bool advanced) {
  std::vector<std::string_view> out;
  for (const KeyInfo& k : schema_keys())
    if (k.object == object && k.advanced == advanced) out.push_back(k.key);
  return out;
}

std::string advanced_name(std::string_view object) { return std::string(object) + ".advanced"; }

const SchemaObjectInfo* find_object(std::string_view name) {
  for (const SchemaObjectInfo& o : schema_objects())
    if (o.name == name) return &o;
  return nullptr;
}

}  // namespace

const KeyInfo& schema_key(std::string_view object, std::string_view key) {
  for (const KeyInfo& k : schema_keys())
    if (k.object == object && k.key == key) return k;
  // A reader asking for a key the schema does not describe is a programming error.
  throw std::logic_error(fmt::format("scene schema: no key '{}' in object '{}'", key, object));
}

std::optional<double> checked_number(const JsonField& f, const KeyInfo& info) {
  switch (info.check) {
    case KeyCheck::Number: return f.number();
    case KeyCheck::Positive: return f.positive();
    case KeyCheck::NonNegative: return f.non_negative();
    case KeyCheck::UnitInterval: {
      const double x = f.number();
      if (!(x > 0.0 && x <= 1.0)) f.fail("must be in (0, 1]");
      return x;
    }
    case KeyCheck::HalfOpen: {
      const double x = f.number();
      if (!(x >= info.lo && x < info.hi)) f.fail(fmt::format("must be in [{}, {})", info.lo, info.hi));
      return x;
    }
    case KeyCheck::Closed: return f.in_range(info.lo, info.hi);
    case KeyCheck::Integer:
      return double(f.integer_in(static_cast<long long>(info.lo), static_cast<long long>(info.hi)));
    case KeyCheck::AutoPositive:
    case KeyCheck::AutoNonNegative:
      if (f.raw().is_string()) {
        f.choice({"auto"});
        return std::nullopt;
      }
      return info.check == KeyCheck::AutoPositive ? f.positive() : f.non_negative();
    default:
      throw std::logic_error(fmt::format("scene schema: '{}' is not a number key", info.key));
  }
}

SchemaObject::SchemaObject(const JsonField& field, std::string_view object, bool warn)
    : field_(field), object_(object) {
  std::vector<std::string_view> allowed = keys_of(object, false);
  const std::string adv = advanced_name(object);
  const std::vector<std::string_view> knobs = keys_of(adv, true);
  if (knobs.empty()) {
    field_.expect_keys(allowed);
    return;
  }
  // A knob at its place before issue 43 is read there; the unknown-key message lists
  // only the current keys.
  field_.expect_keys(allowed, knobs);
  advanced_ = field_.find("advanced");
  if (advanced_) advanced_->expect_keys(knobs);
  for (std::string_view k : knobs) {
    const auto old = field_.find(k);
    if (!old) continue;
    const std::string now = fmt::format("{}/advanced/{}", field_.pointer(), k);
    if (advanced_ && advanced_->has(k))
      old->fail(fmt::format("given twice: here (its place before issue 43) and at {}", now));
    if (warn)
      spdlog::warn("{}: {}: '{}' moved to {} (read from its old place; docs/scene-format.md)", field_.file(),
                   old->pointer(), k, now);
  }
}

std::optional<JsonField> SchemaObject::find(std::string_view key) const {
  if (advanced_)
    if (auto f = advanced_->find(key)) return f;
  return field_.find(key);
}

JsonField SchemaObject::at(std::string_view key) const {
  if (auto f = find(key)) return *f;
  return field_.at(key);  // throws "missing required key"
}

std::optional<double> SchemaObject::number(std::string_view key) const {
  const auto f = find(key);
  if (!f) return std::nullopt;
  const KeyInfo& info = schema_key(schema_key_object(key), key);
  return checked_number(*f, info);
}

std::optional<long long> SchemaObject::integer(std::string_view key) const {
  const auto f = find(key);
  if (!f) return std::nullopt;
  const KeyInfo& info = schema_key(schema_key_object(key), key);
  return f->integer_in(static_cast<long long>(info.lo), static_cast<long long>(info.hi));
}

std::optional<bool> SchemaObject::boolean(std::string_view key) const {
  const auto f = find(key);
  if (!f) return std::nullopt;
  return f->boolean();
}

std::optional<std::string> SchemaObject::choice(std::string_view key) const {
  const auto f = find(key);
  if (!f) return std::nullopt;
  const KeyInfo& info = schema_key(schema_key_object(key), key);
  const auto choices = split_choices(info.choices);
  return f->choice(choices);
}

double SchemaObject::required_number(std::string_view key) const {
  const auto x = checked_number(at(key), schema_key(schema_key_object(key), key));
  if (!x) at(key).fail("expected a number");
  return *x;
}

std::string SchemaObject::required_choice(std::string_view key) const {
  at(key);  // "missing required key"
  return *choice(key);
}

std::string_view SchemaObject::schema_key_object(std::string_view key) const {
  for (const KeyInfo& k : schema_keys())
    if (k.key == key && (k.object == object_ || (k.advanced && k.object.substr(0, object_.size()) == object_ &&
                                                  k.object.substr(object_.size()) == ".advanced")))
      return k.object;
  throw std::logic_error(fmt::format("scene schema: no key '{}' in object '{}'", key, object_));
}

// --- docs ---------------------------------------------------------------------------

namespace {

std::string number_text(double x) { return fmt::format("{}", x); }

std::string type_text(const KeyInfo& k) {
  switch (k.check) {
    case KeyCheck::Custom: return std::string(k.type);
    case KeyCheck::Number: return "number";
    case KeyCheck::Positive: return "number > 0";
    case KeyCheck::NonNegative: return "number ≥ 0";
    case KeyCheck::UnitInterval: return "number in (0, 1]";
    case KeyCheck::HalfOpen: return fmt::format("number in [{}, {})", number_text(k.lo), number_text(k.hi));
    case KeyCheck::Closed: return fmt::format("number in [{}, {}]", number_text(k.lo), number_text(k.hi));
    case KeyCheck::Integer:
      return k.hi == 4611686018427387904.0 ? std::string("integer in [0, 2⁶²]")
                                           : fmt::format("integer in [{}, {}]", number_text(k.lo), number_text(k.hi));
    case KeyCheck::Boolean: return "true / false";
    case KeyCheck::String: return "string";
    case KeyCheck::Choice: {
      std::string out;
      for (auto c : split_choices(k.choices)) out += fmt::format("{}`\"{}\"`", out.empty() ? "" : ", ", c);
      return out;
    }
    case KeyCheck::AutoPositive: return "number > 0 or `\"auto\"`";
    case KeyCheck::AutoNonNegative: return "number ≥ 0 or `\"auto\"`";
  }
  return {};
}

}  // namespace

std::string schema_table(std::string_view object) {
  const SchemaObjectInfo* info = find_object(object);
  if (!info) throw std::invalid_argument(fmt::format("scene schema: no object '{}'", object));
  std::string out = fmt::format("`{}` — module: {}\n\n| key | type | unit | default | meaning |\n|---|---|---|---|---|\n",
                                info->pointer, info->module);
  for (const KeyInfo& k : schema_keys()) {
    if (k.object != object) continue;
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", k.key, type_text(k), k.unit.empty() ? "—" : k.unit,
                       k.fallback, k.meaning);
  }
  return out;
}

std::string update_schema_tables(const std::string& text) {
  static const std::string kOpen = "<!-- schema ", kClose = "<!-- end schema -->";
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = text.find(kOpen, pos);
    if (open == std::string::npos) break;
    const std::size_t name_end = text.find(" -->", open);
    if (name_end == std::string::npos)
      throw std::invalid_argument(fmt::format("unclosed schema marker at byte {}", open));
    const std::string name = text.substr(open + kOpen.size(), name_end - open - kOpen.size());
    const std::size_t close = text.find(kClose, name_end);
    if (close == std::string::npos)
      throw std::invalid_argument(fmt::format("schema table '{}' has no '{}'", name, kClose));
    out += text.substr(pos, name_end + 4 - pos);
    out += "\n" + schema_table(name);
    pos = close;
  }
  out += text.substr(pos);
  return out;
}

}  // namespace clockwork
