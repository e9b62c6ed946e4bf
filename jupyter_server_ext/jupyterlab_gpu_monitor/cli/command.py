"""What every subcommand is: a Jupyter application that reads the server's settings, with a
strict command line and failures as one line on stderr."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar, NoReturn

from jupyter_core.application import JupyterApp
from traitlets import TraitError, Unicode, default
from traitlets.config.loader import KVArgParseConfigLoader

from .._version import __version__
from ..config import GpuMonitor, setting_problem
from ..gpu.errors import GpuReadError
from ..gpu.model import Snapshot
from ..gpu.nvidia_smi import parse_saved_output
from ..gpu.source import make_source
from ..translation import gettext, join_list
from .help_text import examples, wrap
from .terms import (
    COMMAND,
    SETTING_OPTIONS,
    SOURCE_OPTIONS,
    TRAITLETS_OPTIONS,
    command_error,
    in_command_terms,
    setting_help,
    unknown_option,
)


class _OptionParser(KVArgParseConfigLoader.parser_class):
    """traitlets' argparse parser, whose errors name an option as it was typed (--from), not as
    traitlets rewrote it before parsing (--SnapshotApp.from_file)."""

    typed_names: ClassVar[dict[str, str]] = {}

    def error(self, message: str) -> NoReturn:
        """argparse's usage and error (status 2), in the command's option names."""
        for rewritten, typed in self.typed_names.items():
            message = re.sub(re.escape(rewritten) + r"\b", typed, message)
        super().error(message)


class _StrictOptions(KVArgParseConfigLoader):
    """traitlets' reader of the command line, as strict as argparse: an option the subcommand
    does not have is an error (status 2), not a warning that it has no effect."""

    parser_class = _OptionParser

    def _create_parser(self) -> None:
        super()._create_parser()
        self.parser.typed_names = {
            f"--{target}": f"--{alias}" for alias, target in self.aliases.items()
        }

    def _handle_unrecognized_alias(self, arg: str) -> None:
        self.parser.error(unknown_option(arg, [*self.aliases, *self.flags]))


class Command(JupyterApp):
    """What the command and its subcommands share: the version, a strict command line, and
    failures as one line on stderr."""

    version = __version__

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        # JupyterApp's description is a plain class attribute, not a trait with a default.
        self.description = self.command_description()

    def command_description(self) -> str:
        """What the command does, one paragraph in the language in force."""
        return ""

    def command_examples(self) -> Iterable[tuple[str, str]]:
        """Example command lines, each with what it does, in the language in force."""
        return ()

    @default("examples")
    def _examples_default(self) -> str:
        lines = list(self.command_examples())
        return examples(lines) if lines else ""

    def usage(self) -> str:
        """How the command line goes, for argparse's errors."""
        return f"{self.name} [options]"

    def parse_command_line(self, argv: Sequence[str] | None = None) -> None:
        """traitlets' parsing, once every option of ``argv`` is known to the command: traitlets
        would take an unknown one for an option with a value (``--jsn`` eats what follows)."""
        argv = sys.argv[1:] if argv is None else list(argv)
        if not (self.subcommands and argv and argv[0] in self.subcommands):
            known = {*self.aliases, *self.flags}
            for arg in argv[: argv.index("--")] if "--" in argv else argv:
                option = arg[2:].partition("=")[0] if arg.startswith("--") else ""
                if option and "." not in option and option not in known | TRAITLETS_OPTIONS:
                    self.fail(unknown_option(option, known))
        super().parse_command_line(argv)

    def emit_description(self) -> Iterable[str]:
        """The description, wrapped in terminal columns (traitlets counts characters: a Chinese
        paragraph would make lines twice as wide as the terminal)."""
        for paragraph in self.description.split("\n\n"):
            yield "\n".join(wrap(paragraph))
            yield ""

    def print_version(self) -> None:
        """``--version``: the command and the package's version."""
        print(f"{COMMAND} {__version__}")

    def migrate_config(self) -> None:
        """Nothing: moving IPython 3's config is for the server to do, not for a command that
        only reads (it would import IPython, and write to ~/.jupyter)."""

    def _find_subcommand(self, name: str) -> str:
        # JupyterApp runs a `jupyter-gpu-monitor-<name>` found on PATH instead of a subcommand:
        # ours are all built in.
        return ""

    def _create_loader(self, argv, aliases, flags, classes):
        return _StrictOptions(
            argv,
            aliases,
            flags,
            classes=classes,
            log=self.log,
            subcommands=self.subcommands,
            prog=self.name,
            usage=self.usage(),
        )

    def fail(self, message: str, status: int = 2) -> NoReturn:
        """End the command: ``message`` as one line on stderr, and ``status``."""
        print(f"{self.name}: {message}", file=sys.stderr)
        self.exit(status)
        raise AssertionError("unreachable")  # exit raises SystemExit


