# Warnings and sanitizers shared by every target of the project.
add_library(tessel_build_flags INTERFACE)
target_compile_options(tessel_build_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align
  -Wimplicit-fallthrough -Wmissing-declarations)
if(TESSEL_WERROR)
  target_compile_options(tessel_build_flags INTERFACE -Werror)
endif()
if(TESSEL_SANITIZE)
  set(_san -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_compile_options(tessel_build_flags INTERFACE ${_san})
  target_link_options(tessel_build_flags INTERFACE ${_san})
endif()
