"""The command line of scripts/gpu-check. Nothing here needs more than the standard library:
the wheels are installed before the check's modules (which need tornado) are imported."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from . import wheels


def main(argv: list[str], description: str) -> int:
    """Prepare the wheels, or run the check; the exit status."""
    parser = argparse.ArgumentParser(
        prog="gpu-check", description=description, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("out", type=Path, nargs="?", help="the folder to write (at most 8 files)")
    parser.add_argument("--dry-run", action="store_true", help="no GPU: the fake nvidia-smi")
    parser.add_argument("--wheels", type=Path, help="install these wheels first (GPU machine)")
    parser.add_argument("--prepare-wheels", type=Path, metavar="DIR", help="download them here")
    parser.add_argument("--kernel-python", help="the kernel's interpreter")
    options = parser.parse_args(argv)
    if options.prepare_wheels is not None:
        return wheels.prepare(options.prepare_wheels)
    if options.out is None:
        parser.error("the output folder is missing")
    install_failure = wheels.install(options.wheels) if options.wheels is not None else None
    from .run import check, default_kernel_python

    kernel_python = options.kernel_python or default_kernel_python(options.dry_run)
    options.out.mkdir(parents=True, exist_ok=True)
    return asyncio.run(check(options.out, options.dry_run, kernel_python, install_failure))
