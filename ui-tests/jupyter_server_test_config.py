"""Server configuration for the integration tests: a real JupyterLab whose GPUs are a real
capture replayed by the test suite's fake nvidia-smi.

!! Never use this configuration in production because it
opens the server to the world and provides access to JupyterLab
JavaScript objects through the global window variable.
"""

import os
import sys
from pathlib import Path

from jupyterlab.galata import configure_jupyter_server

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "jupyter_server_ext"))

from tests.replay import SMI_FIXTURES, install_fake_nvidia_smi  # noqa: E402

configure_jupyter_server(c)  # noqa: F821

# CI runs as root.
c.ServerApp.allow_root = True  # noqa: F821

# Two RTX A5000s with two llama-server processes (driver 590.44, CUDA 13.1). A test switches
# the GPUs' state by writing FAKE_SMI_* settings as JSON into the control file.
RESULTS = Path(__file__).parent / ".fake-gpu"
RESULTS.mkdir(exist_ok=True)
os.environ["FAKE_SMI_XML"] = str(SMI_FIXTURES / "xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml")
os.environ["FAKE_SMI_CONTROL"] = str(RESULTS / "fake-nvidia-smi.json")
Path(os.environ["FAKE_SMI_CONTROL"]).unlink(missing_ok=True)

c.GpuMonitor.source = "nvidia-smi"  # noqa: F821
c.GpuMonitor.nvidia_smi_path = str(install_fake_nvidia_smi(RESULTS / "bin"))  # noqa: F821
c.GpuMonitor.interval = 1.0  # noqa: F821
