// Tensor factories: NumPy's names and arguments (shape first, dtype=),
// tessel's defaults (float32 for floats, int64 for ints), and asarray, the
// one door from other Python objects into tessel.
#include <nanobind/stl/optional.h>

#include "bindings.hpp"

namespace tessel::python {

namespace {

DType dtype_or(nb::handle dtype, DType fallback) {
  return dtype.is_none() ? fallback : to_dtype(dtype);
}

Device device_or_cpu(nb::handle device) {
  return device.is_none() ? Device::cpu() : parse_device(python_str(device));
}

}  // namespace

void bind_factories(nb::module_& m) {
  m.def(
      "empty",
      [](nb::handle shape, nb::handle dtype, nb::handle device) {
        return empty(to_shape(shape), dtype_or(dtype, DType::F32),
                     device_or_cpu(device));
      },
      nb::arg("shape"), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), "An uninitialised tensor.");
  m.def(
      "zeros",
      [](nb::handle shape, nb::handle dtype, nb::handle device) {
        return zeros(to_shape(shape), dtype_or(dtype, DType::F32),
                     device_or_cpu(device));
      },
      nb::arg("shape"), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(),
      "A tensor of zeros (float32 unless dtype is given).");
  m.def(
      "ones",
      [](nb::handle shape, nb::handle dtype, nb::handle device) {
        return ones(to_shape(shape), dtype_or(dtype, DType::F32),
                    device_or_cpu(device));
      },
      nb::arg("shape"), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(),
      "A tensor of ones (float32 unless dtype is given).");
  m.def(
      "full",
      [](nb::handle shape, nb::handle value, nb::handle dtype,
         nb::handle device) {
        const Scalar s = to_scalar(value);
        return full(to_shape(shape), s, dtype_or(dtype, s.default_dtype()),
                    device_or_cpu(device));
      },
      nb::arg("shape"), nb::arg("fill_value"), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(),
      "A tensor of `fill_value`; its dtype follows the value by default.");
  m.def(
      "arange",
      [](nb::handle start, nb::handle stop, nb::handle step, nb::handle dtype,
         nb::handle device) {
        const Device where = device_or_cpu(device);
        if (stop.is_none()) {
          return arange(Scalar(std::int64_t{0}), to_scalar(start),
                        to_scalar(step), to_optional_dtype(dtype))
              .to(where);
        }
        return arange(to_scalar(start), to_scalar(stop), to_scalar(step),
                      to_optional_dtype(dtype))
            .to(where);
      },
      nb::arg("start"), nb::arg("stop") = nb::none(), nb::arg("step") = 1,
      nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(),
      "[start, stop) in steps of `step` (NumPy's length rule); int64 when "
      "every argument is an int, else float32.");
  m.def(
      "linspace",
      [](double start, double stop, std::int64_t num, nb::handle dtype,
         nb::handle device, bool endpoint) {
        const DType d = dtype_or(dtype, DType::F32);
        // Without the endpoint: num values of the num + 1 that would end at
        // stop.
        if (!endpoint && num > 0) {
          return linspace(start, stop, num + 1, d)
              .slice(0, 0, num)
              .contiguous()
              .to(device_or_cpu(device));
        }
        return linspace(start, stop, num, d).to(device_or_cpu(device));
      },
      nb::arg("start"), nb::arg("stop"), nb::arg("num"), nb::kw_only(),
      nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("endpoint") = true,
      "num evenly spaced values from start to stop (inclusive unless "
      "endpoint=False).");
  m.def(
      "eye",
      [](std::int64_t n, std::optional<std::int64_t> m_cols, std::int64_t k,
         nb::handle dtype, nb::handle device) {
        const DType d = dtype_or(dtype, DType::F32);
        if (k == 0) return eye(n, m_cols, d).to(device_or_cpu(device));
        // Ones on the k-th diagonal: the band between tril(k) and triu(k).
        const Tensor band = tril(triu(ones({n, m_cols.value_or(n)}, d), k), k);
        return band.to(device_or_cpu(device));
      },
      nb::arg("n_rows"), nb::arg("n_cols") = nb::none(), nb::kw_only(),
      nb::arg("k") = 0, nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(),
      "Ones on diagonal k (0: the main one, > 0 above it) of an n_rows x "
      "n_cols matrix.");
  m.def(
      "rand",
      [](nb::handle shape, nb::handle dtype) {
        return rand(to_shape(shape), dtype_or(dtype, DType::F32));
      },
      nb::arg("shape"), nb::arg("dtype") = nb::none(),
      "Uniform in [0, 1) from tessel's generator.");
  m.def(
      "randn",
      [](nb::handle shape, nb::handle dtype) {
        return randn(to_shape(shape), dtype_or(dtype, DType::F32));
      },
      nb::arg("shape"), nb::arg("dtype") = nb::none(),
      "Standard normal from tessel's generator.");
  m.def(
      "randint",
      [](std::int64_t low, std::int64_t high, nb::handle shape,
         nb::handle dtype) {
        return randint(low, high, to_shape(shape), dtype_or(dtype, DType::I64));
      },
      nb::arg("low"), nb::arg("high"), nb::arg("shape"),
      nb::arg("dtype") = nb::none(),
      "Uniform integers in [low, high) from tessel's generator.");
  m.def(
      "manual_seed", [](std::uint64_t seed) { manual_seed(seed); },
      nb::arg("seed"),
      "Seeds tessel's default generator (rand, randn, randint).");
  m.def(
      "asarray",
      [](nb::handle obj, nb::handle dtype, nb::handle device, nb::handle copy) {
        if (!device.is_none() && !device_or_cpu(device).is_cpu()) {
          return to_tensor(obj).to(device_or_cpu(device));
        }
        Tensor t = to_tensor(obj);
        if (!dtype.is_none() && to_dtype(dtype) != t.dtype()) {
          if (!copy.is_none() && !nb::cast<bool>(copy)) {
            throw_error(ErrorCode::BadDType,
                        "[asarray] copy=False but converting to dtype " +
                            std::string(dtype_name(to_dtype(dtype))) +
                            " needs a copy");
          }
          return t.to(to_dtype(dtype));
        }
        if (!copy.is_none() && nb::cast<bool>(copy)) return t.clone();
        return t;
      },
      nb::arg("obj"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("copy") = nb::none(),
      "A tensor from a tensor, a NumPy array or other DLPack producer (zero "
      "copy), "
      "a Python scalar or nested lists (copied; Python floats give float32).");
}

}  // namespace tessel::python
