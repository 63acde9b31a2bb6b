#!/usr/bin/env python3
"""check_ceilings.py CEILINGS_JSON DEVICES_JSON [--runs N] [--expect KEY...|all]
   check_ceilings.py --self-test SAMPLE_JSON DEVICES_JSON

Checks a ceilings file rfbench wrote: one entry "<GPU> (measured)", "measured": true, l2_bytes,
positive rates, each measurement's value the best of its N runs and named by a method, each
expected ceiling ("all": every one rfbench measures) either measured or listed under "skipped"
(a tensor precision the GPU lacks) and never both; and each
value against the built-in datasheet entry (analyzer/data/devices.json) whose patterns match the
GPU's name, when there is one: measured / datasheet must lie in 0.6..1.1, so that a wrong amount
(a FLOP or byte count off by a factor of 2 or more, a CUDA-core rate written as a tensor roof: FP64
on an H100's CUDA cores is 0.51 of its tensor peak) fails.
Exit status 0 when every check holds, 1 otherwise.

--self-test: SAMPLE_JSON (a plausible H100 file) must pass, and fail with any one value doubled,
halved or quartered: the check itself, run without a GPU.
"""
import copy
import json
import re
import sys

LOW, HIGH = 0.6, 1.1
ALL = ["dram_bytes_per_s", "l2_bytes_per_s", "fp64_flop_per_s", "fp32_flop_per_s", "fp16_flop_per_s",
       "tensor_fp64_flop_per_s", "tensor_tf32_flop_per_s", "tensor_fp16_flop_per_s", "tensor_bf16_flop_per_s",
       "tensor_int8_op_per_s"]


def datasheet_entry(devices, gpu_name):
    """The first datasheet entry one of whose patterns is found in the GPU name (case-insensitive),
    as rfanalyze matches without a chip."""
    for e in devices["devices"]:
        if any(re.search(p, gpu_name, re.IGNORECASE) for p in e["patterns"]):
            return e
    return None


def check(doc, devices, runs=None, expect=(), verbose=True):
    """Returns the list of problems (empty: all checks hold); prints a table when verbose."""
    say = print if verbose else (lambda *a, **k: None)
    problems = []
    entries = doc.get("devices", [])
    if len(entries) != 1:
        return [f"expected one device entry, got {len(entries)}"]
    e = entries[0]
    if not e.get("name", "").endswith(" (measured)"):
        problems.append(f"entry name {e.get('name')!r} must end with ' (measured)'")
    if e.get("measured") is not True:
        problems.append('"measured" must be true')
    if not isinstance(e.get("l2_bytes"), (int, float)) or e["l2_bytes"] <= 0:
        problems.append("l2_bytes (cudaDeviceProp::l2CacheSize) missing or not positive")
    keys = [k for k in e if k.endswith("_per_s")]
    if not keys:
        problems.append("no ceiling measured")
    skipped = {s["ceiling"]: s.get("reason") for s in doc.get("skipped", [])}
    for k, why in skipped.items():
        if k in e:
            problems.append(f"{k} is both measured and skipped")
        if not why:
            problems.append(f"{k} skipped without a reason")
    for k in expect:
        if k not in e and k not in skipped:
            problems.append(f"{k} neither measured nor skipped")
    for k in keys:
        if not isinstance(e[k], (int, float)) or e[k] <= 0:
            problems.append(f"{k} = {e[k]!r} is not a positive rate")
    measured = {m["ceiling"]: m for m in doc.get("measurements", [])}
    for k in keys:
        m = measured.get(k)
        if m is None:
            problems.append(f"{k} has no entry under measurements")
            continue
        if not m.get("method"):
            problems.append(f"{k}: no method")
        if not m.get("runs") or m["value"] != max(m["runs"]) or m["value"] != e[k]:
            problems.append(f"{k}: value {m['value']} is not the best of its runs")
        if runs is not None and len(m.get("runs", [])) != runs:
            problems.append(f"{k}: {len(m.get('runs', []))} runs, expected {runs}")
    gpu = e.get("name", "")[: -len(" (measured)")]
    sheet = datasheet_entry(devices, gpu)
    if sheet is None:
        say(f"no datasheet entry matches {gpu!r}: values not compared with a datasheet")
        return problems
    say(f"datasheet entry {sheet['name']!r} for {gpu!r} (expected {LOW}-{HIGH} of it):")
    for k in keys + ["l2_bytes"]:
        want = sheet.get(k)
        got = e.get(k)
        if not isinstance(want, (int, float)) or not isinstance(got, (int, float)) or want <= 0:
            say(f"  {k:26} {got!r:>24}  (no datasheet value)")
            continue
        r = got / want
        ok = LOW <= r <= HIGH
        say(f"  {k:26} {got:24.6g} / {want:.6g} = {r:.3f} {'ok' if ok else 'OUT OF RANGE'}")
        if not ok:
            problems.append(f"{k} = {got:.6g} is {r:.3f} x the datasheet's {want:.6g} ({sheet['name']}); "
                            f"expected {LOW}-{HIGH}: a wrong FLOP/byte count or a wrong kernel?")
    return problems


