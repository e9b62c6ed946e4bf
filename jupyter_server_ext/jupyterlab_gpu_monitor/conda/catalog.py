"""The server's environments, for the REST handlers (and anything else on the event loop):
file scans run in a thread, conda runs as a subprocess, never on the loop itself."""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from typing import TYPE_CHECKING, Any

from ..subprocesses import SharedRuns
from .conda_cli import conda_env_export, conda_info
from .discovery import discover_environments, environment_of, find_environment
from .errors import EnvironmentNotFound
from .export import export_yaml
from .model import Environment, Package
from .records import packages

if TYPE_CHECKING:
    from ..config import GpuMonitor

log = logging.getLogger(__name__)

# conda processes running at once for the server's requests; the same command asked for while
# it runs is shared, not run again.
CONDA_RUNS_AT_ONCE = 2


class EnvironmentCatalog:
    """Environments as the server sees them: the kernelspecs of its KernelSpecManager tell
    which environments its kernels run in, and ``GpuMonitor`` settings (read at each call)
    say where else to look and how to run conda."""

    def __init__(self, kernel_spec_manager: Any, config: GpuMonitor):
        self._kernel_spec_manager = kernel_spec_manager
        self._config = config
        self._conda_runs = SharedRuns(CONDA_RUNS_AT_ONCE)

    async def kernelspecs(self) -> dict[str, Any]:
        """``get_all_specs()`` of the server's KernelSpecManager (a gateway's is async); empty,
        with a warning, when it fails: environments are listed all the same."""
        if self._kernel_spec_manager is None:
            return {}
        getter = self._kernel_spec_manager.get_all_specs
        try:
            if inspect.iscoroutinefunction(getter):
                return await getter()
            return await asyncio.to_thread(getter)
        except Exception as error:  # a broken kernel.json must not hide the environments
            log.warning("kernelspecs unavailable, environments listed without them: %s", error)
            return {}

    async def environments(self, use_conda: bool = False) -> list[Environment]:
        """Every environment; with ``use_conda``, also those ``conda info --json`` knows of
        (raises CondaCommandError when conda cannot tell)."""
        extra_dirs = list(self._config.extra_envs_dirs)
        extra_prefixes: list[tuple[str, str]] = []
        if use_conda:
            info = await self._conda_runs.run(
                ("info",), lambda: conda_info(self._config.conda_path, self._config.conda_timeout)
            )
            roots = [info.root_prefix] if info.root_prefix else []
            extra_prefixes = [(prefix, "conda info --json") for prefix in [*roots, *info.envs]]
            extra_dirs += info.envs_dirs
        kernelspecs = await self.kernelspecs()
        return await asyncio.to_thread(
            discover_environments,
            kernelspecs,
            extra_envs_dirs=extra_dirs,
            extra_prefixes=extra_prefixes,
        )

    async def resolve(self, key: str, use_conda: bool = False) -> Environment:
        """The environment a person names: a prefix (anything with a path separator), else an id
        or name of the listing, conda's own included with ``use_conda``. Raises
        EnvironmentNotFound or AmbiguousEnvironment (CondaCommandError with ``use_conda``)."""
        if os.sep in key or (os.altsep and os.altsep in key):
            environment = await asyncio.to_thread(environment_of, key, await self.kernelspecs())
            if environment is None:
                raise EnvironmentNotFound(key)
            return environment
        return find_environment(await self.environments(use_conda), key)

    async def packages(self, environment: Environment) -> list[Package]:
        """The packages of an environment."""
        return await asyncio.to_thread(packages, environment.prefix)

    async def export(self, environment: Environment, style: str, use_conda: bool = False) -> str:
        """environment.yml in one of ``export.STYLES``, from the records on disk, or with
        ``use_conda`` from ``conda env export`` (raises CondaCommandError)."""
        if use_conda:
            return await self._conda_runs.run(
                ("export", environment.prefix, style),
                lambda: conda_env_export(
                    self._config.conda_path, environment.prefix, style, self._config.conda_timeout
                ),
            )
        return await asyncio.to_thread(export_yaml, environment, style)
