// Sealed memfds passed over Unix sockets (docs/interchange.md "Shared memory
// between processes"). The receiving side treats the peer as hostile: the
// message length is bounded before allocating, and the fd's size and seals
// are checked before it is mapped, because touching a mapping past the end
// of a file that the peer shrank afterwards would kill us with SIGBUS.
#include "tessel/io/shared_memory.hpp"

#include <cstring>
#include <utility>
#include <vector>

#include "core/check.hpp"
#include "tessel/io/descriptor.hpp"

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#endif

namespace tessel {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    UniqueFd old(fd_);
    fd_ = other.release();
  }
  return *this;
}

int UniqueFd::release() { return std::exchange(fd_, -1); }

#if defined(__linux__)

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

constexpr const char* kShare = "share_memfd";
constexpr const char* kSend = "send_tensor";
constexpr const char* kReceive = "receive_tensor";

// The fixed part of a message, in native byte order (both ends are on the
// same machine). The fd rides on its first byte.
struct WireHeader {
  char magic[4];
  std::uint32_t version;
  std::uint64_t json_bytes;
  std::uint32_t mode;
  std::uint32_t reserved;
};
constexpr char kMagic[4] = {'T', 'S', 'H', 'M'};
constexpr std::uint32_t kWireVersion = 1;

[[noreturn]] void os_failure(const char* op, const char* what) {
  detail::fail(ErrorCode::IoFailure, op, "{} failed: {}", what,
               std::strerror(errno));
}

// ---- sharing --------------------------------------------------------------

// Copies `t` row-major into the start of `dst`.
void copy_into(const Tensor& t, const Storage& dst) {
  if (t.numel() == 0) return;
  if (t.is_contiguous() &&
      (is_byte_addressable(t.dtype()) || t.storage_offset() == 0)) {
    std::memcpy(dst.data(), t.raw_data(), static_cast<std::size_t>(t.nbytes()));
    return;
  }
  TESSEL_CHECK(is_byte_addressable(t.dtype()), NotContiguous, kShare,
               "a {} tensor must be contiguous from the start of its buffer",
               dtype_name(t.dtype()));
  Tensor(dst, t.shape(), {}, 0, t.dtype()).copy_(t);
}

// A read-only MAP_SHARED mapping of a write-sealed memfd through a
// read-only fd: the kernel then never lets the mapping become writable
// (mprotect fails), and kernels before 6.7 refuse even a PROT_READ shared
// mapping of a write-sealed memfd through a read-write fd. Without /proc
// the fd itself is used (fine on 6.7 and later).
Storage map_read_only(int fd, std::int64_t nbytes) {
  const std::string path = fmt::format("/proc/self/fd/{}", fd);
  const UniqueFd read_only(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  return Storage::map_shared_fd(read_only.get() >= 0 ? read_only.get() : fd,
                                nbytes, false);
}

void add_seals(int fd, int seals) {
  if (fcntl(fd, F_ADD_SEALS, seals) != 0) os_failure(kShare, "F_ADD_SEALS");
}

// ---- the socket -----------------------------------------------------------

void send_all(int sock, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(sock, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) os_failure(kSend, "send");
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

void receive_all(int sock, void* data, std::size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::recv(sock, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) os_failure(kReceive, "recv");
    TESSEL_CHECK(n > 0, IoFailure, kReceive,
                 "the peer closed the socket in the middle of a message");
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

// The message that carries the header in `iov` and fds in `control`.
msghdr header_message(iovec& iov, char* control, std::size_t control_size) {
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = control_size;
  return msg;
}

// Receives the header with whatever fds came with it (all of them owned,
// so that a refusal closes them). Returns the header bytes received.
std::size_t receive_header(int sock, WireHeader& header,
                           std::vector<UniqueFd>& fds, bool& truncated) {
  // Room for a few fds: more than one is refused, but they must be seen
  // (and closed) rather than silently leaked into our fd table.
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)] = {};
  iovec iov{&header, sizeof header};
  msghdr msg = header_message(iov, control, sizeof control);
  ssize_t n = 0;
  do {
    n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) os_failure(kReceive, "recvmsg");
  TESSEL_CHECK(n > 0, IoFailure, kReceive,
               "the peer closed the socket before sending a tensor");
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr;
       c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      fds.emplace_back(fd);
    }
  }
  truncated = (msg.msg_flags & MSG_CTRUNC) != 0;
  return static_cast<std::size_t>(n);
}

