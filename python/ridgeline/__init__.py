"""ridgeline from Python: each command of the `ridgeline` command line, run in this process, its report returned
as Python objects (dicts, lists, numbers and strings: the JSON report, docs/json-schema.md).

Keyword arguments are the command's options, spelled as in Python (``kv_len=1024`` is ``--kv-len 1024``):

* ``True`` gives a flag (``quick=True`` is ``--quick``; an option that takes a value refuses it); ``None`` and
  ``False`` leave the option out;
* a tuple of ints is a shape (``input=(1, 3, 224, 224)`` is ``--input 1x3x224x224``; for ``input=`` a list of ints
  too, and a list of shapes gives one ``--input`` each);
* a list gives its items as one comma-separated value (``batch=[1, 8, 32]`` is ``--batch 1,8,32``);
* ``onnx=`` takes a file name or the file's bytes, ``hf_config=`` and ``model_file=`` a file name or a dict (written
  to a temporary file for the command, and removed after it).

Reports given to ``compare`` and ``predict`` are file names or the dicts ``profile`` returned.

Every mistake ridgeline finds raises ``ridgeline.Error`` with the command line's one-line message; its
``exit_code`` is 2 for a usage mistake (a wrong option, a shape the model cannot take) and 1 for anything else.
Ctrl-C during a profile raises KeyboardInterrupt. One command runs at a time per process (a second thread's call
waits); with multiprocessing, use the "spawn" start method: a child forked after a profile inherits oneDNN's
OpenMP threads in a state it cannot use, and hangs in its first profile (GNU OpenMP's documented limit).

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

    def __init__(self, message, exit_code=1):
        super().__init__(message)
        self.exit_code = exit_code

    def __reduce__(self):  # multiprocessing sends errors between processes
        return (Error, (str(self), self.exit_code))


def run(*args):
    """Runs ``ridgeline ARGS...`` and returns what it writes as its report (a str); raises Error on a failure, and
    KeyboardInterrupt where Ctrl-C stopped a profile (its partial report is dropped)."""
    args = [os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in args]
    for a in args:
        if "\0" in a:
            raise Error(f"an argument holds a NUL character, which would cut it short: {a[:60]!r}", 2)
    code, out, error = _ridgeline.run(args)
    if code == 130:  # SIGINT (Ctrl-C) stopped a profile: what the command line exits with, as Python's own
        raise KeyboardInterrupt(error or "ridgeline: interrupted")
    if code != 0:
        raise Error(error or f"ridgeline {' '.join(map(str, args))} exited with {code}", code)
    return out.decode("utf-8")


class _Files:
    """Temporary files holding the bytes and dicts given for file options; removed when the command ends."""

    def __init__(self):
        self.dir = None
        self.shown = {}  # temporary path -> what the user gave ("the onnx= bytes")

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

    def describe(self, message):
        """`message` with each temporary file named by what the user gave for it."""
        for path, shown in self.shown.items():
            message = message.replace(path, shown)
        return message


def _file_value(key, value, files, shown=None):
    """A file option's value: a name as it is, bytes or a dict written to a temporary file."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        path = files.write(key + (".onnx" if key == "onnx" else ".bin"), bytes(value))
        files.shown[path] = f"{shown} (bytes)" if shown else f"the {key}= bytes"
        return path
    if isinstance(value, dict):
        try:
            text = json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise Error(f"{shown or key + '='}: the dict is not JSON ({e})", 2) from None
        path = files.write(key + ".json", text.encode("utf-8"))
        files.shown[path] = f"{shown} (a dict)" if shown else f"the {key}= dict"
        return path
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise Error(f"{shown or key + '='} takes a file name, bytes or a dict, not {type(value).__name__}", 2)


def _shape_value(key, value):
    """A shape: a tuple or list of whole numbers, or a string as the command line takes it ("8x64")."""
    if isinstance(value, str):
        return value
    try:
        dims = list(value)
    except TypeError:
        raise Error(f"{key}= takes a shape such as (8, 64), not {value!r}", 2) from None
    for d in dims:
        if isinstance(d, bool) or not float(d).is_integer():
            raise Error(f"{key}= takes a shape of whole numbers, not {value!r}", 2)
    return "x".join(str(int(d)) for d in dims)


