#pragma once
/// An address-stable pool of event payloads: elements never move, so certificates
/// embedded in them keep their place in the contingency lists (contact/certificates/certificate.hpp).
///
/// Why not std::deque: libstdc++ allocates deque blocks of 512 bytes, so a pool of
/// ~300-byte triangle pairs holds one per block and its block map is as long as the
/// pool (3 MB for the paper-scale reef knot's 380 000 pairs): every index
/// `pool[slot]` then misses in the map before it misses in the element. Here the
/// chunks hold kChunk elements, and the chunk table stays in cache.
#include <cassert>
#include <cstddef>
#include <memory>
#include <vector>

namespace clockwork {

template <typename T>
class StablePool {
 public:
  static constexpr std::size_t kChunkBits = 10, kChunk = std::size_t(1) << kChunkBits;

  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) {
    assert(i < size_);
    return chunks_[i >> kChunkBits][i & (kChunk - 1)];
  }
  const T& operator[](std::size_t i) const {
    assert(i < size_);
    return chunks_[i >> kChunkBits][i & (kChunk - 1)];
  }
  T& back() { return (*this)[size_ - 1]; }
  /// Appends a value-initialised element (chunks are value-initialised when allocated).
  T& emplace_back() {
    if (size_ == chunks_.size() * kChunk) chunks_.push_back(std::make_unique<T[]>(kChunk));
    return (*this)[size_++];
  }

  template <typename Pool, typename Ref>
  class Iterator {
   public:
    Iterator(Pool* pool, std::size_t i) : pool_(pool), i_(i) {}
    Ref operator*() const { return (*pool_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return i_ != o.i_; }

   private:
    Pool* pool_;
    std::size_t i_;
  };
  Iterator<StablePool, T&> begin() { return {this, 0}; }
  Iterator<StablePool, T&> end() { return {this, size_}; }
  Iterator<const StablePool, const T&> begin() const { return {this, 0}; }
  Iterator<const StablePool, const T&> end() const { return {this, size_}; }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::size_t size_ = 0;
};

}  // namespace clockwork
