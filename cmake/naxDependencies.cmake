# Finds nax's dependencies; used by nax's own build and by the installed naxConfig.cmake alike.
# NAX_FIND is find_package for the build and find_dependency for the config file.
macro(nax_find_dependencies NAX_FIND)
  # nax is written against the xsimd 8 API (Debian 12 ships 8.1); xsimd 9 changed it.
  cmake_language(CALL ${NAX_FIND} xsimd 8...<9)
  cmake_language(CALL ${NAX_FIND} Boost 1.74 CONFIG)
  # The persistent thread pool (nax/exec/thread_pool.hpp) uses std::thread.
  set(THREADS_PREFER_PTHREAD_FLAG ON)
  cmake_language(CALL ${NAX_FIND} Threads)
  # Debian 12's xsimd target lists `xtl` as a link dependency but the package does not depend on
  # xtl, so without libxtl-dev every link gets -lxtl and fails. xtl is header-only and neither
  # nax nor its use of xsimd needs it: stand in an empty target when there is none.
  if(TARGET xsimd AND NOT TARGET xtl)
    get_target_property(_nax_xsimd_links xsimd INTERFACE_LINK_LIBRARIES)
    list(FIND _nax_xsimd_links xtl _nax_xtl_index)  # not IN_LIST: this runs under the caller's policies
    if(_nax_xtl_index GREATER -1)
      find_package(xtl QUIET)
      if(NOT TARGET xtl)
        add_library(xtl INTERFACE IMPORTED)
      endif()
    endif()
    unset(_nax_xsimd_links)
    unset(_nax_xtl_index)
  endif()
endmacro()
