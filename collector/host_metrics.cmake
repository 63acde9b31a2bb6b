# rf_host_metrics: CUPTI's profiler host API for one chip (metric validation, passes, config images,
# evaluation of counter-data images). Works without a GPU or driver; local_devices() alone loads
# the driver when asked (rfprof --query-metrics without --chips). Included by
# collector/CMakeLists.txt; also holds the CUPTI seam's error type (src/cupti_call.cpp).

# libnvperf_host.so, behind the host API, is not linked: src/host_library.cpp loads it when CUPTI's
# profiler is first used, from the RUNPATH of the binary holding that code, before libcupti's own
# dlopen by name (which searches only LD_LIBRARY_PATH and the ld.so cache) would look for it.

# Tensor metric names and metric set names: pure string logic, also linked by rfanalyze and the
# configuration of librfinject (no CUPTI).
add_library(rf_metric_names STATIC ${CMAKE_CURRENT_LIST_DIR}/src/tensor_metrics.cpp)
target_include_directories(rf_metric_names PUBLIC ${CMAKE_CURRENT_LIST_DIR}/include)
target_link_libraries(rf_metric_names PRIVATE rfprof_warnings)

add_library(rf_host_metrics STATIC
  ${CMAKE_CURRENT_LIST_DIR}/src/host_metrics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/metric_sets.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/local_devices.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/host_library.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/cupti_call.cpp)
target_include_directories(rf_host_metrics
  PUBLIC ${CMAKE_CURRENT_LIST_DIR}/include
  PRIVATE ${CMAKE_CURRENT_LIST_DIR}/src)
target_link_libraries(rf_host_metrics
  PUBLIC rf_metric_names
  PRIVATE rfprof::cupti ${CMAKE_DL_LIBS} rfprof_warnings)
