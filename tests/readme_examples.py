#!/usr/bin/env python3
"""Every `ridgeline ...` example in README.md runs as written (a line continued with a backslash is one command; a
`# comment` is dropped), with `ridgeline` the binary under test. They run one after another in a scratch folder in
which `tests` and `examples` lead to the repository's own, so the files the examples write (resnet50.json, t1.json,
...) land there and the examples that read them find them; the ceilings are cached in the scratch folder too.

Each must exit 0 with no error line, except one the README itself qualifies: a bf16 profile needs bf16 on the CPU
(oneDNN 2.6 has it from AVX-512), and on a CPU without it exits 1 saying no layer could be measured in bf16.

Usage: readme_examples.py RIDGELINE REPO_ROOT
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time


def examples(readme):
    """The ridgeline commands of the README's ```sh blocks, continuations joined, comments dropped."""
    commands, block, pending = [], False, ""
    for line in open(readme, encoding="utf-8"):
        if line.startswith("```"):
            block = line.strip() == "```sh"
            continue
        if not block:
            continue
        text = pending + line.rstrip("\n")
        if text.rstrip().endswith("\\"):
            pending = text.rstrip()[:-1] + " "
            continue
        pending = ""
        text = re.sub(r"\s+#.*$", "", text).strip()
        if text.startswith("ridgeline "):
            commands.append(text)
    return commands


def cpu_has_bf16():
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return False
    return " avx512f " in flags or " avx512_bf16 " in flags or " amx_bf16 " in flags


def main():
    binary, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    commands = examples(os.path.join(root, "README.md"))
    if len(commands) < 20:
        print(f"readme_examples: only {len(commands)} ridgeline commands found in README.md", file=sys.stderr)
        return 1
    work = tempfile.mkdtemp(prefix="readme-", dir=os.environ.get("TMPDIR"))
    failures = []
    try:
        for d in ("tests", "examples"):
            os.symlink(os.path.join(root, d), os.path.join(work, d))
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache"), HOME=work)
        for cmd in commands:
            args = shlex.split(cmd)
            args[0] = binary
            t0 = time.monotonic()
            run = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True, timeout=900)
            took = time.monotonic() - t0
            errors = [l for l in run.stderr.splitlines() if "error:" in l]
            bf16 = "--dtype bf16" in cmd and args[1] == "profile"
            if bf16 and not cpu_has_bf16():
                ok = run.returncode == 1 and any("in bf16" in l for l in errors)
            else:
                ok = run.returncode == 0 and not errors
            print(f"{'ok  ' if ok else 'FAIL'} {took:6.1f} s  exit {run.returncode}  {cmd}")
            if not ok:
                failures.append(f"{cmd}: exit {run.returncode}: " + (errors[0] if errors else run.stderr[-300:]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("readme_examples: " + f, file=sys.stderr)
    print(f"readme_examples: {len(commands) - len(failures)} of {len(commands)} README examples ran as written")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
