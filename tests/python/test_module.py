"""`import ridgeline` (python/ridgeline): each function returns what the command line's JSON report holds, errors
raise ridgeline.Error with the command line's message, and from_torch profiles a torch.nn.Module without a file.

Run by ctest (python.module) as: PYTHON tests/python/test_module.py RIDGELINE_BINARY REPO_ROOT, with PYTHONPATH
holding BUILD/python; Debian's python3-torch is required (scripts/setup.sh --test installs it), never skipped.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

BINARY, ROOT = sys.argv[1], sys.argv[2]
del sys.argv[1:3]
# a ceilings cache of the test's own (the C++ side reads the variable when it runs), removed at exit
_cache = tempfile.TemporaryDirectory(prefix="ridgeline-python-test-")
os.environ["XDG_CACHE_HOME"] = _cache.name

import ridgeline  # noqa: E402  (after the arguments are taken)

LINEAR = "linear:in_features=64,out_features=32"


def cli_json(*args):
    """The binary's JSON report for the same command."""
    out = subprocess.run([BINARY, *args, "--format", "json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def without_run_facts(report):
    """A report without what differs between two runs of the same command (the command line, the source's name)."""
    return {k: v for k, v in report.items() if k not in ("command_line", "source", "ridgeline")}


class Summary(unittest.TestCase):
    def test_a_built_in_model_as_the_command_line_reports_it(self):
        r = ridgeline.summary(model="resnet18")
        # torchvision's resnet18: 11,689,512 parameters; 1.814 GMACs at 1x3x224x224
        self.assertEqual(r["totals"]["params"], 11689512)
        self.assertEqual(without_run_facts(r), without_run_facts(cli_json("summary", "--model", "resnet18")))

    def test_a_layer_string_and_a_shape_as_a_tuple(self):
        r = ridgeline.summary(layer=LINEAR, input=(8, 64))
        # params 64 * 32 + 32 = 2,080; MACs 8 rows * 64 * 32 = 16,384
        self.assertEqual(r["totals"]["params"], 2080)
        self.assertEqual(r["totals"]["macs"], 16384)

    def test_onnx_bytes_read_as_the_file(self):
        path = os.path.join(ROOT, "examples", "tiny_cnn.onnx")
        with open(path, "rb") as f:
            from_bytes = ridgeline.summary(onnx=f.read())
        from_file = ridgeline.summary(onnx=path)
        self.assertEqual(from_bytes["layers"], from_file["layers"])
        self.assertEqual(from_bytes["totals"], from_file["totals"])

    def test_a_config_json_as_a_dict(self):
        with open(os.path.join(ROOT, "examples", "tinyllama-config.json")) as f:
            config = json.load(f)
        # TinyLlama-1.1B: 1,100,048,384 parameters (Hugging Face's model card)
        self.assertEqual(ridgeline.summary(hf_config=config)["totals"]["params"], 1100048384)


class Threads(unittest.TestCase):
    def test_calls_from_several_threads_each_get_their_own_report(self):
        import threading

        results = {}

        def call(i):  # a different layer per thread: each report must be its own call's
            r = ridgeline.summary(layer=f"linear:in_features=64,out_features={i + 1}", input=(8, 64))
            results[i] = r["totals"]["params"]

        threads = [threading.Thread(target=call, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # params of linear 64 -> n: 64 * n + n
        self.assertEqual(results, {i: 65 * (i + 1) for i in range(6)})


class Errors(unittest.TestCase):
    def test_an_unknown_model_raises_with_the_command_lines_message(self):
        with self.assertRaises(ridgeline.Error) as e:
            ridgeline.summary(model="resnet19")
        self.assertIn('unknown model "resnet19" (did you mean "resnet18"?)', str(e.exception))
        self.assertEqual(e.exception.exit_code, 2)

    def test_a_shape_the_layer_cannot_take(self):
        with self.assertRaises(ridgeline.Error) as e:
            ridgeline.summary(layer=LINEAR, input=(8, 63))
        self.assertIn("63", str(e.exception))
        self.assertEqual(e.exception.exit_code, 2)

    def test_an_unknown_option_names_the_closest(self):
        with self.assertRaises(ridgeline.Error) as e:
            ridgeline.profile(layer=LINEAR, input=(8, 64), fast=True)
        self.assertIn('(did you mean "--quick"?)', str(e.exception))

    def test_a_missing_file(self):
        with self.assertRaises(ridgeline.Error) as e:
            ridgeline.compare("no-such-report.json", "no-such-report.json")
        self.assertIn("no-such-report.json", str(e.exception))
        self.assertEqual(e.exception.exit_code, 1)

    def test_true_for_an_option_that_takes_a_value(self):
        # --svg takes a FILE: True would swallow the next option as its file name
        with self.assertRaises(ridgeline.Error) as e:
            ridgeline.profile(layer=LINEAR, input=(8, 64), svg=True, no_verify=True)
        self.assertIn("svg= of ridgeline profile takes a value, not True", str(e.exception))

    def test_bytes_and_dicts_are_named_as_given_not_by_their_temporary_file(self):
        with self.assertRaises(ridgeline.Error) as e:
            ridgeline.summary(onnx=b"")
        self.assertTrue(str(e.exception).startswith("the onnx= bytes: the file is empty"), str(e.exception))

    def test_a_nul_character_is_refused_not_cut_short(self):
        with self.assertRaises(ridgeline.Error) as e:
            ridgeline.summary(model="resnet18\0garbage")
        self.assertIn("NUL", str(e.exception))

    def test_errors_cross_processes(self):
        import pickle

        e = pickle.loads(pickle.dumps(ridgeline.Error("m", 2)))
        self.assertEqual((str(e), e.exit_code), ("m", 2))

    def test_help_and_version_come_back_as_text(self):
        self.assertTrue(ridgeline.run("--version").startswith("ridgeline "))
        self.assertIn("Usage: ridgeline summary", ridgeline.run("summary", "--help"))

    def test_format_is_not_an_option_here(self):
        with self.assertRaises(ridgeline.Error) as e:
            ridgeline.summary(model="resnet18", format="csv")
        self.assertIn("format= is not taken by ridgeline.summary", str(e.exception))


INTERRUPTED = r"""
import os, signal, threading, ridgeline
threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    ridgeline.profile(model="resnet101", quick=True, device="cpu", quiet=True)
    print("not interrupted")
except KeyboardInterrupt:
    print("KeyboardInterrupt")
# Python's own Ctrl-C handling is back, and the next run is not stopped by the last one's flag
print("handler restored", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
print("params", ridgeline.summary(layer="linear:in_features=64,out_features=32", input=(8, 64))["totals"]["params"])
print("profiled", ridgeline.profile(layer="linear:in_features=64,out_features=32", input=(8, 64), quick=True,
                                    device="cpu", quiet=True)["complete"])
"""


class Interrupt(unittest.TestCase):
    def test_ctrl_c_raises_keyboard_interrupt_and_leaves_python_as_it_was(self):
        r = subprocess.run([sys.executable, "-c", INTERRUPTED], capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(),
                         ["KeyboardInterrupt", "handler restored True", "params 2080", "profiled True"], r.stderr)


class ProfilePredictCompare(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.report = ridgeline.profile(layer=LINEAR, input=(8, 64), quick=True, device="cpu", quiet=True)

    def test_a_profile_holds_the_measured_layer(self):
        layer = self.report["layers"][0]
        median = layer["time"]["median_ms"]
        self.assertGreater(median, 0.0)
        # FLOPs 2 * 16,384 MACs + 8 * 32 bias adds = 33,024; achieved = FLOPs / median
        self.assertEqual(layer["flops"], 33024)
        self.assertAlmostEqual(layer["achieved_gflops"], 33024 / (median * 1e-3) / 1e9, places=6)
        self.assertEqual(layer["verification"]["state"], "passed")

    def test_predict_takes_the_profile_as_a_dict(self):
        p = ridgeline.predict(self.report, to="h100")
        self.assertEqual(p["prediction"]["models"], "op-class")
        self.assertEqual(len(p["layers"]), 1)
        self.assertGreater(p["layers"][0]["time"]["median_ms"], 0.0)
        self.assertTrue(p["layers"][0]["time"]["predicted"])

    def test_compare_takes_two_dicts(self):
        c = ridgeline.compare(self.report, self.report)
        self.assertEqual(len(c["layers"]), 1)
        # the same report twice: the speedup is 1 exactly
        self.assertAlmostEqual(c["layers"][0]["runs"][1]["speedup"], 1.0, places=12)

    def test_ceilings_as_the_profile_used_them(self):
        c = ridgeline.ceilings(quick=True, device="cpu")
        self.assertGreater(c["bandwidth_gbs"], 0.0)
        self.assertGreater(c["dispatch_overhead_ms"], 0.0)
        self.assertEqual(c["schema"], "ridgeline.ceilings/3")


class FromTorch(unittest.TestCase):
    def test_a_module_is_profiled_without_a_file(self):
        import torch

        torch.manual_seed(0)
        module = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(8 * 16 * 16, 10)
        )
        before = [p.clone() for p in module.parameters()]
        r = ridgeline.from_torch(module, torch.randn(2, 3, 16, 16), quick=True, device="cpu", quiet=True)
        by_op = {}
        for layer in r["layers"]:
            by_op.setdefault(layer["op"], []).append(layer)
        # conv: 2 images * 8 channels * 16 * 16 outputs * 27 taps = 110,592 MACs, 3 * 8 * 9 + 8 = 224 params;
        # linear: 2 rows * 2,048 * 10 = 40,960 MACs, 2,048 * 10 + 10 = 20,490 params
        self.assertEqual([l["macs"] for l in by_op["conv2d"]], [110592])
        self.assertEqual([l["params"] for l in by_op["conv2d"]], [224])
        self.assertEqual([l["macs"] for l in by_op["linear"]], [40960])
        self.assertEqual(r["totals"]["params"], 224 + 20490)
        self.assertEqual(r["model"], "Sequential")  # the module's class names the model
        # every layer that does work is measured and matches the reference (Flatten is a view: no work, no check)
        for op in ("conv2d", "relu", "linear"):
            for layer in by_op[op]:
                self.assertEqual(layer["state"], "measured", layer["name"])
                self.assertEqual(layer["verification"]["state"], "passed", layer["name"])
        # the module is as it was: its mode and its weights
        self.assertTrue(module.training)
        for a, b in zip(before, module.parameters()):
            self.assertTrue(torch.equal(a, b))


if __name__ == "__main__":
    unittest.main(verbosity=2)
