# The Python side (DESIGN §3 `python`): CPython's headers and nanobind,
# both found through the project venv's interpreter (TESSEL_PYTHON), which
# scripts/setup fills from scripts/deps/pypi.txt. Without them the package
# and its tests are not built and a status line says why.
option(TESSEL_BUILD_PYTHON "Build the Python package (tessel._tessel)" ON)
set(TESSEL_HAVE_NANOBIND OFF)
if(TESSEL_BUILD_PYTHON)
  if(NOT DEFINED Python_EXECUTABLE AND EXISTS "${TESSEL_PYTHON}")
    set(Python_EXECUTABLE "${TESSEL_PYTHON}")
  endif()
  find_package(Python 3.10 COMPONENTS Interpreter Development.Module)
  if(Python_FOUND)
    execute_process(COMMAND ${Python_EXECUTABLE} -m nanobind --cmake_dir
      OUTPUT_VARIABLE tessel_nanobind_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  if(tessel_nanobind_dir)
    find_package(nanobind CONFIG REQUIRED PATHS "${tessel_nanobind_dir}" NO_DEFAULT_PATH)
    set(TESSEL_HAVE_NANOBIND ON)
  else()
    message(STATUS "Python headers or nanobind missing (run scripts/setup): "
                   "the Python package is not built")
  endif()
endif()