[[noreturn]] void refuse(const std::string& why) {
  detail::fail(ErrorCode::MalformedFile, kReceive, "{}", why);
}

// Checks the fd against the descriptor before anything is mapped.
void validate_fd(int fd, ShareMode mode, const TensorDescriptor& d) {
  const int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0) refuse("the fd is not a sealable memfd");
  if ((seals & F_SEAL_SHRINK) == 0) {
    refuse("the memfd is not sealed against shrinking (F_SEAL_SHRINK)");
  }
  const bool write_sealed = (seals & F_SEAL_WRITE) != 0;
  if (mode == ShareMode::ReadWrite && write_sealed) {
    refuse("a read-write share arrived with a write-sealed memfd");
  }
  if (mode == ShareMode::ReadOnly && !write_sealed) {
    refuse("a read-only share arrived without F_SEAL_WRITE");
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) os_failure(kReceive, "fstat");
  if (!S_ISREG(st.st_mode)) refuse("the fd is not a regular file");
  if (d.total_bytes < 0 || d.total_bytes > st.st_size) {
    refuse(fmt::format("the descriptor needs {} bytes but the memfd holds {}",
                       d.total_bytes, static_cast<std::int64_t>(st.st_size)));
  }
  // The zero-copy record, when the sender wrote one, must describe this fd.
  if (const auto& h = d.buffer_handle) {
    if (h->type != "memfd") {
      refuse(fmt::format("buffer_handle.type is '{}'; tessel shares memfds",
                         h->type));
    }
    if (h->size_bytes != static_cast<std::int64_t>(st.st_size)) {
      refuse(
          fmt::format("buffer_handle.size_bytes is {} but the memfd holds "
                      "{} bytes",
                      h->size_bytes, static_cast<std::int64_t>(st.st_size)));
    }
    const char* want = mode == ShareMode::ReadOnly ? "read_only" : "read_write";
    if (h->permissions != want) {
      refuse(fmt::format("buffer_handle.permissions is {} for a {} share",
                         h->permissions, want));
    }
  }
}

}  // namespace

SharedTensor share_memfd(const Tensor& t, ShareMode mode) {
  TESSEL_CHECK(t.defined(), BadShape, kShare, "the tensor is undefined");
  TESSEL_CHECK(t.device().is_cpu(), DeviceMismatch, kShare,
               "only CPU tensors can be shared, not one on {}",
               t.device().str());
  const std::int64_t nbytes = t.nbytes();
  const std::string label = "tessel:" + t.name();
  UniqueFd fd(memfd_create(label.c_str(), MFD_ALLOW_SEALING | MFD_CLOEXEC));
  if (fd.get() < 0) os_failure(kShare, "memfd_create");
  if (ftruncate(fd.get(), static_cast<off_t>(nbytes)) != 0) {
    os_failure(kShare, "ftruncate");
  }
  Storage mapping = Storage::map_shared_fd(fd.get(), nbytes, true);
  copy_into(t, mapping);
  constexpr int kSizeSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
  if (mode == ShareMode::ReadOnly) {
    // F_SEAL_WRITE fails (EBUSY) while a writable shared mapping exists:
    // unmap the one we wrote through first, then seal, then map read-only.
    mapping = Storage();
    add_seals(fd.get(), kSizeSeals | F_SEAL_WRITE);
    mapping = map_read_only(fd.get(), nbytes);
  } else {
    add_seals(fd.get(), kSizeSeals);
  }
  SharedTensor share;
  share.tensor = Tensor(std::move(mapping), t.shape(), {}, 0, t.dtype());
  share.tensor.set_name(t.name());
  TensorDescriptor d = describe(share.tensor);
  // The standard's zero-copy record. No address is written: the peer maps
  // the memfd where it likes, and this process's layout is none of its
  // business.
  d.buffer_handle =
      BufferHandle{"memfd", fd.get(), nbytes,
                   mode == ShareMode::ReadOnly ? "read_only" : "read_write"};
  d.mapping = BufferMapping{std::nullopt, std::nullopt, "host"};
  share.descriptor_json = to_json(d, -1);
  share.mode = mode;
  share.fd = std::move(fd);
  return share;
}

