# rf_host_metrics: CUPTI's profiler host API for one chip (metric validation, passes, config images,
# evaluation of counter-data images). Works without a GPU or driver; local_devices() alone loads
# the driver when asked (rfprof --query-metrics without --chips). Included by
# collector/CMakeLists.txt; also holds the CUPTI seam's error type (src/cupti_call.cpp).

# libcupti dlopen()s libnvperf_host.so by name when the profiler host API is first used, and a
# dlopen from libcupti (which has no RUNPATH) searches neither our RUNPATH nor the CUDA lib folder,
# only LD_LIBRARY_PATH and the ld.so cache. Linking libnvperf_host directly (DT_NEEDED, kept even
# under --as-needed) loads it from our RUNPATH at startup; libcupti's dlopen then finds it loaded.
if(NOT TARGET rfprof_nvperf_host)
  find_library(RFPROF_NVPERF_HOST_LIBRARY nvperf_host
    HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_TARGET_DIR}/lib64
          ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/lib64 REQUIRED)
  add_library(rfprof_nvperf_host SHARED IMPORTED GLOBAL)
  set_target_properties(rfprof_nvperf_host PROPERTIES IMPORTED_LOCATION ${RFPROF_NVPERF_HOST_LIBRARY})
  # A link feature (CMake >= 3.24) read wherever a consumer is linked, hence a cache variable.
  set(CMAKE_LINK_LIBRARY_USING_RF_NO_AS_NEEDED
      "LINKER:--push-state,--no-as-needed" "<LINK_ITEM>" "LINKER:--pop-state" CACHE INTERNAL "")
  set(CMAKE_LINK_LIBRARY_USING_RF_NO_AS_NEEDED_SUPPORTED TRUE CACHE INTERNAL "")
endif()

# Tensor metric names and metric set names: pure string logic, also linked by rfanalyze and the
# configuration of librfinject (no CUPTI).
add_library(rf_metric_names STATIC ${CMAKE_CURRENT_LIST_DIR}/src/tensor_metrics.cpp)
target_include_directories(rf_metric_names PUBLIC ${CMAKE_CURRENT_LIST_DIR}/include)
target_link_libraries(rf_metric_names PRIVATE rfprof_warnings)

add_library(rf_host_metrics STATIC
  ${CMAKE_CURRENT_LIST_DIR}/src/host_metrics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/metric_sets.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/local_devices.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/cupti_call.cpp)
target_include_directories(rf_host_metrics
  PUBLIC ${CMAKE_CURRENT_LIST_DIR}/include
  PRIVATE ${CMAKE_CURRENT_LIST_DIR}/src)
target_link_libraries(rf_host_metrics
  PUBLIC rf_metric_names
  PRIVATE rfprof::cupti ${CMAKE_DL_LIBS} rfprof_warnings
  INTERFACE "$<LINK_LIBRARY:RF_NO_AS_NEEDED,rfprof_nvperf_host>")
