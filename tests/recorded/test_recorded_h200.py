"""rfanalyze on what rfprof and ncu recorded on an H200 (tests/data/h200-2026-11-30/README.md).

Replay across steps against ncu's report of the same ResNet-18 step, before and after the fix of
2026-11-30 (concurrent kernel tracing made every smsp__sass_* count 0), and the traces of a
SIGKILLed and a SIGTERMed run. RFANALYZE names the rfanalyze executable.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "h200-2026-11-30")
COMPARE_REPLAY = os.path.join(ROOT, "scripts", "compare_replay.py")


class RecordedH200(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def analyze(self, name, trace):
        """rfanalyze TRACE -o TMP/NAME; returns (folder, stderr, summary.json's first trace)."""
        out = os.path.join(self.tmp.name, name)
        run = subprocess.run([os.environ["RFANALYZE"], trace, "-o", out], capture_output=True, text=True,
                             timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        return out, run.stderr, summary

    def compare_with_ncu(self, trace):
        out, _, _ = self.analyze(os.path.basename(trace), trace)
        ncu = os.path.join(DATA, "resnet18", "resnet18-step.ncu.csv")
        return subprocess.run([sys.executable, COMPARE_REPLAY, ncu, out], capture_output=True, text=True,
                              timeout=120)

    def test_step_replay_equals_ncu_on_every_instruction_count(self):
        # Kernels recorded serialized (the fix): every smsp__sass_* count of the 387 launches is ncu's.
        run = self.compare_with_ncu(os.path.join(DATA, "resnet18", "resnet18-step-replay.rftrace"))
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("launches: ncu 387, step replay 387 in 1 timing window(s)", run.stdout)
        self.assertIn("smsp__sass_* counts compared: 3483, equal: 3483", run.stdout)

    def test_step_replay_with_concurrent_kernel_records_counted_nothing(self):
        # The run before the fix: ncu's 493 nonzero counts all read 0, and compare_replay says so.
        run = self.compare_with_ncu(os.path.join(DATA, "resnet18", "resnet18-step-replay-concurrent-records.rftrace"))
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn("smsp__sass_* counts compared: 3483, equal: 2990", run.stdout)
        self.assertIn("problems: 493", run.stdout)
        self.assertIn("step replay 0 != ncu", run.stdout)

    def test_step_replay_flop_come_from_the_timing_window(self):
        # 387 launches, all in the uninstrumented timing window, each with counters and a duration.
        out, _, summary = self.analyze("step", os.path.join(DATA, "resnet18", "resnet18-step-replay.rftrace"))
        t = summary["traces"][0]
        self.assertEqual(t["launches"], 387)
        self.assertFalse(t["truncated"])
        join = t["join"]
        self.assertEqual(join["rows_without_counters"], 0)
        self.assertEqual(join["rows_without_kernel"], 0)
        self.assertEqual(join["durations_from_gpu_time_duration"], 0)  # kernel records timed them
        self.assertEqual(summary["totals"]["launches_with_counters"], 387)
        # The same FLOP as ncu's report of the step, read with --import-ncu.
        ncu_out = os.path.join(self.tmp.name, "ncu")
        run = subprocess.run([os.environ["RFANALYZE"], "--import-ncu", os.path.join(DATA, "resnet18", "resnet18-step.ncu.csv"),
                              "-o", ncu_out], capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(os.path.join(ncu_out, "summary.json")) as f:
            ncu = json.load(f)["totals"]
        for precision in ("fp32_flop", "fp16_flop", "fp64_flop"):
            self.assertEqual(summary["totals"][precision], ncu[precision], precision)
        self.assertGreater(summary["totals"]["fp32_flop"], 0)

    def test_metric_list_before_the_tensor_pipe_count_flags_nothing(self):
        # Recorded with the 14-metric default list, before sm__inst_executed_pipe_tensor.sum joined it:
        # cuDNN's TF32 convolutions went uncounted, but nothing measured says so. kernels.csv has the
        # column, empty in every row; summary.json has the key, null; stderr has no warning.
        out, err, summary = self.analyze("before-pipe", os.path.join(DATA, "resnet18", "resnet18-step-replay.rftrace"))
        self.assertEqual(summary["traces"][0]["metric_configs"][0]["metrics"], 14)
        self.assertIn("uncounted_tensor_work", summary)
        self.assertIsNone(summary["uncounted_tensor_work"])
        self.assertNotIn("tensor-core instructions", err)
        with open(os.path.join(out, "kernels.csv"), newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = next(reader)
            rows = list(reader)
        self.assertEqual(header[-1], "tensor_pipe_inst")
        self.assertEqual(len(rows), 387)
        self.assertEqual({len(r) for r in rows}, {len(header)})
        self.assertEqual({r[-1] for r in rows}, {""})

    def test_sigkilled_timing_run_is_analyzable(self):
        # ResNet-18, 8 DataLoader workers, timing mode, SIGKILL after step 10: the .part trace is read
        # as far as it is whole.
        _, err, summary = self.analyze("sigkill", os.path.join(DATA, "kill", "resnet18-timing-sigkill.part.rftrace"))
        self.assertIn("is truncated at byte 360483", err)
        t = summary["traces"][0]
        self.assertTrue(t["truncated"])
        self.assertEqual(t["launches"], 3671)

    def test_sigtermed_step_replay_run_finished_its_trace_and_said_what_it_dropped(self):
        # SIGTERM while step 5 stalled in group 2's second pass: the trace is finished, the complete
        # group's launches are in it, and the incomplete group is one collector error.
        _, err, summary = self.analyze("sigterm", os.path.join(DATA, "kill", "resnet18-step-replay-sigterm.rftrace"))
        self.assertNotIn("truncated", err)
        t = summary["traces"][0]
        self.assertFalse(t["truncated"])
        self.assertEqual(t["launches"], 378)
        errors = summary["collector_errors"]
        self.assertEqual([e["code_name"] for e in errors], ["counters_unavailable"])
        self.assertIn("the run ended during group 2, after 1 of its 2 pass windows", errors[0]["message"])


if __name__ == "__main__":
    unittest.main()
