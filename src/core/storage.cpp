#include "tessel/core/storage.hpp"

#include <atomic>
#include <bit>
#include <limits>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/check.hpp"
#include "core/host_allocator.hpp"
#include "core/huge_page.hpp"
#include "core/mapped_file_guard.hpp"
#include "core/open_for_reading.hpp"

namespace tessel {

struct Storage::Impl {
  void* data = nullptr;
  std::int64_t nbytes = 0;
  Device device;
  StorageOrigin origin = StorageOrigin::Owned;
  bool writable = true;
  std::function<void()> release;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (release) release();
  }
};

const char* origin_name(StorageOrigin origin) {
  switch (origin) {
    case StorageOrigin::Owned: return "owned";
    case StorageOrigin::Pinned: return "pinned";
    case StorageOrigin::MappedFile: return "mapped-file";
    case StorageOrigin::SharedMemory: return "shared-memory";
    case StorageOrigin::Borrowed: return "borrowed";
  }
  return "unknown";
}

namespace {

std::size_t round_up(std::size_t n, std::size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

void check_nbytes(std::int64_t nbytes, const char* op) {
  TESSEL_CHECK(nbytes >= 0, BadShape, op, "negative byte count {}", nbytes);
  TESSEL_CHECK(static_cast<std::uint64_t>(nbytes) <=
                   std::numeric_limits<std::size_t>::max() - kAllocAlignment,
               SizeOverflow, op, "byte count {} is too large", nbytes);
}

std::string memlock_limit_text() {
  rlimit limit{};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0) return "unknown";
  if (limit.rlim_cur == RLIM_INFINITY) return "unlimited";
  return fmt::format("{} bytes", static_cast<std::uint64_t>(limit.rlim_cur));
}

}  // namespace

namespace {

// Meta storage accounting (MetaMemoryStats). Atomics, as meta tensors may
// be made from several threads; the peak is updated with a CAS loop.
struct MetaCounters {
  std::atomic<std::int64_t> live{0};
  std::atomic<std::int64_t> peak{0};
  std::atomic<std::int64_t> allocations{0};
};

MetaCounters& meta_counters() {
  static MetaCounters counters;
  return counters;
}

void meta_account(std::int64_t delta) {
  MetaCounters& c = meta_counters();
  const std::int64_t now = c.live += delta;
  if (delta > 0) ++c.allocations;
  std::int64_t peak = c.peak.load();
  while (now > peak && !c.peak.compare_exchange_weak(peak, now)) {
  }
}

}  // namespace

MetaMemoryStats meta_memory_stats() {
  const MetaCounters& c = meta_counters();
  return {c.live.load(), c.peak.load(), c.allocations.load()};
}

void reset_meta_memory_peak() {
  MetaCounters& c = meta_counters();
  c.peak = c.live.load();
  c.allocations = 0;
}

Storage Storage::allocate(std::int64_t nbytes, Device device,
                          std::size_t alignment) {
  check_nbytes(nbytes, "allocate");
  TESSEL_CHECK(alignment >= 1 && alignment <= kMaxAllocAlignment &&
                   std::has_single_bit(alignment),
               BadShape, "allocate",
               "alignment {} is not a power of two between 1 and {}", alignment,
               kMaxAllocAlignment);
  require_device(device, "allocate");
  if (device.is_meta()) {
    // Meta storage records its size and holds nothing (Note [meta backend]).
    auto impl = std::make_shared<Impl>();
    impl->nbytes = nbytes;
    impl->device = device;
    meta_account(nbytes);
    impl->release = [nbytes] { meta_account(-nbytes); };
    return Storage(std::move(impl));
  }
  // Empty tensors still get a valid, aligned pointer: kernels may form
  // pointers into them and memcpy of zero bytes requires non-null.
  // Stricter alignments take slack from the same allocator (and cache):
  // the base is 64-aligned, so alignment - 64 more bytes always hold an
  // aligned start.
  const std::size_t slack =
      alignment > kAllocAlignment ? alignment - kAllocAlignment : 0;
  TESSEL_CHECK(
      static_cast<std::size_t>(nbytes) <=
          std::numeric_limits<std::size_t>::max() - kAllocAlignment - slack,
      SizeOverflow, "allocate", "byte count {} is too large", nbytes);
  const auto size = static_cast<std::size_t>(nbytes) + slack;
  void* base = detail::host_allocate(size);
  TESSEL_CHECK(base != nullptr, IoFailure, "allocate",
               "out of memory allocating {} bytes on {}", nbytes, device.str());
  const auto address = reinterpret_cast<std::uintptr_t>(base);
  auto impl = std::make_shared<Impl>();
  impl->data = reinterpret_cast<void*>((address + alignment - 1) / alignment *
                                       alignment);
  impl->nbytes = nbytes;
  impl->device = device;
  impl->release = [base, size] { detail::host_free(base, size); };
  return Storage(std::move(impl));
}

