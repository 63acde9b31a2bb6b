"""Tests of scripts/compare.py on fixture folders in tests/examples/data/val (the layout that
scripts/gpu-validate writes): ncu raw CSVs with quoted fields, thousands separators, a units row
and ==PROF== lines; rfanalyze counters.csv/kernels.csv; an example's RFPROF_EXPECTED JSON."""
import contextlib
import csv
import io
import json
import math
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import compare  # noqa: E402

DATA = os.path.join(HERE, "data", "val")
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"


class FixtureCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.root = os.path.join(self.tmp, "val")
        shutil.copytree(DATA, self.root)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def path(self, rel):
        return os.path.join(self.root, rel)

    def edit(self, rel, old, new, count=1):
        with open(self.path(rel), encoding="utf-8") as f:
            text = f.read()
        self.assertEqual(text.count(old), count, f"fixture {rel} changed: {old!r}")
        with open(self.path(rel), "w", encoding="utf-8") as f:
            f.write(text.replace(old, new))

    def run_compare(self, workloads=None):
        out = io.StringIO()
        problems = compare.run(self.root, workloads, out=out)
        return problems, out.getvalue()

    def read_rows(self, name):
        with open(self.path(name), encoding="utf-8", newline="") as f:
            return list(csv.reader(f))


class NcuRawTest(unittest.TestCase):
    def test_reads_launches_in_id_order_with_units_and_separators(self):
        launches = compare.read_ncu_raw(os.path.join(DATA, "ncu", "resnet_mini.csv"))
        self.assertEqual([x["id"] for x in launches], [0, 1, 2, 3])
        gemm = launches[1]["metrics"]
        self.assertAlmostEqual(gemm["dram__bytes_read.sum"], 1024.5e6)  # "1,024.50" Mbyte
        self.assertAlmostEqual(gemm["dram__bytes_write.sum"], 51.2e6)  # "51,200.00" Kbyte
        self.assertAlmostEqual(gemm["gpu__time_duration.sum"], 210750.0)  # "210.75" usecond
        self.assertEqual(gemm[FFMA], 1204224.0)  # "1,204,224" inst
        self.assertIsNone(launches[3]["metrics"]["dram__bytes_read.sum"])  # "n/a"
        self.assertEqual([x["base"] for x in launches],
                         ["vectorized_elementwise_kernel", launches[1]["kernel"],
                          "bn_fw_tr_1C11_kernel_NCHW", "vectorized_elementwise_kernel"])

    def test_plain_units_and_prof_lines(self):
        (launch,) = compare.read_ncu_raw(os.path.join(DATA, "ncu", "ffma.csv"))
        self.assertEqual(launch["base"], "ffma_loop")
        self.assertEqual(launch["metrics"][FFMA], 2147483648.0)
        self.assertEqual(launch["metrics"]["dram__bytes_read.sum"], 8454144.0)

    def test_file_without_header_is_bad_input(self):
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write("==PROF== Connected\n==ERROR== The application returned an error code (1).\n")
        try:
            with self.assertRaises(compare.BadInput) as ctx:
                compare.read_ncu_raw(f.name)
            self.assertIn('"ID"', str(ctx.exception))
        finally:
            os.unlink(f.name)


class NamesTest(unittest.TestCase):
    def test_function_base_name(self):
        cases = {
            "(anonymous namespace)::ffma_loop(float const*, float*, float, float, int)": "ffma_loop",
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
            "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)":
                "vectorized_elementwise_kernel",
            "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<F>("
            "at::TensorIteratorBase&, F const&)::{lambda(int)#1}>(int, T3)": "elementwise_kernel",
            "sm90_xmma_fprop_implicit_gemm_kernel": "sm90_xmma_fprop_implicit_gemm_kernel",
            "_ZN35_GLOBAL__N__83c1d214_7_ffma_cu_main9ffma_loopEPKfPfffi": "ffma_loop",
            "_Z11sgemm_naivePKfS0_Pfi": "sgemm_naive",
        }
        for name, base in cases.items():
            self.assertEqual(compare.function_base_name(name), base, name)

    def test_unit_factor(self):
        self.assertEqual(compare.unit_factor("Gbyte"), 1e9)
        self.assertEqual(compare.unit_factor("msecond"), 1e6)
        self.assertEqual(compare.unit_factor("inst"), 1.0)
        self.assertEqual(compare.unit_factor("Kinst"), 1e3)


