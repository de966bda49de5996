// The order in which a held team's passes stream their weights, so that
// each pass can ask the waiting threads for the next one's while the
// holder runs the serial ops between them (Note [the next weights]).
#pragma once

#include <cstddef>
#include <span>
#include <unordered_map>
#include <vector>

#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

// The products one thread's held steps streamed, in the order they first
// came, each known by where its weights start.
class StreamOrder {
 public:
  // The place of the product streaming `weights` (not empty): its place
  // from an earlier step, else a new one at the end.
  std::size_t note(std::span<const ByteRange> weights);
  // The weights of the product after `place`; empty after the last.
  std::span<const ByteRange> after(std::size_t place) const;
  std::size_t size() const { return products_.size(); }

  // A bound on what a long-lived thread that runs many models keeps:
  // past it, the order starts again.
  static constexpr std::size_t kMostProducts = 65536;

 private:
  std::vector<std::vector<ByteRange>> products_;
  std::unordered_map<const void*, std::size_t> place_;
};

// Placed around a product that streams its weights once (the decode
// step's dot kernels and GEMVs): notes it in this thread's StreamOrder
// and, once the pass is done, asks the waiting threads to pull the next
// product's weights. Outside a held team it does nothing.
class StreamedWeights {
 public:
  explicit StreamedWeights(std::span<const ByteRange> weights);
  ~StreamedWeights();
  StreamedWeights(const StreamedWeights&) = delete;
  StreamedWeights& operator=(const StreamedWeights&) = delete;

 private:
  bool held_ = false;
  std::size_t place_ = 0;
};

}  // namespace tessel::cpu