Storage Storage::allocate_pinned(std::int64_t nbytes,
                                 bool fall_back_to_pageable) {
  check_nbytes(nbytes, "allocate_pinned");
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t size = round_up(
      std::max<std::size_t>(static_cast<std::size_t>(nbytes), 1), page);
  void* data = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  TESSEL_CHECK(data != MAP_FAILED, IoFailure, "allocate_pinned",
               "mmap of {} bytes failed: {}", size, std::strerror(errno));
  // The system call itself: AddressSanitizer replaces libc's mlock with a
  // no-op that always succeeds, which would hide refusals from its builds.
  if (::syscall(SYS_mlock, data, size) != 0) {
    const int err = errno;
    munmap(data, size);
    if (fall_back_to_pageable) return allocate(nbytes);
    detail::fail(ErrorCode::IoFailure, "allocate_pinned",
                 "the OS refused to page-lock {} bytes ({}); RLIMIT_MEMLOCK "
                 "is {}. Raise it (ulimit -l) or use pageable memory",
                 nbytes, std::strerror(err), memlock_limit_text());
  }
  auto impl = std::make_shared<Impl>();
  impl->data = data;
  impl->nbytes = nbytes;
  impl->origin = StorageOrigin::Pinned;
  impl->release = [data, size] {
    munlock(data, size);
    munmap(data, size);
  };
  return Storage(std::move(impl));
}

// mmap refuses empty ranges; an empty mapping still needs an address.
Storage Storage::empty_mapping(std::shared_ptr<Impl> impl) {
  Storage empty = allocate(0);
  impl->data = empty.data();
  impl->release = [keep = std::move(empty)] {};
  return Storage(std::move(impl));
}