def _options(command, options, files):
    known = dict(_ridgeline.options(command))  # "--quick": True (a flag), "--svg": False (takes a value)
    flags = {name for name, is_flag in known.items() if is_flag}
    args = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_")  # from_: `from` is Python's keyword
        flag = "--" + name.replace("_", "-")
        if not name or not name[0].isalpha():
            raise Error(f"{key!r} is not an option of ridgeline {command}", 2)
        if value is True or flag in flags:
            if value is not True:
                raise Error(f"{key}= is a flag of ridgeline {command}: give True or False, not {value!r}", 2)
            if flag in known and flag not in flags:
                raise Error(f"{key}= of ridgeline {command} takes a value, not True (ridgeline.run('{command}', "
                            f"'--help') lists them)", 2)
            args.append(flag)
        elif name in ("onnx", "hf_config", "model_file", "from", "to"):
            args += [flag, _file_value(name, value, files)]
        elif name == "input":
            # one shape: a string, or a tuple or list of numbers; several: a list of those
            several = isinstance(value, list) and value and not isinstance(value[0], (int, float))
            for shape in value if several else [value]:
                args += [flag, _shape_value(key, shape)]
        elif isinstance(value, tuple):
            args += [flag, _shape_value(key, value)]
        elif isinstance(value, list):
            args += [flag, ",".join(str(v) for v in value)]
        elif isinstance(value, (str, int, float, os.PathLike)):
            args += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
        else:
            raise Error(f"{key}= takes a number, a string, a shape or a list, not {type(value).__name__}", 2)
    return args


# options that would send the report elsewhere or print something else than a JSON report
_NOT_HERE = {
    "format": "the functions return the JSON report as Python objects; ridgeline.run('{c}', ..., '--format', 'csv') "
              "gives another format as text",
    "output": "the functions return the report: write it with json.dump (or ridgeline.run('{c}', ..., '--output', "
              "FILE))",
    "help": "help(ridgeline.{c}) describes the function; ridgeline.run('{c}', '--help') lists the options",
    "list_targets": "ridgeline.run('predict', '--list-targets') lists them",
}


def _report(command, positional, options):
    """``ridgeline COMMAND OPTIONS... --format json -- POSITIONAL...``, its report as Python objects."""
    for key in options:
        if key.rstrip("_") in _NOT_HERE:
            raise Error(f"{key}= is not taken by ridgeline.{command}: " + _NOT_HERE[key.rstrip('_')].format(c=command), 2)
    with _Files() as files:
        reports = [_file_value(f"run{i + 1}", p, files, shown=f"report {i + 1}") for i, p in enumerate(positional)]
        args = [command] + _options(command, options, files) + ["--format", "json"]
        if reports:
            args += ["--"] + reports  # after "--", a file name that starts with "-" is still a file
        try:
            text = run(*args)
        except Error as e:
            raise Error(files.describe(str(e)), e.exit_code) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise Error(f"ridgeline {command} printed no JSON report (it starts {text[:80]!r})", 1) from None


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
    tensor or a tuple of tensors) and profiles it: a PyTorch user never writes a file. Options as profile()'s.

    The report is of the exported graph, in eval mode: its model is named after the module's class, its layers after
    the ONNX nodes torch names (``/0/Gemm``, ``/1/Relu``), and a BatchNorm after a convolution is folded into it by
    the export (its params counted in the convolution's)."""
    import io

    import torch

    if not isinstance(module, torch.nn.Module):
        raise Error(f"from_torch takes a torch.nn.Module, not {type(module).__name__}", 2)
    buffer = io.BytesIO()
    was_training = module.training
    module.eval()
    try:
        kwargs = {} if opset_version is None else {"opset_version": opset_version}
        with torch.no_grad():
            torch.onnx.export(module, example_input, buffer, **kwargs)
    except Exception as e:  # torch's own: an op ONNX cannot express, a shape mismatch
        raise Error(f"torch.onnx.export could not export the module: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", 2) from e
    finally:
        module.train(was_training)
    # the file is named after the module's class, which names the model in the report ("Sequential")
    with tempfile.TemporaryDirectory(prefix="ridgeline-") as folder:
        path = os.path.join(folder, type(module).__name__ + ".onnx")
        with open(path, "wb") as f:
            f.write(buffer.getvalue())
        return profile(onnx=path, **options)
