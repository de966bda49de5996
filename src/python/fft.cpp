// tessel._tessel._fft: the transforms of the C++ API (tessel::fft) with
// the array API's signatures; python/tessel/fft.py re-exports them as
// tessel.fft and adds fftfreq, rfftfreq, fftshift and ifftshift. The
// transforms run with the GIL released.
#include <nanobind/stl/string.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace tessel::python {

namespace {

using OneAxis = Tensor (*)(const Tensor&, std::optional<std::int64_t>,
                           std::int64_t, fft::Norm);
using ManyAxes = Tensor (*)(const Tensor&, std::span<const std::int64_t>,
                            std::span<const std::int64_t>, fft::Norm);

std::optional<std::int64_t> optional_length(nb::handle n) {
  if (n.is_none()) return std::nullopt;
  return to_index(n, "n");
}

std::vector<std::int64_t> optional_ints(nb::handle value, const char* what) {
  std::vector<std::int64_t> out;
  if (value.is_none()) return out;
  for (nb::handle item : nb::borrow<nb::sequence>(value))
    out.push_back(to_index(item, what));
  return out;
}

void def_one_axis(nb::module_& m, const char* name, OneAxis f,
                  const char* doc) {
  m.def(
      name,
      [f](nb::handle x, nb::handle n, std::int64_t axis,
          const std::string& norm) {
        const Tensor t = to_tensor(x);
        const auto len = optional_length(n);
        const fft::Norm how = fft::parse_norm(norm);
        return without_gil_if(true, [&] { return f(t, len, axis, how); });
      },
      nb::arg("x"), nb::kw_only(), nb::arg("n") = nb::none(),
      nb::arg("axis") = -1, nb::arg("norm") = "backward", doc);
}

void def_many_axes(nb::module_& m, const char* name, ManyAxes f,
                   const char* doc) {
  m.def(
      name,
      [f](nb::handle x, nb::handle s, nb::handle axes,
          const std::string& norm) {
        const Tensor t = to_tensor(x);
        const auto lengths = optional_ints(s, "s");
        const auto axis_list = optional_ints(axes, "axes");
        const fft::Norm how = fft::parse_norm(norm);
        return without_gil_if(true,
                              [&] { return f(t, lengths, axis_list, how); });
      },
      nb::arg("x"), nb::kw_only(), nb::arg("s") = nb::none(),
      nb::arg("axes") = nb::none(), nb::arg("norm") = "backward", doc);
}

}  // namespace

void bind_fft(nb::module_& parent) {
  nb::module_ m = parent.def_submodule(
      "_fft", "Discrete Fourier transforms (tessel::fft).");
  def_one_axis(m, "fft", &fft::fft,
               "The 1-D discrete Fourier transform along `axis` (padded or "
               "trimmed to n).");
  def_one_axis(m, "ifft", &fft::ifft, "The inverse of fft.");
  def_one_axis(m, "rfft", &fft::rfft,
               "fft of a real signal: the n // 2 + 1 non-negative "
               "frequencies.");
  def_one_axis(m, "irfft", &fft::irfft,
               "The inverse of rfft: n real values (default 2 (m - 1)).");
  def_one_axis(m, "hfft", &fft::hfft,
               "The transform of a Hermitian signal given by its first half: "
               "a real spectrum.");
  def_one_axis(m, "ihfft", &fft::ihfft, "The inverse of hfft.");
  def_many_axes(m, "fftn", &fft::fftn,
                "fft over several axes (all by default).");
  def_many_axes(m, "ifftn", &fft::ifftn, "The inverse of fftn.");
  def_many_axes(m, "rfftn", &fft::rfftn,
                "rfft over the last of `axes`, fft over the others.");
  def_many_axes(m, "irfftn", &fft::irfftn, "The inverse of rfftn.");
}

}  // namespace tessel::python
