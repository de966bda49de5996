// Tensors shared between processes without copying (DESIGN §5; docs/
// interchange.md "Shared memory between processes"). The producer copies a
// tensor once into a sealed memfd; the fd travels over a Unix socket
// (SCM_RIGHTS) with the tensor's JSON descriptor; the consumer maps it.
// Linux only: elsewhere every function throws E3002.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tessel/core/tensor.hpp"

namespace tessel {

enum class ShareMode : std::uint8_t {
  // The memfd is write-sealed (F_SEAL_WRITE): nobody, the producer
  // included, can change the bytes any more; consumers map it read-only.
  ReadOnly,
  // Every process mapping it sees every write (MAP_SHARED).
  ReadWrite,
};

// An owned file descriptor, closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }
  int release();

 private:
  int fd_ = -1;
};

// One shared tensor: the sealed memfd, the descriptor of its contents
// (row-major, offset 0) and a tensor mapping it in this process.
struct SharedTensor {
  UniqueFd fd;
  std::string descriptor_json;
  ShareMode mode = ShareMode::ReadWrite;
  Tensor tensor;  // read-only storage for ShareMode::ReadOnly
};

// Copies `t` (any layout; byte-addressable or contiguous from offset 0)
// once into a new memfd and seals its size (and, for ReadOnly, its bytes).
// E2501 for a tensor not on the CPU; E3002 when the OS refuses.
SharedTensor share_memfd(const Tensor& t,
                         ShareMode mode = ShareMode::ReadWrite);

// Sends the share over a connected AF_UNIX socket: a fixed header with the
// descriptor length and mode, the fd as SCM_RIGHTS, then the JSON.
void send_shared(int unix_socket, const SharedTensor& share);
// share_memfd + send_shared; returns this process's view of the memfd (so
// that with ReadWrite it sees what the peer writes).
Tensor send_tensor(int unix_socket, const Tensor& t,
                   ShareMode mode = ShareMode::ReadWrite);

// Receives one share and maps it without a copy (Storage origin
// SharedMemory, non-writable for ReadOnly). Refuses (E3001), closing any
// fd received: a message that is not a tessel share, a descriptor over
// kMaxShareDescriptorBytes, malformed JSON, no fd or more than one, an fd
// that is not a size-sealed memfd, a mode that disagrees with the seals
// (ReadWrite with F_SEAL_WRITE, ReadOnly without), a mode other than
// `expect` when given, a descriptor needing more bytes than the memfd
// holds. E3002 when the socket fails or closes early.
SharedTensor receive_shared(int unix_socket,
                            std::optional<ShareMode> expect = std::nullopt);
// receive_shared without the fd (the mapping keeps the memory alive).
Tensor receive_tensor(int unix_socket,
                      std::optional<ShareMode> expect = std::nullopt);

// The longest descriptor a receiver accepts (checked before allocating).
inline constexpr std::uint64_t kMaxShareDescriptorBytes = 1 << 20;

}  // namespace tessel
