"""``doctor``: can an environment use the GPUs, and what fixes it."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from traitlets import Bool, Unicode

from ..gpu.model import Snapshot
from ..translation import columns, gettext, join_list, pad, pgettext
from .command import ReadingCommand
from .terms import COMMAND, in_command_terms


def _doctor_summary(python: str, probe: dict, snapshot: Snapshot) -> list[str]:
    from ..kernel.env import environment_root

    prefix, kind = environment_root(python)
    torch = probe.get("torch") or {}
    torch_line = f"torch {probe['packages'].get('torch') or gettext('not installed')}"
    if torch:
        usable = gettext("yes") if torch.get("cuda_available") else gettext("no")
        torch_line = gettext("{torch}, CUDA build {cuda}, CUDA usable: {usable}").format(
            torch=torch_line, cuda=torch.get("cuda") or gettext("none"), usable=usable
        )
    if snapshot.error is not None:
        gpus = gettext("GPUs: none readable ({error})").format(error=snapshot.error.message)
    else:
        names = join_list(gpu.name or gettext("unknown GPU") for gpu in snapshot.gpus)
        gpus = gettext("GPUs: {names}; driver {driver}, CUDA {cuda}").format(
            names=names or gettext("none"),
            driver=snapshot.driver_version or gettext("n/a"),
            cuda=snapshot.cuda_version or gettext("n/a"),
        )
    visible = probe.get("cuda_visible_devices")
    python_line = gettext("Python {version} at {executable} ({kind} {prefix})").format(
        version=probe["python_version"],
        executable=probe["executable"],
        kind=kind or gettext("unknown"),
        prefix=prefix,
    )
    return [
        python_line,
        torch_line,
        gpus,
        "CUDA_VISIBLE_DEVICES: " + (gettext("(unset)") if visible is None else repr(visible)),
    ]


class DoctorApp(ReadingCommand):
    """``doctor``: the diagnoses of an environment, the server's rules run in a terminal."""

    name = f"{COMMAND} doctor"

    env = Unicode(
        "",
        help="The environment to check: a name or id from `jupyter-gpu-monitor envs`, or a "
        "prefix. Empty: the Python that runs the command.",
    ).tag(config=True)
    shallow = Bool(False, help="Do not import torch to ask it about CUDA.").tag(config=True)
    json_output = Bool(False, help="Print the facts and findings as JSON.").tag(config=True)

    def command_description(self) -> str:
        """What the command does, one paragraph in the language in force."""
        return gettext(
            "Diagnose an environment: can it use the GPUs, and what fixes it when it cannot. "
            "doctor reads the GPUs as snapshot does, runs a probe in the environment's own Python "
            "(which imports torch to ask it about CUDA, unless --shallow), and prints what it "
            "found, each finding with its fix. Exit status: 0 without an error among the "
            "findings; 1 with one, or when --env names no environment; 2 for an invalid option, "
            "setting or file, or when the probe cannot run."
        )

    def command_examples(self) -> Iterable[tuple[str, str]]:
        return (
            (f"{COMMAND} doctor", gettext("the Python that runs this command")),
            (
                f"{COMMAND} doctor --env train",
                gettext("an environment by its name or id from `envs`, or a prefix"),
            ),
            (
                f"{COMMAND} doctor --env train --envs-dir /data/envs",
                gettext("an environment in a folder of its own"),
            ),
            (
                f"{COMMAND} doctor --shallow --json",
                gettext("without importing torch; facts and findings as JSON"),
            ),
        )

    def command_aliases(self) -> dict[str, tuple[str, str]]:
        """``--env``, ``--envs-dir`` for the names it resolves, and the reading options."""
        return {
            "env": (
                self.own("env"),
                gettext(
                    "The environment to check: a name or id from `{command} envs`, or a prefix "
                    "(default: the Python that runs this command)."
                ).format(command=COMMAND),
            ),
            **self.setting_aliases("envs-dir"),
            **super().command_aliases(),
        }

    def command_flags(self) -> dict[str, tuple[dict, str]]:
        """``--shallow`` and ``--json``."""
        return {
            "shallow": (
                {"DoctorApp": {"shallow": True}},
                gettext("Do not import torch to ask it about CUDA."),
            ),
            "json": (
                {"DoctorApp": {"json_output": True}},
                gettext("Print the facts and findings as JSON."),
            ),
        }

    def interpreter(self) -> str:
        """The Python of the environment ``--env`` names (this one's without it)."""
        if not self.env:
            return sys.executable
        prefix = Path(self.env).resolve()
        if not prefix.is_dir():
            # Imported here: only a lookup by name pays for the environment modules.
            from ..conda.catalog import EnvironmentCatalog
            from ..conda.errors import (
                AmbiguousEnvironment,
                EnvironmentFilesTimeout,
                EnvironmentNotFound,
            )

            catalog = EnvironmentCatalog(self.kernel_spec_manager(), self.settings)
            try:
                prefix = Path(asyncio.run(catalog.resolve(self.env)).prefix)
            except (EnvironmentNotFound, AmbiguousEnvironment, EnvironmentFilesTimeout) as error:
                self.fail(in_command_terms(str(error)), status=1)
        for candidate in (prefix / "bin" / "python", prefix / "python.exe"):
            if candidate.exists():
                return str(candidate)
        self.fail(gettext("no Python in {prefix}").format(prefix=prefix), status=1)

    def start(self) -> int:
        """0 without an error finding, 1 with one, 2 when the probe cannot run."""
        from ..conda.prefix import manager_of, project_of
        from ..conda.records import packages
        from ..diagnose import Facts, diagnose
        from ..kernel.probe import probe_interpreter

        python = self.interpreter()
        snapshot = self.read_snapshot()
        try:
            probe = asyncio.run(probe_interpreter(python, deep=not self.shallow))
        except RuntimeError as error:
            self.fail(str(error))
        # What installed what: "installed by both conda and pip", and the fixes' installer.
        installed = packages(probe["prefix"])
        made_by = manager_of(probe["prefix"])
        project = project_of(probe["prefix"])
        findings = [
            replace(
                finding,
                title=in_command_terms(finding.title),
                evidence=in_command_terms(finding.evidence),
                fix=in_command_terms(finding.fix),
            )
            for finding in diagnose(
                Facts(
                    snapshot=snapshot,
                    probe=probe,
                    packages=installed,
                    env_manager=made_by,
                    project=project,
                )
            )
        ]
        if self.json_output:
            report = {"probe": probe, "gpus": snapshot.to_json(), "findings": findings}
            print(json.dumps(report, default=lambda finding: finding.to_json(), indent=2))
        else:
            print("\n".join(_doctor_summary(python, probe, snapshot)))
            labels = {
                "error": pgettext("severity", "ERROR"),
                "warning": pgettext("severity", "WARNING"),
                "info": pgettext("severity", "INFO"),
            }
            indent = max(8, *(columns(label) + 1 for label in labels.values()))
            for finding in findings:
                print(f"\n{pad(labels[finding.severity], indent)}{finding.title}")
                print(" " * indent + finding.evidence)
                print(" " * indent + gettext("fix: {fix}").format(fix=finding.fix))
            if not findings:
                print("\n" + gettext("No problems found."))
        return 1 if any(finding.severity == "error" for finding in findings) else 0
