#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

extern char** environ;

namespace tessel {
namespace {

using testing::values;

// A connected pair of stream sockets, closed on destruction.
struct SocketPair {
  UniqueFd a, b;
  SocketPair() {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    a = UniqueFd(sv[0]);
    b = UniqueFd(sv[1]);
  }
};

int open_fd_count() {
  int n = 0;
  for ([[maybe_unused]] const auto& e :
       std::filesystem::directory_iterator("/proc/self/fd")) {
    ++n;
  }
  return n;
}

int seals_of(int fd) { return fcntl(fd, F_GET_SEALS); }

// The wire header of shared_memory.cpp, to forge hostile messages.
struct WireHeader {
  char magic[4] = {'T', 'S', 'H', 'M'};
  std::uint32_t version = 1;
  std::uint64_t json_bytes = 0;
  std::uint32_t mode = 1;
  std::uint32_t reserved = 0;
};

// Sends `header` with `fds` attached, then `body`.
void send_raw(int sock, const WireHeader& header, std::vector<int> fds,
              const std::string& body) {
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()) + 1);
  iovec iov{const_cast<WireHeader*>(&header), sizeof header};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ASSERT_EQ(sendmsg(sock, &msg, 0), static_cast<ssize_t>(sizeof header));
  if (!body.empty()) {
    ASSERT_EQ(send(sock, body.data(), body.size(), 0),
              static_cast<ssize_t>(body.size()));
  }
}

