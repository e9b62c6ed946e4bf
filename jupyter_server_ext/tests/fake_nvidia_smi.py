#!/usr/bin/env python3
"""A stand-in for nvidia-smi that replays real captures (../shared/fixtures/nvidia-smi).

Put first on PATH as ``nvidia-smi`` (see ``install_fake_nvidia_smi``); what it answers is set
by environment variables read at each call, so a test can change it between two reads:

- ``FAKE_SMI_XML``, ``FAKE_SMI_GPU_CSV``, ``FAKE_SMI_APPS_CSV``, ``FAKE_SMI_LIST``: the capture
  printed for ``-q -x``, ``--query-gpu=…``, ``--query-compute-apps=…`` and ``-L``.
- ``FAKE_SMI_ERROR``: an error capture printed for every call, exiting ``FAKE_SMI_EXIT``
  (default 9, nvidia-smi's "driver not loaded" status).
- ``FAKE_SMI_MODE``: ``hang`` (never answers) or ``garbage`` (prints random bytes).
- ``FAKE_SMI_REJECT_FIELD``: a --query-gpu field this "old driver" does not know.
- ``FAKE_SMI_LOG``: a file that gets one line per call (the arguments).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def _capture_for(args: list[str]) -> str | None:
    if "-q" in args and "-x" in args:
        return os.environ.get("FAKE_SMI_XML")
    if any(arg.startswith("--query-gpu=") for arg in args):
        return os.environ.get("FAKE_SMI_GPU_CSV")
    if any(arg.startswith("--query-compute-apps=") for arg in args):
        return os.environ.get("FAKE_SMI_APPS_CSV")
    if args == ["-L"]:
        return os.environ.get("FAKE_SMI_LIST")
    return None


def main(args: list[str]) -> int:
    log = os.environ.get("FAKE_SMI_LOG")
    if log:
        with open(log, "a") as handle:
            handle.write(" ".join(args) + "\n")
    mode = os.environ.get("FAKE_SMI_MODE")
    if mode == "hang":
        time.sleep(3600)
    if mode == "garbage":
        sys.stdout.buffer.write(os.urandom(512))
        return 0
    error = os.environ.get("FAKE_SMI_ERROR")
    if error:
        sys.stdout.write(Path(error).read_text())
        return int(os.environ.get("FAKE_SMI_EXIT", "9"))
    rejected = os.environ.get("FAKE_SMI_REJECT_FIELD")
    query = next((a for a in args if a.startswith("--query-gpu=")), None)
    if rejected and query and rejected in query.split("=", 1)[1].split(","):
        sys.stdout.write(f'Field "{rejected}" is not a valid field to query.\n\n')
        return 2
    capture = _capture_for(args)
    if capture is None:
        sys.stdout.write(f"fake nvidia-smi: no capture set for {' '.join(args)!r}\n")
        return 2
    sys.stdout.write(Path(capture).read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
