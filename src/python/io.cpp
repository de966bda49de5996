// File I/O from Python: safetensors (mapped, zero copy), GGUF (metadata as
// Python values, tensors mapped), .npy and the tensor descriptor. Paths
// are str or os.PathLike; tensors come back named, in dicts that keep the
// file's order. Every write is the C++ writer's: atomic, validated first.
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>

#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"

namespace tessel::python {

namespace {

nb::dict named(const std::vector<Tensor>& tensors) {
  nb::dict out;
  for (const Tensor& t : tensors) out[nb::str(t.name().c_str())] = nb::cast(t);
  return out;
}

// {name: tensor} -> tensors carrying their names (the C++ writers' input).
std::vector<Tensor> from_named(nb::handle mapping, const char* op) {
  if (!PyDict_Check(mapping.ptr())) {
    PyErr_Format(PyExc_TypeError, "[%s] expected a dict {name: tensor}, got %s",
                 op, python_type_name(mapping).c_str());
    throw nb::python_error();
  }
  std::vector<Tensor> tensors;
  for (auto [key, value] : nb::borrow<nb::dict>(mapping)) {
    if (!nb::isinstance<nb::str>(key)) {
      PyErr_Format(PyExc_TypeError, "[%s] tensor names must be str, got %s", op,
                   python_type_name(key).c_str());
      throw nb::python_error();
    }
    // A new handle over the same storage, so naming it does not rename
    // the caller's tensor.
    const Tensor source = to_tensor(value);
    Tensor t(source.storage(), source.shape(), source.strides(),
             source.storage_offset(), source.dtype());
    t.set_name(nb::cast<std::string>(key));
    tensors.push_back(std::move(t));
  }
  return tensors;
}

nb::object gguf_to_python(const GgufValue& v) {
  using Type = GgufValue::Type;
  switch (v.type) {
    case Type::U8:
    case Type::U16:
    case Type::U32:
    case Type::U64: return nb::int_(std::get<std::uint64_t>(v.value));
    case Type::I8:
    case Type::I16:
    case Type::I32:
    case Type::I64: return nb::int_(std::get<std::int64_t>(v.value));
    case Type::F32:
    case Type::F64: return nb::float_(std::get<double>(v.value));
    case Type::Bool: return nb::bool_(std::get<bool>(v.value));
    case Type::String: return nb::str(std::get<std::string>(v.value).c_str());
    case Type::Array: {
      nb::list items;
      for (const GgufValue& item : std::get<std::vector<GgufValue>>(v.value)) {
        items.append(gguf_to_python(item));
      }
      return items;
    }
  }
  return nb::none();
}

// Python -> GGUF with the `gguf` package's rule (GGUFValueType.get_type):
// str -> string, bool -> bool, int -> int32 (int64 / uint64 when it does
// not fit), float -> float32, a list -> an array of its first item's type.
GgufValue gguf_from_python(nb::handle value, const std::string& key) {
  using Type = GgufValue::Type;
  GgufValue v;
  PyObject* o = value.ptr();
  if (PyUnicode_Check(o)) {
    v.type = Type::String;
    v.value = nb::cast<std::string>(value);
  } else if (PyBool_Check(o)) {
    v.type = Type::Bool;
    v.value = o == Py_True;
  } else if (PyLong_Check(o)) {
    const Scalar s = to_scalar(value);
    if (s.kind() == Scalar::Kind::UInt) {
      v.type = Type::U64;
      v.value = s.to<std::uint64_t>();
    } else {
      const auto i = s.to<std::int64_t>();
      const bool fits32 = i >= std::numeric_limits<std::int32_t>::min() &&
                          i <= std::numeric_limits<std::int32_t>::max();
      v.type = fits32 ? Type::I32 : Type::I64;
      v.value = i;
    }
  } else if (PyFloat_Check(o)) {
    v.type = Type::F32;
    v.value = PyFloat_AS_DOUBLE(o);
  } else if (PyList_Check(o) || PyTuple_Check(o)) {
    v.type = Type::Array;
    std::vector<GgufValue> items;
    for (nb::handle item : nb::borrow<nb::sequence>(value)) {
      items.push_back(gguf_from_python(item, key));
    }
    v.element_type = items.empty() ? Type::I32 : items.front().type;
    for (const GgufValue& item : items) {
      if (item.type != v.element_type) {
        throw_error(
            ErrorCode::MalformedFile,
            "[save_gguf] metadata '" + key + "': a GGUF array holds one type");
      }
    }
    v.value = std::move(items);
  } else {
    PyErr_Format(PyExc_TypeError,
                 "[save_gguf] metadata '%s': expected str, bool, int, float or "
                 "a list, got %s",
                 key.c_str(), python_type_name(value).c_str());
    throw nb::python_error();
  }
  return v;
}

}  // namespace

void bind_io(nb::module_& m) {
  m.def(
      "load_safetensors",
      [](const std::filesystem::path& path, bool writable) {
        const SafetensorsFile file = load_safetensors(
            path, writable ? MapMode::CopyOnWrite : MapMode::ReadOnly);
        return named(file.tensors);
      },
      nb::arg("path"), nb::kw_only(), nb::arg("writable") = false,
      "{name: tensor} over the mapped file, zero copy (read-only unless "
      "writable=True, which maps copy-on-write).");
  m.def(
      "load_safetensors_metadata",
      [](const std::filesystem::path& path) {
        return load_safetensors(path).metadata;
      },
      nb::arg("path"), "The file's __metadata__ as a dict of str.");
  m.def(
      "save_safetensors",
      [](const std::filesystem::path& path, nb::handle tensors,
         const std::map<std::string, std::string>& metadata) {
        const std::vector<Tensor> named_tensors =
            from_named(tensors, "save_safetensors");
        nb::gil_scoped_release release;
        save_safetensors(path, named_tensors, metadata);
      },
      nb::arg("path"), nb::arg("tensors"),
      nb::arg("metadata") = std::map<std::string, std::string>{},
      "Writes {name: tensor} atomically (temp file, then rename).");
  m.def(
      "load_gguf",
      [](const std::filesystem::path& path) {
        const GgufFile file = load_gguf(path);
        nb::dict metadata;
        for (const auto& [key, value] : file.metadata)
          metadata[nb::str(key.c_str())] = gguf_to_python(value);
        return nb::make_tuple(named(file.tensors), metadata);
      },
      nb::arg("path"),
      "(tensors, metadata): {name: tensor} mapped from the file (block-"
      "quantised tensors stay quantised) and the metadata as Python values.");
  m.def(
      "save_gguf",
      [](const std::filesystem::path& path, nb::handle tensors,
         nb::handle metadata) {
        const std::vector<Tensor> named_tensors =
            from_named(tensors, "save_gguf");
        std::vector<std::pair<std::string, GgufValue>> entries;
        if (!metadata.is_none()) {
          for (auto [key, value] : nb::borrow<nb::dict>(metadata)) {
            const std::string name = nb::cast<std::string>(key);
            entries.emplace_back(name, gguf_from_python(value, name));
          }
        }
        nb::gil_scoped_release release;
        save_gguf(path, entries, named_tensors);
      },
      nb::arg("path"), nb::arg("tensors"), nb::arg("metadata") = nb::none(),
      "Writes a GGUF v3 file atomically; metadata values map to GGUF types as "
      "the gguf package maps them (int -> int32, float -> float32, ...).");
  m.def(
      "load_npy",
      [](const std::filesystem::path& path) { return load_npy(path); },
      nb::arg("path"), "A tensor read from a .npy file.");
  m.def(
      "save_npy",
      [](const std::filesystem::path& path, nb::handle t) {
        const Tensor tensor = to_tensor(t);
        nb::gil_scoped_release release;
        save_npy(path, tensor);
      },
      nb::arg("path"), nb::arg("tensor"), "Writes a .npy file atomically.");
  m.def(
      "describe",
      [](nb::handle t, const std::string& layout) {
        return to_json(describe(to_tensor(t), layout));
      },
      nb::arg("tensor"), nb::arg("layout") = "",
      "The tensor's JSON descriptor (DESIGN §5, WIA-AI-011 key names); the "
      "layout tag is row-major or strided as the strides are, unless one "
      "is given (it must match them).");
  m.def(
      "tensor_from_descriptor",
      [](const std::string& descriptor_json,
         const std::filesystem::path& data_path) {
        const TensorDescriptor d = descriptor_from_json(descriptor_json);
        return tensor_from_descriptor(d, Storage::map_file(data_path));
      },
      nb::arg("descriptor_json"), nb::arg("data_path"),
      "The tensor a JSON descriptor describes, over the mapped bytes of "
      "data_path.");
}

}  // namespace tessel::python
