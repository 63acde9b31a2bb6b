#!/usr/bin/env bash
# builds probe/step_sass against build/'s collector libraries
cd "$(dirname "$0")/.." || exit 2
B=${1:-build}
CUPTI_LIB=$(dirname "$(find /usr/local/cuda/ -name 'libcupti.so' | head -1)")
/usr/local/cuda/bin/nvcc -O2 -std=c++20 -gencode arch=compute_90,code=sm_90 -Icollector/include -Icollector/src -Itrace/include \
  probe/step_sass.cu -o $B/step_sass \
  $B/collector/librf_host_metrics.a $B/collector/librf_collector.a $B/collector/librf_collector_logic.a \
  $B/collector/librf_host_metrics.a $B/trace/librf_trace.a \
  -L"$CUPTI_LIB" -lcupti -lcuda -ldl -lpthread -Xlinker -rpath="$CUPTI_LIB" 2>&1 | tail -20
ls -la $B/step_sass
