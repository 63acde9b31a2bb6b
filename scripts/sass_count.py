#!/usr/bin/env python3
"""Static FP instruction counts per kernel, from a cubin (no CUDA tool needed) or from
`cuobjdump -sass` text, checked against examples/kernels/sass_static_counts.json.

Why: the known-count examples (examples/kernels/*.cu) promise exact values of
smsp__sass_thread_inst_executed_op_<op>_pred_on.sum. That holds only if the machine code holds
exactly the FP instructions the source suggests, all unpredicated and all inside the one
`#pragma unroll 1` loop; this script checks it.

Cubin decoding (Volta to Hopper, 128-bit instructions): bits 0..8 of an ALU instruction are the
opcode, bits 9..11 the operand form, bits 12..15 the guard predicate (7 = PT, always). Opcodes,
as in Mesa's NVK compiler (src/nouveau/compiler/nak/sm70_encode.rs) and consistent with cuobjdump:
FMUL 0x020, FADD 0x021, FFMA 0x023, DMUL 0x028, DADD 0x029, DFMA 0x02b, HADD2 0x030,
HFMA2 0x031, HMUL2 0x032, HFMA2.MMA 0x035. The metric class of HFMA2.MMA is taken as hfma (to be
confirmed on a GPU: validation/README.md). On the GPU machine, scripts/gpu-validate runs the same
check on real `cuobjdump -sass` output, which also checks this table.

Usage:
  sass_count.py CUBIN...                      print per-kernel counts (JSON)
  sass_count.py --cuobjdump SASS.txt...       same, from cuobjdump -sass output
  sass_count.py --check EXPECTED.json INPUT...  exit 1 on any difference (one line each)
Exit status: 0 ok, 1 mismatch, 2 bad input.
"""
import argparse
import json
import re
import struct
import sys

OPS = ("fadd", "fmul", "ffma", "hadd", "hmul", "hfma", "dadd", "dmul", "dfma")
# 9-bit ALU opcode -> (metric op class, mnemonic)
OPCODES = {
    0x020: ("fmul", "FMUL"), 0x021: ("fadd", "FADD"), 0x023: ("ffma", "FFMA"),
    0x028: ("dmul", "DMUL"), 0x029: ("dadd", "DADD"), 0x02B: ("dfma", "DFMA"),
    0x030: ("hadd", "HADD2"), 0x031: ("hfma", "HFMA2"), 0x032: ("hmul", "HMUL2"),
    0x035: ("hfma", "HFMA2.MMA"),
}
# cuobjdump mnemonic (before the first '.') -> metric op class
MNEMONICS = {
    "FADD": "fadd", "FADD32I": "fadd", "FMUL": "fmul", "FMUL32I": "fmul", "FFMA": "ffma",
    "FFMA32I": "ffma", "HADD2": "hadd", "HADD2_32I": "hadd", "HMUL2": "hmul", "HMUL2_32I": "hmul",
    "HFMA2": "hfma", "HFMA2_32I": "hfma", "DADD": "dadd", "DMUL": "dmul", "DFMA": "dfma",
}
PT = 7  # guard predicate field value of an unpredicated instruction


class BadInput(Exception):
    """An input file that is not what this script reads; the message names it."""


def base_name(mangled):
    """Function base name of an Itanium-mangled kernel name: _Z9ffma_loopPKf... -> ffma_loop,
    _ZN..._main8dfma_mixE... -> dfma_mix (last component of a nested name). Unmangled names
    (extern "C") are returned unchanged."""
    if not mangled.startswith("_Z"):
        return mangled
    s, i = mangled, 2
    nested = s[i:i + 1] == "N"
    if nested:
        i += 1
        while i < len(s) and s[i] in "rVKRO":  # cv- and ref-qualifiers of member functions
            i += 1
    last = None
    while i < len(s) and s[i].isdigit():
        j = i
        while j < len(s) and s[j].isdigit():
            j += 1
        n = int(s[i:j])
        last = s[j:j + n]
        i = j + n
        if not nested:
            break
        if s[i:i + 1] == "I":  # template arguments of a component: not needed for the name
            break
    return last if last else mangled


def empty_counts():
    return {"ops": {op: 0 for op in OPS}, "mnemonics": {}, "predicated": 0}