TEST(SharedMemory, SharesAViewAsARowMajorSealedMemfd) {
  const Tensor base = arange(6, DType::F32).reshape({2, 3});
  SharedTensor s = share_memfd(base.transpose(0, 1), ShareMode::ReadWrite);
  EXPECT_EQ(s.tensor.shape(), (Shape{3, 2}));
  EXPECT_TRUE(s.tensor.is_contiguous());
  EXPECT_EQ(values<float>(s.tensor), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(s.tensor.storage().origin(), StorageOrigin::SharedMemory);
  EXPECT_FALSE(s.tensor.shares_storage_with(base));  // copied once
  struct stat st {};
  ASSERT_EQ(fstat(s.fd.get(), &st), 0);
  EXPECT_EQ(st.st_size, 24);
  const int seals = seals_of(s.fd.get());
  EXPECT_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  EXPECT_EQ(seals & F_SEAL_WRITE, 0);
  EXPECT_EQ(fcntl(s.fd.get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  const TensorDescriptor d = descriptor_from_json(s.descriptor_json);
  EXPECT_EQ(d.shape(), (Shape{3, 2}));
  EXPECT_EQ(d.total_bytes, 24);
  EXPECT_EQ(d.offset_bytes, 0);
  // The format standard's zero-copy record for this memfd.
  ASSERT_TRUE(d.buffer_handle.has_value());
  EXPECT_EQ(d.buffer_handle->type, "memfd");
  EXPECT_EQ(d.buffer_handle->fd, s.fd.get());
  EXPECT_EQ(d.buffer_handle->size_bytes, 24);
  EXPECT_EQ(d.buffer_handle->permissions, "read_write");
  ASSERT_TRUE(d.mapping.has_value());
  EXPECT_EQ(d.mapping->access_mode, "host");
  EXPECT_FALSE(d.mapping->cpu_address.has_value());  // no address leaks
}

TEST(SharedMemory, ReadOnlyShareIsWriteSealed) {
  SharedTensor s = share_memfd(arange(4, DType::I32), ShareMode::ReadOnly);
  EXPECT_EQ(seals_of(s.fd.get()) & F_SEAL_WRITE, F_SEAL_WRITE);
  EXPECT_FALSE(s.tensor.storage().writable());
  EXPECT_TESSEL_ERROR(s.tensor.data<std::int32_t>(), "E3002", "read-only");
  const std::int32_t v = 9;
  errno = 0;
  EXPECT_LT(pwrite(s.fd.get(), &v, sizeof v, 0), 0);
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(ftruncate(s.fd.get(), 0), 0);
  EXPECT_EQ(
      mmap(nullptr, 16, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd.get(), 0),
      MAP_FAILED);
  EXPECT_EQ(values<std::int32_t>(s.tensor),
            (std::vector<std::int32_t>{0, 1, 2, 3}));
}

TEST(SharedMemory, ReceiveMapsTheSameMemoryWithoutACopy) {
  SocketPair p;
  Tensor producer = send_tensor(p.a.get(), arange(5, DType::F64));
  Tensor consumer = receive_tensor(p.b.get(), ShareMode::ReadWrite);
  EXPECT_EQ(consumer.storage().origin(), StorageOrigin::SharedMemory);
  EXPECT_TRUE(consumer.storage().writable());
  EXPECT_EQ(values<double>(consumer), (std::vector<double>{0, 1, 2, 3, 4}));
  // Two mappings of one memfd: a write through either shows in the other.
  consumer.data<double>()[2] = 42;
  EXPECT_EQ(producer.const_data<double>()[2], 42.0);
  producer.data<double>()[4] = -1;
  EXPECT_EQ(consumer.const_data<double>()[4], -1.0);
}

// The receiver's descriptor is true in the receiver: its own fd number.
TEST(SharedMemory, ReceivedHandleNamesTheReceiversFd) {
  SocketPair p;
  send_tensor(p.a.get(), arange(3, DType::I64), ShareMode::ReadOnly);
  const SharedTensor got = receive_shared(p.b.get(), ShareMode::ReadOnly);
  const TensorDescriptor d = descriptor_from_json(got.descriptor_json);
  ASSERT_TRUE(d.buffer_handle.has_value());
  EXPECT_EQ(d.buffer_handle->fd, got.fd.get());
  EXPECT_EQ(d.buffer_handle->permissions, "read_only");
  EXPECT_EQ(d.buffer_handle->size_bytes, 24);
}

TEST(SharedMemory, ReadOnlyReceiveGivesANonWritableStorage) {
  SocketPair p;
  send_tensor(p.a.get(), full({2, 2}, 1.5, DType::BF16), ShareMode::ReadOnly);
  Tensor t = receive_tensor(p.b.get());
  EXPECT_FALSE(t.storage().writable());
  EXPECT_EQ(t.dtype(), DType::BF16);
  EXPECT_EQ(values<double>(t.to(DType::F64)),
            (std::vector<double>{1.5, 1.5, 1.5, 1.5}));
  EXPECT_TESSEL_ERROR(t.fill_(0), "E3002", "read-only");
}

TEST(SharedMemory, EmptyAndBlockQuantisedTensorsTravel) {
  SocketPair p;
  send_tensor(p.a.get(), zeros({0, 4}, DType::I8));
  EXPECT_EQ(receive_tensor(p.b.get()).shape(), (Shape{0, 4}));
  Tensor q = empty({64}, DType::Q8_0);
  auto* bytes = static_cast<std::uint8_t*>(q.mutable_raw_data());
  for (std::int64_t i = 0; i < q.storage().nbytes(); ++i) {
    bytes[i] = static_cast<std::uint8_t>(i * 7);
  }
  send_tensor(p.a.get(), q, ShareMode::ReadOnly);
  const Tensor r = receive_tensor(p.b.get());
  EXPECT_EQ(r.dtype(), DType::Q8_0);
  EXPECT_EQ(std::memcmp(r.raw_data(), q.raw_data(), 68), 0);
}

// Receiving must refuse `send` with E3001 naming `part`, leaking no fd.
template <class Send>
void expect_refused(Send send, const char* part) {
  SocketPair p;
  const int before = open_fd_count();
  send(p.a.get());
  EXPECT_TESSEL_ERROR(receive_tensor(p.b.get()), "E3001", part);
  EXPECT_EQ(open_fd_count(), before);
}

TEST(SharedMemory, RefusesADescriptorLargerThanTheMemfd) {
  expect_refused(
      [](int sock) {
        SharedTensor s = share_memfd(arange(4, DType::F32));
        s.descriptor_json = to_json(describe(zeros({400}, DType::F32)));
        send_shared(sock, s);
      },
      "memfd holds 16");
}

// A zero-copy record that does not describe the fd it came with.
TEST(SharedMemory, RefusesAHandleThatDisagreesWithTheFd) {
  const auto forged = [](auto edit) {
    return [edit](int sock) {
      SharedTensor s = share_memfd(arange(4, DType::F32));
      TensorDescriptor d = descriptor_from_json(s.descriptor_json);
      edit(d);
      s.descriptor_json = to_json(d);
      send_shared(sock, s);
    };
  };
  expect_refused(
      forged([](TensorDescriptor& d) { d.buffer_handle->type = "dma_buf_fd"; }),
      "tessel shares memfds");
  expect_refused(
      forged([](TensorDescriptor& d) { d.buffer_handle->size_bytes = 64; }),
      "memfd holds 16 bytes");
  expect_refused(forged([](TensorDescriptor& d) {
                   d.buffer_handle->permissions = "read_only";
                 }),
                 "read_only for a read_write share");
}

TEST(SharedMemory, RefusesModesThatDisagreeWithTheSeals) {
  expect_refused(
      [](int sock) {
        SharedTensor s =
            share_memfd(arange(4, DType::F32), ShareMode::ReadOnly);
        s.mode = ShareMode::ReadWrite;
        send_shared(sock, s);
      },
      "write-sealed");
  expect_refused(
      [](int sock) {
        SharedTensor s = share_memfd(arange(4, DType::F32));
        s.mode = ShareMode::ReadOnly;
        send_shared(sock, s);
      },
      "without F_SEAL_WRITE");
  SocketPair p;
  send_tensor(p.a.get(), arange(4, DType::F32), ShareMode::ReadOnly);
  EXPECT_TESSEL_ERROR(receive_tensor(p.b.get(), ShareMode::ReadWrite), "E3001",
                      "expected a read-write share");
}

TEST(SharedMemory, RefusesFdsThatAreNotSizeSealedMemfds) {
  expect_refused(
      [](int sock) {
        UniqueFd fd(memfd_create("unsealed", MFD_CLOEXEC));
        ASSERT_EQ(ftruncate(fd.get(), 16), 0);
        SharedTensor s;
        s.fd = std::move(fd);
        s.descriptor_json = to_json(describe(zeros({4}, DType::F32)));
        send_shared(sock, s);
      },
      "F_SEAL_SHRINK");
  expect_refused(
      [](int sock) {
        int pipe_fds[2];
        ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
        SharedTensor s;
        s.fd = UniqueFd(pipe_fds[0]);
        UniqueFd other(pipe_fds[1]);
        s.descriptor_json = to_json(describe(zeros({4}, DType::F32)));
        send_shared(sock, s);
      },
      "sealable memfd");
}

TEST(SharedMemory, RefusesHostileMessages) {
  const std::string json = to_json(describe(zeros({4}, DType::F32)));
  SharedTensor good = share_memfd(zeros({4}, DType::F32));
  const int fd = good.fd.get();
  WireHeader h;
  h.json_bytes = json.size();
  expect_refused([&](int sock) { send_raw(sock, h, {}, json); },
                 "exactly one fd");
  expect_refused(
      [&](int sock) {
        send_raw(sock, h, {fd, fd}, json);
      },
      "exactly one fd");
  WireHeader huge = h;
  huge.json_bytes = std::uint64_t{1} << 40;  // never allocated
  expect_refused([&](int sock) { send_raw(sock, huge, {fd}, ""); }, "limit");
  WireHeader magic = h;
  magic.magic[0] = 'X';
  expect_refused([&](int sock) { send_raw(sock, magic, {fd}, json); },
                 "bad magic");
  WireHeader mode = h;
  mode.mode = 7;
  expect_refused([&](int sock) { send_raw(sock, mode, {fd}, json); }, "mode 7");
  WireHeader garbage = h;
  garbage.json_bytes = 5;
  expect_refused([&](int sock) { send_raw(sock, garbage, {fd}, "{nope"); }, "");
}

TEST(SharedMemory, APeerThatHangsUpIsAnIoError) {
  SocketPair p;
  const SharedTensor s = share_memfd(zeros({4}, DType::F32));
  WireHeader h;
  h.json_bytes = 100;
  send_raw(p.a.get(), h, {s.fd.get()}, "{}");
  p.a = UniqueFd();
  EXPECT_TESSEL_ERROR(receive_tensor(p.b.get()), "E3002", "closed");
}

// ---- two real processes ---------------------------------------------------

// shm_peer running `scenario` with our end of a socket pair as its fd 100.
struct Peer {
  pid_t pid = -1;
  UniqueFd sock;

  explicit Peer(const char* scenario) {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    sock = UniqueFd(sv[0]);
    UniqueFd theirs(sv[1]);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, theirs.get(), 100);
    std::string path = TESSEL_SHM_PEER;
    std::string name = scenario;
    std::string fd = "100";
    char* argv[] = {path.data(), name.data(), fd.data(), nullptr};
    EXPECT_EQ(posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, environ),
              0);
    posix_spawn_file_actions_destroy(&actions);
  }
  char read_byte() {
    char c = 0;
    EXPECT_EQ(::read(sock.get(), &c, 1), 1);
    return c;
  }
  // The peer's exit status (0: every check in it held).
  int wait() {
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

TEST(SharedMemoryPeer, ReadWriteShareIsZeroCopyBothWays) {
  Peer peer("rw");
  const Tensor base = arange(6, DType::F32).reshape({2, 3});
  Tensor mine = send_tensor(peer.sock.get(), base.transpose(0, 1));
  ASSERT_EQ(peer.read_byte(), 'W');
  // The peer wrote 100..105 into its mapping: we see it in ours.
  EXPECT_EQ(values<float>(mine),
            (std::vector<float>{100, 101, 102, 103, 104, 105}));
  EXPECT_EQ(values<float>(base), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  mine.data<float>()[0] = -1;
  const char go = 'P';
  ASSERT_EQ(::write(peer.sock.get(), &go, 1), 1);
  EXPECT_EQ(peer.wait(), 0) << "see shm_peer's messages above";
}

TEST(SharedMemoryPeer, ReadOnlyShareCannotBeWrittenByThePeer) {
  Peer peer("ro");
  const Tensor mine =
      send_tensor(peer.sock.get(), arange(6, DType::F32), ShareMode::ReadOnly);
  EXPECT_EQ(peer.read_byte(), 'R');
  EXPECT_EQ(values<float>(mine), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(peer.wait(), 0) << "see shm_peer's messages above";
}

TEST(SharedMemoryPeer, PeerRefusesAnOversizedDescriptor) {
  Peer peer("hostile");
  SharedTensor s = share_memfd(arange(6, DType::F32));
  s.descriptor_json = to_json(describe(zeros({1000, 1000}, DType::F32)));
  send_shared(peer.sock.get(), s);
  EXPECT_EQ(peer.read_byte(), 'H');
  EXPECT_EQ(peer.wait(), 0) << "see shm_peer's messages above";
}

}  // namespace
}  // namespace tessel
