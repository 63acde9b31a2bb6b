"""Tests of the example programs that need no GPU: --expected-only prints one RFPROF_EXPECTED
line whose counts follow each program's documented formula and scale with its sizes, and bad
sizes are refused with one message and exit status 2. RFPROF_EXAMPLES_DIR names the folder of
the built programs (build/examples)."""
import json
import os
import subprocess
import unittest

BIN = os.environ.get("RFPROF_EXAMPLES_DIR", "")
S = "smsp__sass_thread_inst_executed_op_"
OPS = ("fadd", "fmul", "ffma", "hadd", "hmul", "hfma", "dadd", "dmul", "dfma")


def expected(example, *args):
    out = subprocess.run([os.path.join(BIN, example), "--expected-only", *args],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    lines = [ln for ln in out.splitlines() if ln.startswith("RFPROF_EXPECTED ")]
    assert len(lines) == 1, out
    doc = json.loads(lines[0][len("RFPROF_EXPECTED "):])
    assert doc["example"] == example, doc
    return doc["kernels"]


def op(kernel, name):
    return kernel["metrics"][f"{S}{name}_pred_on.sum"]


@unittest.skipUnless(BIN, "RFPROF_EXAMPLES_DIR is not set")
class ExpectedOnlyTest(unittest.TestCase):
    def test_every_example_lists_all_nine_metrics_and_consistent_flops(self):
        for example in ("ffma", "fadd_fmul", "hfma2", "dfma", "stream_copy", "sgemm_naive"):
            (k,) = expected(example)
            self.assertEqual(sorted(k["metrics"]), sorted(f"{S}{o}_pred_on.sum" for o in OPS))
            # the analytic FLOPs equal the roofline formulas of the counts (docs: examples/README.md)
            self.assertEqual(k["fp32_flop"], op(k, "fadd") + op(k, "fmul") + 2 * op(k, "ffma"))
            self.assertEqual(k["fp64_flop"], op(k, "dadd") + op(k, "dmul") + 2 * op(k, "dfma"))
            self.assertEqual(k["fp16_flop"],
                             2 * op(k, "hadd") + 2 * op(k, "hmul") + 4 * op(k, "hfma"))
            self.assertEqual(k["launches"], 1)

    def test_counts_scale_with_sizes(self):
        for example, kernel in (("ffma", "ffma_loop"), ("fadd_fmul", "fadd_fmul_mix"),
                                ("hfma2", "half2_fma_loop"), ("dfma", "dfma_mix")):
            (small,) = expected(example, "--blocks", "3", "--iters", "5")
            (big,) = expected(example, "--blocks", "6", "--iters", "10")
            self.assertEqual(small["kernel"], kernel)
            self.assertEqual(small["grid"], [3, 1, 1])
            self.assertEqual(small["block"], [256, 1, 1])
            for m, v in small["metrics"].items():
                self.assertEqual(big["metrics"][m], 4 * v, (example, m))
            self.assertGreater(sum(small["metrics"].values()), 0)
            threads_iters = 3 * 256 * 5
            self.assertEqual(sum(small["metrics"].values()) % threads_iters, 0)

    def test_ffma_count_is_threads_iters_chains(self):
        (k,) = expected("ffma", "--blocks", "2", "--iters", "7")
        self.assertEqual(op(k, "ffma"), 2 * 256 * 7 * 8)

    def test_sgemm_ffma_is_n_cubed(self):
        for n in (16, 48, 1024):
            (k,) = expected("sgemm_naive", "--n", str(n))
            self.assertEqual(op(k, "ffma"), n ** 3)
            self.assertEqual(k["grid"], [n // 16, n // 16, 1])

    def test_stream_copy_bytes(self):
        (k,) = expected("stream_copy", "--mib", "64")
        self.assertEqual(k["dram_read_bytes"], 64 << 20)
        self.assertEqual(k["dram_write_bytes"], 64 << 20)
        self.assertEqual(k["grid"][0] * k["block"][0] * 4, 64 << 20)
        self.assertGreater(k["dram_rel_tolerance"], 0)
        self.assertEqual(sum(k["metrics"].values()), 0)

    def test_bad_sizes_are_refused(self):
        for example, args, needle in (("sgemm_naive", ["--n", "1000"], "multiple of 16"),
                                      ("ffma", ["--blocks", "0"], "--blocks"),
                                      ("stream_copy", ["--mib", "lots"], "--mib")):
            run = subprocess.run([os.path.join(BIN, example), *args, "--expected-only"],
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(run.returncode, 2, (example, args))
            self.assertIn(needle, run.stderr)
            self.assertNotIn("RFPROF_EXPECTED", run.stdout)


if __name__ == "__main__":
    unittest.main()
