"""The server's environments, for the REST handlers (and anything else on the event loop):
files are read on the FILES threads with a time bound (see blocking.py), conda runs as a
subprocess, never on the loop itself."""

from __future__ import annotations

import inspect
import logging
import os
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from .. import blocking
from ..subprocesses import SharedRuns
from ..translation import gettext
from .conda_cli import conda_env_export, conda_info
from .discovery import FILES_SECONDS, environment_at, find_environment, list_environments
from .errors import EnvironmentFilesTimeout, EnvironmentNotFound
from .export import PIP_STYLES, UnsupportedExport, export_text
from .model import Environment, Listing, Package
from .records import packages

if TYPE_CHECKING:
    from ..config import GpuMonitor

log = logging.getLogger(__name__)

T = TypeVar("T")

# conda processes running at once for the server's requests; the same command asked for while
# it runs is shared, not run again.
CONDA_RUNS_AT_ONCE = 2
# Different discoveries running at once (a listing, one with conda's, a prefix looked up); the
# same one asked for while it runs is shared: a hundred browsers polling cost one.
DISCOVERIES_AT_ONCE = 2


class EnvironmentCatalog:
    """Environments as the server sees them: the kernelspecs of its KernelSpecManager tell
    which environments its kernels run in, and ``GpuMonitor`` settings (read at each call)
    say where else to look and how to run conda."""

    def __init__(self, kernel_spec_manager: Any, config: GpuMonitor):
        self._kernel_spec_manager = kernel_spec_manager
        self._config = config
        self._conda_runs = SharedRuns(CONDA_RUNS_AT_ONCE)
        self._discoveries = SharedRuns(DISCOVERIES_AT_ONCE)

    async def kernelspecs(self) -> dict[str, Any]:
        """``get_all_specs()`` of the server's KernelSpecManager (a gateway's is async); empty,
        with a warning, when it fails: environments are listed all the same."""
        if self._kernel_spec_manager is None:
            return {}
        getter = self._kernel_spec_manager.get_all_specs
        try:
            if inspect.iscoroutinefunction(getter):
                return await getter()
            return await blocking.run(
                blocking.FILES, getter, timeout_seconds=FILES_SECONDS, key="kernelspecs"
            )
        except blocking.Stopping:
            raise
        except Exception as error:  # a broken kernel.json must not hide the environments
            log.warning("kernelspecs unavailable, environments listed without them: %s", error)
            return {}

    async def environments(self, use_conda: bool = False) -> list[Environment]:
        """Every environment; with ``use_conda``, also those ``conda info --json`` knows of
        (raises CondaCommandError when conda cannot tell). Those whose files did not answer in
        time are logged, not listed (see ``listing``)."""
        return (await self.listing(use_conda)).environments

    async def listing(self, use_conda: bool = False) -> Listing:
        """Every environment, and the folders whose files did not answer in time; with
        ``use_conda``, also those ``conda info --json`` knows of (raises CondaCommandError when
        conda cannot tell; EnvironmentFilesTimeout when the folders where environments are
        registered do not answer). Requests that ask while one is under way share it."""
        extra_dirs = tuple(self._config.extra_envs_dirs)
        return await self._discoveries.run(
            ("listing", use_conda, extra_dirs), lambda: self._discover(use_conda, extra_dirs)
        )

    async def _discover(self, use_conda: bool, extra_dirs: tuple[str, ...]) -> Listing:
        dirs = list(extra_dirs)
        extra_prefixes: list[tuple[str, str]] = []
        if use_conda:
            info = await self._conda_runs.run(
                ("info",), lambda: conda_info(self._config.conda_path, self._config.conda_timeout)
            )
            roots = [info.root_prefix] if info.root_prefix else []
            extra_prefixes = [(prefix, "conda info --json") for prefix in [*roots, *info.envs]]
            dirs += info.envs_dirs
        kernelspecs = await self.kernelspecs()
        return await list_environments(
            kernelspecs, extra_envs_dirs=dirs, extra_prefixes=extra_prefixes
        )

    async def resolve(self, key: str, use_conda: bool = False) -> Environment:
        """The environment a person names: a prefix (anything with a path separator), else an id
        or name of the listing, conda's own included with ``use_conda``. Raises
        EnvironmentNotFound or AmbiguousEnvironment (CondaCommandError with ``use_conda``), and
        EnvironmentFilesTimeout when the environment's files do not answer in time."""
        if os.sep in key or (os.altsep and os.altsep in key):
            environment = await self._discoveries.run(("prefix", key), lambda: self._at(key))
            if environment is None:
                raise EnvironmentNotFound(key)
            return environment
        found = await self.listing(use_conda)
        try:
            return find_environment(found.environments, key)
        except EnvironmentNotFound:
            # Named after its folder, as the listing would name it if its files answered.
            for folder in found.unreadable:
                if os.path.basename(folder.prefix) == key:
                    raise EnvironmentFilesTimeout(f"{folder.prefix}: {folder.message}") from None
            raise

    async def _at(self, prefix: str) -> Environment | None:
        return await environment_at(prefix, await self.kernelspecs())

    async def packages(self, environment: Environment) -> list[Package]:
        """The packages of an environment (EnvironmentFilesTimeout when its files do not answer
        in time)."""
        return await self._read(environment, packages, environment.prefix)

    async def export(self, environment: Environment, style: str, use_conda: bool = False) -> str:
        """The file of one of ``export.STYLES`` (environment.yml, requirements.txt,
        pylock.toml), from the records on disk, or with ``use_conda`` from ``conda env
        export`` (raises CondaCommandError; UnsupportedExport for a style conda does not
        write; EnvironmentFilesTimeout when the files do not answer in time)."""
        if use_conda:
            if style in PIP_STYLES:
                message = gettext(
                    "conda env export writes environment.yml only: export {style} without use_conda"
                )
                raise UnsupportedExport(message.format(style=style))
            return await self._conda_runs.run(
                ("export", environment.prefix, style),
                lambda: conda_env_export(
                    self._config.conda_path, environment.prefix, style, self._config.conda_timeout
                ),
            )
        return await self._read(environment, export_text, environment, style)

    @staticmethod
    async def _read(environment: Environment, read: Callable[..., T], *args: Any) -> T:
        try:
            return await blocking.run(
                blocking.FILES,
                read,
                *args,
                timeout_seconds=FILES_SECONDS,
                key=("prefix", environment.prefix),
            )
        except blocking.TimedOut as late:
            raise _files_timeout(environment.name, environment.prefix, late) from None


def _files_timeout(name: str, prefix: str, late: blocking.TimedOut) -> EnvironmentFilesTimeout:
    """The failure of a read of an environment's files that timed out, with what to do."""
    if late.stuck_seconds is not None:
        message = gettext(
            "the files of {name} ({prefix}) have not answered for {seconds} s: a network "
            "filesystem may hang, or a FIFO stands where conda keeps a file. Check that `ls "
            "{prefix}/conda-meta` answers; ask again once it does."
        ).format(name=name, prefix=prefix, seconds=f"{late.stuck_seconds:.0f}")
    else:
        message = gettext(
            "the files of {name} ({prefix}) did not answer within {seconds} s: a network "
            "filesystem may hang, or a FIFO stands where conda keeps a file. Check that `ls "
            "{prefix}/conda-meta` answers; ask again once it does."
        ).format(name=name, prefix=prefix, seconds=f"{late.seconds:g}")
    return EnvironmentFilesTimeout(message)
