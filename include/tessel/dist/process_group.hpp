// Collective communication between the processes of one job (DESIGN §3's
// distributed layer): a process group from the launcher's environment
// (`mpirun`, `srun`), its rank and size, and the collectives data-parallel
// training needs — all_reduce, broadcast, all_gather, barrier. The engine
// behind it is chosen, never written here: MPI (OpenMPI) for CPU tensors
// now; an NCCL group for GPU tensors implements the same interface, so
// callers do not change. docs/distributed.md has the design.
//
// Every rank calls every collective in the same order with tensors of the
// same shape and dtype (MPI's and NCCL's rule); check_agreement() turns a
// disagreement that would otherwise hang or corrupt into E4001 on every
// rank. Engine failures are E3002 naming the collective, the rank and the
// world size.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tessel/core/tensor.hpp"

namespace tessel::dist {

enum class ReduceOp { Sum, Mean, Max };

// 64-bit FNV-1a, fed in pieces: a digest every process computes alike
// (std::hash need not), for check_agreement's values and for data files
// too large to hold as one string.
class Digest {
 public:
  void update(std::string_view bytes) {
    for (const char c : bytes) {
      h_ ^= static_cast<unsigned char>(c);
      h_ *= 1099511628211ull;
    }
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 1469598103934665603ull;
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // "mpi", "single" (one process, no engine).
  virtual std::string backend() const = 0;

  // In place on every rank: t becomes the sum, mean or maximum over the
  // ranks' t. Float dtypes (f16 and bf16 reduce in f32 and round once, so
  // a sum over ranks rounds as one addition chain in f32 would) and
  // integers (Sum, Max; Mean is E2201 for them). t must be contiguous on
  // the CPU (E2301, E2501).
  virtual void all_reduce(const Tensor& t, ReduceOp op) = 0;
  // Every rank's t becomes root's t (E2302 for a root outside the group).
  virtual void broadcast(const Tensor& t, int root) = 0;
  // [world_size, *t.shape]: rank r's t at index r, on every rank.
  virtual Tensor all_gather(const Tensor& t) = 0;
  virtual void barrier() = 0;

  // E4001 on every rank, naming `what` and the ranks that differ, unless
  // every rank passes the same `value` (a config, a data set's checksum).
  // One all_gather of a digest and of the lengths: cheap enough for start-
  // up checks, not meant per step.
  void check_agreement(std::string_view what, std::string_view value);
};

// The process group of this job: an MPI group when a launcher started the
// process (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK in the environment),
// else a group of one. MPI is initialised on first use and finalised at
// exit; every call returns the same group.
ProcessGroup& world();
// Whether a launcher started this process as one of several.
bool launched_distributed();

}  // namespace tessel::dist
