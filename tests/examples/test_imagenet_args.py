"""Tests of examples/imagenet/main.py that need no PyTorch: its arguments (defaults, checks)."""
import contextlib
import importlib.util
import io
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
MAIN = os.path.join(HERE, "..", "..", "examples", "imagenet", "main.py")
spec = importlib.util.spec_from_file_location("imagenet_main", MAIN)
main = importlib.util.module_from_spec(spec)
spec.loader.exec_module(main)  # must not import torch


class ArgsTest(unittest.TestCase):
    def test_defaults(self):
        a = main.parse_args(["--dummy"])
        self.assertEqual((a.arch, a.batch_size, a.iters, a.warmup, a.profile_iters),
                         ("resnet18", 64, 20, 5, 2))
        self.assertFalse(a.amp)
        self.assertFalse(a.flop_count)

    def test_nvtx_options(self):
        a = main.parse_args(["--dummy"])
        self.assertFalse(a.emit_nvtx or a.nvtx_layers)
        a = main.parse_args(["--dummy", "--emit-nvtx", "--nvtx-layers"])
        self.assertTrue(a.emit_nvtx and a.nvtx_layers)

    def test_short_options(self):
        a = main.parse_args(["-a", "resnet50", "-b", "32", "--dummy", "--iters", "8",
                             "--warmup", "3", "--profile-iters", "1", "--amp", "--flop-count"])
        self.assertEqual((a.arch, a.batch_size, a.iters, a.warmup, a.profile_iters),
                         ("resnet50", 32, 8, 3, 1))
        self.assertTrue(a.amp and a.flop_count)

    def refused(self, argv, needle):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as ctx:
            main.parse_args(argv)
        self.assertEqual(ctx.exception.code, 2)
        self.assertIn(needle, err.getvalue())

    def test_profiled_window_must_fit(self):
        self.refused(["--dummy", "--iters", "6", "--warmup", "5", "--profile-iters", "2"],
                     "must not exceed --iters (6)")

    def test_data_or_dummy(self):
        self.refused([], "--dummy")
        self.refused([], "--fake-data")
        self.refused(["--dummy", "--fake-data"], "exclude each other")

    def test_window_per_step(self):
        self.assertFalse(main.parse_args(["--dummy"]).window_per_step)
        self.assertTrue(main.parse_args(["--dummy", "--window-per-step"]).window_per_step)

    def test_stall_at_step(self):
        a = main.parse_args(["--dummy"])
        self.assertIsNone(a.stall_at_step)
        a = main.parse_args(["--dummy", "--iters", "8", "--stall-at-step", "7", "--stall-s", "2.5"])
        self.assertEqual((a.stall_at_step, a.stall_s), (7, 2.5))
        self.refused(["--dummy", "--iters", "8", "--stall-at-step", "8"], "--stall-at-step must name a step from 0 to 7")
        self.refused(["--dummy", "--stall-at-step", "-1"], "--stall-at-step")
        self.refused(["--dummy", "--stall-at-step", "1", "--stall-s", "-1"], "--stall-s must be at least 0")
        self.refused(["--dummy", "--stall-at-step", "1", "--stall-s", "nan"], "--stall-s must be at least 0")

    def test_fake_data_with_workers(self):
        a = main.parse_args(["--fake-data", "--num-workers", "8"])
        self.assertTrue(a.fake_data)
        self.assertFalse(a.dummy)
        self.assertEqual(a.num_workers, 8)

    def test_positive_sizes(self):
        self.refused(["--dummy", "-b", "0"], "--batch-size must be at least 1")
        self.refused(["--dummy", "--warmup", "-1"], "--warmup must be at least 0")

    def test_help_runs_without_torch(self):
        import subprocess
        import sys
        run = subprocess.run([sys.executable, MAIN, "--help"], capture_output=True, text=True,
                             timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        for option in ("--arch", "--batch-size", "--dummy", "--iters", "--warmup",
                       "--profile-iters", "--amp", "--flop-count", "--num-workers"):
            self.assertIn(option, run.stdout)

    def test_torch_not_imported_by_parsing(self):
        import sys
        main.parse_args(["--dummy"])
        self.assertNotIn("torch", sys.modules)


if __name__ == "__main__":
    unittest.main()
