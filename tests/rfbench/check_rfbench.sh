#!/usr/bin/env bash
# check_rfbench.sh no-gpu|gpu|gpu-search RFBENCH [DEVICES_JSON]
#   no-gpu:     on a machine without a usable GPU, rfbench exits 1 with one line,
#               "rfbench: no NVIDIA GPU found: ..." (skipped, exit 77, where a GPU is present)
#   gpu:        rfbench --quick --runs 3 writes a ceilings JSON (check_ceilings.py): one entry
#               "<GPU> (measured)" with l2_bytes, every ceiling measured or skipped for want of
#               tensor cores, positive rates with their method and 3 runs, each within 0.6-1.1 of
#               the datasheet entry of DEVICES_JSON (analyzer/data/devices.json) matching the GPU
#   gpu-search: the full (not --quick) DRAM kernels and INT8/FP16 GEMM searches, checked the same;
#               the methods name the DRAM kernel kept and the GEMM configuration kept
set -u
mode=$1 rfbench=$2 devices=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
has_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }
case $mode in
  no-gpu)
    has_gpu && exit 77
    "$rfbench" -o "$tmp/c.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
    [ $rc -eq 1 ] || { echo "expected exit 1, got $rc"; cat "$tmp/err"; exit 1; }
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "expected one line on stderr:"; cat "$tmp/err"; exit 1; }
    grep -q '^rfbench: ' "$tmp/err" || { echo "message must start with rfbench:"; cat "$tmp/err"; exit 1; }
    # No driver, or a driver without a GPU: say so, not the CUDA runtime's "CUDA driver version is
    # insufficient for CUDA runtime version". (A driver too old for the runtime, with a GPU, is told
    # apart: "the NVIDIA driver supports CUDA ...".)
    grep -Eq '^rfbench: (no NVIDIA GPU found: |the NVIDIA driver supports CUDA )' "$tmp/err" ||
      { echo "the message must say that no NVIDIA GPU or driver was found:"; cat "$tmp/err"; exit 1; }
    [ ! -e "$tmp/c.json" ] || { echo "no ceilings file may be written without a GPU"; exit 1; }
    ;;
  gpu)
    "$rfbench" --quick --runs 3 -o "$tmp/c.json" || exit 1
    python3 "$here/check_ceilings.py" "$tmp/c.json" "$devices" --runs 3 --expect all || exit 1
    ;;
  gpu-search)
    "$rfbench" --runs 3 --only dram tensor-int8 tensor-fp16 -o "$tmp/c.json" || exit 1
    python3 "$here/check_ceilings.py" "$tmp/c.json" "$devices" --runs 3 \
      --expect dram_bytes_per_s tensor_int8_op_per_s tensor_fp16_flop_per_s || exit 1
    python3 - "$tmp/c.json" <<'PY' || exit 1
import json, re, sys
d = json.load(open(sys.argv[1]))
for m in d["measurements"]:
    if m["ceiling"] == "dram_bytes_per_s":
        assert re.match(r"(read|copy|triad) kernel, the best of", m["method"]), m["method"]
    elif m["ceiling"].startswith("tensor_"):
        assert re.match(r"cublas(GemmEx|LtMatmul) (NN|TN|NT) \d+x\d+x\d+, ", m["method"]), m["method"]
        assert "the fastest of" in m["method"], m["method"]
print("methods ok")
PY
    ;;
  *) echo "usage: check_rfbench.sh no-gpu|gpu|gpu-search RFBENCH [DEVICES_JSON]"; exit 2 ;;
esac
