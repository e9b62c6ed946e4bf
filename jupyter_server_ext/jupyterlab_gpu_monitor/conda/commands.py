"""The ``envs`` and ``export`` commands of ``jupyter-gpu-monitor``: the server's view of the
environments, for people who live in SSH sessions and for scripts."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import sys
from collections.abc import Sequence

from ..translation import columns, gettext, pad
from .catalog import EnvironmentCatalog
from .errors import AmbiguousEnvironment, CondaCommandError, EnvironmentNotFound
from .model import Environment, conda_env_list


def _catalog(args: argparse.Namespace) -> EnvironmentCatalog:
    # Imported here: only these commands pay for jupyter_client and the settings.
    from jupyter_client.kernelspec import KernelSpecManager

    from ..config import GpuMonitor

    config = GpuMonitor(
        extra_envs_dirs=args.envs_dir, conda_path=args.conda, conda_timeout=args.timeout
    )
    return EnvironmentCatalog(KernelSpecManager(), config)


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--envs-dir",
        action="append",
        default=[],
        metavar="DIR",
        help=gettext("also search this folder of environments (repeatable)"),
    )
    parser.add_argument(
        "--use-conda",
        action="store_true",
        help=gettext("ask conda too (conda info --json; for export, conda env export)"),
    )
    parser.add_argument(
        "--conda", default="conda", metavar="PATH", help=gettext("the conda to run")
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help=gettext("how long conda may take"),
    )


def add_env_commands(commands: argparse._SubParsersAction) -> None:
    """Register ``envs`` and ``export`` with the command's subparsers."""
    envs = commands.add_parser(
        "envs", help=gettext("list the conda environments, and the venvs kernelspecs launch")
    )
    envs.set_defaults(run=run_envs)
    envs.add_argument(
        "--json",
        action="store_true",
        help=gettext("print JSON in the shape of `conda env list --json`"),
    )
    _add_options(envs)
    export = commands.add_parser("export", help=gettext("print an environment's environment.yml"))
    export.set_defaults(run=run_export, style="no-builds")
    export.add_argument("env", metavar="ENV", help=gettext("a name or id from `envs`, or a prefix"))
    style = export.add_mutually_exclusive_group()
    style.add_argument(
        "--from-history",
        dest="style",
        action="store_const",
        const="from-history",
        help=gettext("the specs that were asked for, from conda-meta/history"),
    )
    style.add_argument(
        "--with-builds",
        dest="style",
        action="store_const",
        const="with-builds",
        help=gettext("name=version=build, as plain `conda env export`"),
    )
    _add_options(export)


def format_envs_table(environments: Sequence[Environment]) -> str:
    """The environments as a person reads them in a terminal."""
    rows = [
        (
            gettext("NAME"),
            gettext("KIND"),
            gettext("MANAGER"),
            gettext("PYTHON"),
            gettext("PACKAGES"),
            gettext("KERNELSPECS"),
            gettext("PREFIX"),
        )
    ]
    rows += [
        (
            environment.id,
            environment.kind,
            environment.manager,
            environment.python_version or "-",
            str(environment.package_count),
            ",".join(environment.kernelspecs) or "-",
            environment.prefix,
        )
        for environment in environments
    ]
    widths = [max(columns(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    return "\n".join(
        "  ".join(pad(cell, width) for cell, width in zip(row, widths)) + "  " + row[-1]
        for row in rows
    )


def _report_warnings() -> None:
    # Discovery logs what it skipped; here that goes to stderr, each problem once.
    logging.basicConfig(level=logging.WARNING, format="warning: %(message)s", stream=sys.stderr)


# The hints name the server's settings; printed by a command, they name its flag instead.
SETTING_FLAGS = {
    "GpuMonitor.nvidia_smi_path": "--nvidia-smi",
    "GpuMonitor.command_timeout": "--timeout",
    "GpuMonitor.conda_path": "--conda",
    "GpuMonitor.conda_timeout": "--timeout",
    "GpuMonitor.source": "--source",
    "GpuMonitor.prometheus_url": "--prometheus-url",
    "GpuMonitor.prometheus_selector": "--prometheus-selector",
    "GpuMonitor.prometheus_bearer_token_file": "--prometheus-bearer-token-file",
}
# A setting as hints name it, with or without the config file's "c." ("set
# c.GpuMonitor.prometheus_url to ..."), and only whole names.
SETTING_NAME = re.compile(
    r"\b(?:c\.)?(" + "|".join(re.escape(setting) for setting in SETTING_FLAGS) + r")\b"
)


def in_command_terms(text: str) -> str:
    """A hint as a command prints it: each server setting it names becomes the flag."""
    return SETTING_NAME.sub(lambda match: SETTING_FLAGS[match.group(1)], text)


def failure_text(kind: str, message: str, hint: str) -> str:
    """A failure as the commands print it on stderr: its kind, what happened, what to do."""
    return "\n".join(
        (
            gettext("error ({kind}): {message}").format(
                kind=kind, message=in_command_terms(message)
            ),
            gettext("hint: {hint}").format(hint=in_command_terms(hint)),
        )
    )


def _fail(error: CondaCommandError) -> int:
    print(failure_text(error.kind, error.message, error.hint), file=sys.stderr)
    return 1


def run_envs(args: argparse.Namespace) -> int:
    """``envs``: the listing; 1 when conda was asked and failed."""
    _report_warnings()
    try:
        environments = asyncio.run(_catalog(args).environments(args.use_conda))
    except CondaCommandError as error:
        return _fail(error)
    if args.json:
        print(json.dumps(conda_env_list(environments), indent=2))
    else:
        print(format_envs_table(environments))
    return 0


async def _export(args: argparse.Namespace) -> str:
    catalog = _catalog(args)
    environment = await catalog.resolve(args.env, args.use_conda)
    return await catalog.export(environment, args.style, args.use_conda)


def run_export(args: argparse.Namespace) -> int:
    """``export ENV``: environment.yml on stdout; 1 when ENV names no single environment or
    conda failed."""
    _report_warnings()
    try:
        text = asyncio.run(_export(args))
    except (EnvironmentNotFound, AmbiguousEnvironment, ValueError) as error:
        print(f"jupyter-gpu-monitor export: {error}", file=sys.stderr)
        return 1
    except CondaCommandError as error:
        return _fail(error)
    sys.stdout.write(text)
    return 0