class CompareTest(FixtureCase):
    def test_clean_fixture_matches(self):
        problems, summary = self.run_compare()
        self.assertEqual(problems, [])
        rows = self.read_rows("compare.csv")
        self.assertEqual(rows[0], ["workload", "launch", "kernel", "metric", "rfprof", "ncu"])
        # ffma: 1 launch x 14 metrics; resnet_mini: 4 launches x 4 metrics
        self.assertEqual(len(rows) - 1, 14 + 16)
        ffma = [r for r in rows if r[0] == "ffma" and r[3] == FFMA]
        self.assertEqual(ffma, [["ffma", "0", ffma[0][2], FFMA, "2147483648", "2147483648"]])
        gemm_read = [r for r in rows if r[0] == "resnet_mini" and r[1] == "1"
                     and r[3] == "dram__bytes_read.sum"]
        self.assertEqual(gemm_read[0][4:], ["1003520000", "1024500000"])
        self.assertRegex(summary, r"resnet_mini\s+3\s")  # 3 launches with both DRAM values

    def test_instruction_count_difference_is_a_problem(self):
        self.edit("ncu/ffma.csv", '"2,147,483,648"', '"2,147,483,649"')
        problems, _ = self.run_compare()
        self.assertEqual(len(problems), 2)  # rfprof vs ncu, and ncu vs the expected count
        self.assertIn(f"launch 0 ffma_loop: {FFMA}: rfprof 2147483648 != ncu 2147483649",
                      problems[0])
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(compare.main([self.root]), 1)

    def test_dram_difference_is_reported_not_judged(self):
        self.edit("analysis/ffma/counters.csv", "dram__bytes_read.sum,8388608",
                  "dram__bytes_read.sum,4000000")
        problems, summary = self.run_compare(["ffma"])
        self.assertEqual(problems, [])
        self.assertRegex(summary, r"dram__bytes_read.sum\s+1\s+0\s+0.52")

    def test_missing_launch_is_reported_and_the_rest_stays_aligned(self):
        path = self.path("analysis/resnet_mini/counters.csv")
        with open(path, encoding="utf-8") as f:
            lines = [ln for ln in f if not ln.startswith("13,")]  # drop the batch norm launch
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(lines)
        problems, _ = self.run_compare(["resnet_mini"])
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("bn_fw_tr_1C11_kernel_NCHW, ncu id 2) is in ncu only", problems[0])
        rows = self.read_rows("compare.csv")
        last = [r for r in rows if r[1] == "3" and r[3] == "dram__bytes_write.sum"]
        self.assertEqual(last[0][4:], ["4100000", "4096000"])  # rfprof id 14 paired with ncu 3

    def test_kernel_name_disagreement_is_a_problem(self):
        self.edit("ncu/ffma.csv", "(anonymous namespace)::ffma_loop(", "fadd_loop(")
        problems, _ = self.run_compare(["ffma"])
        self.assertTrue(any("ffma_loop, rfprof id 1) is in rfprof only" in p for p in problems))
        self.assertTrue(any("fadd_loop, ncu id 0) is in ncu only" in p for p in problems))

    def test_bad_folder_exits_2(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(compare.main([os.path.join(self.root, "missing")]), 2)
        self.assertIn("not a directory", err.getvalue())


class ProcessKeyTest(FixtureCase):
    """counters.csv's pid and window columns (rfanalyze of 2026-11-29): CUPTI's correlation ids restart
    in each process, so two traces analyzed together share ids; launches are keyed by (pid, id)."""

    KERNEL = "(anonymous namespace)::ffma_loop(float const*, float*, float, float, int)"

    def write_counters(self, rows, header=("id", "kernel", "metric", "value", "pid", "window")):
        path = self.path("analysis/ffma/counters.csv")
        with open(path, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(rows)
        return path

    def two_processes(self, pids=(101, 202)):
        """Launches 12 and 13 in each of two processes (window 1), FFMA 7 and 8."""
        return [[lid, self.KERNEL, FFMA, ffma, pid, 1] for pid in pids for lid, ffma in ((12, 7), (13, 8))]

    def test_equal_ids_of_two_processes_stay_apart(self):
        launches = compare.read_rfprof_counters(self.write_counters(self.two_processes()))
        self.assertEqual([(x["pid"], x["id"], x["window"]) for x in launches],
                         [(101, 12, 1), (101, 13, 1), (202, 12, 1), (202, 13, 1)])
        self.assertEqual([x["metrics"][FFMA] for x in launches], [7, 8, 7, 8])
        # Trace order (rfanalyze's), not pid order: the first process written comes first.
        launches = compare.read_rfprof_counters(self.write_counters(self.two_processes((303, 202))))
        self.assertEqual([x["pid"] for x in launches], [303, 303, 202, 202])

    def test_a_key_twice_is_bad_input_naming_it(self):
        with self.assertRaises(compare.BadInput) as ctx:  # two traces of one process
            compare.read_rfprof_counters(self.write_counters(self.two_processes((101, 101))))
        self.assertIn("launch pid 101 id 12 appears twice", str(ctx.exception))
        # Without the pid column (an older rfanalyze), two processes' ids 12 are refused too.
        old = [r[:4] for r in self.two_processes()]
        with self.assertRaises(compare.BadInput) as ctx:
            compare.read_rfprof_counters(self.write_counters(old, ("id", "kernel", "metric", "value")))
        self.assertIn("launch id 12 appears twice", str(ctx.exception))
        self.assertIn("without the pid column", str(ctx.exception))
        # One launch's metric twice in a row is two launches under one key as well.
        with self.assertRaises(compare.BadInput):
            compare.read_rfprof_counters(self.write_counters([[12, self.KERNEL, FFMA, 7, 101, 1]] * 2))

    def test_old_counters_without_the_columns_read_as_before(self):
        launches = compare.read_rfprof_counters(self.path("analysis/resnet_mini/counters.csv"))
        self.assertEqual([(x["pid"], x["id"], x["window"]) for x in launches],
                         [(None, 11, None), (None, 12, None), (None, 13, None), (None, 14, None)])

    def test_flops_are_keyed_by_pid_and_id_like_the_counters(self):
        path = self.path("analysis/ffma/kernels.csv")
        with open(path, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "pid", "kernel", "fp64_flop", "fp32_flop", "fp16_flop"])
            w.writerows([[12, 101, "k", 0, 14, 0], [12, 202, "k", 0, 16, 0],
                         [5, 101, "graph kernel", "", "", ""], [5, 101, "graph kernel", "", "", ""]])
        flops = compare.read_rfprof_flops(path)
        self.assertEqual(flops[(101, 12)]["fp32_flop"], 14)
        self.assertEqual(flops[(202, 12)]["fp32_flop"], 16)  # not the first process's
        x = compare._launch(12, "k", pid=202)
        self.assertEqual(compare.flops_of(flops, x)["fp32_flop"], 16)
        with self.assertRaises(compare.BadInput):  # a counters.csv without pids cannot tell which
            compare.flops_of(flops, compare._launch(12, "k"))
        with open(path, "a", encoding="utf-8", newline="") as f:
            csv.writer(f).writerow([12, 202, "k", 0, 18, 0])
        with self.assertRaises(compare.BadInput) as ctx:
            compare.read_rfprof_flops(path)
        self.assertIn("launch pid 202 id 12 appears twice", str(ctx.exception))

    def test_run_checks_each_process_with_its_own_flop(self):
        # Two processes ran ffma once each, with equal ids: two launches, each with its own FLOP.
        self.write_counters([[1, self.KERNEL, FFMA, 2147483648, pid, 0] for pid in (101, 202)])
        path = self.path("analysis/ffma/kernels.csv")
        with open(path, encoding="utf-8", newline="") as f:
            table = list(csv.reader(f))
        table[1][1] = "101"
        second = list(table[1])
        second[1] = "202"
        second[table[0].index("fp32_flop")] = "1"
        with open(path, "w", encoding="utf-8", newline="") as f:
            csv.writer(f).writerows(table + [second])
        problems, _ = self.run_compare(["ffma"])
        self.assertIn("ffma: ffma_loop: rfprof saw 2 launch(es), expected 1", problems)
        self.assertIn("ffma: ffma_loop: fp32_flop: rfprof 4294967297, expected 4294967296", problems)
        self.assertIn("ffma: launch 1 (ffma_loop, rfprof pid 202 id 1) is in rfprof only", problems)


class ExpectedTest(FixtureCase):
    def test_expected_rows(self):
        self.run_compare(["ffma"])
        rows = self.read_rows("expected.csv")
        self.assertEqual(rows[0], ["workload", "kernel", "metric", "expected", "rfprof", "ncu", "ok"])
        self.assertIn(["ffma", "ffma_loop", "fp32_flop", "4294967296", "4294967296", "", "yes"], rows)
        self.assertEqual(len(rows) - 1, 9 + 3)

    def test_expected_count_not_met(self):
        self.edit("expected/ffma.json", f'"{FFMA}":2147483648', f'"{FFMA}":2147483647')
        problems, _ = self.run_compare(["ffma"])
        self.assertEqual(len(problems), 2)  # rfprof and ncu both differ from the expectation
        self.assertIn("ffma_loop: " + FFMA + ": rfprof 2147483648, expected 2147483647",
                      problems[0])

    def test_flop_formula_not_met(self):
        self.edit("analysis/ffma/kernels.csv", ",4294967296,", ",2147483648,")
        problems, _ = self.run_compare(["ffma"])
        self.assertEqual(problems, ["ffma: ffma_loop: fp32_flop: rfprof 2147483648, expected "
                                    "4294967296"])

    def test_unexpected_kernel_is_a_problem(self):
        self.edit("analysis/ffma/counters.csv", "(anonymous namespace)::ffma_loop(",
                  "init_kernel(", count=14)
        problems, _ = self.run_compare(["ffma"])
        self.assertTrue(any("init_kernel is not an expected kernel" in p for p in problems))
        self.assertTrue(any("rfprof saw 0 launch(es), expected 1" in p for p in problems))

    def test_dram_tolerance(self):
        gib = 2.0 ** 30
        expected = {"kernels": [{"kernel": "stream_copy", "launches": 1, "metrics": {},
                                 "fp32_flop": 0, "fp64_flop": 0, "fp16_flop": 0,
                                 "dram_read_bytes": gib, "dram_write_bytes": gib,
                                 "dram_rel_tolerance": 0.05}]}

        def launch(read, write):
            x = compare._launch(1, "stream_copy(float const*, float*)")
            x["metrics"] = {"dram__bytes_read.sum": read, "dram__bytes_write.sum": write}
            return [x]

        _, ok = compare.check_expected("s", expected, launch(gib * 1.01, gib * 0.97))
        self.assertEqual(ok, [])
        rows, bad = compare.check_expected("s", expected, launch(gib * 1.01, gib * 0.90))
        self.assertEqual(len(bad), 1)
        self.assertIn("dram__bytes_write.sum: rfprof", bad[0])
        self.assertIn("(tolerance 5%)", bad[0])
        self.assertEqual([r[-1] for r in rows], ["yes", "no"])


class HelpersTest(unittest.TestCase):
    def test_rel_diff(self):
        self.assertEqual(compare.rel_diff(5.0, 5.0), 0.0)
        self.assertEqual(compare.rel_diff(0.0, 0.0), 0.0)
        self.assertTrue(math.isinf(compare.rel_diff(1.0, 0.0)))
        self.assertAlmostEqual(compare.rel_diff(90.0, 100.0), 0.1)
        self.assertIsNone(compare.rel_diff(None, 1.0))

    def test_percentile_nearest_rank(self):
        values = [float(v) for v in range(1, 11)]
        self.assertEqual(compare.percentile(values, 90), 9.0)
        self.assertEqual(compare.percentile(values, 100), 10.0)
        self.assertEqual(compare.percentile([3.0], 90), 3.0)

    def test_expected_json_shape_checked(self):
        tmp = tempfile.mkdtemp()
        try:
            shutil.copytree(DATA, os.path.join(tmp, "v"))
            with open(os.path.join(tmp, "v", "expected", "ffma.json"), "w") as f:
                json.dump({"example": "ffma"}, f)
            with self.assertRaises(compare.BadInput):
                compare.run(os.path.join(tmp, "v"), ["ffma"], out=io.StringIO())
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    unittest.main()
