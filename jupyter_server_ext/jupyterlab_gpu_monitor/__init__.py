"""jupyterlab-gpu-monitor: GPU readings, environments and reproducibility for JupyterLab."""

from ._version import __version__


def _jupyter_labextension_paths():
    return [{"src": "labextension", "dest": "jupyterlab-gpu-monitor"}]


def _jupyter_server_extension_points():
    # Imported here, not at the top: the CLI and the parsers must not pay for jupyter_server.
    from .extension import GpuMonitorExtension

    return [{"module": "jupyterlab_gpu_monitor", "app": GpuMonitorExtension}]


__all__ = ["__version__"]
