#pragma once
#include <stdexcept>
#include <string>

namespace clockwork {

/// Bad user input: the message names the file, the field (JSON pointer) and the value.
class SceneError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace clockwork
