// ProcessGroup over MPI_COMM_WORLD. MPI returns errors instead of aborting
// (MPI_ERRORS_RETURN), and each becomes E3002 naming the collective, the
// rank and the world size. 16-bit and 8-bit floats reduce in f32 (MPI has
// no such types, and an f32 sum rounded once is what a bf16 user wants);
// broadcast and all_gather move bytes, whatever the dtype.
#include <mpi.h>

#include <climits>
#include <cstdint>
#include <cstdlib>

#include "core/check.hpp"
#include "dist/collective_checks.hpp"
#include "dist/mpi_group.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel::dist::detail {

namespace {

// MPI counts are ints: larger buffers go in chunks of this many elements.
constexpr std::int64_t kMaxCount = INT_MAX / 2;

class MpiProcessGroup final : public ProcessGroup {
 public:
  MpiProcessGroup() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      // Collectives are issued by one thread at a time; kernels inside
      // tessel use their own OpenMP team, which never calls MPI.
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided),
            "init");
      std::atexit([] {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized) MPI_Finalize();
      });
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }

  int rank() const override { return rank_; }
  int world_size() const override { return size_; }
  std::string backend() const override { return "mpi"; }

  void all_reduce(const Tensor& t, ReduceOp op) override {
    check_operand("all_reduce", t);
    check_reducible(t, op);
    const DType d = t.dtype();
    const bool widen =
        is_floating_point(d) && d != DType::F32 && d != DType::F64;
    // The buffer MPI reduces: the tensor itself, or its f32 copy.
    Tensor work = widen ? t.to(DType::F32) : t;
    const MPI_Datatype type = datatype(work.dtype());
    const MPI_Op mpi_op = op == ReduceOp::Max ? MPI_MAX : MPI_SUM;
    for_each_chunk(work, element_size(work.dtype()), [&](void* p, int count) {
      check(MPI_Allreduce(MPI_IN_PLACE, p, count, type, mpi_op, MPI_COMM_WORLD),
            "all_reduce");
    });
    if (op == ReduceOp::Mean) div_(work, size_);
    if (widen) Tensor(t).copy_(work);  // rounds once
  }

  void broadcast(const Tensor& t, int root) override {
    check_operand("broadcast", t);
    check_root(root, size_);
    for_each_chunk(t, 1, [&](void* p, int count) {
      check(MPI_Bcast(p, count, MPI_BYTE, root, MPI_COMM_WORLD), "broadcast");
    });
  }

  Tensor all_gather(const Tensor& t) override {
    check_operand("all_gather", t);
    Shape shape = t.shape();
    shape.insert(0, size_);
    Tensor out = empty(shape, t.dtype());
    const std::int64_t bytes = t.nbytes();
    if (bytes == 0) return out;
    TESSEL_CHECK(bytes <= INT_MAX, SizeOverflow, "all_gather",
                 "{} bytes per rank is more than one MPI call moves", bytes);
    check(MPI_Allgather(t.raw_data(), static_cast<int>(bytes), MPI_BYTE,
                        out.mutable_raw_data(), static_cast<int>(bytes),
                        MPI_BYTE, MPI_COMM_WORLD),
          "all_gather");
    return out;
  }

  void barrier() override { check(MPI_Barrier(MPI_COMM_WORLD), "barrier"); }

 private:
  void check(int rc, const char* op) const {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(rc, text, &length);
    tessel::detail::fail(ErrorCode::IoFailure, op,
                         "MPI failed on rank {} of {}: {}", rank_, size_,
                         std::string(text, static_cast<std::size_t>(length)));
  }

  // The (writable) buffer in pieces MPI's int counts can hold, counted in
  // units of `unit` bytes (an element, or 1 for bytes).
  template <class F>
  static void for_each_chunk(const Tensor& t, std::int64_t unit, F f) {
    auto* base = static_cast<std::byte*>(Tensor(t).mutable_raw_data());
    const std::int64_t n = t.nbytes() / unit;
    for (std::int64_t at = 0; at < n; at += kMaxCount) {
      f(base + at * unit, static_cast<int>(std::min(kMaxCount, n - at)));
    }
  }

  static MPI_Datatype datatype(DType d) {
    switch (d) {
      case DType::F32: return MPI_FLOAT;
      case DType::F64: return MPI_DOUBLE;
      case DType::C64: return MPI_C_FLOAT_COMPLEX;
      case DType::C128: return MPI_C_DOUBLE_COMPLEX;
      case DType::I8: return MPI_INT8_T;
      case DType::U8: return MPI_UINT8_T;
      case DType::I16: return MPI_INT16_T;
      case DType::U16: return MPI_UINT16_T;
      case DType::I32: return MPI_INT32_T;
      case DType::U32: return MPI_UINT32_T;
      case DType::I64: return MPI_INT64_T;
      case DType::U64: return MPI_UINT64_T;
      default: break;
    }
    TESSEL_ASSERT(false && "a dtype check_reducible lets through");
    return MPI_DATATYPE_NULL;
  }

  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<ProcessGroup> make_mpi_world() {
  return std::make_unique<MpiProcessGroup>();
}

}  // namespace tessel::dist::detail
