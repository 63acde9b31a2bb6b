"""Tests of scripts/sass_count.py: the cubin decoder on a small constructed ELF64 cubin, the
cuobjdump text reader, the mangled-name reader and the check against expected static counts.
(The check of the real example cubins is the CTest examples_sass_static_counts.)"""
import json
import os
import struct
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import sass_count  # noqa: E402

PT = 7


def insn(opcode, form=1, pred=PT):
    """One 128-bit instruction: 9-bit opcode, 3-bit form, 4-bit guard predicate (rest zero)."""
    return struct.pack("<QQ", opcode | (form << 9) | (pred << 12), 0x000FE20000000000)


def make_cubin(texts):
    """ELF64 with a section-name table and one .text.<name> section per entry of `texts`."""
    names = b"\0.shstrtab\0" + b"".join(b".text." + n.encode() + b"\0" for n in texts)
    body = bytearray(64)  # ELF header, filled below
    offsets = []
    for code in texts.values():
        offsets.append(len(body))
        body += code
    strtab_off = len(body)
    body += names
    shoff = len(body)
    sections = [struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                struct.pack("<IIQQQQIIQQ", 1, 3, 0, 0, strtab_off, len(names), 0, 0, 1, 0)]
    name_off = len(b"\0.shstrtab\0")
    for (name, code), off in zip(texts.items(), offsets):
        sections.append(struct.pack("<IIQQQQIIQQ", name_off, 1, 6, 0, off, len(code), 0, 0, 128, 0))
        name_off += len(".text." + name) + 1
    body += b"".join(sections)
    header = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    header += struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, shoff, 0, 64, 0, 0, 64,
                          len(sections), 1)
    body[:64] = header
    return bytes(body)


class CubinTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, data):
        path = os.path.join(self.dir.name, name)
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return path

    def test_counts_fp_opcodes_by_class(self):
        ffma_kernel = (insn(0x002, 5) + insn(0x024) + insn(0x023) * 3 + insn(0x023, 4)
                       + insn(0x021, 7) + insn(0x020, 6) + insn(0x118) + insn(0x14D, 4))
        half_kernel = insn(0x031) * 2 + insn(0x035) * 2 + insn(0x035, 2) + insn(0x030) + insn(0x032)
        double_kernel = insn(0x02B) * 4 + insn(0x029) + insn(0x028) + insn(0x022, 4)  # + FSWZADD
        path = self.write("k.cubin", make_cubin({
            "_Z9ffma_loopPKfPfffi": ffma_kernel,
            "_ZN36_GLOBAL__N__83ab2ec0_8_hfma2_cu_main14half2_fma_loopEPK7__half2": half_kernel,
            "dfma_c_kernel": double_kernel}))
        got = sass_count.count_cubin(path)
        self.assertEqual(sorted(got), ["dfma_c_kernel", "ffma_loop", "half2_fma_loop"])
        self.assertEqual(got["ffma_loop"]["ops"],
                         dict(sass_count.empty_counts()["ops"], ffma=4, fadd=1, fmul=1))
        self.assertEqual(got["half2_fma_loop"]["ops"]["hfma"], 5)
        self.assertEqual(got["half2_fma_loop"]["mnemonics"],
                         {"HFMA2": 2, "HFMA2.MMA": 3, "HADD2": 1, "HMUL2": 1})
        self.assertEqual(got["dfma_c_kernel"]["ops"],
                         dict(sass_count.empty_counts()["ops"], dfma=4, dadd=1, dmul=1))
        self.assertEqual(got["ffma_loop"]["predicated"], 0)

    def test_check_reports_differences_and_predicates(self):
        path = self.write("k.cubin", make_cubin({
            "_Z9ffma_loopPKfPfffi": insn(0x023) * 7 + insn(0x023, pred=0) + insn(0x035, 2)}))
        expected = self.write("e.json", json.dumps({"kernels": {"ffma_loop": {"ffma": 8},
                                                                "absent": {}}}))
        problems = sass_count.check(expected, sass_count.count_cubin(path))
        self.assertEqual(len(problems), 3, problems)
        self.assertIn("ffma_loop: hfma: 1 in SASS, expected 0", problems[0])
        self.assertIn("guard predicate", problems[1])
        self.assertIn("absent: not found", problems[2])
        self.assertEqual(sass_count.main(["--check", expected, path]), 1)

    def test_check_passes_when_equal(self):
        path = self.write("k.cubin", make_cubin({"_Z9ffma_loopPKfPfffi": insn(0x023) * 8}))
        expected = self.write("e.json", json.dumps({"kernels": {"ffma_loop": {"ffma": 8}}}))
        self.assertEqual(sass_count.check(expected, sass_count.count_cubin(path)), [])

    def test_not_a_cubin(self):
        path = self.write("x.cubin", b"not an elf file at all")
        with self.assertRaises(sass_count.BadInput) as ctx:
            sass_count.count_cubin(path)
        self.assertIn("ELF64 cubin", str(ctx.exception))
        self.assertEqual(sass_count.main([path]), 2)