class GpuMonitorCommand(Command):
    """A subcommand: the server's settings from its config files and the command line, checked
    before anything runs.

    A subclass names its options in ``command_aliases`` and ``command_flags``, and runs in
    ``start``, which returns the exit status.
    """

    classes: ClassVar[list] = [GpuMonitor]
    # The server's settings, as the config files and the command line made them (initialize).
    settings: GpuMonitor

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        # Made here, not in the class: their help is in the language of the terminal.
        self.aliases = {
            **self.command_aliases(),
            "config": (
                "JupyterApp.config_file",
                gettext(
                    "Read this config file instead of the jupyter_server_config.py and .json "
                    "files of the Jupyter config path."
                ),
            ),
        }
        self.flags = {
            **self.command_flags(),
            "show-config": (
                {"Application": {"show_config": True}},
                gettext("Print the config files read and the settings they make, and stop."),
            ),
            "show-config-json": (
                {"Application": {"show_config_json": True}},
                gettext("Print the settings as JSON, and stop."),
            ),
            "debug": (
                {"Application": {"log_level": logging.DEBUG}},
                gettext("Log which config files are looked for and read."),
            ),
        }

    @default("config_file_name")
    def _config_file_name_default(self) -> str:
        return "jupyter_server_config"

    @default("option_description")
    def _option_description_default(self) -> str:
        return gettext(
            'An option that sets one of the server\'s settings (see its "Equivalent to") '
            "overrides the config files for this run; --GpuMonitor.<setting>=<value> sets any "
            "other."
        )

    def emit_help_epilogue(self, classes: bool) -> Iterable[str]:
        """The last lines of ``--help``: where the other settings are."""
        if not classes:
            yield gettext("Every setting, with its default: {command} --help-all").format(
                command=self.name
            )
            yield ""

    def command_aliases(self) -> dict[str, tuple[str, str]]:
        """The subcommand's options that take a value: name -> (Class.trait, help)."""
        return {}

    def command_flags(self) -> dict[str, tuple[dict, str]]:
        """The subcommand's options without a value: name -> (config, help)."""
        return {}

    def setting_aliases(self, *options: str) -> dict[str, tuple[str, str]]:
        """Options that set server settings, with their help."""
        helps = setting_help()
        return {
            option: (f"GpuMonitor.{SETTING_OPTIONS[option]}", helps[option]) for option in options
        }

    def own(self, trait: str) -> str:
        """``Class.trait`` of one of this subcommand's own traits, for an alias or a flag."""
        return f"{type(self).__name__}.{trait}"

    def initialize(self, argv: Sequence[str] | None = None) -> None:
        """Read the command line and the config files (the command line wins), then check the
        settings, the arguments and the files named: a problem ends the command here."""
        super().initialize(argv)
        if self.show_config:
            return  # shows the settings as they are, to find what is wrong with them
        try:
            self.settings = GpuMonitor(parent=self)
        except TraitError as error:
            self.fail(self.setting_text(setting_problem(error)))
        if self.config_file:
            self.check_readable(self.config_file)
        if "extra_envs_dirs" in self.cli_config.get("GpuMonitor", {}):
            # Only folders typed here: a config file may list folders of other machines,
            # which the server skips too.
            for folder in self.settings.extra_envs_dirs:
                self.check_listable(folder)
        self.check_arguments()

    def update_config(self, config) -> None:
        """traitlets' update, with an invalid value of the subcommand's own options (an
        unknown export style) as one line, not a log record."""
        try:
            super().update_config(config)
        except TraitError as error:
            self.fail(setting_problem(error))

    def check_arguments(self) -> None:
        """Refuse what the subcommand cannot take; by default, any argument."""
        if self.extra_args:
            self.fail(gettext("unexpected argument {argument}").format(argument=self.extra_args[0]))

    def setting_text(self, problem: str) -> str:
        """An invalid setting as the command says it: the option, when it was given on the
        command line; else the setting, and the config files read."""
        named = re.match(r"GpuMonitor\.(\w+) ", problem)
        if named and named[1] in self.cli_config.get("GpuMonitor", {}):
            return in_command_terms(problem)
        if not self.loaded_config_files:
            return problem
        return gettext("{problem} (config files read: {files})").format(
            problem=problem, files=join_list(self.loaded_config_files)
        )

    def cannot_read(self, path: str, error: OSError) -> NoReturn:
        """End the command: a file or folder it must read cannot be read."""
        reason = error.strerror or str(error)
        self.fail(gettext("cannot read {path}: {reason}").format(path=path, reason=reason))

    def check_readable(self, path: str) -> None:
        """End the command when the file ``path`` cannot be read (missing, a folder...)."""
        try:
            with open(path, "rb"):
                pass
        except OSError as error:
            self.cannot_read(path, error)

    def check_listable(self, path: str) -> None:
        """End the command when the folder ``path`` cannot be listed."""
        try:
            os.listdir(path)
        except OSError as error:
            self.cannot_read(path, error)

    def kernel_spec_manager(self) -> Any:
        """The KernelSpecManager the server would have: ``c.KernelSpecManager`` applies."""
        # Imported here: only the subcommands that look for environments pay for it.
        from jupyter_client.kernelspec import KernelSpecManager

        return KernelSpecManager(parent=self)

    def start(self) -> int:  # type: ignore[override]
        """Run the subcommand; its exit status."""
        raise NotImplementedError


