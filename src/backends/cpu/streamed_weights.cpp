#include "backends/cpu/streamed_weights.hpp"

// Note [the next weights]: between the products of a decode step the
// holder of the team runs serial ops (norms, RoPE, the cache, the
// activations' quantisation: a fifth of a 160M model's step), while the
// other threads wait and DRAM idles. A step streams the same weights in
// the same order every time, so the first step records that order (per
// holding thread, keyed by where each product's weights start) and every
// product, once its pass is done, asks the waiting threads to pull the
// next product's first bytes toward their caches. A wrong guess (another
// model run on the same thread, a path that changed) costs only memory
// traffic: the products read their weights whatever was pulled.

namespace tessel::cpu {

namespace {

// How much of the next product the waiting threads pull, at most: the L2
// of one Zen 4 core. In decode steps alternated in one process (160M
// Qwen3, Q4_0, 30-40 rounds), 1 MiB gave 1-3 % more tokens/s than none,
// 512 KiB and 2-16 MiB no more than 1 MiB; the serial stretch between two
// products (about 15 us) rarely lasts long enough to pull even that much.
constexpr std::size_t kPrefetchBytes = std::size_t{1} << 20;

thread_local StreamOrder t_order;

}  // namespace

std::size_t StreamOrder::note(std::span<const ByteRange> weights) {
  const auto found = place_.find(weights.front().data);
  if (found != place_.end()) return found->second;
  if (products_.size() >= kMostProducts) {
    products_.clear();
    place_.clear();
  }
  products_.emplace_back(weights.begin(), weights.end());
  place_.emplace(weights.front().data, products_.size() - 1);
  return products_.size() - 1;
}

std::span<const ByteRange> StreamOrder::after(std::size_t place) const {
  if (place + 1 >= products_.size()) return {};
  return products_[place + 1];
}

StreamedWeights::StreamedWeights(std::span<const ByteRange> weights) {
  if (!holding_team() || weights.empty()) return;
  held_ = true;
  stop_prefetching();  // this product's own pass reads its weights now
  place_ = t_order.note(weights);
}

StreamedWeights::~StreamedWeights() {
  if (!held_ || !holding_team()) return;
  const std::span<const ByteRange> next = t_order.after(place_);
  if (!next.empty()) prefetch_while_waiting(next, kPrefetchBytes);
}

}  // namespace tessel::cpu
