// The tests' main: doctest's, plus a guard on the scene reader's moved-key warning
// (tests/support/moved_keys.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "tests/support/moved_keys.hpp"

namespace {

/// Fails the running test on a "'KEY' moved to /..." warning unless it opted in.
class MovedKeyGuard final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (msg.level != spdlog::level::warn || clockwork::test::moved_keys_allowed()) return;
    const std::string_view text(msg.payload.data(), msg.payload.size());
    if (text.find("' moved to /") == std::string_view::npos) return;
    const std::string what = "a scene of this test puts a knob at its place before issue 43 (move it "
                             "into \"advanced\", or opt in with test::AllowMovedKeys): " + std::string(text);
    FAIL_CHECK(what);
  }
  void flush_() override {}
};

}  // namespace

int main(int argc, char** argv) {
  spdlog::default_logger()->sinks().push_back(std::make_shared<MovedKeyGuard>());
  doctest::Context context(argc, argv);
  return context.run();
}
