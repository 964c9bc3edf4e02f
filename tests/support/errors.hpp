#pragma once
/// The message of what a call throws, for tests of error messages.
#include <exception>
#include <string>

namespace clockwork::test {

/// `f()`'s exception message, or "(no error)".
inline std::string what_thrown(auto&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace clockwork::test
