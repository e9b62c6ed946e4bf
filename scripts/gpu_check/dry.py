"""The dry run's machine: the tests' fake nvidia-smi first on PATH (this process's and every
process it starts: the server, the kernel), replaying a real capture of a busy 8-GPU machine
whose one compute process can be made to be any process of ours."""

from __future__ import annotations

import json
import os
from pathlib import Path

from jupyterlab_gpu_monitor.gpu.smi_xml import parse_xml

# 8 Tesla V100S under load (23-99 %), one python process on every GPU: a training job.
CAPTURE = "xml/tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml"
# What the capture deserves once its process is a kernel: its GPU 3 is 23 % busy while the
# process holds 31 GiB there.
CAPTURE_FINDINGS = frozenset({"gpu-idle-while-holding-memory"})


class DryMachine:
    """Replays ``CAPTURE``; ``show_process`` puts a real pid in place of the capture's."""

    findings = CAPTURE_FINDINGS

    def __init__(self, folder: Path):
        # The tests' helpers and the real captures beside the repository: a dry run only.
        from tests.replay import FAKE_VARIABLES, SMI_FIXTURES, install_fake_nvidia_smi

        executable = install_fake_nvidia_smi(folder / "bin")
        for name in FAKE_VARIABLES:
            os.environ.pop(name, None)
        os.environ["PATH"] = f"{executable.parent}{os.pathsep}{os.environ['PATH']}"
        self.capture = SMI_FIXTURES / CAPTURE
        os.environ["FAKE_SMI_XML"] = str(self.capture)
        self._control = folder / "fake-nvidia-smi.json"
        os.environ["FAKE_SMI_CONTROL"] = str(self._control)
        snapshot = parse_xml(self.capture.read_text(), 0.0)
        (self._capture_pid,) = {process.pid for gpu in snapshot.gpus for process in gpu.processes}

    def show_process(self, pid: int | None) -> None:
        """Report ``pid`` where the capture has its compute process (None: the capture's own)."""
        pids = f"{self._capture_pid}:{pid}" if pid is not None else ""
        self._control.write_text(json.dumps({"FAKE_SMI_PIDS": pids}))
