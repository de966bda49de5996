#include "core/mapped_file_guard.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <limits>
#include <mutex>
#include <vector>

#include "core/check.hpp"
#include "tessel/core/storage.hpp"

namespace tessel {

namespace {

constexpr std::uint64_t kNoFault = std::numeric_limits<std::uint64_t>::max();
constexpr int kSlots = 4096;

// Read by the signal handler: atomics only, no allocation, no locks.
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<std::uintptr_t> begin{0};  // 0 while not (yet) guarded
  std::atomic<std::uintptr_t> end{0};
  std::atomic<std::uint64_t> file_offset{0};
  std::atomic<std::uint64_t> fault{kNoFault};  // lowest lost file offset
};

Slot g_slots[kSlots];
std::atomic<std::uint64_t> g_faults{0};  // faults recorded, ever
std::uintptr_t g_page = 4096;
struct sigaction g_previous {};

// Normal-context bookkeeping: names by slot, and faults of mappings that
// were released before anyone checked.
struct Lost {
  std::string name;
  std::uint64_t offset;
};
std::mutex g_mutex;
std::vector<std::string> g_names(kSlots);
std::vector<Lost> g_lost;
std::uint64_t g_faults_reported = 0;

void record_min(std::atomic<std::uint64_t>& a, std::uint64_t v) {
  std::uint64_t seen = a.load(std::memory_order_relaxed);
  while (v < seen && !a.compare_exchange_weak(seen, v)) {
  }
}

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (Slot& s : g_slots) {
    const std::uintptr_t begin = s.begin.load(std::memory_order_acquire);
    if (begin == 0 || address < begin ||
        address >= s.end.load(std::memory_order_acquire)) {
      continue;
    }
    // Zeros in place of the page the file no longer has; the faulting
    // instruction runs again and reads them. One page only: a private
    // mapping's later pages may hold the program's own writes.
    const std::uintptr_t page = address & ~(g_page - 1);
    void* zero =
        ::mmap(reinterpret_cast<void*>(page), g_page, PROT_READ | PROT_WRITE,
               MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (zero == MAP_FAILED) break;  // cannot recover: die as before
    record_min(s.fault, s.file_offset.load(std::memory_order_relaxed) +
                            (std::max(page, begin) - begin));
    g_faults.fetch_add(1, std::memory_order_release);
    return;
  }
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 &&
      g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
    return;
  }
  // The access runs again and, with the default action, ends the process
  // with SIGBUS, as it would have without this handler.
  ::signal(SIGBUS, SIG_DFL);
}

void install_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &g_previous);
  });
}

[[noreturn]] void fail_lost(const std::string& name, std::uint64_t offset) {
  throw FormatError(
      ErrorCode::MalformedFile,
      fmt::format("[read] '{}' shrank while it was being read (another "
                  "process truncated or rewrote it): its bytes from offset "
                  "{} are gone",
                  name, offset),
      static_cast<std::int64_t>(offset));
}

}  // namespace

namespace detail {

int guard_mapping(const void* base, std::size_t length,
                  std::uint64_t file_offset, const std::string& name) {
  install_handler();
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    Slot& s = g_slots[i];
    if (!s.used.compare_exchange_strong(expected, true)) continue;
    {
      const std::lock_guard<std::mutex> lock(g_mutex);
      g_names[static_cast<std::size_t>(i)] = name;
    }
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    s.fault.store(kNoFault);
    s.file_offset.store(file_offset);
    s.end.store(b + length, std::memory_order_release);
    s.begin.store(b, std::memory_order_release);
    return i;
  }
  return -1;
}

void unguard_mapping(int slot) {
  if (slot < 0) return;
  Slot& s = g_slots[slot];
  s.begin.store(0, std::memory_order_release);
  s.end.store(0, std::memory_order_release);
  const std::uint64_t fault = s.fault.exchange(kNoFault);
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    if (fault != kNoFault) {
      g_lost.push_back({g_names[static_cast<std::size_t>(slot)], fault});
    }
    g_names[static_cast<std::size_t>(slot)].clear();
  }
  s.used.store(false, std::memory_order_release);
}

void check_mapped_address(const void* address) {
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = g_slots[i];
    const std::uintptr_t begin = s.begin.load(std::memory_order_acquire);
    if (begin == 0 || a < begin || a >= s.end.load(std::memory_order_acquire))
      continue;
    std::string name;
    {
      const std::lock_guard<std::mutex> lock(g_mutex);
      name = g_names[static_cast<std::size_t>(i)];
    }
    fail_lost(name, s.file_offset.load() + (a - begin));
  }
}

}  // namespace detail

void check_mapped_files() {
  // The common case, nothing ever lost: one atomic load.
  const std::uint64_t faults = g_faults.load(std::memory_order_acquire);
  if (faults == 0) return;
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (faults == g_faults_reported) return;
  if (!g_lost.empty()) {
    const Lost lost = g_lost.front();
    g_lost.erase(g_lost.begin());
    if (g_lost.empty()) g_faults_reported = faults;
    fail_lost(lost.name, lost.offset);
  }
  for (int i = 0; i < kSlots; ++i) {
    const std::uint64_t fault = g_slots[i].fault.exchange(kNoFault);
    if (fault != kNoFault)
      fail_lost(g_names[static_cast<std::size_t>(i)], fault);
  }
  g_faults_reported = faults;
}

}  // namespace tessel
