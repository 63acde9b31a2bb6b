# Finds every external dependency once and exposes it as an imported target:
#   rfprof::cupti        libcupti (CUDA::cupti when CMake finds it, else a fallback imported target)
#   rfprof::nvtx3        NVTX v3 headers (header-only)
#   rfprof::unwind       libunwind
#   rfprof::llvm_demangle LLVM's Itanium demangler (Debian's llvm-14-dev), when found: the
#                        analyzer's fallback for names libstdc++'s __cxa_demangle refuses
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

# LLVM's demangler reads symbols libstdc++'s refuses (cuDNN's CUTLASS convolution kernels, seen in a
# PyTorch ResNet-18 step on an H100). Optional: without it such a kernel keeps its mangled name.
find_path(RFPROF_LLVM_DEMANGLE_INCLUDE_DIR llvm/Demangle/Demangle.h
  PATHS /usr/lib/llvm-16/include /usr/lib/llvm-15/include /usr/lib/llvm-14/include)
find_library(RFPROF_LLVM_DEMANGLE_LIBRARY LLVMDemangle
  PATHS /usr/lib/llvm-16/lib /usr/lib/llvm-15/lib /usr/lib/llvm-14/lib)
if(RFPROF_LLVM_DEMANGLE_INCLUDE_DIR AND RFPROF_LLVM_DEMANGLE_LIBRARY)
  add_library(rfprof_llvm_demangle UNKNOWN IMPORTED GLOBAL)
  set_target_properties(rfprof_llvm_demangle PROPERTIES IMPORTED_LOCATION ${RFPROF_LLVM_DEMANGLE_LIBRARY})
  target_include_directories(rfprof_llvm_demangle SYSTEM INTERFACE ${RFPROF_LLVM_DEMANGLE_INCLUDE_DIR})
  target_compile_definitions(rfprof_llvm_demangle INTERFACE RFPROF_HAVE_LLVM_DEMANGLE=1)
  add_library(rfprof::llvm_demangle ALIAS rfprof_llvm_demangle)
  message(STATUS "rfprof: LLVM demangler ${RFPROF_LLVM_DEMANGLE_LIBRARY}")
else()
  message(STATUS "rfprof: LLVM demangler not found (llvm-14-dev): names __cxa_demangle refuses stay mangled")
endif()

find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
if(RFPROF_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
