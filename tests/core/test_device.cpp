#include <gtest/gtest.h>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

TEST(Device, NamesAndParsing) {
  EXPECT_EQ(Device::cpu().str(), "cpu");
  EXPECT_EQ(Device::cuda(1).str(), "cuda:1");
  EXPECT_EQ(parse_device("cpu"), Device::cpu());
  EXPECT_EQ(parse_device("cuda"), Device::cuda(0));
  EXPECT_EQ(parse_device("cuda:3"), Device::cuda(3));
  EXPECT_TESSEL_ERROR(parse_device("tpu"), "E2501", "'tpu'");
  EXPECT_TESSEL_ERROR(parse_device("cuda:x"), "E2501");
}

TEST(Device, CpuIsAlwaysAvailable) {
  EXPECT_TRUE(device_available(Device::cpu()));
  ASSERT_FALSE(available_devices().empty());
  EXPECT_EQ(available_devices().front(), Device::cpu());
  EXPECT_EQ(current_device(), Device::cpu());
}

TEST(Device, UnavailableDeviceIsE2501) {
  ASSERT_FALSE(device_available(Device::cuda(0)));  // no CUDA in this build
  EXPECT_TESSEL_ERROR(DeviceGuard guard(Device::cuda(0)), "E2501", "cuda:0",
                      "unavailable");
  EXPECT_EQ(current_device(), Device::cpu());
  const Tensor t = zeros({2});
  EXPECT_TESSEL_ERROR(t.to(Device::cuda(0)), "E2501", "[to]", "cuda:0");
  EXPECT_TESSEL_ERROR(Storage::allocate(16, Device::cuda(0)), "E2501");
}

TEST(Device, GuardRestoresPreviousDevice) {
  {
    DeviceGuard guard(Device::cpu());
    EXPECT_EQ(current_device(), Device::cpu());
    const Tensor t = ones({3});
    EXPECT_EQ(t.device(), Device::cpu());
  }
  EXPECT_EQ(current_device(), Device::cpu());
}

TEST(Device, ToSameDeviceIsTheSameTensor) {
  const Tensor t = ones({3});
  EXPECT_TRUE(t.to(Device::cpu()).shares_storage_with(t));
}

TEST(Device, CopyBetweenDevicesIsE2501) {
  // A borrowed buffer that claims to be on cuda:0 (as DLPack import would).
  float fake[2] = {0, 0};
  const Tensor gpu(Storage::borrow(fake, sizeof fake, Device::cuda(0), {}), {2},
                   {}, 0, DType::F32);
  Tensor cpu_tensor = zeros({2});
  EXPECT_TESSEL_ERROR(cpu_tensor.copy_(gpu), "E2501", "[copy_]", "cuda:0",
                      "cpu");
}

}  // namespace
}  // namespace tessel
