"""The command's own words: its name, the options that set server settings, and the
server's terms (settings, routes) rewritten into them for the terminal."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from ..gpu.model import GpuError
from ..translation import gettext

COMMAND = "jupyter-gpu-monitor"

# The options that set one of the server's settings, by option name: one vocabulary for the
# options, their help, and the messages that name a setting.
SETTING_OPTIONS = {
    "source": "source",
    "nvidia-smi": "nvidia_smi_path",
    "command-timeout": "command_timeout",
    "prometheus-url": "prometheus_url",
    "prometheus-selector": "prometheus_selector",
    "prometheus-bearer-token-file": "prometheus_bearer_token_file",
    "envs-dir": "extra_envs_dirs",
    "conda": "conda_path",
    "conda-timeout": "conda_timeout",
    "lab-prometheus-url": "lab_prometheus_url",
    "lab-prometheus-bearer-token-file": "lab_prometheus_bearer_token_file",
}
# What traitlets answers itself, before any option is read.
TRAITLETS_OPTIONS = {"help", "help-all", "version"}
# Where the subcommands read the GPUs: every one of these options.
SOURCE_OPTIONS = (
    "source",
    "nvidia-smi",
    "command-timeout",
    "prometheus-url",
    "prometheus-selector",
    "prometheus-bearer-token-file",
)
# Messages shared with the server name its settings and its routes (``GET envs``, query
# parameters), words that stay the same in every language; a command names its own options and
# subcommands instead.
COMMAND_TERMS = {
    **{f"GpuMonitor.{trait}": f"--{option}" for option, trait in SETTING_OPTIONS.items()},
    "GET envs": f"`{COMMAND} envs`",
    "use_conda=1": "--use-conda",
    "style=from-history": "--from-history",
}
# A term as messages write it, with or without the config file's "c." ("set
# c.GpuMonitor.prometheus_url to ..."), and only whole: not GET envs/<id>.
_TERM = re.compile(
    r"(?<![\w.])(?:c\.)?("
    + "|".join(re.escape(term) for term in sorted(COMMAND_TERMS, key=len, reverse=True))
    + r")(?![\w/])"
)


def in_command_terms(text: str) -> str:
    """A message as the command prints it: each server setting it names becomes the option that
    sets it, each route the subcommand that answers the same question."""
    return _TERM.sub(lambda match: COMMAND_TERMS[match.group(1)], text)


def command_error(error: GpuError) -> GpuError:
    """A read failure in the command's terms: what its JSON carries and its stderr says."""
    return GpuError(error.kind, in_command_terms(error.message), in_command_terms(error.hint))


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


def setting_help() -> dict[str, str]:
    """What each option that sets a server setting does, in the language in force."""
    return {
        "source": gettext(
            "Where readings come from: auto (NVML, else nvidia-smi), nvml, nvidia-smi, or "
            "prometheus (a DCGM exporter's or nvidia_gpu_exporter's series)."
        ),
        "nvidia-smi": gettext("The nvidia-smi to run: a name looked up on PATH, or a full path."),
        "command-timeout": gettext(
            "Seconds one read of the GPUs (nvidia-smi, NVML or Prometheus) may take."
        ),
        "prometheus-url": gettext(
            "With --source prometheus: the Prometheus to ask, e.g. {url}."
        ).format(url="http://prometheus:9090"),
        "prometheus-selector": gettext(
            "With --source prometheus: label matchers that pick this node's GPUs, e.g. {selector}."
        ).format(selector='{Hostname="node-7"}'),
        "prometheus-bearer-token-file": gettext(
            "With --source prometheus: a file holding a bearer token for Prometheus."
        ),
        "lab-prometheus-url": gettext(
            "The lab's Prometheus, which scrapes every server's /gpu-monitor/metrics, e.g. {url}."
        ).format(url="http://prometheus.lab:9090"),
        "lab-prometheus-bearer-token-file": gettext(
            "A file holding a bearer token for the lab's Prometheus."
        ),
        "envs-dir": gettext(
            "Also search this folder of environments (repeatable); replaces "
            "c.GpuMonitor.extra_envs_dirs."
        ),
        "conda": gettext("The conda (or mamba) to run with --use-conda: a name or a full path."),
        "conda-timeout": gettext("Seconds a conda command may take."),
    }


def unknown_option(option: str, known: Iterable[str]) -> str:
    """What to say of an option the command does not have: the nearest one it has."""
    near = difflib.get_close_matches(option, list(known), n=1)
    if near:
        message = gettext("unrecognized option --{option}; did you mean --{near}?")
        return message.format(option=option, near=near[0])
    return gettext("unrecognized option --{option}").format(option=option)
