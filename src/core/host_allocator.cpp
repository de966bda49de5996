// Note [caching allocator]
// Buffers of kLargeBytes (64 KiB) or more are whole mmap'd regions, rounded
// up to 2 MiB (and marked for transparent huge pages) from 2 MiB on and to
// 64 KiB below. The threshold sits below a training step's activations
// (768 KiB for 1536 tokens of 128 features): through malloc they were
// mapped and unmapped every step, and the page faults of the fresh pages
// cost about a tenth of the step. It sits below a decode step's logits too
// (125 KiB for a vocabulary of 32000): glibc's malloc gave them from the top
// of its heap and trimmed the heap when they were freed, so every token
// paid a brk, a TLB shootdown on the other cores and fresh page faults,
// 1-3 % of a 160M-parameter Q4_0 decode step. When freed they go to a
// cache keyed by the size they were mapped with (recorded while handed
// out: the caller's size can be smaller); an allocation takes the smallest
// cached buffer that is at least its size and at most 1.5x it. The cache holds
// at most kCacheLimit bytes (the oldest buffers are unmapped first) and is
// emptied before an allocation is allowed to fail.
#include "core/host_allocator.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <list>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "core/check.hpp"
#include "core/huge_page.hpp"
#include "tessel/core/storage.hpp"

namespace tessel {

namespace {

constexpr std::size_t kLargeBytes = std::size_t{64} << 10;
constexpr std::size_t kMidGranule = std::size_t{64} << 10;
constexpr std::size_t kCacheLimit = std::size_t{1} << 30;

std::size_t round_up(std::size_t n, std::size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

class LargeBlockCache {
 public:
  // A cached block of `size` to 1.5 x `size` bytes, or nullptr.
  void* take(std::size_t size) {
    std::lock_guard lock(mutex_);
    auto it = by_size_.lower_bound(size);
    if (it == by_size_.end() || it->first > size + size / 2) {
      ++stats_.misses;
      return nullptr;
    }
    ++stats_.hits;
    void* data = it->second->data;
    stats_.cached_bytes -= static_cast<std::int64_t>(it->second->size);
    --stats_.cached_blocks;
    mapped_[data] = it->second->size;
    age_.erase(it->second);
    by_size_.erase(it);
    return data;
  }

  // A block just mapped, of `size` bytes.
  void mapped(void* data, std::size_t size) {
    std::lock_guard lock(mutex_);
    mapped_[data] = size;
  }

  // Keeps a block host_allocate handed out, at the size it was mapped with
  // (a block taken from the cache may be up to 1.5 x what its last caller
  // asked for: freed at the caller's size, its tail was never unmapped),
  // evicting the oldest ones beyond the limit.
  void give(void* data, std::size_t asked) {
    std::lock_guard lock(mutex_);
    const auto found = mapped_.find(data);
    std::size_t size = asked;  // not handed out here: never happens
    if (found != mapped_.end()) {
      size = found->second;
      mapped_.erase(found);
    }
    age_.push_back({data, size});
    by_size_.emplace(size, std::prev(age_.end()));
    stats_.cached_bytes += static_cast<std::int64_t>(size);
    ++stats_.cached_blocks;
    while (static_cast<std::size_t>(stats_.cached_bytes) > kCacheLimit) {
      evict_oldest();
    }
  }

  void clear() {
    std::lock_guard lock(mutex_);
    while (!age_.empty()) evict_oldest();
  }

  AllocatorStats stats() {
    std::lock_guard lock(mutex_);
    return stats_;
  }

 private:
  struct Block {
    void* data;
    std::size_t size;
  };

  void evict_oldest() {
    const Block oldest = age_.front();
    for (auto it = by_size_.find(oldest.size); it != by_size_.end(); ++it) {
      if (it->second == age_.begin()) {
        by_size_.erase(it);
        break;
      }
    }
    age_.pop_front();
    munmap(oldest.data, oldest.size);
    stats_.cached_bytes -= static_cast<std::int64_t>(oldest.size);
    --stats_.cached_blocks;
  }

  std::mutex mutex_;
  std::unordered_map<void*, std::size_t> mapped_;  // handed out, by address
  std::list<Block> age_;                           // oldest first
  std::multimap<std::size_t, std::list<Block>::iterator> by_size_;
  AllocatorStats stats_;
};

LargeBlockCache& cache() {
  // Leaked on purpose: storages may be freed during static destruction.
  static auto* instance = new LargeBlockCache;
  return *instance;
}

// Huge-page multiples from 2 MiB up; below that 64 KiB multiples, so that
// an activation of 768 KiB does not occupy 2 MiB.
std::size_t cached_size(std::size_t size) {
  return round_up(size, size >= detail::kHugePageBytes ? detail::kHugePageBytes
                                                       : kMidGranule);
}

void* map_large(std::size_t size) {
  void* data = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) return nullptr;
  madvise(data, size, MADV_HUGEPAGE);
  return data;
}

}  // namespace

namespace detail {

// Small blocks come from malloc, aligned by hand: aligned_alloc always
// takes glibc's slow memalign path (no thread cache) and fragments the
// heap, which cost a small tensor op a fifth of its time. The byte before
// the aligned address records how far it moved (1..64), for free.
void* host_allocate(std::size_t size) {
  if (size < kLargeBytes) {
    auto* raw =
        static_cast<unsigned char*>(std::malloc(size + kAllocAlignment));
    if (raw == nullptr) return nullptr;
    const auto address = reinterpret_cast<std::uintptr_t>(raw);
    const std::size_t shift =
        kAllocAlignment - address % kAllocAlignment;  // 1..64
    unsigned char* aligned = raw + shift;
    aligned[-1] = static_cast<unsigned char>(shift);
    return aligned;
  }
  const std::size_t rounded = cached_size(size);
  if (void* reused = cache().take(rounded)) return reused;
  void* fresh = map_large(rounded);
  if (fresh == nullptr) {
    cache().clear();  // give cached memory back to the OS and try once more
    fresh = map_large(rounded);
  }
  if (fresh != nullptr) cache().mapped(fresh, rounded);
  return fresh;
}

void host_free(void* data, std::size_t size) {
  if (size < kLargeBytes) {
    auto* aligned = static_cast<unsigned char*>(data);
    std::free(aligned - aligned[-1]);
    return;
  }
  cache().give(data, cached_size(size));
}

HostBuffer::HostBuffer(std::size_t size, const char* what)
    : data_(static_cast<std::uint8_t*>(host_allocate(size))), size_(size) {
  TESSEL_CHECK(data_ != nullptr, IoFailure, what,
               "out of memory allocating {} bytes of scratch", size);
}

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) host_free(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

HostBuffer::~HostBuffer() {
  if (data_ != nullptr) host_free(data_, size_);
}

}  // namespace detail

AllocatorStats allocator_stats() { return cache().stats(); }

void empty_cache() { cache().clear(); }

}  // namespace tessel
