"""The server extension's life: settings -> source -> Sampler -> routes, and a clean stop."""

from __future__ import annotations

import logging

from jupyter_server.extension.application import ExtensionApp
from traitlets import TraitError

from . import blocking
from .config import GpuMonitor, setting_problem
from .gpu.model import Snapshot
from .gpu.sampler import Sampler
from .gpu.source import make_source
from .kernel.cells import KernelHistory
from .kernel.join import KernelJoin
from .kernel.ledger import NotebookLedger
from .kernel.service import KernelService
from .machine.host import MachineReader
from .machine.model import rate_window
from .routes import IN_FLIGHT_SETTING, setup_off_handlers, setup_route_handlers
from .translation import use_server_locale

# How long the server's stop waits for the requests it told to give up to send their 503.
STOP_ANSWER_SECONDS = 1.0


class GpuMonitorExtension(ExtensionApp):
    """Builds the Sampler from ``GpuMonitor`` settings and stops it with the server.

    Nothing here touches the GPU: a missing driver or library shows up in the API's ``error``
    at the first read, and never keeps ``jupyter lab`` from starting. Nor does an invalid
    setting: the extension stays off, says why in one log line and in every answer of its
    routes, and the server runs (and stops) as without it.
    """

    name = "jupyterlab_gpu_monitor"
    # None until the settings are read, and for good when one of them is invalid.
    sampler: Sampler | None = None

    def initialize_handlers(self) -> None:
        """Register the REST handlers with a Sampler configured from ``c.GpuMonitor``; speak the
        language the frontend asks for (messages, findings, our settings schemas)."""
        use_server_locale()
        blocking.answer_promptly()
        try:
            config = GpuMonitor(parent=self.serverapp)
        except TraitError as error:
            problem = setting_problem(error)
            self.log.error("GPU Monitor is off until this setting is corrected: %s", problem)
            setup_off_handlers(self.serverapp.web_app, problem)
            return
        # Rates (CPU, disk, network, PCIe) over a Sampler's idle pause are no current reading.
        rates_within = rate_window(config.interval)
        source = make_source(
            config.source,
            config.nvidia_smi_path,
            config.command_timeout,
            config.prometheus_url,
            config.prometheus_selector,
            config.prometheus_bearer_token_file,
            rates_within,
        )
        kernel_join = KernelJoin(
            self.serverapp.kernel_manager,
            self.serverapp.session_manager,
            config.show_other_users_commands,
            rates_within,
        )
        kernels = KernelService(
            kernel_join,
            # What each kernel held at each read, for the figures of its cells.
            KernelHistory(config.history_seconds, config.interval),
            NotebookLedger(config.metrics_notebook_label),
        )
        machine = MachineReader(self.serverapp.root_dir, max_rate_seconds=rates_within)

        annotate = _Annotation(kernels, machine, self.log)

        self.sampler = Sampler(
            source,
            interval_seconds=config.interval,
            history_seconds=config.history_seconds,
            idle_seconds=config.idle_seconds,
            annotate=annotate,
        )
        setup_route_handlers(self.serverapp.web_app, self.sampler, config, kernels)
        self.log.info("GPU readings from source=%s every %g s", config.source, config.interval)

    async def stop_extension(self) -> None:
        """End sampling, kill an nvidia-smi still running, and release NVML; answer the
        requests still waiting for work of ours that the server stops (503). Never raises, and
        never waits for a thread stuck in a read: jupyter_server shuts its kernels down after
        the extensions stop."""
        if self.sampler is not None:
            await self.sampler.stop()
        blocking.stop_waiting()
        in_flight = self.serverapp.web_app.settings.get(IN_FLIGHT_SETTING)
        if in_flight is not None:
            await in_flight.answered(STOP_ANSWER_SECONDS)


class _Annotation:
    """What the Sampler adds to each read: its processes joined to this server's kernels, each
    kernel's figures kept for its cells, each notebook's GPU ledger, the machine's readings."""

    def __init__(self, kernels: KernelService, machine: MachineReader, log: logging.Logger):
        self._kernels = kernels
        self._machine = machine
        self._log = log
        self._stalled = False  # the last machine reading timed out (logged once while it lasts)

    async def __call__(self, snapshot: Snapshot) -> None:
        await self._kernels.join(snapshot)
        self._kernels.record(snapshot)
        try:
            snapshot.machine = await blocking.run(
                blocking.MACHINE,
                self._machine.read,
                timeout_seconds=blocking.MACHINE_READ_SECONDS,
                key=self._machine,
            )
        except blocking.TimedOut as late:
            if not self._stalled:
                self._log.warning("the machine's readings are left out of the GPU reads: %s", late)
            self._stalled = True
        else:
            self._stalled = False
