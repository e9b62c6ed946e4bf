"""Which NVIDIA driver runs which CUDA build: NVIDIA's published tables, kept as data.

Sources:
- Minimum drivers for CUDA minor version compatibility (CUDA 11 and later): "CUDA Compatibility",
  https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html (Table 1),
  and the CUDA Toolkit release notes ("CUDA Toolkit and Minimum Required Driver Version for CUDA
  Minor Version Compatibility"), Linux x86_64 column.
- Minimum drivers before CUDA 11 (no minor version compatibility: each release needs its own):
  the CUDA Toolkit release notes, "CUDA Toolkit and Compatible Driver Versions", Linux x86_64.
- PyTorch's CUDA wheel variants: https://pytorch.org/get-started/previous-versions/ (the
  ``--index-url https://download.pytorch.org/whl/cuXYZ`` of each release line).
- conda-forge's ``cuda-version`` package, which constrains every CUDA package of an environment
  to one CUDA release: https://github.com/conda-forge/cuda-version-feedstock.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .conda.prefix import Project

# CUDA major -> the oldest Linux driver that runs every minor release of it.
MINOR_COMPATIBILITY_DRIVER = {
    11: "450.80.02",
    12: "525.60.13",
    13: "580",
}

# CUDA release before 11 -> the oldest Linux driver that runs it.
RELEASE_DRIVER = {
    "10.2": "440.33",
    "10.1": "418.39",
    "10.0": "410.48",
    "9.2": "396.26",
    "9.1": "390.46",
    "9.0": "384.81",
    "8.0": "375.26",
}

# torch release line -> the CUDA builds PyTorch published wheels of it for, oldest first. A
# release after the newest line here is taken to have the newest line's builds: each release
# keeps the CUDA builds of the one before but the oldest, and a new one is added a line or two
# later, so the newest line's are the likeliest to exist.
PYTORCH_RELEASE_CUDA: dict[tuple[int, int], tuple[str, ...]] = {
    (1, 12): ("10.2", "11.3", "11.6"),
    (1, 13): ("11.6", "11.7"),
    (2, 0): ("11.7", "11.8"),
    (2, 1): ("11.8", "12.1"),
    (2, 2): ("11.8", "12.1"),
    (2, 3): ("11.8", "12.1"),
    (2, 4): ("11.8", "12.1", "12.4"),
    (2, 5): ("11.8", "12.1", "12.4"),
    (2, 6): ("11.8", "12.4", "12.6"),
    (2, 7): ("11.8", "12.6", "12.8"),
    (2, 8): ("12.6", "12.8", "12.9"),
    (2, 9): ("12.6", "12.8", "12.9", "13.0"),
    (2, 10): ("12.6", "12.8", "13.0"),
}
# Every CUDA build of a current release line (when the kernel's torch version is unknown).
PYTORCH_CUDA_VARIANTS = PYTORCH_RELEASE_CUDA[max(PYTORCH_RELEASE_CUDA)]


def version_tuple(version: str) -> tuple[int, ...]:
    """'535.54.03' -> (535, 54, 3); '12.2' -> (12, 2); stops at the first non-number."""
    parts = []
    for part in version.split("."):
        match = re.match(r"\d+", part)
        if match is None:
            break
        parts.append(int(match.group(0)))
    return tuple(parts)


def minimum_driver(cuda: str) -> str | None:
    """The oldest Linux driver that runs a build for this CUDA version, if known."""
    major_minor = version_tuple(cuda)[:2]
    if not major_minor:
        return None
    if major_minor[0] >= 11:
        return MINOR_COMPATIBILITY_DRIVER.get(major_minor[0])
    return RELEASE_DRIVER.get(".".join(str(part) for part in major_minor))


def driver_runs(driver_version: str, cuda: str) -> bool | None:
    """Whether a driver runs a CUDA build (None when the tables do not say)."""
    needed = minimum_driver(cuda)
    if needed is None:
        return None
    return version_tuple(driver_version) >= version_tuple(needed)


def release_variants(torch_version: str | None) -> tuple[str, ...]:
    """The CUDA builds PyTorch published of a torch release (a current line's when the version
    is unknown or newer than the table; none known for a line older than the table)."""
    line = version_tuple(torch_version or "")[:2]
    if len(line) < 2 or line > max(PYTORCH_RELEASE_CUDA):
        return PYTORCH_CUDA_VARIANTS
    return PYTORCH_RELEASE_CUDA.get((line[0], line[1]), ())


def pytorch_variant_for(driver_cuda: str, torch_version: str | None = None) -> str | None:
    """The PyTorch CUDA build for a driver supporting ``driver_cuda``, among the builds of
    ``torch_version``'s release: the newest it runs natively, else the oldest of its CUDA major
    (through minor version compatibility)."""
    variants = release_variants(torch_version)
    limit = version_tuple(driver_cuda)[:2]
    native = [v for v in variants if version_tuple(v) <= limit]
    if native:
        return native[-1]
    same_major = [v for v in variants if version_tuple(v)[:1] == limit[:1]]
    return same_major[0] if same_major else None


# Built with torch for one CUDA, so reinstalled with it at their own installed versions: a new
# torch beside the old torchvision fails to import its operators.
TORCH_FAMILY = ("torch", "torchvision", "torchaudio")

# The same packages as conda-forge names them.
CONDA_NAMES = {"torch": "pytorch"}


# Where PyTorch publishes its wheels, one index per build ("cpu", "cu130"...).
PYTORCH_INDEX = "https://download.pytorch.org/whl"

# The tools a fix installs with: pip through the environment's interpreter, uv for the
# environments uv made, conda for packages conda installed.
INSTALLERS = ("pip", "uv", "conda")


def pytorch_install_command(
    driver_cuda: str | None,
    installer: str,
    prefix: str | None = None,
    installed: dict[str, str] | None = None,
    project: Project | None = None,
) -> str:
    """The command that puts the torch build matching a driver into the kernel's own
    environment, with the tool that installed torch there (one of INSTALLERS), naming the
    environment (``"<prefix>/bin/python" -m pip``, ``uv pip install --python``, ``conda
    install -p``), or the uv project or pixi workspace whose environment it is (``uv add
    --project`` with PyTorch's index for torch, ``pixi add``: in the environment alone, the
    next ``uv sync`` or ``pixi install`` undoes it).

    It changes only the torch family: torch and its installed companions, pinned to their
    installed versions of the new build; what they depend on and is already there stays as
    it is (no ``--force-reinstall``, which reinstalls every dependency at its newest).

    :param prefix: the environment the kernel runs in; the command's own ``pip``/``conda``
        environment when unknown
    :param installed: the installed versions, by distribution name (``torch``, ``torchvision``)
    :param project: the uv project or pixi workspace the environment belongs to, if any
    """
    if not driver_cuda:
        return (
            "Run nvidia-smi to see which CUDA version the driver supports, then install the "
            "torch build for it."
        )
    # The public version: the local "+cpu" / "+cu121" names the build being replaced.
    versions = {
        name: (installed or {}).get(name, "").partition("+")[0]
        for name in TORCH_FAMILY
        if (installed or {}).get(name) or name == "torch"
    }
    pixi = project if project is not None and project.tool == "pixi" else None
    if installer == "conda" and pixi:
        return _pixi_conda_fix(pixi, versions, driver_cuda)
    if installer == "conda":
        # conda-forge builds each release for several CUDA versions: any the driver runs.
        target = f' -p "{prefix}"' if prefix else ""
        specs = " ".join(
            f'"{CONDA_NAMES.get(name, name)}={version or "*"}{"=cuda*" if name == "torch" else ""}"'
            for name, version in versions.items()
        )
        return f'conda install{target} -c conda-forge {specs} "cuda-version<={driver_cuda}"'
    variant = pytorch_variant_for(driver_cuda, versions["torch"] or None)
    if variant is None:
        return _no_build_for(driver_cuda, versions["torch"])
    tag = "cu" + variant.replace(".", "")
    # The build's own local version: "torch==2.13.0" is met by the installed 2.13.0+cpu.
    specs = " ".join(
        f'"{name}=={version}+{tag}"' if version else name for name, version in versions.items()
    )
    if pixi:
        return _pixi_pypi_fix(pixi, versions, tag)
    if installer == "uv" and project:
        index = f"pytorch-{tag}={PYTORCH_INDEX}/{tag}"
        return f'uv add --project "{project.path}" {specs} --index {index}'
    if installer == "uv":
        target = f' --python "{interpreter(prefix)}"' if prefix else ""
        install = f"uv pip install{target}"
    else:
        install = f'"{interpreter(prefix)}" -m pip install' if prefix else "pip install"
    return f"{install} {specs} --index-url {PYTORCH_INDEX}/{tag}"


def _pixi_conda_fix(workspace: Project, versions: dict[str, str], driver_cuda: str) -> str:
    """conda-forge's CUDA build through pixi: the solver picks it only when the workspace
    declares CUDA (pixi solves for every machine the lock serves, not for this driver), and
    ``pytorch-gpu`` is conda-forge's name for the CUDA build of pytorch."""
    feature = _pixi_feature(workspace)
    flag = f" --feature {workspace.environment}" if feature else ""
    specs = " ".join(
        f'"{"pytorch-gpu" if name == "torch" else name}{"==" + version if version else ""}"'
        for name, version in versions.items()
    )
    return (
        f'pixi manages this environment: in "{workspace.path}", declare the driver\'s CUDA '
        f'([{_pixi_tables(workspace)}{feature}system-requirements] cuda = "{driver_cuda}"), then '
        f'run: pixi add --manifest-path "{workspace.path}"{flag} {specs}'
    )