def count_cubin(path):
    """{kernel base name: counts} from the .text.<kernel> sections of an ELF64 cubin."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}")
    if data[:4] != b"\x7fELF" or len(data) < 64 or data[4] != 2:
        raise BadInput(f"{path}: expected an ELF64 cubin (nvcc -cubin)")
    try:
        (shoff,) = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        sections = [struct.unpack_from("<IIQQQQ", data, shoff + k * shentsize) for k in range(shnum)]
        strtab_off = sections[shstrndx][4]
    except (struct.error, IndexError):
        raise BadInput(f"{path}: truncated ELF section table")
    result = {}
    for name_off, _type, _flags, _addr, off, size in sections:
        end = data.find(b"\0", strtab_off + name_off)
        name = data[strtab_off + name_off:end].decode("ascii", "replace")
        if not name.startswith(".text.") or size % 16 or off + size > len(data):
            continue
        counts = empty_counts()
        for p in range(off, off + size, 16):
            (lo,) = struct.unpack_from("<Q", data, p)
            entry = OPCODES.get(lo & 0x1FF)
            if entry is None:
                continue
            op, mnemonic = entry
            counts["ops"][op] += 1
            counts["mnemonics"][mnemonic] = counts["mnemonics"].get(mnemonic, 0) + 1
            if (lo >> 12) & 0xF != PT:
                counts["predicated"] += 1
        result[base_name(name[len(".text."):])] = counts
    return result


_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-fA-F]+\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)")


def count_cuobjdump(path):
    """{kernel base name: counts} from the text of `cuobjdump -sass` (or nvdisasm)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}")
    result, current = {}, None
    for line in lines:
        m = _FUNCTION.match(line)
        if m:
            current = result.setdefault(base_name(m.group(1)), empty_counts())
            continue
        m = _INSTRUCTION.match(line)
        if not m or current is None:
            continue
        mnemonic = m.group(2)
        op = MNEMONICS.get(mnemonic.split(".")[0])
        if op is None:
            continue
        current["ops"][op] += 1
        key = "HFMA2.MMA" if mnemonic.startswith("HFMA2.MMA") else mnemonic.split(".")[0]
        current["mnemonics"][key] = current["mnemonics"].get(key, 0) + 1
        if m.group(1) and m.group(1).strip() not in ("@PT",):
            current["predicated"] += 1
    if not result:
        raise BadInput(f"{path}: no 'Function :' section found; expected cuobjdump -sass output")
    return result


def check(expected_path, counted):
    """Differences between counted kernels and the expected static counts, one message each."""
    try:
        with open(expected_path, encoding="utf-8") as f:
            expected = json.load(f)["kernels"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BadInput(f"{expected_path}: expected JSON {{\"kernels\": {{name: {{op: count}}}}}}: {e}")
    problems = []
    for kernel, want in expected.items():
        got = counted.get(kernel)
        if got is None:
            problems.append(f"{kernel}: not found in the inputs")
            continue
        for op in OPS:
            if got["ops"][op] != want.get(op, 0):
                problems.append(f"{kernel}: {op}: {got['ops'][op]} in SASS, expected "
                                f"{want.get(op, 0)} (mnemonics {got['mnemonics']})")
        if got["predicated"]:
            problems.append(f"{kernel}: {got['predicated']} FP instruction(s) carry a guard "
                            "predicate; their dynamic count is not known statically")
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", help="cubin files (or cuobjdump -sass text with --cuobjdump)")
    ap.add_argument("--cuobjdump", action="store_true", help="inputs are cuobjdump -sass text")
    ap.add_argument("--check", metavar="EXPECTED_JSON", help="compare with these static counts")
    args = ap.parse_args(argv)
    counted = {}
    try:
        for path in args.inputs:
            counted.update(count_cuobjdump(path) if args.cuobjdump else count_cubin(path))
        if args.check:
            problems = check(args.check, counted)
            for p in problems:
                print(f"sass_count: {p}", file=sys.stderr)
            print(f"sass_count: {len(counted)} kernel(s) read, {len(problems)} difference(s)")
            return 1 if problems else 0
    except BadInput as e:
        print(f"sass_count: {e}", file=sys.stderr)
        return 2
    json.dump(counted, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
