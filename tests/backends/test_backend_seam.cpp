// The backend seam (Note [backend seam]): a backend that lacks a kernel
// raises E2501 naming the op and the backend, and a device without a
// backend raises E2501 naming the op and the device; never a crash or a
// silent fallback to another device.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tessel