CUOBJDUMP = """
Fatbin elf code:
================
arch = sm_90
code version = [1,8]
host = linux
compile_size = 64bit

\tcode for sm_90
\t\tFunction : _ZN35_GLOBAL__N__145ec33d_7_dfma_cu_main8dfma_mixEPKdPdddddi
\t.headerflags\t@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                   /* 0x00000a00ff017b82 */
                                                                            /* 0x000fe20000000800 */
        /*0180*/                   DFMA R4, R4, UR4, R6 ;                   /* 0x0000000404047c2b */
        /*0190*/                   DFMA R8, R8, UR4, R6 ;                   /* 0x0000000408087c2b */
        /*01a0*/                   DADD R10, R10, UR8 ;                     /* 0x000000080a0a7e29 */
        /*01b0*/                   DMUL R12, R12, UR10 ;                    /* 0x0000000a0c0c7c28 */
        /*01c0*/              @!P0 BRA `(.L_x_1) ;                          /* 0x0000000000008947 */
        /*01d0*/                   EXIT ;                                   /* 0x000000000000794d */
\t\t..........

\t\tFunction : _Z14half2_fma_loopPK7__half2PS_S_S_i
        /*0100*/                   HFMA2.MMA R9, R9, R4, R5 ;               /* 0x0000000409097235 */
        /*0110*/                   HFMA2 R11, R11, R4, R5 ;                 /* 0x000000040b0b7231 */
        /*0120*/               @P1 FADD.FTZ R2, R2, 1 ;                     /* 0x3f80000002021421 */
        /*0130*/                   FSETP.GT.AND P0, PT, R2, RZ, PT ;
"""


class CuobjdumpTest(unittest.TestCase):
    def test_reads_functions_and_mnemonics(self):
        with tempfile.NamedTemporaryFile("w", suffix=".sass", delete=False) as f:
            f.write(CUOBJDUMP)
        try:
            got = sass_count.count_cuobjdump(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(sorted(got), ["dfma_mix", "half2_fma_loop"])
        self.assertEqual(got["dfma_mix"]["ops"],
                         dict(sass_count.empty_counts()["ops"], dfma=2, dadd=1, dmul=1))
        self.assertEqual(got["half2_fma_loop"]["mnemonics"], {"HFMA2.MMA": 1, "HFMA2": 1, "FADD": 1})
        self.assertEqual(got["half2_fma_loop"]["ops"]["hfma"], 2)
        self.assertEqual(got["half2_fma_loop"]["predicated"], 1)  # @P1 FADD
        self.assertEqual(got["dfma_mix"]["predicated"], 0)


class NamesTest(unittest.TestCase):
    def test_base_name(self):
        cases = {"_Z9ffma_loopPKfPfffi": "ffma_loop",
                 "_ZN35_GLOBAL__N__145ec33d_7_dfma_cu_main8dfma_mixEPKdPdddddi": "dfma_mix",
                 "_ZN2at6native18elementwise_kernelILi128EEEviT_": "elementwise_kernel",
                 "_Z4kernILi4ELi2EEvPK7__half2": "kern",
                 "_ZNK3Foo3barEv": "bar",
                 "plain_c_kernel": "plain_c_kernel"}
        for mangled, base in cases.items():
            self.assertEqual(sass_count.base_name(mangled), base, mangled)


if __name__ == "__main__":
    unittest.main()