class ReadingCommand(GpuMonitorCommand):
    """A subcommand that reads the GPUs, or a saved nvidia-smi output (``--from``)."""

    from_file = Unicode(
        "",
        help="A saved `nvidia-smi -q -x`, `nvidia-smi -L`, or --query-gpu / --query-compute-apps "
        "CSV, parsed instead of reading the GPUs.",
    ).tag(config=True)
    fields = Unicode(
        "",
        help="With from_file: the --query-gpu field list of a CSV saved with noheader.",
    ).tag(config=True)

    def command_aliases(self) -> dict[str, tuple[str, str]]:
        """The options of every reading subcommand: where the readings come from."""
        return {
            **self.setting_aliases(*SOURCE_OPTIONS),
            "from": (
                self.own("from_file"),
                gettext(
                    "Parse this saved `nvidia-smi -q -x`, `nvidia-smi -L`, or --query-gpu / "
                    "--query-compute-apps CSV instead of reading the GPUs."
                ),
            ),
            "fields": (
                self.own("fields"),
                gettext("With --from: the --query-gpu field list of a CSV saved with noheader."),
            ),
        }

    def check_arguments(self) -> None:
        """The files a read needs: the saved output, or Prometheus' bearer token."""
        super().check_arguments()
        if self.from_file:
            self.check_readable(self.from_file)
        elif self.settings.source == "prometheus" and self.settings.prometheus_bearer_token_file:
            self.check_readable(self.settings.prometheus_bearer_token_file)

    def read_snapshot(self) -> Snapshot:
        """One snapshot from the GPUs, or from the saved output of ``--from``; its errors in the
        command's terms."""
        snapshot = self._read()
        if snapshot.error is not None:
            snapshot.error = command_error(snapshot.error)
        for gpu in snapshot.gpus:
            if gpu.error is not None:
                gpu.error = command_error(gpu.error)
        return snapshot

    def _read(self) -> Snapshot:
        if self.from_file:
            fields = self.fields.split(",") if self.fields else None
            try:
                text = Path(self.from_file).read_text(errors="replace")
            except OSError as error:
                self.cannot_read(self.from_file, error)
            try:
                return parse_saved_output(text, fields)
            except GpuReadError as error:
                return Snapshot(source="nvidia-smi", timestamp=time.time(), error=error.to_error())
        settings = self.settings
        source = make_source(
            settings.source,
            settings.nvidia_smi_path,
            settings.command_timeout,
            settings.prometheus_url,
            settings.prometheus_selector,
            settings.prometheus_bearer_token_file,
        )
        try:
            return asyncio.run(source.sample())
        except GpuReadError as error:
            name = None if source.name == "auto" else source.name
            return Snapshot(source=name, timestamp=time.time(), error=error.to_error())
        finally:
            source.close()
