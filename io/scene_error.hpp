#pragma once
#include <stdexcept>
#include <string>

namespace clockwork {

/// Bad user input: the message names the file, the field (JSON pointer) and the value.
/// The tool exits with kExitInput (io/exit_codes.hpp).
class SceneError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An output that could not be written: the message names the file and the reason
/// (disk full, permissions). The tool exits with kExitIo.
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace clockwork
