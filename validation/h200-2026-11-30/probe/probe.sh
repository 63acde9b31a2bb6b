#!/usr/bin/env bash
# One-off GPU probe (not committed): smsp__sass_* under the Range Profiler's user replay.
cd "$(dirname "$0")" || exit 2
B=build; P=$OUT/probe.log
source scripts/gpu-deps unpack > "$OUT/build.log" 2>&1
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
t0=$SECONDS
{ cmake -S . -B $B "${gen[@]}" -DRFPROF_BUILD_TESTS=OFF -DRFPROF_BUILD_EXAMPLES=OFF &&
  cmake --build $B -j16 -t rf_collector rf_host_metrics rf_trace && probe/build.sh $B; } >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "build $((SECONDS-t0)) s" | tee -a $P
for v in "user-auto act actoff warm" "user-auto act actoff" "user-auto act cb actoff warm"; do
  timeout 60 $B/step_sass $v 2>&1 | tee -a $P; echo "rc ${PIPESTATUS[0]} at $((SECONDS-t0)) s" | tee -a $P
done
