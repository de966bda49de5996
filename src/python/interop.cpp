// Zero-copy interchange with the rest of Python: the DLPack protocol both
// ways (versioned 1.1 capsules, legacy ones for consumers that ask for
// nothing newer), the buffer protocol (memoryview, NumPy) and __array__.
// Lifetimes: an exported capsule or buffer holds the tensor's storage; an
// imported tensor holds the producer's manager until its last view goes.
#include <Python.h>
#include <nanobind/stl/pair.h>

#include <cstring>
#include <set>
#include <string>

#include "bindings.hpp"
#include "tessel/io/dlpack.hpp"

namespace tessel::python {

namespace {

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kUsedLegacyName = "used_dltensor";
constexpr const char* kUsedVersionedName = "used_dltensor_versioned";

// DLDeviceType values of the DLPack header.
constexpr int kDLCPU = 1;
constexpr int kDLCUDA = 2;

// A capsule nobody consumed still owns its manager: call its deleter.
void delete_unconsumed_legacy(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kLegacyName)) return;
  auto* managed =
      static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kLegacyName));
  if (managed != nullptr && managed->deleter != nullptr)
    managed->deleter(managed);
}
void delete_unconsumed_versioned(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kVersionedName)) return;
  auto* managed = static_cast<dlpack::DLManagedTensorVersioned*>(
      PyCapsule_GetPointer(capsule, kVersionedName));
  if (managed != nullptr && managed->deleter != nullptr)
    managed->deleter(managed);
}

std::pair<int, int> dlpack_device(const Tensor& t) {
  const Device device = t.device();
  if (device.is_cpu()) return {kDLCPU, 0};
  if (device.is_cuda()) return {kDLCUDA, device.index};
  throw_error(ErrorCode::DeviceMismatch,
              "[__dlpack_device__] DLPack cannot name device " + device.str());
}

[[noreturn]] void raise_buffer_error(const std::string& message) {
  PyErr_SetString(PyExc_BufferError, message.c_str());
  throw nb::python_error();
}

