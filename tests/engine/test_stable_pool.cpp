#include <doctest/doctest.h>

#include <vector>

#include "engine/stable_pool.hpp"

using namespace clockwork;

TEST_CASE("a stable pool keeps its elements' addresses as it grows past its chunks") {
  struct Payload {
    int value = 7;
    double weight = 0.0;
  };
  StablePool<Payload> pool;
  std::vector<const Payload*> addresses;
  const std::size_t n = 3 * StablePool<Payload>::kChunk + 5;
  for (std::size_t i = 0; i < n; ++i) {
    Payload& p = pool.emplace_back();
    CHECK(p.value == 7);  // value-initialised
    CHECK(&pool.back() == &p);
    p.weight = double(i);
    addresses.push_back(&p);
  }
  REQUIRE(pool.size() == n);
  std::size_t i = 0;
  for (const Payload& p : pool) {
    CHECK(&p == addresses[i]);
    CHECK(&pool[i] == addresses[i]);
    CHECK(p.weight == double(i));
    ++i;
  }
  CHECK(i == n);
}
