# Finds every external dependency once and exposes it as an imported target:
#   rfprof::cupti        libcupti (CUDA::cupti when CMake finds it, else a fallback imported target)
#   rfprof::nvtx3        NVTX v3 headers (header-only)
#   rfprof::unwind       libunwind
#   nlohmann_json::nlohmann_json, CLI11::CLI11, GTest::gtest_main, zstd
find_package(CUDAToolkit 13 REQUIRED)

if(TARGET CUDA::cupti)
  add_library(rfprof::cupti ALIAS CUDA::cupti)
  # CUDA 13 installs cupti.h next to cuda.h, where CMake 3.25 does not look.
  target_include_directories(CUDA::cupti SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
else()
  find_library(RFPROF_CUPTI_LIBRARY cupti
    HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_TARGET_DIR}/lib64
          ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/lib64 REQUIRED)
  find_path(RFPROF_CUPTI_INCLUDE_DIR cupti_range_profiler.h
    HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include REQUIRED)
  add_library(rfprof_cupti_fallback SHARED IMPORTED GLOBAL)
  set_target_properties(rfprof_cupti_fallback PROPERTIES IMPORTED_LOCATION ${RFPROF_CUPTI_LIBRARY})
  target_include_directories(rfprof_cupti_fallback SYSTEM INTERFACE
    ${RFPROF_CUPTI_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
  add_library(rfprof::cupti ALIAS rfprof_cupti_fallback)
endif()
message(STATUS "rfprof: CUPTI from ${CUDAToolkit_LIBRARY_DIR}")

find_path(RFPROF_NVTX3_INCLUDE_DIR nvtx3/nvToolsExt.h HINTS ${CUDAToolkit_INCLUDE_DIRS} REQUIRED)
add_library(rfprof_nvtx3 INTERFACE)
target_include_directories(rfprof_nvtx3 SYSTEM INTERFACE ${RFPROF_NVTX3_INCLUDE_DIR})
target_link_libraries(rfprof_nvtx3 INTERFACE ${CMAKE_DL_LIBS})
add_library(rfprof::nvtx3 ALIAS rfprof_nvtx3)

# libunwind through pkg-config; where there is no pkg-config or no libunwind.pc (a prefix unpacked
# from .deb files by scripts/gpu-deps, found through CMAKE_PREFIX_PATH), header and library directly.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(RFPROF_UNWIND QUIET IMPORTED_TARGET libunwind)
endif()
if(TARGET PkgConfig::RFPROF_UNWIND)
  add_library(rfprof::unwind ALIAS PkgConfig::RFPROF_UNWIND)
else()
  find_path(RFPROF_UNWIND_INCLUDE_DIR libunwind.h REQUIRED)
  find_library(RFPROF_UNWIND_LIBRARY unwind REQUIRED)
  add_library(rfprof_unwind_fallback UNKNOWN IMPORTED GLOBAL)
  set_target_properties(rfprof_unwind_fallback PROPERTIES IMPORTED_LOCATION ${RFPROF_UNWIND_LIBRARY})
  target_include_directories(rfprof_unwind_fallback SYSTEM INTERFACE ${RFPROF_UNWIND_INCLUDE_DIR})
  add_library(rfprof::unwind ALIAS rfprof_unwind_fallback)
  message(STATUS "rfprof: libunwind ${RFPROF_UNWIND_LIBRARY} (no pkg-config module)")
endif()

find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
if(RFPROF_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
