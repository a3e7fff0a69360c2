"""ridgeline from Python: each command of the `ridgeline` command line, run in this process, its report returned
as Python objects (dicts, lists, numbers and strings: the JSON report, docs/json-schema.md).

Keyword arguments are the command's options, spelled as in Python (``kv_len=1024`` is ``--kv-len 1024``):

* ``True`` gives a flag (``quick=True`` is ``--quick``); ``None`` and ``False`` leave the option out;
* a tuple of ints is a shape (``input=(1, 3, 224, 224)`` is ``--input 1x3x224x224``);
* a list gives its items as one comma-separated value (``batch=[1, 8, 32]`` is ``--batch 1,8,32``), except for
  ``input``, where each shape is its own ``--input``;
* ``onnx=`` takes a file name or the file's bytes, ``hf_config=`` and ``model_file=`` a file name or a dict (written
  to a temporary file for the command, and removed after it).

Reports given to ``compare`` and ``predict`` are file names or the dicts ``profile`` returned.

Every mistake ridgeline finds raises ``ridgeline.Error`` with the command line's one-line message; its
``exit_code`` is 2 for a usage mistake (a wrong option, a shape the model cannot take) and 1 for anything else.

    >>> import ridgeline
    >>> ridgeline.summary(model="resnet18")["totals"]["params"]
    11689512
"""

import json
import os
import tempfile

from . import _ridgeline

__all__ = ["Error", "run", "summary", "profile", "ceilings", "predict", "compare", "sweep", "weights", "from_torch"]
__version__ = _ridgeline.version


class Error(Exception):
    """A mistake ridgeline found: the message is the command line's one line, exit_code its exit status (1 or 2)."""

    def __init__(self, message, exit_code):
        super().__init__(message)
        self.exit_code = exit_code


def run(*args):
    """Runs ``ridgeline ARGS...`` and returns what it writes as its report (a str); raises Error on a failure, and
    KeyboardInterrupt where Ctrl-C stopped a profile (its partial report is dropped)."""
    code, out, error = _ridgeline.run([str(a) for a in args])
    if code == 130:  # SIGINT (Ctrl-C) stopped a profile: what the command line exits with, as Python's own
        raise KeyboardInterrupt(error or "ridgeline: interrupted")
    if code != 0:
        raise Error(error or f"ridgeline {' '.join(map(str, args))} exited with {code}", code)
    return out.decode("utf-8")


class _Files:
    """Temporary files holding the bytes and dicts given for file options; removed when the command ends."""

    def __init__(self):
        self.dir = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.dir is not None:
            self.dir.cleanup()

    def write(self, name, content):
        if self.dir is None:
            self.dir = tempfile.TemporaryDirectory(prefix="ridgeline-")
        path = os.path.join(self.dir.name, name)
        with open(path, "wb") as f:
            f.write(content)
        return path


def _shape(value):
    return "x".join(str(int(d)) for d in value)


def _file_value(key, value, files):
    """A file option's value: a name as it is, bytes or a dict written to a temporary file."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return files.write(key + (".onnx" if key == "onnx" else ".bin"), bytes(value))
    if isinstance(value, dict):
        return files.write(key + ".json", json.dumps(value).encode("utf-8"))
    return os.fspath(value)


def _options(options, files):
    args = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_")  # from_: `from` is Python's keyword
        flag = "--" + name.replace("_", "-")
        if value is True:
            args.append(flag)
        elif name in ("onnx", "hf_config", "model_file", "from", "to"):
            args += [flag, _file_value(name, value, files)]
        elif name == "input":
            shapes = [value] if isinstance(value, tuple) or isinstance(value, str) else value
            for s in shapes:
                args += [flag, s if isinstance(s, str) else _shape(s)]
        elif isinstance(value, tuple):
            args += [flag, _shape(value)]
        elif isinstance(value, list):
            args += [flag, ",".join(str(v) for v in value)]
        else:
            args += [flag, str(value)]
    return args


def _report(command, positional, options):
    """``ridgeline COMMAND POSITIONAL... OPTIONS... --format json``, its report as Python objects."""
    if "format" in options:
        raise Error(f"ridgeline.{command} returns the JSON report as Python objects: leave format= out "
                    f"(ridgeline.run('{command}', ..., '--format', 'csv') gives the text)", 2)
    with _Files() as files:
        args = [command] + [_file_value(f"report{i}", p, files) for i, p in enumerate(positional)]
        args += _options(options, files) + ["--format", "json"]
        return json.loads(run(*args))


def summary(model=None, **options):
    """Counts per layer and in total (``ridgeline summary``): a built-in model by name, or onnx=, hf_config=,
    model_file=, layer= (with input=); returns the summary report."""
    return _report("summary", [], dict(model=model, **options))


def profile(model=None, **options):
    """Times each layer and the whole model on a device (``ridgeline profile``), as summary() takes a model; options
    as the command line's (device=, dtype=, batch=, quick=True, phase=, kv_len=, ...); returns the profile report."""
    return _report("profile", [], dict(model=model, **options))


def ceilings(**options):
    """The device's measured ceilings (``ridgeline ceilings``: peak FLOP/s per dtype, bandwidth per memory level,
    dispatch cost); quick=True for the short calibration."""
    return _report("ceilings", [], options)


def predict(report, to, **options):
    """Predicts a profile on another device (``ridgeline predict --from REPORT --to TARGET``): report a file name or
    the dict profile() returned; to a datasheet key (``ridgeline predict --list-targets``) or a ceilings file."""
    return _report("predict", [], dict(from_=report, to=to, **options))


def compare(*reports, **options):
    """Compares profiles of the same model (``ridgeline compare``): file names or dicts, the first the baseline."""
    return _report("compare", list(reports), options)


def sweep(model=None, **options):
    """Profiles a model at several batch sizes (``ridgeline sweep``); batch= a list of sizes."""
    return _report("sweep", [], dict(model=model, **options))


def weights(**options):
    """Statistics of a model file's weights (``ridgeline weights``, e.g. onnx= a file name or bytes)."""
    return _report("weights", [], options)


def from_torch(module, example_input, *, opset_version=None, **options):
    """Exports ``module`` (a torch.nn.Module) to ONNX in memory with ``torch.onnx.export`` on ``example_input`` (a
    tensor or a tuple of tensors) and profiles it: a PyTorch user never writes a file. Options as profile()'s."""
    import io

    import torch

    buffer = io.BytesIO()
    was_training = module.training
    module.eval()
    try:
        kwargs = {} if opset_version is None else {"opset_version": opset_version}
        with torch.no_grad():
            torch.onnx.export(module, example_input, buffer, **kwargs)
    finally:
        module.train(was_training)
    return profile(onnx=buffer.getvalue(), **options)
