// Devices (DESIGN §1): every tensor lives on one; factories use the calling
// thread's current device, set by a scoped DeviceGuard (CPU by default).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace tessel {

// Meta: tensors with shape, dtype and strides but no data (PyTorch's meta
// device); every op runs its rules on them and allocates nothing.
enum class DeviceType : std::uint8_t { CPU, CUDA, Meta };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;

  static constexpr Device cpu() { return {DeviceType::CPU, 0}; }
  static constexpr Device cuda(int i = 0) { return {DeviceType::CUDA, i}; }
  static constexpr Device meta() { return {DeviceType::Meta, 0}; }
  constexpr bool is_cpu() const { return type == DeviceType::CPU; }
  constexpr bool is_cuda() const { return type == DeviceType::CUDA; }
  constexpr bool is_meta() const { return type == DeviceType::Meta; }
  friend constexpr bool operator==(Device a, Device b) {
    return a.type == b.type && a.index == b.index;
  }
  // "cpu", "cuda:0", "meta".
  std::string str() const;
};

// Parses "cpu", "cuda", "cuda:1", "meta"; E2501 on anything else.
Device parse_device(const std::string& text);

// Whether this build and machine can allocate on `device`.
bool device_available(Device device);
// CPU first, then every usable accelerator.
std::vector<Device> available_devices();
// Throws E2501 naming `op` when `device` is unavailable.
void require_device(Device device, const char* op);

Device current_device();

// Makes `device` current for this thread until destruction; E2501 if it is
// unavailable.
class DeviceGuard {
 public:
  explicit DeviceGuard(Device device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  Device previous_;
};

std::ostream& operator<<(std::ostream& os, Device device);

}  // namespace tessel
