# Warnings and sanitizers shared by every target of the project.
add_library(tessel_build_flags INTERFACE)
target_compile_options(tessel_build_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align
  -Wimplicit-fallthrough -Wmissing-declarations)
# GCC 12 reports -Wrestrict for ordinary std::string concatenation at -O3
# (GCC bug 105651, fixed in 13); the warning is noise there.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(tessel_build_flags INTERFACE -Wno-restrict)
endif()
if(TESSEL_WERROR)
  target_compile_options(tessel_build_flags INTERFACE -Werror)
endif()
if(TESSEL_SANITIZE)
  set(_san -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_compile_options(tessel_build_flags INTERFACE ${_san})
  target_link_options(tessel_build_flags INTERFACE ${_san})
  # Under the sanitizers GCC's -Wmaybe-uninitialized fires inside
  # libstdc++'s own <regex> (std::function moved out of a local _State):
  # a false positive GCC's manual warns of with -fsanitize; the
  # sanitizers themselves check what the warning guesses at.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(tessel_build_flags INTERFACE -Wno-maybe-uninitialized)
  endif()
endif()