nb::object export_dlpack(const Tensor& self, nb::handle stream,
                         nb::handle max_version, nb::handle dl_device,
                         nb::handle copy) {
  if (!dl_device.is_none()) {
    auto requested = nb::cast<std::pair<int, int>>(dl_device);
    if (requested != dlpack_device(self)) {
      raise_buffer_error("[__dlpack__] cannot export a " + self.device().str() +
                         " tensor to DLPack device (" +
                         std::to_string(requested.first) + ", " +
                         std::to_string(requested.second) + ")");
    }
  }
  // CPU memory needs no stream; a CUDA producer would order on it here.
  if (!stream.is_none() && self.device().is_cpu()) {
    raise_buffer_error("[__dlpack__] stream must be None for a CPU tensor");
  }
  const bool must_copy = !copy.is_none() && nb::cast<bool>(copy);
  const Tensor exported = must_copy ? self.clone() : self;
  bool versioned = false;
  if (!max_version.is_none()) {
    auto version = nb::cast<std::pair<int, int>>(max_version);
    versioned = version.first >= static_cast<int>(dlpack::kMajorVersion);
  }
  if (versioned) {
    auto* managed = to_dlpack_versioned(exported);
    if (must_copy) managed->flags |= dlpack::kFlagIsCopied;
    PyObject* capsule =
        PyCapsule_New(managed, kVersionedName, delete_unconsumed_versioned);
    if (capsule == nullptr) {
      managed->deleter(managed);
      throw nb::python_error();
    }
    return nb::steal(capsule);
  }
  DLManagedTensor* managed = to_dlpack(exported);
  PyObject* capsule =
      PyCapsule_New(managed, kLegacyName, delete_unconsumed_legacy);
  if (capsule == nullptr) {
    managed->deleter(managed);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

// ---- buffer protocol
// ----------------------------------------------------------

// The struct-module format of a dtype, or nullptr where PEP 3118 has none
// (bfloat16, float8, packed and block types).
const char* buffer_format(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "?";
    case DType::U8: return "B";
    case DType::I8: return "b";
    case DType::I16: return "h";
    case DType::I32: return "i";
    case DType::I64: return "q";
    case DType::U16: return "H";
    case DType::U32: return "I";
    case DType::U64: return "Q";
    case DType::F16: return "e";
    case DType::F32: return "f";
    case DType::F64: return "d";
    case DType::C64:
      return "Zf";  // PEP 3118's complex codes (NumPy reads them)
    case DType::C128: return "Zd";
    default: return nullptr;
  }
}

// A whole-element dtype of the same width, for handing bfloat16 and
// float8 to NumPy as raw bits that ml_dtypes then reinterprets.
std::optional<DType> same_width_unsigned(DType dtype) {
  switch (dtype_traits(dtype).bits) {
    case 8: return DType::U8;
    case 16: return DType::U16;
    default: return std::nullopt;
  }
}

int fill_buffer(const Tensor& t, DType as, Py_buffer* view, int flags,
                PyObject* owner) {
  const char* format = buffer_format(as);
  if (format == nullptr) {
    PyErr_Format(
        PyExc_BufferError,
        "[buffer] tessel.%s has no buffer-protocol format; use "
        "t.astype(tessel.float32) or np.asarray(t) with ml_dtypes installed",
        std::string(dtype_name(t.dtype())).c_str());
    return -1;
  }
  if (!t.device().is_cpu()) {
    PyErr_SetString(PyExc_BufferError,
                    "[buffer] only CPU tensors export a buffer");
    return -1;
  }
  const bool writable = t.storage().writable();
  if ((flags & PyBUF_WRITABLE) && !writable) {
    PyErr_SetString(PyExc_BufferError,
                    "[buffer] the tensor's storage is read-only");
    return -1;
  }
  // A consumer asking for C order, Fortran order or either gets the
  // buffer only when it is row-major (a 1-d or empty one is both orders).
  const bool wants_c = (flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS;
  const bool wants_f = (flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS;
  const bool wants_any = (flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS;
  if ((wants_c || wants_any || wants_f) && !t.is_contiguous()) {
    PyErr_SetString(
        PyExc_BufferError,
        "[buffer] the tensor is not contiguous; use t.contiguous()");
    return -1;
  }
  if (wants_f && t.rank() > 1 && t.numel() > 1) {
    PyErr_SetString(PyExc_BufferError,
                    "[buffer] the tensor is row-major, not Fortran-ordered");
    return -1;
  }
  if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !t.is_contiguous()) {
    PyErr_SetString(PyExc_BufferError,
                    "[buffer] the consumer cannot take strides and the tensor "
                    "is not contiguous");
    return -1;
  }
  const auto rank = static_cast<int>(t.rank());
  const std::int64_t itemsize = dtype_traits(as).bits / 8;
  // shape and strides live until releasebuffer frees them.
  auto* extents = new Py_ssize_t[2 * static_cast<std::size_t>(rank) + 1];
  for (int i = 0; i < rank; ++i) {
    extents[i] = static_cast<Py_ssize_t>(t.shape()[i]);
    extents[rank + i] = static_cast<Py_ssize_t>(t.strides()[i] * itemsize);
  }
  static char empty_data = 0;
  void* data = t.numel() == 0 ? &empty_data : const_cast<void*>(t.raw_data());
  view->buf = data;
  view->obj = Py_NewRef(owner);
  view->len = static_cast<Py_ssize_t>(t.numel() * itemsize);
  view->readonly = writable ? 0 : 1;
  view->itemsize = static_cast<Py_ssize_t>(itemsize);
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(format) : nullptr;
  view->ndim = rank;
  view->shape = (flags & PyBUF_ND) ? extents : nullptr;
  view->strides =
      (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? extents + rank : nullptr;
  view->suboffsets = nullptr;
  view->internal = extents;
  return 0;
}

int tensor_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  try {
    const Tensor& t = nb::cast<const Tensor&>(nb::handle(self));
    return fill_buffer(t, t.dtype(), view, flags, self);
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
    return -1;
  }
}

void tensor_releasebuffer(PyObject*, Py_buffer* view) {
  delete[] static_cast<Py_ssize_t*>(view->internal);
}

// The raw bits of a tensor whose dtype has no buffer format, as a buffer
// of the unsigned type of the same width.
struct RawBits {
  Tensor tensor;
  DType as;
};

int raw_bits_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  try {
    const RawBits& bits = nb::cast<const RawBits&>(nb::handle(self));
    return fill_buffer(bits.tensor, bits.as, view, flags, self);
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
    return -1;
  }
}

PyType_Slot tensor_buffer_slots[] = {
    {Py_bf_getbuffer, reinterpret_cast<void*>(tensor_getbuffer)},
    {Py_bf_releasebuffer, reinterpret_cast<void*>(tensor_releasebuffer)},
    {0, nullptr}};
PyType_Slot raw_bits_buffer_slots[] = {
    {Py_bf_getbuffer, reinterpret_cast<void*>(raw_bits_getbuffer)},
    {Py_bf_releasebuffer, reinterpret_cast<void*>(tensor_releasebuffer)},
    {0, nullptr}};

// np.asarray(t) without a copy: the buffer protocol where it has a format,
// raw bits reinterpreted by ml_dtypes for bfloat16 and float8.
nb::object to_numpy(nb::handle self, nb::handle dtype, nb::handle copy) {
  const Tensor& t = nb::cast<const Tensor&>(self);
  nb::module_ numpy = nb::module_::import_("numpy");
  nb::object array;
  auto memoryview = [](nb::handle exporter) {
    PyObject* view = PyMemoryView_FromObject(exporter.ptr());
    if (view == nullptr) throw nb::python_error();
    return nb::steal(view);
  };
  if (buffer_format(t.dtype()) != nullptr) {
    array = numpy.attr("asarray")(memoryview(self));
  } else if (auto raw = same_width_unsigned(t.dtype());
             raw && is_floating_point(t.dtype()) && t.dtype() != DType::F16) {
    nb::object ml_dtypes;
    try {
      ml_dtypes = nb::module_::import_("ml_dtypes");
    } catch (const nb::python_error&) {
      throw_error(ErrorCode::BadDType,
                  "[__array__] NumPy needs ml_dtypes for tessel." +
                      std::string(dtype_name(t.dtype())) +
                      "; install it or convert with astype()");
    }
    const char* name = t.dtype() == DType::BF16       ? "bfloat16"
                       : t.dtype() == DType::F8E4M3FN ? "float8_e4m3fn"
                                                      : "float8_e5m2";
    nb::object bits = nb::cast(RawBits{t, *raw});
    array = numpy.attr("asarray")(memoryview(bits))
                .attr("view")(ml_dtypes.attr(name));
  } else {
    throw_error(ErrorCode::BadDType,
                "[__array__] NumPy has no dtype for tessel." +
                    std::string(dtype_name(t.dtype())) +
                    "; convert with astype(tessel.float32) first");
  }
  if (!dtype.is_none()) {
    array = array.attr("astype")(
        dtype, nb::arg("copy") = !copy.is_none() && nb::cast<bool>(copy));
  } else if (!copy.is_none() && nb::cast<bool>(copy)) {
    array = array.attr("copy")();
  }
  return array;
}

}  // namespace

Tensor tensor_from_dlpack(nb::handle producer) {
  nb::object capsule;
  if (PyCapsule_CheckExact(producer.ptr())) {
    capsule = nb::borrow(producer);
  } else if (nb::hasattr(producer, "__dlpack__")) {
    // Producers older than DLPack 1.0 (NumPy < 2.1, PyTorch < 2.3) take no
    // max_version: ask them for a legacy capsule. The types that refuse it
    // are remembered, so that only the first call pays for the TypeError.
    static std::set<PyTypeObject*> legacy_producers;
    PyTypeObject* type = Py_TYPE(producer.ptr());
    if (legacy_producers.count(type) != 0) {
      capsule = producer.attr("__dlpack__")();
    } else {
      try {
        capsule = producer.attr("__dlpack__")(
            nb::arg("max_version") =
                nb::make_tuple(dlpack::kMajorVersion, dlpack::kMinorVersion));
      } catch (const nb::python_error& e) {
        if (!e.matches(PyExc_TypeError)) throw;
        capsule = producer.attr("__dlpack__")();
        legacy_producers.insert(type);
      }
    }
  } else {
    throw_error(ErrorCode::BadDType,
                "[from_dlpack] " + python_type_name(producer) +
                    " is not a DLPack producer (no __dlpack__)");
  }
  PyObject* c = capsule.ptr();
  if (PyCapsule_IsValid(c, kVersionedName)) {
    auto* managed = static_cast<dlpack::DLManagedTensorVersioned*>(
        PyCapsule_GetPointer(c, kVersionedName));
    // Consumed from here on, whatever from_dlpack decides: it owns the
    // manager and calls its deleter on refusal.
    PyCapsule_SetName(c, kUsedVersionedName);
    return from_dlpack(managed);
  }
  if (PyCapsule_IsValid(c, kLegacyName)) {
    auto* managed =
        static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, kLegacyName));
    PyCapsule_SetName(c, kUsedLegacyName);
    return from_dlpack(managed);
  }
  const char* name = PyCapsule_GetName(c);
  PyErr_Clear();
  if (name != nullptr && (std::strcmp(name, kUsedLegacyName) == 0 ||
                          std::strcmp(name, kUsedVersionedName) == 0)) {
    throw_error(ErrorCode::MalformedFile,
                "[from_dlpack] the DLPack capsule was already consumed");
  }
  throw_error(ErrorCode::MalformedFile,
              std::string("[from_dlpack] not a DLPack capsule (name ") +
                  (name ? name : "none") + ")");
}