// MapMode::Resident: [offset, offset + want) of an open file read into
// anonymous memory asking for 2 MiB pages, then made read-only. Takes fd.
Storage Storage::read_resident(int fd, const std::string& name,
                               std::uint64_t offset, std::uint64_t want) {
  auto impl = std::make_shared<Impl>();
  impl->nbytes = static_cast<std::int64_t>(want);
  impl->origin = StorageOrigin::Owned;
  impl->writable = false;
  if (want == 0) {
    ::close(fd);
    return empty_mapping(std::move(impl));
  }
  // A whole number of 2 MiB pages starting on a 2 MiB boundary: reserved
  // one page larger, then trimmed, since mmap promises only 4 KiB.
  const std::size_t size =
      round_up(static_cast<std::size_t>(want), kMaxAllocAlignment);
  void* reserved =
      mmap(nullptr, size + kMaxAllocAlignment, PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (reserved == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    detail::fail(ErrorCode::IoFailure, "map_file",
                 "cannot reserve {} bytes to read '{}' into: {}", want, name,
                 std::strerror(err));
  }
  const auto first = reinterpret_cast<std::uintptr_t>(reserved);
  const std::uintptr_t aligned = round_up(first, kMaxAllocAlignment);
  if (aligned > first) munmap(reserved, aligned - first);
  if (const std::size_t tail = kMaxAllocAlignment - (aligned - first)) {
    munmap(reinterpret_cast<void*>(aligned + size), tail);
  }
  void* data = reinterpret_cast<void*>(aligned);
  ::madvise(data, size, MADV_HUGEPAGE);
  auto* out = static_cast<char*>(data);
  std::uint64_t done = 0;
  while (done < want) {
    const std::size_t step = static_cast<std::size_t>(
        std::min<std::uint64_t>(want - done, std::uint64_t{1} << 30));
    const ssize_t got =
        ::pread(fd, out + done, step, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      const int err = got < 0 ? errno : 0;
      ::close(fd);
      munmap(data, size);
      detail::fail(ErrorCode::IoFailure, "map_file",
                   "reading '{}' stopped at byte {} of {}: {}", name,
                   offset + done, offset + want,
                   err ? std::strerror(err) : "the file got shorter");
    }
    done += static_cast<std::uint64_t>(got);
  }
  ::close(fd);
  mprotect(data, size, PROT_READ);
  impl->data = data;
  impl->release = [data, size] { munmap(data, size); };
  return Storage(std::move(impl));
}

Storage Storage::map_file(const std::filesystem::path& path, MapMode mode,
                          std::uint64_t offset,
                          std::optional<std::uint64_t> length) {
  const std::string name = path.string();
  const auto [fd, file_size] = detail::open_for_reading(path, "map_file");
  const std::uint64_t want =
      length.value_or(offset <= file_size ? file_size - offset : 0);
  if (offset > file_size || want > file_size - offset) {
    ::close(fd);
    detail::fail(ErrorCode::IoFailure, "map_file",
                 "range [{}, {}+{}) lies outside '{}' of {} bytes", offset,
                 offset, want, name, file_size);
  }
  if (mode == MapMode::Resident) return read_resident(fd, name, offset, want);
  auto impl = std::make_shared<Impl>();
  impl->nbytes = static_cast<std::int64_t>(want);
  impl->origin = StorageOrigin::MappedFile;
  impl->writable = mode == MapMode::CopyOnWrite;
  if (want == 0) {
    ::close(fd);
    return empty_mapping(std::move(impl));
  }
  // mmap wants a page-aligned file offset: map from the page start.
  const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  const std::uint64_t start = offset / page * page;
  const std::size_t span = static_cast<std::size_t>(want + (offset - start));
  const int prot =
      mode == MapMode::ReadOnly ? PROT_READ : PROT_READ | PROT_WRITE;
  const int flags = mode == MapMode::ReadOnly ? MAP_SHARED : MAP_PRIVATE;
  void* base = mmap(nullptr, span, prot, flags, fd, static_cast<off_t>(start));
  const int err = errno;
  ::close(fd);  // the mapping keeps the file alive
  TESSEL_CHECK(base != MAP_FAILED, IoFailure, "map_file",
               "mmap of '{}' failed: {}", name, std::strerror(err));
  impl->data = static_cast<char*>(base) + (offset - start);
  // Weights are streamed whole on every token, and with 4 KiB pages each
  // page costs a TLB walk: Qwen3-0.6B Q4_0 decodes 8-12 % faster with its
  // file all in 2 MiB pages than all in 4 KiB ones. The kernel maps a
  // file's 2 MiB page-cache folios with one entry where the address
  // allows (it aligns the mapping to the file offset), and this hint makes
  // its faults read the file into such folios (after a cold read, 350 of
  // 367 MB against 246-262 without it: decode 1-3 % faster). The price: a
  // fault reads 2 MiB, also for the few rows an untied embedding gives a
  // token. Pages already cached in smaller folios stay so (collapsing them
  // needs CONFIG_READ_ONLY_THP_FOR_FS). docs/models.md.
  if (span >= detail::kHugePageBytes) ::madvise(base, span, MADV_HUGEPAGE);
  const int guard = detail::guard_mapping(base, span, start, name);
  impl->release = [base, span, guard] {
    detail::unguard_mapping(guard);
    munmap(base, span);
  };
  return Storage(std::move(impl));
}

Storage Storage::map_shared_fd(int fd, std::int64_t nbytes, bool writable) {
  check_nbytes(nbytes, "map_shared_fd");
  auto impl = std::make_shared<Impl>();
  impl->nbytes = nbytes;
  impl->origin = StorageOrigin::SharedMemory;
  impl->writable = writable;
  if (nbytes == 0) return empty_mapping(std::move(impl));
  const auto size = static_cast<std::size_t>(nbytes);
  const int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
  void* base = mmap(nullptr, size, prot, MAP_SHARED, fd, 0);
  TESSEL_CHECK(base != MAP_FAILED, IoFailure, "map_shared_fd",
               "mmap of {} bytes of fd {} failed: {}", nbytes, fd,
               std::strerror(errno));
  impl->data = base;
  impl->release = [base, size] { munmap(base, size); };
  return Storage(std::move(impl));
}

Storage Storage::borrow(void* data, std::int64_t nbytes, Device device,
                        std::function<void(void*)> deleter, bool writable) {
  check_nbytes(nbytes, "borrow");
  TESSEL_CHECK(data != nullptr || nbytes == 0, BadShape, "from_blob",
               "null pointer for {} bytes", nbytes);
  auto impl = std::make_shared<Impl>();
  impl->data = data;
  impl->nbytes = nbytes;
  impl->device = device;
  impl->origin = StorageOrigin::Borrowed;
  impl->writable = writable;
  if (deleter) impl->release = [data, d = std::move(deleter)] { d(data); };
  return Storage(std::move(impl));
}

void* Storage::data() const { return impl_ ? impl_->data : nullptr; }
std::int64_t Storage::nbytes() const { return impl_ ? impl_->nbytes : 0; }
Device Storage::device() const { return impl_ ? impl_->device : Device::cpu(); }
StorageOrigin Storage::origin() const {
  return impl_ ? impl_->origin : StorageOrigin::Owned;
}
bool Storage::writable() const { return impl_ && impl_->writable; }

void Storage::release_pages(std::int64_t offset, std::int64_t nbytes) const {
  if (!impl_ || impl_->origin != StorageOrigin::MappedFile || impl_->writable)
    return;
  if (offset < 0 || nbytes <= 0 || offset > impl_->nbytes - nbytes) return;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(impl_->data) +
                     static_cast<std::uintptr_t>(offset);
  const std::uintptr_t end = begin + static_cast<std::uintptr_t>(nbytes);
  const std::uintptr_t first = (begin + page - 1) / page * page;
  const std::uintptr_t last = end / page * page;
  // MAP_SHARED and read-only (map_file's ReadOnly mode): dropping the
  // pages loses nothing; a later read faults them back from the file.
  if (first < last) {
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  }
}

std::size_t Storage::alignment() const {
  const auto address = reinterpret_cast<std::uintptr_t>(data());
  if (address == 0) return 4096;
  return std::min<std::size_t>(address & (~address + 1), 4096);
}

}  // namespace tessel
