#!/usr/bin/env python3
"""A stand-in for conda that replays real captures (testdata/conda).

Put first on PATH as ``conda`` (see ``install_fake_conda``). It answers from environment
variables read at each call:

- ``FAKE_CONDA_INFO``, ``FAKE_CONDA_ENV_LIST``, ``FAKE_CONDA_EXPORT``: the capture printed for
  ``conda info --json``, ``conda env list --json`` and ``conda env export ...``.
- ``FAKE_CONDA_PATHS``: a JSON object ``{"captured path": "path here"}``: the capture's paths
  replaced, so that the environments of a real capture exist in a test's temp dir.
- ``FAKE_CONDA_MODE``: ``hang`` (never answers; its pid goes to ``FAKE_CONDA_PIDFILE``) or
  ``fail`` (prints ``FAKE_CONDA_STDERR`` on stderr and exits 1).
- ``FAKE_CONDA_LOG``: a file that gets one line per call (the arguments).
- ``FAKE_CONDA_DELAY``: seconds to wait before answering, as a real conda takes to start.
- ``FAKE_CONDA_RUNS``: a file that gets one line per call, ``<start> <end>`` (monotonic
  seconds, comparable across processes): how many ran at once.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main(args: list[str]) -> int:
    started = time.monotonic()
    try:
        return answer(args)
    finally:
        if os.environ.get("FAKE_CONDA_RUNS"):
            with open(os.environ["FAKE_CONDA_RUNS"], "a") as handle:
                handle.write(f"{started} {time.monotonic()}\n")


def answer(args: list[str]) -> int:
    environ = os.environ
    if environ.get("FAKE_CONDA_LOG"):
        with open(environ["FAKE_CONDA_LOG"], "a") as handle:
            handle.write(" ".join(args) + "\n")
    time.sleep(float(environ.get("FAKE_CONDA_DELAY") or 0))
    mode = environ.get("FAKE_CONDA_MODE")
    if mode == "hang":
        Path(environ["FAKE_CONDA_PIDFILE"]).write_text(str(os.getpid()))
        time.sleep(3600)
    if mode == "fail":
        sys.stderr.write(environ.get("FAKE_CONDA_STDERR", ""))
        return 1
    if args[:2] == ["info", "--json"]:
        capture = environ.get("FAKE_CONDA_INFO")
    elif args[:3] == ["env", "list", "--json"]:
        capture = environ.get("FAKE_CONDA_ENV_LIST")
    elif args[:2] == ["env", "export"]:
        capture = environ.get("FAKE_CONDA_EXPORT")
    else:
        capture = None
    if not capture:
        sys.stderr.write(f"fake conda: no capture set for {' '.join(args)!r}\n")
        return 2
    text = Path(capture).read_text()
    for captured, here in json.loads(environ.get("FAKE_CONDA_PATHS") or "{}").items():
        text = text.replace(captured, here)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
