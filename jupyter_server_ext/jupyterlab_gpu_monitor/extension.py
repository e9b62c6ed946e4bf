"""The server extension's life: settings -> source -> Sampler -> routes, and a clean stop."""

from __future__ import annotations

from jupyter_server.extension.application import ExtensionApp

from .cells import KernelMemoryHistory
from .config import GpuMonitor
from .gpu.sampler import Sampler
from .gpu.source import make_source
from .kernels import KernelJoin
from .routes import setup_route_handlers
from .translation import use_server_locale


class GpuMonitorExtension(ExtensionApp):
    """Builds the Sampler from ``GpuMonitor`` settings and stops it with the server.

    Nothing here touches the GPU: a missing driver or library shows up in the API's ``error``
    at the first read, and never keeps ``jupyter lab`` from starting.
    """

    name = "jupyterlab_gpu_monitor"

    def initialize_handlers(self) -> None:
        """Register the REST handlers with a Sampler configured from ``c.GpuMonitor``; speak the
        language the frontend asks for (messages, findings, our settings schemas)."""
        use_server_locale()
        config = GpuMonitor(parent=self.serverapp)
        source = make_source(
            config.source,
            config.nvidia_smi_path,
            config.command_timeout,
            config.prometheus_url,
            config.prometheus_selector,
            config.prometheus_bearer_token_file,
        )
        kernel_join = KernelJoin(
            self.serverapp.kernel_manager,
            self.serverapp.session_manager,
            config.show_other_users_commands,
            KernelMemoryHistory(config.history_seconds, config.interval),
        )
        self.sampler = Sampler(
            source,
            interval_seconds=config.interval,
            history_seconds=config.history_seconds,
            idle_seconds=config.idle_seconds,
            annotate=kernel_join,
        )
        setup_route_handlers(self.serverapp.web_app, self.sampler, config, kernel_join)
        self.log.info("GPU readings from source=%s every %g s", config.source, config.interval)

    async def stop_extension(self) -> None:
        """End sampling, kill an nvidia-smi still running, and release NVML."""
        await self.sampler.stop()
