#!/usr/bin/env bash
# check_rfbench.sh no-gpu|gpu RFBENCH
#   no-gpu: on a machine without a usable GPU, rfbench exits 1 with one "rfbench: ..." line
#           (skipped, exit 77, where a GPU is present)
#   gpu:    rfbench --quick writes a ceilings JSON: one device entry named "<GPU> (measured)" whose
#           ceilings are positive rates, each with its measurement method and runs
set -u
mode=$1 rfbench=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
has_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }
case $mode in
  no-gpu)
    has_gpu && exit 77
    "$rfbench" -o "$tmp/c.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
    [ $rc -eq 1 ] || { echo "expected exit 1, got $rc"; cat "$tmp/err"; exit 1; }
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "expected one line on stderr:"; cat "$tmp/err"; exit 1; }
    grep -q '^rfbench: ' "$tmp/err" || { echo "message must start with rfbench:"; cat "$tmp/err"; exit 1; }
    [ ! -e "$tmp/c.json" ] || { echo "no ceilings file may be written without a GPU"; exit 1; }
    ;;
  gpu)
    "$rfbench" --quick --runs 3 -o "$tmp/c.json" || exit 1
    python3 - "$tmp/c.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["devices"][0]
assert e["name"].endswith(" (measured)"), e["name"]
keys = [k for k in e if k.endswith("_per_s")]
assert len(keys) >= 8, keys
for k in keys:
    assert e[k] > 0, (k, e[k])
for m in d["measurements"]:
    assert m["value"] == max(m["runs"]) and len(m["runs"]) == 3 and m["method"], m
print("rfbench ceilings ok:", {k: e[k] for k in keys})
PY
    ;;
  *) echo "usage: check_rfbench.sh no-gpu|gpu RFBENCH"; exit 2 ;;
esac
