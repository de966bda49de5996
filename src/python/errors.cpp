// tessel::Error -> the Python classes of tessel/_errors.py. The classes
// live in Python because each subclasses two bases (TesselError and the
// matching built-in), which a C++-created exception type cannot.
#include <Python.h>

#include "bindings.hpp"

namespace tessel::python {

namespace {

// The Python class named like the C++ class that belongs to `code`.
const char* class_name(ErrorCode code) {
  switch (code) {
#define TESSEL_ERROR_CLASS(e, number, cls) \
  case ErrorCode::e: return #cls;
    TESSEL_FOR_EACH_ERROR_CODE(TESSEL_ERROR_CLASS)
#undef TESSEL_ERROR_CLASS
  }
  return "TesselError";
}

void raise(const Error& error) {
  nb::object errors = nb::module_::import_("tessel._errors");
  nb::object cls = errors.attr(class_name(error.error_code()));
  nb::object instance;
  if (const auto* format = dynamic_cast<const FormatError*>(&error)) {
    instance = cls(error.what(), error.code(), format->byte_offset());
  } else {
    instance = cls(error.what(), error.code());
  }
  PyErr_SetObject(cls.ptr(), instance.ptr());
}

}  // namespace

void bind_errors(nb::module_&) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& error) {
      raise(error);
    }
  });
}

}  // namespace tessel::python