void send_shared(int unix_socket, const SharedTensor& share) {
  WireHeader header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.version = kWireVersion;
  header.json_bytes = share.descriptor_json.size();
  header.mode = static_cast<std::uint32_t>(share.mode);
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{&header, sizeof header};
  msghdr msg = header_message(iov, control, sizeof control);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  const int fd = share.fd.get();
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  ssize_t n = 0;
  do {
    n = ::sendmsg(unix_socket, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) os_failure(kSend, "sendmsg");
  // A stream socket may take part of the header; the fd went with it.
  const auto sent = static_cast<std::size_t>(n);
  send_all(unix_socket, reinterpret_cast<const char*>(&header) + sent,
           sizeof header - sent);
  send_all(unix_socket, share.descriptor_json.data(),
           share.descriptor_json.size());
}

Tensor send_tensor(int unix_socket, const Tensor& t, ShareMode mode) {
  SharedTensor share = share_memfd(t, mode);
  send_shared(unix_socket, share);
  return share.tensor;
}

SharedTensor receive_shared(int unix_socket, std::optional<ShareMode> expect) {
  WireHeader header{};
  std::vector<UniqueFd> fds;
  bool truncated = false;
  const std::size_t got = receive_header(unix_socket, header, fds, truncated);
  receive_all(unix_socket, reinterpret_cast<char*>(&header) + got,
              sizeof header - got);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) {
    refuse("the message is not a tessel shared tensor (bad magic)");
  }
  if (header.version != kWireVersion) {
    refuse(fmt::format("unsupported message version {}", header.version));
  }
  if (truncated || fds.size() != 1) {
    refuse(fmt::format("expected exactly one fd with the message, got {}{}",
                       fds.size(), truncated ? " and more (truncated)" : ""));
  }
  if (header.mode > static_cast<std::uint32_t>(ShareMode::ReadWrite)) {
    refuse(fmt::format("unknown share mode {}", header.mode));
  }
  const auto mode = static_cast<ShareMode>(header.mode);
  if (expect && *expect != mode) {
    refuse(mode == ShareMode::ReadOnly
               ? "expected a read-write share, got a read-only one"
               : "expected a read-only share, got a read-write one");
  }
  if (header.json_bytes > kMaxShareDescriptorBytes) {
    refuse(fmt::format("the descriptor claims {} bytes; the limit is {}",
                       header.json_bytes, kMaxShareDescriptorBytes));
  }
  std::string json(static_cast<std::size_t>(header.json_bytes), '\0');
  receive_all(unix_socket, json.data(), json.size());
  const TensorDescriptor d = descriptor_from_json(json);
  if (d.symbolic()) refuse("the descriptor has symbolic dimensions");
  if (!d.device || !d.device->is_cpu())
    refuse("the descriptor names a non-CPU device");
  if (d.big_endian) refuse("shared memory holds native (little-endian) data");
  validate_fd(fds[0].get(), mode, d);

  SharedTensor share;
  Storage storage =
      mode == ShareMode::ReadWrite
          ? Storage::map_shared_fd(fds[0].get(), d.total_bytes, true)
          : map_read_only(fds[0].get(), d.total_bytes);
  share.tensor = tensor_from_descriptor(d, storage);
  // The descriptor as true here: the fd's number in this process.
  TensorDescriptor local = d;
  if (local.buffer_handle) local.buffer_handle->fd = fds[0].get();
  share.descriptor_json = to_json(local, -1);
  share.mode = mode;
  share.fd = std::move(fds[0]);
  return share;
}

Tensor receive_tensor(int unix_socket, std::optional<ShareMode> expect) {
  return receive_shared(unix_socket, expect).tensor;
}

#else  // not Linux: memfd and SCM_RIGHTS are Linux facilities here

UniqueFd::~UniqueFd() = default;

namespace {
[[noreturn]] void unsupported(const char* op) {
  detail::fail(ErrorCode::IoFailure, op,
               "shared-memory tensors are not supported on this platform "
               "(they need Linux memfd and SCM_RIGHTS)");
}
}  // namespace

SharedTensor share_memfd(const Tensor&, ShareMode) {
  unsupported("share_memfd");
}
void send_shared(int, const SharedTensor&) { unsupported("send_tensor"); }
Tensor send_tensor(int, const Tensor&, ShareMode) {
  unsupported("send_tensor");
}
SharedTensor receive_shared(int, std::optional<ShareMode>) {
  unsupported("receive_tensor");
}
Tensor receive_tensor(int, std::optional<ShareMode>) {
  unsupported("receive_tensor");
}

#endif

}  // namespace tessel
