#pragma once
// The test main (tests/doctest_main.cpp) fails a test whose scenes put a numerical
// knob at its place before issue 43 (the "'KEY' moved to ..." warning of
// io/scene/scene_schema.cpp): tests write the current format. A test that checks that
// warning on purpose opts in for its scope with AllowMovedKeys.
namespace clockwork::test {

inline bool& moved_keys_allowed() {
  static bool allowed = false;
  return allowed;
}

struct AllowMovedKeys {
  AllowMovedKeys() { moved_keys_allowed() = true; }
  ~AllowMovedKeys() { moved_keys_allowed() = false; }
  AllowMovedKeys(const AllowMovedKeys&) = delete;
  AllowMovedKeys& operator=(const AllowMovedKeys&) = delete;
};

}  // namespace clockwork::test