def scaled(doc, key, factor):
    d = copy.deepcopy(doc)
    d["devices"][0][key] *= factor
    for m in d["measurements"]:
        if m["ceiling"] == key:
            m["value"] *= factor
            m["runs"] = [r * factor for r in m["runs"]]
    return d


def self_test(sample, devices):
    failures = []
    if check(sample, devices, expect=ALL):
        failures.append("the sample must pass")
    keys = [k for k in sample["devices"][0] if k.endswith("_per_s")]
    sheet = datasheet_entry(devices, sample["devices"][0]["name"][: -len(" (measured)")])
    compared = [k for k in keys if isinstance(sheet.get(k), (int, float))]
    if len(compared) < 8:
        failures.append(f"the sample must have at least 8 ceilings with datasheet values, has {compared}")
    for k in compared:
        for factor in (2.0, 0.5, 0.25):
            if not check(scaled(sample, k, factor), devices, verbose=False):
                failures.append(f"{k} x {factor} was not caught")
    no_l2 = copy.deepcopy(sample)
    del no_l2["devices"][0]["l2_bytes"]
    if not check(no_l2, devices, verbose=False):
        failures.append("a file without l2_bytes was not caught")
    both = copy.deepcopy(sample)
    both["skipped"] = [{"ceiling": "tensor_fp64_flop_per_s", "reason": "sm_86 has no FP64 tensor cores"}]
    if not check(both, devices, verbose=False):
        failures.append("a ceiling both measured and skipped was not caught")
    missing = copy.deepcopy(sample)
    del missing["devices"][0]["tensor_tf32_flop_per_s"]
    missing["measurements"] = [m for m in missing["measurements"] if m["ceiling"] != "tensor_tf32_flop_per_s"]
    if not check(missing, devices, expect=ALL, verbose=False):
        failures.append("a ceiling neither measured nor skipped was not caught")
    skipped = copy.deepcopy(missing)
    skipped["skipped"] = [{"ceiling": "tensor_tf32_flop_per_s", "reason": "sm_75 has no TF32 tensor cores"}]
    if check(skipped, devices, expect=ALL, verbose=False):
        failures.append("a skipped ceiling must pass")
    for f in failures:
        print("SELF-TEST FAILED:", f)
    if not failures:
        print(f"self-test ok: {len(compared)} ceilings, each caught doubled and quartered")
    return 1 if failures else 0


def main(argv):
    if len(argv) == 3 and argv[0] == "--self-test":
        return self_test(json.load(open(argv[1])), json.load(open(argv[2])))
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    doc, devices = json.load(open(argv[0])), json.load(open(argv[1]))
    runs, expect = None, []
    rest = argv[2:]
    while rest:
        opt = rest.pop(0)
        if opt == "--runs":
            runs = int(rest.pop(0))
        elif opt == "--expect":
            while rest and not rest[0].startswith("--"):
                k = rest.pop(0)
                expect.extend(ALL if k == "all" else [k])
        else:
            print(f"unknown option {opt}", file=sys.stderr)
            return 2
    problems = check(doc, devices, runs, expect)
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print("rfbench ceilings ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
