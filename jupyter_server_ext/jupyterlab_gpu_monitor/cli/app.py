"""``jupyter-gpu-monitor`` itself: runs one of its subcommands."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from traitlets import default
from traitlets.utils.importstring import import_item

from ..translation import gettext, join_list, use_terminal_locale
from .command import Command
from .doctor import DoctorApp
from .snapshot import SnapshotApp
from .terms import COMMAND


class GpuMonitorApp(Command):
    """``jupyter-gpu-monitor``: runs one of its subcommands."""

    name = COMMAND
    # Options belong to the subcommands.
    aliases: ClassVar[dict] = {}
    flags: ClassVar[dict] = {}

    def usage(self) -> str:
        """How the command line goes."""
        return f"{COMMAND} SUBCOMMAND [options]"

    def command_description(self) -> str:
        """What the command does, one paragraph in the language in force."""
        return gettext(
            "The GPUs, the environments and their diagnoses as the JupyterLab GPU monitor's "
            "server sees them, in a terminal or a script. Every subcommand reads the server's "
            "settings (c.GpuMonitor in jupyter_server_config.py or .json, in the folders "
            "`jupyter --paths` lists); its options override them for one run."
        )

    @default("subcommand_description")
    def _subcommand_description_default(self) -> str:
        return gettext(
            "Run one as `{app} SUBCOMMAND [options]`; `{app} SUBCOMMAND --help` lists its options."
        )

    def command_examples(self) -> Iterable[tuple[str, str]]:
        return (
            (f"{COMMAND} snapshot", gettext("a table of every GPU and its processes")),
            (f"{COMMAND} snapshot --json", gettext("the REST API's snapshot JSON")),
            (f"{COMMAND} doctor --env train", gettext("can this environment use the GPUs?")),
            (f"{COMMAND} envs", gettext("the conda environments, and the venvs of kernels")),
            (
                f"{COMMAND} export train > environment.yml",
                gettext("an environment's environment.yml"),
            ),
            (f"{COMMAND} snapshot --help", gettext("the options of a subcommand")),
        )

    @default("subcommands")
    def _subcommands_default(self) -> dict[str, tuple[Any, str]]:
        # envs and export by name: only they import the environment modules.
        return {
            "snapshot": (SnapshotApp, gettext("Print one snapshot of every GPU.")),
            "doctor": (
                DoctorApp,
                gettext("Diagnose an environment: can it use the GPUs, and what fixes it."),
            ),
            "envs": (
                "jupyterlab_gpu_monitor.cli.environments.EnvsApp",
                gettext("List the conda environments, and the venvs kernelspecs launch."),
            ),
            "export": (
                "jupyterlab_gpu_monitor.cli.environments.ExportApp",
                gettext("Print an environment's environment.yml."),
            ),
            # By name: only it imports the lab's modules.
            "lab": (
                "jupyterlab_gpu_monitor.cli.lab.LabApp",
                gettext("Print every machine of the lab, from the lab's Prometheus."),
            ),
        }

    def emit_help_epilogue(self, classes: bool) -> Iterable[str]:
        """The last line of ``--help``: where a subcommand's options are."""
        yield gettext("The options of a subcommand: {command} SUBCOMMAND --help").format(
            command=COMMAND
        )
        yield ""

    def parse_command_line(self, argv: Sequence[str] | None = None) -> None:
        """A subcommand and its command line; an unknown subcommand is an error (status 2)."""
        argv = sys.argv[1:] if argv is None else list(argv)
        first = argv[0] if argv else ""
        if (
            first
            and not first.startswith("-")
            and first != "help"
            and first not in self.subcommands
        ):
            self.fail(
                gettext("no subcommand {name}; the subcommands are {names}").format(
                    name=repr(first), names=join_list(self.subcommands)
                )
            )
        super().parse_command_line(argv)

    def initialize_subcommand(self, subc: str, argv: Sequence[str] | None = None) -> None:
        """A new application for the subcommand, each time: ``main`` may run several commands
        in one process (tests), and traitlets would otherwise reuse the last one."""
        command = self.subcommands[subc][0]
        if isinstance(command, str):
            command = import_item(command)
        command.clear_instance()
        super().initialize_subcommand(subc, argv)

    def start(self) -> int:  # type: ignore[override]
        """Run the subcommand; its exit status."""
        if self.subapp is None:
            self.fail(
                gettext("name a subcommand: {names} (see {command} --help)").format(
                    names=join_list(self.subcommands), command=COMMAND
                )
            )
        return self.subapp.start() or 0  # --show-config's start returns nothing


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status."""
    use_terminal_locale()
    app = GpuMonitorApp()
    try:
        app.initialize(None if argv is None else list(argv))
        return app.start()
    except SystemExit as exit:  # --help, --version, and every failure that ends a command
        return _exit_status(exit.code)
    except BrokenPipeError:
        # The reader left (`... | head`): nothing more to say, and no traceback at exit either,
        # when Python flushes stdout again (as the Python documentation advises).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
