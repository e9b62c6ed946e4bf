"""The ``envs`` and ``export`` subcommands of ``jupyter-gpu-monitor``: the server's view of the
environments, for people who live in SSH sessions and for scripts."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Iterable, Sequence

from traitlets import Bool, Enum

from ..conda.catalog import EnvironmentCatalog
from ..conda.errors import (
    AmbiguousEnvironment,
    CondaCommandError,
    EnvironmentFilesTimeout,
    EnvironmentNotFound,
)
from ..conda.export import STYLES
from ..conda.model import Environment, conda_env_list
from ..translation import columns, gettext, pad
from .command import GpuMonitorCommand
from .terms import COMMAND, failure_text, in_command_terms

# The options of both subcommands that set server settings.
CONDA_OPTIONS = ("envs-dir", "conda", "conda-timeout")


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


def _fail(error: CondaCommandError) -> int:
    print(failure_text(error.kind, error.message, error.hint), file=sys.stderr)
    return 1


class EnvironmentsCommand(GpuMonitorCommand):
    """What ``envs`` and ``export`` share: where to look, and whether to ask conda."""

    use_conda = Bool(
        False,
        help="Ask conda too: `conda info --json` for the environments it knows, and "
        "`conda env export` for export.",
    ).tag(config=True)

    def command_aliases(self) -> dict[str, tuple[str, str]]:
        """``--envs-dir``, ``--conda`` and ``--conda-timeout``."""
        return self.setting_aliases(*CONDA_OPTIONS)

    def command_flags(self) -> dict[str, tuple[dict, str]]:
        """``--use-conda``."""
        return {
            "use-conda": (
                {type(self).__name__: {"use_conda": True}},
                gettext("Ask conda too (conda info --json; for export, conda env export)."),
            )
        }

    def catalog(self) -> EnvironmentCatalog:
        """The environments as the server sees them, with this run's settings."""
        return EnvironmentCatalog(self.kernel_spec_manager(), self.settings)


class EnvsApp(EnvironmentsCommand):
    """``envs``: the listing of the environments."""

    name = f"{COMMAND} envs"

    json_output = Bool(False, help="Print JSON in the shape of `conda env list --json`.").tag(
        config=True
    )

    def command_description(self) -> str:
        """What the subcommand does."""
        return gettext(
            "List the environments the server sees: the conda (mamba, micromamba, pixi) "
            "environments found on disk, the venvs its kernelspecs launch, and those in the "
            "folders of --envs-dir. conda itself runs only with --use-conda. With --json, the "
            "listing has the shape of `conda env list --json`. Exit status: 0; 1 when conda was "
            "asked and failed; 2 for an invalid option, setting or folder."
        )

    def command_examples(self) -> Iterable[tuple[str, str]]:
        return (
            (f"{COMMAND} envs", gettext("name or id, kind, Python, packages, kernelspecs")),
            (f"{COMMAND} envs --json", gettext("envs and envs_details, keyed by prefix")),
            (f"{COMMAND} envs --envs-dir /data/envs", gettext("also a folder of environments")),
            (
                f"{COMMAND} envs --use-conda --conda ~/miniforge3/bin/conda",
                gettext("what this conda knows too"),
            ),
        )

    def command_flags(self) -> dict[str, tuple[dict, str]]:
        """``--json`` and ``--use-conda``."""
        return {
            "json": (
                {"EnvsApp": {"json_output": True}},
                gettext("Print JSON in the shape of `conda env list --json`."),
            ),
            **super().command_flags(),
        }

    def start(self) -> int:
        """The listing; 1 when conda was asked and failed, or the folders where environments
        are registered did not answer."""
        _report_warnings()
        try:
            environments = asyncio.run(self.catalog().environments(self.use_conda))
        except CondaCommandError as error:
            return _fail(error)
        except EnvironmentFilesTimeout as error:
            print(f"{self.name}: {in_command_terms(error.message)}", file=sys.stderr)
            return 1
        if self.json_output:
            print(json.dumps(conda_env_list(environments), indent=2))
        else:
            print(format_envs_table(environments))
        return 0


