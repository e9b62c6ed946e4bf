"""The kernel probe: Python that reports a kernel's environment, run inside that kernel.

The same source serves the notebook (sent by the frontend as a silent execute, its result read
through ``user_expressions``) and ``jupyter-gpu-monitor doctor`` (run by an environment's own
python). It runs in a fresh namespace, so the user's namespace gains no name; it imports only the
standard library, and torch only when torch is already imported or a deep check asks for it.
"""

from __future__ import annotations

import json

from ..subprocesses import CommandTimeout, OutputTooLarge, run_command
from ..translation import gettext

# Distributions whose versions the probe reports (from importlib.metadata, never by import).
DEFAULT_PACKAGES = (
    "torch",
    "torchvision",
    "torchaudio",
    "tensorflow",
    "jax",
    "jaxlib",
    "numpy",
    "pandas",
)

# Runs with PACKAGES and DEEP bound; leaves its answer in RESULT, whose repr is JSON.
PROBE_SOURCE = """
import importlib.metadata as _metadata
import os as _os
import platform as _platform
import sys as _sys

def _version(name):
    try:
        return _metadata.version(name)
    except _metadata.PackageNotFoundError:
        return None

def _torch():
    if "torch" not in _sys.modules and (not DEEP or _version("torch") is None):
        return None
    try:
        import torch
    except Exception as error:  # a broken install is worth reporting, not a failed probe
        return {"version": _version("torch"), "import_error": f"{type(error).__name__}: {error}"}
    facts = {"version": torch.__version__, "cuda": torch.version.cuda,
             "imported_by_probe": "torch" not in _already_imported}
    try:
        facts["cuda_initialized"] = bool(torch.cuda.is_initialized())
        facts["cuda_available"] = bool(torch.cuda.is_available())
        count = torch.cuda.device_count() if facts["cuda_available"] else 0
        facts["device_count"] = count
        # Naming a device initialises CUDA in the user's kernel (a context, GPU memory, and
        # the end of CUBLAS_WORKSPACE_CONFIG taking effect): only when the user already did.
        facts["devices"] = None
        if facts["cuda_initialized"]:
            facts["devices"] = [torch.cuda.get_device_name(i) for i in range(count)]
        facts["cudnn"] = torch.backends.cudnn.version() if facts["cuda_available"] else None
    except Exception as error:
        facts["error"] = f"{type(error).__name__}: {error}"
    return facts

class _Answer:
    # Its repr is the JSON text (text/plain of user_expressions, print() for doctor); IPython
    # also offers it as application/json.
    def __init__(self, facts):
        self.facts = facts

    def __repr__(self):
        return __import__("json").dumps(self.facts)

    def _repr_json_(self):
        return self.facts

_already_imported = set(_sys.modules)
RESULT = _Answer({
    "executable": _sys.executable,
    "prefix": _sys.prefix,
    "base_prefix": _sys.base_prefix,
    "python_version": _platform.python_version(),
    "implementation": _platform.python_implementation(),
    "conda_default_env": _os.environ.get("CONDA_DEFAULT_ENV"),
    "conda_prefix": _os.environ.get("CONDA_PREFIX"),
    "virtual_env": _os.environ.get("VIRTUAL_ENV"),
    "cuda_visible_devices": _os.environ.get("CUDA_VISIBLE_DEVICES"),
    "packages": {name: _version(name) for name in PACKAGES},
    "torch": _torch(),
    "deep": DEEP,
})
"""


def probe_code(packages: tuple[str, ...] = DEFAULT_PACKAGES, deep: bool = False) -> str:
    """Statements that leave the probe's answer in ``RESULT`` (its repr is the JSON)."""
    return f"PACKAGES = {list(packages)!r}\nDEEP = {deep!r}\n{PROBE_SOURCE}"


def probe_expression(packages: tuple[str, ...] = DEFAULT_PACKAGES, deep: bool = False) -> str:
    """One expression whose value is the probe's answer, for ``user_expressions``.

    The statements run in a dictionary of their own: the user's namespace is left as it was.
    """
    code = probe_code(packages, deep)
    return f"(lambda namespace: (exec({code!r}, namespace), namespace['RESULT'])[1])({{}})"


def script(packages: tuple[str, ...] = DEFAULT_PACKAGES, deep: bool = True) -> str:
    """The probe as a ``python -c`` program that prints its JSON answer."""
    return probe_code(packages, deep) + "\nprint(repr(RESULT))\n"


async def probe_interpreter(python: str, deep: bool = True, timeout_seconds: float = 60.0) -> dict:
    """Run the probe in another Python (an environment's own interpreter) and read its answer.

    Raises RuntimeError with what went wrong when it cannot run or does not answer in time.
    """
    try:
        finished = await run_command([python, "-c", script(deep=deep)], timeout_seconds)
    except OSError as error:
        message = gettext("cannot run {python}: {error}")
        raise RuntimeError(message.format(python=python, error=error.strerror)) from None
    except CommandTimeout:
        message = gettext("{python} did not answer within {seconds} s")
        raise RuntimeError(message.format(python=python, seconds=f"{timeout_seconds:g}")) from None
    except OutputTooLarge as error:
        message = gettext("{python} printed more than {size} MiB")
        size = f"{error.limit_mib:g}"
        raise RuntimeError(message.format(python=python, size=size)) from None
    if finished.returncode != 0:
        last = finished.stderr.strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(gettext("{python} failed: {error}").format(python=python, error=last[0]))
    # The last line: a deep check may print warnings of torch's before it.
    return json.loads(finished.stdout.strip().splitlines()[-1])
