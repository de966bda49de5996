#include "tessel/core/device.hpp"

#include <charconv>
#include <ostream>

#include "core/check.hpp"

namespace tessel {

namespace {
thread_local Device t_current_device = Device::cpu();
}

std::string Device::str() const {
  if (is_meta()) return "meta";
  return is_cpu() ? std::string("cpu") : fmt::format("cuda:{}", index);
}

Device parse_device(const std::string& text) {
  if (text == "cpu") return Device::cpu();
  if (text == "meta") return Device::meta();
  if (text == "cuda") return Device::cuda(0);
  if (text.rfind("cuda:", 0) == 0) {
    int index = -1;
    const char* first = text.data() + 5;
    const char* last = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(first, last, index);
    if (ec == std::errc() && ptr == last && first != last && index >= 0) {
      return Device::cuda(index);
    }
  }
  detail::fail(ErrorCode::DeviceMismatch, "parse_device",
               "'{}' is not a device; expected 'cpu', 'cuda:N' or 'meta'",
               text);
}

// This build has the CPU and meta backends; the CUDA backend reports its
// devices here when it is compiled in.
bool device_available(Device device) {
  return device.is_cpu() || device.is_meta();
}

std::vector<Device> available_devices() { return {Device::cpu()}; }

void require_device(Device device, const char* op) {
  TESSEL_CHECK(device_available(device), DeviceMismatch, op,
               "device {} is unavailable: this build of tessel has no CUDA "
               "backend",
               device.str());
}

Device current_device() { return t_current_device; }

DeviceGuard::DeviceGuard(Device device) : previous_(t_current_device) {
  require_device(device, "DeviceGuard");
  t_current_device = device;
}

DeviceGuard::~DeviceGuard() { t_current_device = previous_; }

std::ostream& operator<<(std::ostream& os, Device device) {
  return os << device.str();
}

}  // namespace tessel
