#pragma once
/// Mutations of the fuzz driver (tests/fuzz/fuzz_readers.cpp): byte-level ones for
/// every input kind, and JSON-aware ones for scenes, which get past the parser into the
/// scene's validation. Deterministic: everything random comes from the caller's engine.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace clockwork::fuzz {

using Rng = std::mt19937_64;

inline std::size_t pick(Rng& rng, std::size_t n) {  // uniform in [0, n), n > 0
  return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}
template <class T>
const T& pick_of(Rng& rng, const std::vector<T>& v) {
  return v[pick(rng, v.size())];
}

/// Numbers that broke or could break a reader: overflow, subnormals, NaN literals,
/// negative zero, integers past 32 and 64 bits, the documented maxima and one past.
inline const std::vector<std::string>& hostile_numbers() {
  static const std::vector<std::string> v = {
      "1e400", "-1e400", "-0", "-0.0", "nan", "NaN", "-nan", "inf", "-inf", "Infinity",
      "1e-310", "4.9e-324", "1e-300", "1e308", "-1e308", "1.7976931348623157e308", "0", "-1",
      "1", "2", "0.5", "1e-9", "1e10", "1e30", "99999999999999999999", "-2147483649",
      "2147483647", "2147483648", "4294967296", "9223372036854775807", "18446744073709551616",
      "-9223372036854775809", "4096", "4097", "2048", "2049", "1024", "1025", "512", "513",
      "65536", "0x10", "1e", "1.2.3", "--1", "+1", ".5", "5.", "1e+", "007"};
  return v;
}

/// Bytes and tokens that matter to the readers' grammars.
inline const std::vector<std::string>& interesting_tokens() {
  static const std::vector<std::string> v = {
      "{", "}", "[", "]", "\"", ":", ",", "\\", "-", ".", "e", "E", "0", "9", " ", "\n",
      "\r\n", "\t", std::string(1, '\0'), "\xff", "\xc3\x28", "#", "/", "//", "$", "end_header",
      "element vertex 4294967296\n", "property double x\n", "f 1 2 3\n", "f -1 -2 -3\n",
      "f 0 0 0\n", "v nan nan nan\n", "v 1e400 0 0\n", "$EndNodes\n", "$Elements\n", "null",
      "true", "\"\"", "[]", "{}"};
  return v;
}

