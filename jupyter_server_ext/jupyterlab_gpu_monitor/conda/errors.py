"""Typed failures: an environment a request names that is not there, and a conda command that
did not answer."""

from __future__ import annotations

from collections.abc import Sequence

from ..translation import N_, gettext

# Translated when an error is made (see CondaCommandError). Settings and routes are named as the
# server has them (GpuMonitor.conda_path, use_conda=1); jupyter-gpu-monitor names its options.
HINTS = {
    "not_installed": N_(
        "The conda command is not on the PATH: set GpuMonitor.conda_path to its full path (e.g. "
        "~/miniforge3/bin/conda), or ask without use_conda=1: environments are read from disk "
        "without conda."
    ),
    "timeout": N_(
        "conda did not answer in time: it can be slow on a first run or a network filesystem. "
        "Raise GpuMonitor.conda_timeout, or ask without use_conda=1."
    ),
    "failed": N_("Run the same conda command in a terminal to see the whole message."),
    "bad_output": N_(
        "conda printed something that is not what this command prints. Run it in a terminal "
        "to see what happened."
    ),
}


class CondaCommandError(Exception):
    """A conda run that failed: ``kind`` is a key of ``HINTS``."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.hint = gettext(HINTS[kind])

    def to_json(self) -> dict[str, str]:
        """The failure as the REST API and the CLI report it."""
        return {"kind": self.kind, "message": self.message, "hint": self.hint}


class EnvironmentNotFound(LookupError):
    """No environment has this name or id."""

    def __init__(self, key: str):
        message = gettext("no environment is named {name}; GET envs lists the name and id of each")
        super().__init__(message.format(name=repr(key)))
        self.key = key


class AmbiguousEnvironment(LookupError):
    """Several environments have this name: the caller must use one of their ids."""

    def __init__(self, key: str, ids: Sequence[str]):
        message = gettext("{count} environments are named {name}; name one by its id: {ids}")
        super().__init__(message.format(count=len(ids), name=repr(key), ids=", ".join(ids)))
        self.key = key
        self.ids = list(ids)


class EnvironmentFilesTimeout(Exception):
    """Files of the environments did not answer within their bound (a network filesystem that
    hangs, a FIFO where conda keeps a file); ``message`` says which and what to do."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
