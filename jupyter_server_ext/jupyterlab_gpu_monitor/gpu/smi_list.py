"""Parsing ``nvidia-smi -L``: GPUs and, under MIG, their instances' profiles and UUIDs.

The XML does not name MIG profiles ("3g.40gb") nor give the ``MIG-…`` UUIDs that people put in
CUDA_VISIBLE_DEVICES; ``-L`` does, in the same instance order.
"""

from __future__ import annotations

import re

from ..translation import gettext
from .errors import GpuReadError, error_from_output, kind_of_message
from .model import Gpu, MigDevice

_GPU_LINE = re.compile(r"^GPU (\d+): (.*?) \(UUID: ([^)]+)\)\s*$")
_MIG_LINE = re.compile(r"^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: ([^)]+)\)\s*$")


def parse_list(text: str) -> list[Gpu]:
    """The GPUs of an ``nvidia-smi -L`` output, with their MIG devices where listed."""
    gpus: list[Gpu] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        gpu_match = _GPU_LINE.match(line)
        mig_match = _MIG_LINE.match(line)
        if gpu_match:
            index, name, uuid = gpu_match.groups()
            gpus.append(Gpu(index=int(index), name=name, uuid=uuid))
        elif mig_match and gpus:
            profile, device, uuid = mig_match.groups()
            gpus[-1].mig_devices.append(MigDevice(index=int(device), uuid=uuid, profile=profile))
            gpus[-1].mig_mode = "enabled"
        elif kind_of_message(line):
            raise error_from_output(text, 0)
        else:
            message = gettext("unexpected line in nvidia-smi -L: {line}")
            raise GpuReadError("bad_output", message.format(line=repr(line[:120])))
    return gpus
