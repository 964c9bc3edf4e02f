#include "io/text_input.hpp"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <system_error>

#include "io/scene_error.hpp"

namespace clockwork {

std::ifstream open_input(const std::string& path, std::string_view kind) {
  std::error_code ec;
  // std::ifstream opens a directory without complaint on Linux and then reads nothing,
  // which the readers would report as an empty or invalid file.
  if (std::filesystem::is_directory(path, ec))
    throw SceneError(fmt::format("{}: is a directory, expected a file", path));
  std::ifstream in(path);
  if (!in)
    throw SceneError(fmt::format("{}: cannot open the {}{}file", path, kind, kind.empty() ? "" : " "));
  return in;
}

bool parse_double(std::string_view token, double& value) {
  // from_chars rejects a leading '+' that strtod and other tools' writers accept.
  if (token.size() > 1 && token[0] == '+' && token[1] != '-' && token[1] != '+') token.remove_prefix(1);
  const char* end = token.data() + token.size();
  const auto [stop, ec] = std::from_chars(token.data(), end, value);
  return !token.empty() && ec == std::errc() && stop == end;
}

std::string printable(std::string_view text, std::size_t max) {
  std::string out;
  for (const char c : text) {
    if (out.size() >= max) return out + "...";
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (u < 0x20 || u >= 0x7f) out += fmt::format("\\x{:02x}", u);
    else out += c;
  }
  return out;
}

}  // namespace clockwork
