#include "io/scene/json_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "io/text_input.hpp"

namespace clockwork {

namespace {
using json = nlohmann::json;

constexpr std::size_t kShown = 80;  ///< characters of a value quoted in a message

/// Appends a compact rendering of `v` to `out`, stopping soon after `out` passes
/// kShown characters: a huge or deeply nested value is never serialised whole (a
/// dump() of 60 000 nested arrays overflowed the stack). Depth is bounded by kShown,
/// since each level adds a bracket.
void shown_into(const json& v, std::string& out) {
  if (out.size() > kShown) return;
  const auto dump = [](const json& x) { return x.dump(-1, ' ', false, json::error_handler_t::replace); };
  if (v.is_object() || v.is_array()) {
    out += v.is_object() ? '{' : '[';
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out.size() <= kShown; ++it) {
      if (!first) out += ',';
      first = false;
      if (v.is_object()) out += dump(json(it.key().substr(0, kShown))) + ':';
      shown_into(*it, out);
    }
    out += v.is_object() ? '}' : ']';
  } else if (v.is_string()) {
    out += dump(json(v.get_ref<const std::string&>().substr(0, kShown + 1)));
  } else {
    out += dump(v);
  }
}

std::string shown(const json& v) {
  std::string s;
  shown_into(v, s);
  if (s.size() > kShown) s = s.substr(0, kShown - 3) + "...";
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

void JsonField::expect_keys(std::span<const std::string_view> allowed,
                            std::span<const std::string_view> also) const {
  if (!value_->is_object()) fail("expected an object");
  for (const auto& [key, value] : value_->items()) {
    bool known = false;
    for (auto a : allowed) known = known || key == a;
    for (auto a : also) known = known || key == a;
    if (!known) {
      std::string list;
      for (auto a : allowed) list += fmt::format("{}{}", list.empty() ? "" : ", ", a);
      throw SceneError(fmt::format("{}: {}/{}: unknown key '{}' (allowed: {})", file_, pointer_,
                                   printable(escape_pointer_token(key)), printable(key), list));
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
  if (value_->is_number_unsigned() && value_->get<unsigned long long>() > LLONG_MAX)
    fail("integer too large");
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

std::string JsonField::file_name() const {
  const std::string s = string();
  bool ok = !s.empty() && s.size() <= 64 && s[0] != '.';
  for (const char c : s)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-');
  if (!ok)
    fail("must be a name usable in file names: 1 to 64 characters of A-Z a-z 0-9 . _ -, "
         "not starting with '.'");
  return s;
}

std::string JsonField::choice(std::span<const std::string_view> choices) const {
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

namespace {

/// 1-based line and column of byte `offset` of `text`.
std::string line_column(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') ++line, column = 1;
    else ++column;
  }
  return fmt::format("line {}, column {}", line, column);
}

/// Refuses nesting deeper than kMaxJsonDepth before nlohmann sees the text (its DOM
/// and our messages are safe up to there). Brackets inside strings do not count.
void check_nesting(std::string_view text, const std::string& file) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw SceneError(fmt::format("{}: {}: arrays and objects nested deeper than {} levels",
                                     file, line_column(text, i), kMaxJsonDepth));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

/// nlohmann's DOM builder, with the JSON pointer of the value being read kept on the
/// side so that a refused number is named by its field; numbers are checked here, as
/// the parser reads them, since the DOM no longer holds their literals.
class PointerSax {
 public:
  PointerSax(json& root, const std::string& text, const std::string& file)
      : dom_(root), text_(text), file_(file) {}

  bool null() { return value(dom_.null()); }
  bool boolean(bool b) { return value(dom_.boolean(b)); }
  bool number_integer(json::number_integer_t x) { return value(dom_.number_integer(x)); }
  bool number_unsigned(json::number_unsigned_t x) { return value(dom_.number_unsigned(x)); }
  bool number_float(json::number_float_t x, const json::string_t& literal) {
    if (std::fpclassify(x) == FP_SUBNORMAL)
      refuse(fmt::format("subnormal number (nonzero, below {:.17g} in magnitude) is not supported",
                         std::numeric_limits<double>::min()),
             literal);
    // strtod rounds 1e-400 to 0 silently; a literal with a nonzero digit before its
    // exponent did not mean 0.
    if (x == 0.0 && literal.substr(0, literal.find_first_of("eE")).find_first_of("123456789") !=
                        std::string::npos)
      refuse("number too small for a double (it would round to 0)", literal);
    return value(dom_.number_float(x, literal));
  }
  bool string(json::string_t& s) { return value(dom_.string(s)); }
  bool binary(json::binary_t& b) { return value(dom_.binary(b)); }
  bool start_object(std::size_t n) {
    frames_.push_back({false, 0, {}});
    return dom_.start_object(n);
  }
  bool key(json::string_t& k) {
    frames_.back().key = k;
    return dom_.key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return value(dom_.end_object());
  }
  bool start_array(std::size_t n) {
    frames_.push_back({true, 0, {}});
    return dom_.start_array(n);
  }
  bool end_array() {
    frames_.pop_back();
    return value(dom_.end_array());
  }

  template <class Exception>
  bool parse_error(std::size_t position, const std::string& /*last_token*/, const Exception& e) {
    // The literal around the byte where the parser stopped: "NaN", "-Infinity", "1e400".
    const auto literal_char = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-';
    };
    std::size_t begin = std::min(position, text_.size()), end = begin;
    while (begin > 0 && literal_char(text_[begin - 1])) --begin;
    while (end < text_.size() && literal_char(text_[end])) ++end;
    const std::string literal = text_.substr(begin, std::min<std::size_t>(end - begin, 40));
    std::string word;
    for (const char c : literal)
      if (c != '+' && c != '-') word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (word == "nan" || word == "inf" || word == "infinity")
      refuse("JSON has no NaN or infinity (numbers must be finite)", literal);
    if (e.id == 406) refuse("number out of the range of a double (above 1.7976931348623157e308)", literal);
    throw SceneError(fmt::format("{}: not valid JSON: {}", file_, e.what()));
  }

 private:
  struct Frame {
    bool array;
    std::size_t index;  ///< of the element being read
    std::string key;    ///< of the member being read
  };

  bool value(bool ok) {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return ok;
  }
  std::string pointer() const {
    std::string p;
    for (const Frame& f : frames_) {
      p += '/';
      p += f.array ? std::to_string(f.index) : escape_pointer_token(f.key);
    }
    return p.empty() ? "/" : printable(p);
  }
  [[noreturn]] void refuse(std::string_view what, std::string_view literal) const {
    throw SceneError(fmt::format("{}: {}: {}, got {}", file_, pointer(), what, printable(literal)));
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::vector<Frame> frames_;
  const std::string& text_;
  const std::string& file_;
};

}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& file) {
  check_nesting(text, file);
  json doc;
  PointerSax sax(doc, text, file);
  json::sax_parse(text, &sax);
  return doc;
}

nlohmann::json parse_json_file(const std::string& path) {
  std::ifstream in = open_input(path, "");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_json_text(buffer.str(), path);
}

}  // namespace clockwork
