"""Server configuration for the integration tests: a real JupyterLab whose GPUs are a real
capture replayed by the test suite's fake nvidia-smi.

!! Never use this configuration in production because it
opens the server to the world and provides access to JupyterLab
JavaScript objects through the global window variable.
"""

import json
import os
import sys
from pathlib import Path
from tempfile import mkdtemp

from jupyterlab.galata import configure_jupyter_server

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "jupyter_server_ext"))

from tests.replay import SMI_FIXTURES, install_fake_nvidia_smi  # noqa: E402

configure_jupyter_server(c)  # noqa: F821

# CI runs as root.
c.ServerApp.allow_root = True  # noqa: F821

# Settings of this server's own, as galata gives it its own workspaces: the language test saves
# the interface language for real, which must not change the language of the developer's
# JupyterLab, nor outlive the run if the test fails.
c.LabApp.user_settings_dir = mkdtemp(prefix="galata-settings-")  # noqa: F821

# The lab's test (tests/lab.spec.ts) runs a second JupyterLab of this configuration through
# lab_fleet.py: node-1 of a lab of three machines, user ana's, whose lab's Prometheus is
# GALATA_LAB_PROMETHEUS; its fake nvidia-smi has a control file of its own.
LAB_PROMETHEUS = os.environ.get("GALATA_LAB_PROMETHEUS")

# Two RTX A5000s with two llama-server processes (driver 590.44, CUDA 13.1). A test switches
# the GPUs' state by writing FAKE_SMI_* settings as JSON into the control file.
RESULTS = Path(__file__).parent / (".fake-gpu-lab" if LAB_PROMETHEUS else ".fake-gpu")
RESULTS.mkdir(exist_ok=True)
os.environ["FAKE_SMI_XML"] = str(SMI_FIXTURES / "xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml")
os.environ["FAKE_SMI_CONTROL"] = str(RESULTS / "fake-nvidia-smi.json")
Path(os.environ["FAKE_SMI_CONTROL"]).unlink(missing_ok=True)

c.GpuMonitor.source = "nvidia-smi"  # noqa: F821
c.GpuMonitor.nvidia_smi_path = str(install_fake_nvidia_smi(RESULTS / "bin"))  # noqa: F821
c.GpuMonitor.interval = 1.0  # noqa: F821
if LAB_PROMETHEUS:
    c.GpuMonitor.lab_prometheus_url = LAB_PROMETHEUS  # noqa: F821
    c.GpuMonitor.lab_open_url = "https://hub.lab/hub/spawn/{user}/{node}"  # noqa: F821
    c.GpuMonitor.metrics_host = "node-1"  # noqa: F821
    c.GpuMonitor.metrics_user = "ana"  # noqa: F821

# Kernels of their own environments for the environment and reproducibility tests: PyTorch's CPU
# build (built by `make kernel-envs`), and a venv the drift test creates and changes itself
# (ui-tests/tests/fingerprint.spec.ts), so that no test touches the environment the server runs in.
KERNEL_ENVS = Path(os.environ.get("GPU_MONITOR_KERNEL_ENVS", REPO / ".kernel-envs"))
TEST_KERNELS = Path(__file__).parent / ".kernels"
TEST_KERNEL_PYTHONS = {
    "gpu-monitor-torch-cpu": KERNEL_ENVS / "torch-cpu" / "bin" / "python",
    "gpu-monitor-drift": TEST_KERNELS / "drift-env" / "bin" / "python",
}
TEST_KERNEL_SPECS = {
    name: ([str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"], "python")
    for name, python in TEST_KERNEL_PYTHONS.items()
}
# A kernel in another language (bash_kernel, a test dependency): the Environment panel must give
# it no Python fix.
TEST_KERNEL_SPECS["gpu-monitor-bash"] = (
    [sys.executable, "-m", "bash_kernel", "-f", "{connection_file}"],
    "bash",
)
for kernel_name, (argv, language) in TEST_KERNEL_SPECS.items():
    spec_dir = TEST_KERNELS / "jupyter" / "kernels" / kernel_name
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {"argv": argv, "display_name": kernel_name, "language": language}
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
# Read when the kernelspec manager starts, after this file.
os.environ["JUPYTER_PATH"] = os.pathsep.join(
    filter(None, [str(TEST_KERNELS / "jupyter"), os.environ.get("JUPYTER_PATH")])
)

# Jupyter Notebook 7's pages (/tree, /notebooks/...) on the same server, with the application
# reachable from the tests as window.jupyterapp, as galata makes JupyterLab's.
c.JupyterNotebookApp.expose_app_in_browser = True  # noqa: F821
