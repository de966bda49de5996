// The second process of the shared-memory tests (test_shared_memory.cpp
// spawns it): `shm_peer <scenario> <socket fd>`. Exits 0 when every check
// of the scenario holds, else prints what failed and exits 1.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "shm_peer: FAILED: %s (errno %s)\n", what,
                 std::strerror(errno));
    ++failures;
  }
}

void send_byte(int sock, char c) {
  check(::write(sock, &c, 1) == 1, "write ack");
}

char receive_byte(int sock) {
  char c = 0;
  check(::read(sock, &c, 1) == 1, "read go-ahead");
  return c;
}

std::vector<float> floats(const tessel::Tensor& t) {
  const tessel::Tensor c = t.contiguous();
  return {c.const_data<float>(), c.const_data<float>() + c.numel()};
}

// The parent shares transpose(arange(6).reshape(2, 3)) read-write: we see
// its values, write ours, and then see the parent's write.
void read_write(int sock) {
  tessel::Tensor t = tessel::receive_tensor(sock, tessel::ShareMode::ReadWrite);
  check(t.shape() == tessel::Shape{3, 2}, "shape (3, 2)");
  check(floats(t) == std::vector<float>{0, 3, 1, 4, 2, 5}, "values");
  check(t.storage().origin() == tessel::StorageOrigin::SharedMemory,
        "origin shared-memory");
  check(t.storage().writable(), "writable");
  float* p = t.data<float>();
  for (int i = 0; i < 6; ++i) p[i] = 100.0f + static_cast<float>(i);
  send_byte(sock, 'W');
  check(receive_byte(sock) == 'P', "parent wrote");
  check(p[0] == -1.0f, "the parent's write is visible");
}

// The parent shares read-only: nothing we try may change the bytes.
void read_only(int sock) {
  tessel::SharedTensor s =
      tessel::receive_shared(sock, tessel::ShareMode::ReadOnly);
  tessel::Tensor& t = s.tensor;
  const std::vector<float> want = {0, 1, 2, 3, 4, 5};
  check(floats(t) == want, "values");
  check(!t.storage().writable(), "storage not writable");
  bool refused = false;
  try {
    t.data<float>()[0] = 7;
  } catch (const tessel::Error& e) {
    refused = std::string(e.code()) == "E3002";
  }
  check(refused, "writing through the API gives E3002");
  void* page = const_cast<void*>(t.storage().data());
  const long page_size = sysconf(_SC_PAGESIZE);
  check(mprotect(page, static_cast<std::size_t>(page_size),
                 PROT_READ | PROT_WRITE) != 0,
        "mprotect(PROT_WRITE) is refused");
  const int fd = s.fd.get();
  check(fcntl(fd, F_GET_SEALS) & F_SEAL_WRITE, "F_SEAL_WRITE is set");
  check(ftruncate(fd, 0) != 0, "ftruncate(0) is refused");
  check(ftruncate(fd, 1 << 20) != 0, "ftruncate(grow) is refused");
  const float seven = 7;
  check(pwrite(fd, &seven, sizeof seven, 0) < 0, "pwrite is refused");
  void* w = mmap(nullptr, 24, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  check(w == MAP_FAILED, "a writable shared mapping is refused");
  check(fcntl(fd, F_ADD_SEALS, F_SEAL_GROW) != 0,
        "no seal can be added any more (F_SEAL_SEAL)");
  check(floats(t) == want, "values unchanged after every attempt");
  send_byte(sock, 'R');
}

// The parent sends a descriptor claiming more bytes than the memfd holds.
void hostile(int sock) {
  std::string code;
  try {
    tessel::receive_tensor(sock);
  } catch (const tessel::Error& e) {
    code = e.code();
    std::fprintf(stderr, "shm_peer: refused as expected: %s\n", e.what());
  }
  check(code == "E3001", "an oversized descriptor is refused with E3001");
  send_byte(sock, 'H');
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: shm_peer rw|ro|hostile <socket fd>\n");
    return 2;
  }
  const std::string scenario = argv[1];
  const int sock = std::atoi(argv[2]);
  try {
    if (scenario == "rw") {
      read_write(sock);
    } else if (scenario == "ro") {
      read_only(sock);
    } else if (scenario == "hostile") {
      hostile(sock);
    } else {
      std::fprintf(stderr, "shm_peer: unknown scenario %s\n", argv[1]);
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shm_peer: unexpected exception: %s\n", e.what());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
