// The backend seam (Note [backend seam]): a backend that lacks a kernel
// raises E2501 naming the op and the backend, and a device without a
// backend raises E2501 naming the op and the device; never a crash or a
// silent fallback to another device.
#include <gtest/gtest.h>

#include <vector>

#include "backends/backend.hpp"
#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

// A backend with no kernels at all: every method keeps its default.
class BareBackend final : public Backend {
 public:
  const char* name() const override { return "bare"; }
};

TEST(BackendSeam, AMissingKernelIsE2501NamingTheOpAndTheBackend) {
  const BareBackend bare;
  const Tensor x = zeros({2});
  EXPECT_TESSEL_ERROR(bare.unary(UnaryOp::Exp, {}, x, x), "E2501", "[unary]",
                      "bare");
  EXPECT_TESSEL_ERROR(bare.matmul(x, x, nullptr, x), "E2501", "[matmul]",
                      "bare");
  EXPECT_TESSEL_ERROR(bare.attention({}, x, x, x, Tensor(), x), "E2501",
                      "[attention]", "bare");
}

TEST(BackendSeam, EachDeviceOfThisBuildHasItsBackend) {
  EXPECT_STREQ(backend_for(Device::cpu(), "test").name(), "cpu");
  EXPECT_STREQ(backend_for(Device::meta(), "test").name(), "meta");
  EXPECT_TRUE(backend_for(Device::cpu(), "test").has_data());
  EXPECT_FALSE(backend_for(Device::meta(), "test").has_data());
  EXPECT_TESSEL_ERROR(backend_for(Device::cuda(0), "exp"), "E2501", "[exp]",
                      "cuda:0");
}

// The CPU backend holds the thread team for a decode step only where every
// matrix takes one of its own kernels (oneDNN would get one thread inside
// the held region); other backends run the step as a call.
TEST(BackendSeam, DecodeStepsHoldTheTeamOnlyForTesselsOwnKernels) {
  set_num_threads(2);
  const Backend& cpu = backend_for(Device::cpu(), "test");
  const auto held_for = [&](std::vector<DType> dtypes) {
    bool held = false;
    cpu.run_decode_step(dtypes, [&] { held = holding_team(); });
    return held;
  };
  EXPECT_TRUE(held_for({DType::F32, DType::BF16, DType::F16}));
  EXPECT_TRUE(held_for({DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q5_K,
                        DType::Q6_K, DType::IQ4_XS, DType::F32}));
  EXPECT_FALSE(held_for({DType::Q4_K, DType::Q3_K}));
  EXPECT_FALSE(held_for({DType::Q4_1}));
  EXPECT_FALSE(held_for({DType::F64}));
  bool ran = false;
  backend_for(Device::meta(), "test")
      .run_decode_step(std::vector<DType>{DType::F32}, [&] {
        ran = true;
        EXPECT_FALSE(holding_team());
      });
  EXPECT_TRUE(ran);
  set_num_threads(1);
  EXPECT_FALSE(held_for({DType::F32}));  // one thread: nothing to hold
}

}  // namespace
}  // namespace tessel