class ExportApp(EnvironmentsCommand):
    """``export ENV``: an environment's environment.yml, requirements.txt or pylock.toml."""

    name = f"{COMMAND} export"

    def usage(self) -> str:
        """``ENV`` first."""
        return f"{COMMAND} export ENV [options]"

    style = Enum(
        list(STYLES),
        default_value="no-builds",
        help="no-builds: name=version, as `conda env export --no-builds`; from-history: the "
        "specs that were asked for; with-builds: name=version=build; requirements: "
        "requirements.txt of what pip or uv installed; pylock: pylock.toml (PEP 751) of it.",
    ).tag(config=True)

    def command_description(self) -> str:
        """What the subcommand does."""
        return gettext(
            "Print an environment's environment.yml, made from its records on disk: "
            "name=version, as `conda env export --no-builds`; the specs that were asked for, "
            "with --from-history; name=version=build, with --with-builds. --requirements and "
            "--pylock print requirements.txt and pylock.toml of what pip or uv installed (a "
            "venv's every package). With --use-conda, `conda env export` itself. ENV is a name "
            "or id from `{command} envs`, or a prefix. "
            "Exit status: 0; 1 when ENV names no environment, or several, or conda fails; 2 for "
            "an invalid option, setting or folder."
        ).format(command=COMMAND)

    def command_examples(self) -> Iterable[tuple[str, str]]:
        return (
            (f"{COMMAND} export train", gettext("name=version of every package")),
            (f"{COMMAND} export train --from-history", gettext("the specs asked for")),
            (f"{COMMAND} export base-2 --with-builds", gettext("name=version=build")),
            (
                f"{COMMAND} export .venv --requirements > requirements.txt",
                gettext("what pip or uv installed, for pip install -r"),
            ),
            (
                f"{COMMAND} export ~/envs/train --use-conda --conda-timeout 120",
                gettext("conda env export itself"),
            ),
        )

    def command_flags(self) -> dict[str, tuple[dict, str]]:
        """``--from-history``, ``--with-builds``, ``--requirements``, ``--pylock`` and
        ``--use-conda``."""
        return {
            "from-history": (
                {"ExportApp": {"style": "from-history"}},
                gettext("The specs that were asked for, from conda-meta/history."),
            ),
            "with-builds": (
                {"ExportApp": {"style": "with-builds"}},
                gettext("name=version=build, as plain `conda env export`."),
            ),
            "requirements": (
                {"ExportApp": {"style": "requirements"}},
                gettext("requirements.txt of what pip or uv installed."),
            ),
            "pylock": (
                {"ExportApp": {"style": "pylock"}},
                gettext("pylock.toml (PEP 751) of what pip or uv installed."),
            ),
            **super().command_flags(),
        }

    def check_arguments(self) -> None:
        """One environment, and one style."""
        if len(self.extra_args) != 1:
            self.fail(gettext("name one environment: {usage}").format(usage=self.usage()))
        chosen = {"--from-history", "--with-builds", "--requirements", "--pylock"}
        if len(chosen & set(self.argv)) > 1:
            self.fail(
                gettext(
                    "--from-history, --with-builds, --requirements and --pylock exclude each other"
                )
            )

    async def _export(self) -> str:
        catalog = self.catalog()
        environment = await catalog.resolve(self.extra_args[0], self.use_conda)
        return await catalog.export(environment, self.style, self.use_conda)

    def start(self) -> int:
        """environment.yml on stdout; 1 when ENV names no single environment, its files did
        not answer, or conda failed."""
        _report_warnings()
        try:
            text = asyncio.run(self._export())
        except (
            EnvironmentNotFound,
            AmbiguousEnvironment,
            EnvironmentFilesTimeout,
            ValueError,
        ) as error:
            print(f"{self.name}: {in_command_terms(str(error))}", file=sys.stderr)
            return 1
        except CondaCommandError as error:
            return _fail(error)
        sys.stdout.write(text)
        return 0