def _pixi_pypi_fix(workspace: Project, versions: dict[str, str], tag: str) -> str:
    """PyTorch's wheels through pixi: each of the family from PyTorch's index for the build."""
    feature = _pixi_feature(workspace)
    flag = f" --environment {workspace.environment}" if feature else ""
    pins = ", ".join(
        f'{name} = {{ version = "=={version}", index = "{PYTORCH_INDEX}/{tag}" }}'
        if version
        else f'{name} = {{ index = "{PYTORCH_INDEX}/{tag}" }}'
        for name, version in versions.items()
    )
    return (
        f'pixi manages this environment: in "{workspace.path}", set '
        f"[{_pixi_tables(workspace)}{feature}pypi-dependencies] {pins}, then run: "
        f'pixi install --manifest-path "{workspace.path}"{flag}'
    )


def _pixi_tables(workspace: Project) -> str:
    """A pyproject.toml keeps pixi's tables under ``tool.pixi``."""
    return "tool.pixi." if workspace.path.endswith("pyproject.toml") else ""


def _pixi_feature(workspace: Project) -> str:
    """A non-default environment's packages go in the feature of its name."""
    named = workspace.environment not in (None, "default")
    return f"feature.{workspace.environment}." if named else ""


def _no_build_for(driver_cuda: str, torch_version: str) -> str:
    """What to do when no build of the installed torch runs on the driver: a newer driver, or
    the newest torch release that has a build it runs."""
    for line in sorted(PYTORCH_RELEASE_CUDA, reverse=True):
        variant = pytorch_variant_for(driver_cuda, f"{line[0]}.{line[1]}")
        if variant is not None:
            release = f"{line[0]}.{line[1]}"
            break
    else:
        return (
            f"The driver supports CUDA {driver_cuda}, older than any PyTorch build: upgrade the "
            "NVIDIA driver first."
        )
    installed = f"torch {torch_version}" if torch_version else "The current torch"
    return (
        f"{installed} has no build for the CUDA this driver supports ({driver_cuda}): upgrade "
        f"the NVIDIA driver, or install torch {release} (built for CUDA {variant})."
    )


def interpreter(prefix: str) -> str:
    """The Python of an environment: ``<prefix>/bin/python``, ``<prefix>\\python.exe`` on
    Windows."""
    if re.match(r"^[A-Za-z]:[\\/]", prefix):
        return prefix.rstrip("\\/") + "\\python.exe"
    return prefix.rstrip("/") + "/bin/python"
