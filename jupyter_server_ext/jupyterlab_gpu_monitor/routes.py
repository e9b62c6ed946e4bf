"""REST handlers under ``<base_url>/gpu-monitor/api/``, and the Prometheus exposition at
``<base_url>/gpu-monitor/metrics``: parse, call, serialize."""

from __future__ import annotations

import json
import math

import tornado
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join

from ._version import __version__
from .config import GpuMonitor
from .gpu.sampler import Sampler
from .kernels import KernelJoin, kernels_summary
from .metrics import KERNEL_USAGE_SETTING, in_networks, render

try:
    from jupyter_server.auth.decorator import allow_unauthenticated
except ImportError:  # jupyter_server < 2.13 has no server-wide check to opt out of

    def allow_unauthenticated(method):
        return method


AUTH_RESOURCE = "gpu-monitor"


class GpuMonitorHandler(APIHandler):
    """Base: every request is authenticated, then authorized to read ``gpu-monitor``."""

    auth_resource = AUTH_RESOURCE

    @property
    def sampler(self) -> Sampler:
        return self.settings["gpu_monitor_sampler"]

    @property
    def monitor_config(self) -> GpuMonitor:
        return self.settings["gpu_monitor_config"]


class GpusHandler(GpuMonitorHandler):
    """``GET gpus``: the latest snapshot of every GPU."""

    @tornado.web.authenticated
    @authorized("read")
    async def get(self) -> None:
        self.finish(await self.sampler.snapshot_json())


class HistoryHandler(GpuMonitorHandler):
    """``GET gpus/history?since=<epoch seconds>``: the readings after ``since``, columnar."""

    @tornado.web.authenticated
    @authorized("read")
    async def get(self) -> None:
        since = self._since()
        self.finish(json.dumps(await self.sampler.history_since(since)))

    def _since(self) -> float | None:
        raw = self.get_query_argument("since", None)
        if raw is None or raw == "":
            return None
        try:
            since = float(raw)
        except ValueError:
            since = math.nan
        if not math.isfinite(since):
            raise tornado.web.HTTPError(
                400, f"'since' must be a timestamp in seconds since the epoch, not {raw[:40]!r}"
            )
        return since


class StatusHandler(GpuMonitorHandler):
    """``GET status``: the source in use, the settings, driver and CUDA, the last error."""

    @tornado.web.authenticated
    @authorized("read")
    async def get(self) -> None:
        sampler = self.sampler
        snapshot = await sampler.snapshot()
        good = sampler.last_good
        self.finish(
            json.dumps(
                {
                    "version": __version__,
                    "source": snapshot.source,
                    "source_setting": self.monitor_config.source,
                    "interval_seconds": sampler.interval_seconds,
                    "history_seconds": sampler.history.history_seconds,
                    "idle_seconds": sampler.idle_seconds,
                    "sampling": sampler.sampling,
                    "reads": sampler.reads,
                    "driver_version": good.driver_version if good else None,
                    "cuda_version": good.cuda_version if good else None,
                    "error": snapshot.to_json()["error"],
                }
            )
        )


class KernelsHandler(GpuMonitorHandler):
    """``GET kernels``: this server's kernels with the GPU memory each holds, most first."""

    @tornado.web.authenticated
    @authorized("read")
    async def get(self) -> None:
        snapshot = await self.sampler.snapshot()
        kernels = await self.settings["gpu_monitor_kernel_join"].kernels()
        self.finish(json.dumps(kernels_summary(snapshot, kernels)))


class MetricsHandler(GpuMonitorHandler):
    """``GET metrics``: the latest read in Prometheus' text format, for a scraper.

    A scrape counts as watching: it wakes an idle Sampler and keeps it reading, since a scraper
    is someone looking. It needs a token (``Authorization: Bearer <token>``) like every other
    endpoint, except from the networks in ``GpuMonitor.metrics_unauthenticated_networks``.
    """

    @allow_unauthenticated  # decided in the method: a trusted network, else a token
    async def get(self) -> None:
        networks = self.monitor_config.metrics_unauthenticated_networks
        if in_networks(self.request.remote_ip, networks):
            await self._write_metrics()
        else:
            await self._get_authenticated()

    @tornado.web.authenticated
    @authorized("read")
    async def _get_authenticated(self) -> None:
        await self._write_metrics()

    async def _write_metrics(self) -> None:
        await self.sampler.snapshot()
        body, content_type = render(
            self.sampler,
            self.settings.get(KERNEL_USAGE_SETTING),
            self.request.headers.get("Accept"),
        )
        self.finish(body, set_content_type=content_type)


def setup_route_handlers(
    web_app, sampler: Sampler, config: GpuMonitor, kernel_join: KernelJoin
) -> None:
    """Register the handlers under the server's base_url (``/user/<name>/`` on JupyterHub)."""
    web_app.settings["gpu_monitor_sampler"] = sampler
    web_app.settings["gpu_monitor_config"] = config
    web_app.settings["gpu_monitor_kernel_join"] = kernel_join
    # Per-kernel GPU memory of the latest read, for the metrics endpoint.
    web_app.settings["gpu_monitor_kernel_usage"] = lambda: kernel_join.usage
    api = url_path_join(web_app.settings["base_url"], "gpu-monitor", "api")
    web_app.add_handlers(
        ".*$",
        [
            (url_path_join(api, "gpus"), GpusHandler),
            (url_path_join(api, "gpus", "history"), HistoryHandler),
            (url_path_join(api, "status"), StatusHandler),
            (url_path_join(api, "kernels"), KernelsHandler),
            (url_path_join(web_app.settings["base_url"], "gpu-monitor", "metrics"), MetricsHandler),
        ],
    )