/// Positions of numeric tokens (sign, digits, fraction, exponent) in `s`.
inline std::vector<std::pair<std::size_t, std::size_t>> number_spans(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  const auto digit = [&](std::size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; };
  for (std::size_t i = 0; i < s.size();) {
    std::size_t j = i;
    if ((s[j] == '-' || s[j] == '+') && (digit(j + 1) || (j + 1 < s.size() && s[j + 1] == '.')))
      ++j;
    if (!digit(j) && !(s[j] == '.' && digit(j + 1))) {
      ++i;
      continue;
    }
    // A digit inside an identifier (u0v1, region_2) is not a number.
    if (i > 0 && (std::isalpha(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_')) {
      ++i;
      continue;
    }
    while (digit(j) || s[j] == '.') ++j;
    if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
      std::size_t k = j + 1;
      if (k < s.size() && (s[k] == '-' || s[k] == '+')) ++k;
      if (digit(k)) {
        j = k;
        while (digit(j)) ++j;
      }
    }
    spans.emplace_back(i, j - i);
    i = j;
  }
  return spans;
}

/// One byte-level mutation of `s`; `other` (another seed of the same kind) for splices.
inline void mutate_bytes(std::string& s, const std::string& other, Rng& rng) {
  const std::size_t n = s.size();
  switch (pick(rng, 11)) {
    case 0:  // flip a bit
      if (n) s[pick(rng, n)] ^= static_cast<char>(1u << pick(rng, 8));
      break;
    case 1:  // overwrite a byte with a grammar byte
      if (n) s[pick(rng, n)] = pick_of(rng, interesting_tokens())[0];
      break;
    case 2:  // insert a token
      s.insert(pick(rng, n + 1), pick_of(rng, interesting_tokens()));
      break;
    case 3:  // delete a range
      if (n) {
        const std::size_t at = pick(rng, n);
        s.erase(at, 1 + pick(rng, std::min<std::size_t>(64, n - at)));
      }
      break;
    case 4:  // duplicate a range elsewhere
      if (n) {
        const std::size_t at = pick(rng, n);
        const std::string chunk = s.substr(at, 1 + pick(rng, std::min<std::size_t>(256, n - at)));
        s.insert(pick(rng, s.size() + 1), chunk);
      }
      break;
    case 5:  // splice: a prefix of this seed, a suffix of another
      if (!other.empty()) s = s.substr(0, pick(rng, n + 1)) + other.substr(pick(rng, other.size()));
      break;
    case 6:    // a number replaced by a hostile one
    case 7: {  // (twice as likely: the readers' numbers are where they broke)
      const auto spans = number_spans(s);
      if (spans.empty()) break;
      const auto [at, len] = pick_of(rng, spans);
      s.replace(at, len, pick_of(rng, hostile_numbers()));
      break;
    }
    case 8: {  // a number scaled by a power of ten, or its sign flipped
      const auto spans = number_spans(s);
      if (spans.empty()) break;
      const auto [at, len] = pick_of(rng, spans);
      static const std::vector<std::string> suffixes = {"e3", "e6", "e-6", "e12", "000000"};
      if (pick(rng, 2)) s.insert(at + len, pick_of(rng, suffixes));
      else s.insert(at, "-");
      break;
    }
    case 9:  // truncated
      s.resize(pick(rng, n + 1));
      break;
    case 10: {  // a line repeated many times (counts, long lists)
      if (!n) break;
      const std::size_t at = s.rfind('\n', pick(rng, n));
      const std::size_t start = at == std::string::npos ? 0 : at + 1;
      const std::size_t end = s.find('\n', start);
      const std::string line = s.substr(start, end == std::string::npos ? n - start : end - start + 1);
      std::string rep;
      for (std::size_t k = 1 + pick(rng, 64); k > 0; --k) rep += line;
      s.insert(start, rep);
      break;
    }
  }
}

/// Every JSON pointer of `doc` (the root included).
inline void collect_pointers(const nlohmann::json& doc, const nlohmann::json::json_pointer& at,
                             std::vector<nlohmann::json::json_pointer>& out) {
  out.push_back(at);
  if (doc.is_object())
    for (const auto& [k, v] : doc.items()) collect_pointers(v, at / k, out);
  else if (doc.is_array())
    for (std::size_t i = 0; i < doc.size(); ++i) collect_pointers(doc[i], at / i, out);
}

/// Text of a value `depth` levels deep: [[[...]]] or {"a":{"a":...}}.
inline std::string deep_nesting(std::size_t depth, bool objects) {
  std::string s;
  s.reserve(depth * 7 + 2);
  for (std::size_t i = 0; i < depth; ++i) s += objects ? "{\"a\":" : "[";
  s += "1";
  for (std::size_t i = 0; i < depth; ++i) s += objects ? "}" : "]";
  return s;
}

/// A structured mutation of a scene: one node replaced, removed, duplicated or joined
/// by an unknown key. Values JSON cannot hold (1e400, nan, deep nesting, duplicate
/// keys) are written as text in place of a placeholder string after serialising.
inline std::string mutate_json(const nlohmann::json& seed, Rng& rng) {
  nlohmann::json doc = seed;
  std::vector<nlohmann::json::json_pointer> ptrs;
  collect_pointers(doc, nlohmann::json::json_pointer(), ptrs);
  const auto ptr = pick_of(rng, ptrs);
  nlohmann::json& node = doc[ptr];
  static const std::string kMark = "@@CLOCKWORK_FUZZ@@";
  std::string raw;  // replaces "kMark" in the text
  switch (pick(rng, 10)) {
    case 0:
    case 1:
      raw = pick_of(rng, hostile_numbers());
      break;
    case 2: {  // a scaled number, or a wrong type
      if (node.is_number()) {
        static const std::vector<double> factors = {1e3, 1e-3, -1.0, 1e6, 1e-6, 0.0, 2.0, 1e100};
        node = node.get<double>() * pick_of(rng, factors);
      } else {
        static const std::vector<std::string> types = {"\"text\"", "[]", "{}", "null", "true",
                                                       "[1, 2, 3]", "{\"a\": 1}", "\"auto\""};
        raw = pick_of(rng, types);
      }
      break;
    }
    case 3: {  // an integer off by one, or the documented limits' neighbours
      if (node.is_number_integer()) node = node.get<long long>() + (pick(rng, 2) ? 1 : -1);
      else raw = pick_of(rng, hostile_numbers());
      break;
    }
    case 4: {  // hostile strings: path parts, control characters, a huge one
      static const std::vector<std::string> strings = {
          "\"\"", "\"..\"", "\".\"", "\"a/b\"", "\"/tmp\"", "\"a\\nb\"", "\"a\\u0000b\"",
          "\"with space\"", "\"\\u00e9\\u6f22\"", "\"-\"", "\"u9v9\"", "\"nan\"", "\"1e400\""};
      if (pick(rng, 8) == 0) raw = "\"" + std::string(1 << (10 + pick(rng, 10)), 'x') + "\"";
      else raw = pick_of(rng, strings);
      break;
    }
    case 5:  // deep nesting
      raw = deep_nesting(std::size_t(1) << (3 + pick(rng, 15)), pick(rng, 2) == 0);
      break;
    case 6:  // removed
      if (!ptr.empty()) {
        nlohmann::json& parent = doc[ptr.parent_pointer()];
        if (parent.is_object()) parent.erase(ptr.back());
        else parent.erase(std::stoul(ptr.back()));
      }
      break;
    case 7:  // an unknown key, or an array grown by a copy of an element
      if (node.is_object()) node["unknown_" + std::to_string(pick(rng, 100))] = 1;
      else if (node.is_array() && !node.empty()) node.push_back(node[pick(rng, node.size())]);
      else raw = "{}";
      break;
    case 8: {  // a duplicate key (nlohmann keeps the last; other readers the first)
      if (node.is_object() && !node.empty()) {
        auto it = node.begin();
        std::advance(it, static_cast<long>(pick(rng, node.size())));
        const std::string dup = nlohmann::json(it.key()).dump() + ": " +
                                (pick(rng, 2) ? it.value().dump() : pick_of(rng, hostile_numbers()));
        node["\x01"] = kMark;  // first in key order: its text is replaced by the duplicate
        std::string text = doc.dump(1);
        const std::string pat = "\"\\u0001\": \"" + kMark + "\"";
        const auto at = text.find(pat);
        if (at != std::string::npos) text.replace(at, pat.size(), dup);
        return text;
      }
      raw = pick_of(rng, hostile_numbers());
      break;
    }
    default: {  // a long array (counts and allocations)
      raw = "[";
      for (std::size_t k = 0, n = std::size_t(1) << (4 + pick(rng, 14)); k < n; ++k)
        raw += k ? ",0" : "0";
      raw += "]";
      break;
    }
  }
  if (raw.empty()) return doc.dump(1);
  node = kMark;
  std::string text = doc.dump(1);
  const std::string quoted = "\"" + kMark + "\"";
  const auto at = text.find(quoted);
  if (at != std::string::npos) text.replace(at, quoted.size(), raw);
  return text;
}

}  // namespace clockwork::fuzz
