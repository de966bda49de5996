// The parts of the process-group layer that do not depend on the engine:
// operand checks, check_agreement, the group of one, and world().
#include "tessel/dist/process_group.hpp"

#include <cstdlib>
#include <map>
#include <vector>

#include "core/check.hpp"
#include "dist/collective_checks.hpp"
#include "dist/mpi_group.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel::dist {

namespace detail {

void check_operand(const char* op, const Tensor& t) {
  TESSEL_CHECK(t.defined(), BadShape, op, "the tensor is undefined");
  TESSEL_CHECK(t.device().is_cpu(), DeviceMismatch, op,
               "this group's engine (MPI) moves CPU tensors, not one on {}",
               t.device().str());
  TESSEL_CHECK(t.is_contiguous(), NotContiguous, op,
               "needs a contiguous tensor (shape {}, strides {}); collectives "
               "work in place on its buffer",
               shape_string(t.shape()), shape_string(t.strides()));
  TESSEL_CHECK(is_byte_addressable(t.dtype()), BadDType, op,
               "{} tensors are packed or block-quantised; dequantise first",
               dtype_name(t.dtype()));
}

void check_reducible(const Tensor& t, ReduceOp op) {
  const DType d = t.dtype();
  TESSEL_CHECK(d != DType::Bool, BadDType, "all_reduce",
               "bool tensors have no sum or mean (convert to an integer)");
  TESSEL_CHECK(!is_complex(d) || op == ReduceOp::Sum || op == ReduceOp::Mean,
               BadDType, "all_reduce", "complex tensors have no maximum");
  TESSEL_CHECK(op != ReduceOp::Mean || is_floating_point(d) || is_complex(d),
               BadDType, "all_reduce",
               "the mean of {} tensors is not a {} (reduce with Sum and "
               "divide in a float dtype)",
               dtype_name(d), dtype_name(d));
}

void check_root(int root, int world_size) {
  TESSEL_CHECK(root >= 0 && root < world_size, OutOfRange, "broadcast",
               "root {} is not a rank of a group of {}", root, world_size);
}

}  // namespace detail

namespace {

// One process: every collective is the identity (after the same checks).
class SingleProcessGroup final : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  std::string backend() const override { return "single"; }
  void all_reduce(const Tensor& t, ReduceOp op) override {
    detail::check_operand("all_reduce", t);
    detail::check_reducible(t, op);
  }
  void broadcast(const Tensor& t, int root) override {
    detail::check_operand("broadcast", t);
    detail::check_root(root, 1);
  }
  Tensor all_gather(const Tensor& t) override {
    detail::check_operand("all_gather", t);
    return t.unsqueeze(0).clone();
  }
  void barrier() override {}
};

}  // namespace

void ProcessGroup::check_agreement(std::string_view what,
                                   std::string_view value) {
  Digest digest;
  digest.update(value);
  const Tensor mine = from_vector<std::uint64_t>(
      {digest.value(), static_cast<std::uint64_t>(value.size())});
  const Tensor all = all_gather(mine);
  // Ranks grouped by what they hold, in rank order: every rank computes
  // the same groups from the same gathered data, so all of them throw.
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<int>> groups;
  for (int r = 0; r < world_size(); ++r) {
    groups[{all.at<std::uint64_t>({r, 0}), all.at<std::uint64_t>({r, 1})}]
        .push_back(r);
  }
  if (groups.size() <= 1) return;
  std::string split;
  for (const auto& [key, ranks] : groups) {
    if (!split.empty()) split += "; ";
    split += "ranks";
    for (const int r : ranks) split += " " + std::to_string(r);
  }
  tessel::detail::fail(ErrorCode::BadConfig, "check_agreement",
                       "{} differs between the ranks of this job ({}); "
                       "this is rank {} of {}",
                       what, split, rank(), world_size());
}

bool launched_distributed() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

ProcessGroup& world() {
  static const std::unique_ptr<ProcessGroup> group =
      launched_distributed()
          ? std::unique_ptr<ProcessGroup>(detail::make_mpi_world())
          : std::unique_ptr<ProcessGroup>(new SingleProcessGroup());
  return *group;
}

}  // namespace tessel::dist