void bind_interop(nb::module_& m, nb::class_<Tensor>& cls) {
  nb::class_<RawBits>(m, "_RawBits", nb::type_slots(raw_bits_buffer_slots));
  cls.def(
         "__dlpack__", &export_dlpack, nb::kw_only(),
         nb::arg("stream") = nb::none(), nb::arg("max_version") = nb::none(),
         nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none(),
         "Exports the tensor as a DLPack capsule without copying (copy=True "
         "exports a copy); a versioned 1.1 capsule when max_version >= (1, 0).")
      .def("__dlpack_device__", &dlpack_device, "(DLDeviceType, device index).")
      .def("__array__", &to_numpy, nb::arg("dtype") = nb::none(),
           nb::arg("copy") = nb::none(),
           "A NumPy array over the same memory (bfloat16/float8 through "
           "ml_dtypes).");
  m.def(
      "from_dlpack",
      [](nb::handle x, nb::handle device, nb::handle copy) {
        if (!device.is_none() && python_str(device) != "cpu") {
          throw_error(ErrorCode::DeviceMismatch,
                      "[from_dlpack] only device='cpu' is served");
        }
        Tensor t = tensor_from_dlpack(x);
        if (!copy.is_none() && nb::cast<bool>(copy)) return t.clone();
        return t;
      },
      nb::arg("x"), nb::kw_only(), nb::arg("device") = nb::none(),
      nb::arg("copy") = nb::none(),
      "A tensor over the memory of any DLPack producer (NumPy, PyTorch, JAX, "
      "...), without copying; writes are visible on both sides.");
}

PyType_Slot* tensor_type_slots() { return tensor_buffer_slots; }

}  // namespace tessel::python
