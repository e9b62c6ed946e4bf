"""Diagnoses: facts about the GPUs, a kernel and its environment in; findings out.

Pure functions: every rule reads ``Facts`` and returns findings, each with the evidence that
triggered it and the command or code that fixes it. Nothing here reads a file or a process.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from .conda.model import Package
from .conda.prefix import Project
from .conda.records import conda_and_pip
from .contract import constant, document
from .cuda_compat import (
    CONDA_NAMES,
    TORCH_FAMILY,
    driver_runs,
    interpreter,
    minimum_driver,
    pytorch_install_command,
    version_tuple,
)
from .gpu.model import Snapshot
from .kernel.env import KernelProcessFacts
from .translation import N_, gettext, join_list, ngettext

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
# Driver states in which CUDA cannot work at all.
DRIVER_FAILURES = {"driver_not_loaded", "version_mismatch", "no_devices", "gpu_lost", "unknown"}
LOW_UTILIZATION_PERCENT = constant("LowUtilizationPercent")
HELD_MEMORY_MIB = constant("HeldMemoryMib")
KERNEL_CPU_BUSY_PERCENT = constant("KernelCpuBusyPercent")
KERNEL_CPU_IDLE_PERCENT = constant("KernelCpuIdlePercent")
# The ids a client may act on: a rule that names another is refused when it fires.
FINDING_IDS = frozenset(document("inspector")["$defs"]["FindingId"]["enum"])
# What slows a GPU below what it should do (the driver's clock event reasons; a power cap is
# normal under load), and what to do about each.
SLOWDOWN_FIXES = {
    "hw_thermal_slowdown": N_("Check its fans and the airflow around it: {command}"),
    "sw_thermal_slowdown": N_("Check its fans and the airflow around it: {command}"),
    "hw_power_brake_slowdown": N_(
        "Ask whoever runs the machine to check its power supply: {command}"
    ),
    "hw_slowdown": N_("Check its cooling and its power cables: {command}"),
}


@dataclass
class Finding:
    """One problem found, how we know, and what fixes it."""

    id: str
    severity: str  # error | warning | info
    title: str
    evidence: str
    fix: str
    # The fix changes what the running kernel loaded (packages, CUDA_VISIBLE_DEVICES): it
    # takes effect once the kernel restarts.
    restart: bool = False

    def __post_init__(self) -> None:
        if self.id not in FINDING_IDS:
            raise ValueError(f"{self.id!r} is not a FindingId of api_schema/inspector.json")

    def to_json(self) -> dict:
        """The finding as the REST API and ``doctor --json`` send it."""
        return asdict(self)


@dataclass
class Facts:
    """Everything a diagnosis may look at; each part may be missing."""

    snapshot: Snapshot | None = None
    # The in-kernel probe's answer (see probe.py), or None when it has not run.
    probe: dict[str, Any] | None = None
    process: KernelProcessFacts | None = None
    packages: list[Package] | None = None  # the environment's, conda and pip
    # The tool that made the environment (conda, pixi, venv, uv...: see conda/prefix.py).
    env_manager: str | None = None
    # The uv project or pixi workspace whose environment it is (conda/prefix.py: project_of).
    project: Project | None = None
    kernelspec_name: str | None = None
    # What the kernelspec runs (argv[0], as jupyter_client runs it) and the environment it names.
    kernelspec_interpreter: str | None = None
    kernelspec_prefix: str | None = None
    # The kernelspec's language ("python", "bash", "R"): a Python fix is no fix for another.
    kernel_language: str | None = None
    # What the kernelspec runs does not exist (its environment was deleted or moved).
    interpreter_missing: bool = False
    expected_prefix: str | None = None  # where the notebook's fingerprint says it ran
    # GPU index -> MiB this kernel holds there, and the GPU's mean utilisation lately.
    held_memory_mib: dict[int, float] = field(default_factory=dict)
    recent_utilization: dict[int, float] = field(default_factory=dict)
    utilization_minutes: float = 5.0
    # The kernel's mean CPU over the same minutes, in percent of one core.
    recent_cpu_percent: float | None = None


def _gpus(snapshot: Snapshot | None) -> list:
    return snapshot.gpus if snapshot is not None and snapshot.error is None else []


def _probe_torch(facts: Facts) -> dict | None:
    return (facts.probe or {}).get("torch")


def _torch_version(facts: Facts) -> str | None:
    torch = _probe_torch(facts)
    if torch:
        return torch.get("version")
    version = ((facts.probe or {}).get("packages") or {}).get("torch")
    if version:
        return version
    record = _package(facts, "pytorch") or _package(facts, "torch")
    return record.version if record is not None else None


def _package(facts: Facts, name: str) -> Any:
    return next((p for p in facts.packages or [] if p.name == name), None)


def torch_cuda_build(facts: Facts) -> tuple[bool | None, str | None]:
    """(whether torch is a CUDA build, its CUDA version), from the best evidence there is."""
    torch = _probe_torch(facts)
    if torch and "cuda" in torch:
        return torch["cuda"] is not None, torch["cuda"]
    version = _torch_version(facts) or ""
    local = version.partition("+")[2]
    if local == "cpu":
        return False, None
    match = re.fullmatch(r"cu(\d+)(\d)", local)
    if match:
        return True, f"{int(match.group(1))}.{match.group(2)}"
    record = _package(facts, "pytorch")
    if record is not None and record.build:
        if record.build.startswith("cpu") or "_cpu_" in record.build:
            return False, None
        # pytorch's channel writes py3.12_cuda12.1_cudnn9.1.0_0, conda-forge cuda126_mkl_...
        cuda = re.search(r"cuda(\d+)\.(\d+)", record.build) or re.search(
            r"cuda(\d+)(\d)", record.build
        )
        if cuda:
            return True, f"{int(cuda.group(1))}.{cuda.group(2)}"
    return None, None


def torch_cuda_label(facts: Facts) -> str | None:
    """The CUDA build of the kernel's torch, as the frontend shows and a notebook's fingerprint
    records it: the CUDA version, ``"cpu"`` for a CPU-only build, None when torch is not there
    or its build is unknown."""
    is_cuda_build, version = torch_cuda_build(facts)
    return "cpu" if is_cuda_build is False else version


def _torch_family(facts: Facts) -> dict[str, str]:
    """The installed versions of torch and its companions: the probe's, else the records'."""
    reported = (facts.probe or {}).get("packages") or {}
    versions = {name: reported[name] for name in TORCH_FAMILY if reported.get(name)}
    if versions:
        return versions
    # A venv's records name the distribution (torch), a conda environment's the package
    # (pytorch): either, whether or not the kernel answered.
    records = {
        name: _package(facts, name) or _package(facts, CONDA_NAMES.get(name, name))
        for name in TORCH_FAMILY
    }
    return {name: record.version for name, record in records.items() if record is not None}


def _install_torch(facts: Facts, driver_cuda: str | None) -> str:
    """The command that puts the torch build for the driver into the kernel's environment."""
    return pytorch_install_command(
        driver_cuda,
        _torch_installer(facts),
        _running_prefix(facts),
        _torch_family(facts),
        facts.project,
    )


def _torch_installer(facts: Facts) -> str:
    """The tool that installed torch in the kernel's environment, which its fix must use: conda
    for conda's pytorch, pip (uv in an environment uv made) for a torch without a conda record,
    even in a conda environment; the environment's own tool when the records do not say."""
    pip_torch = any(p.name == "torch" and p.installer == "pip" for p in facts.packages or [])
    conda_torch = any(p.name == "pytorch" and p.installer == "conda" for p in facts.packages or [])
    if not pip_torch and (conda_torch or _conda_env(facts)):
        return "conda"
    uv_project = facts.project is not None and facts.project.tool == "uv"
    return "uv" if facts.env_manager == "uv" or uv_project else "pip"


def _conda_env(facts: Facts) -> bool:
    if facts.process is not None and facts.process.env_kind:
        return facts.process.env_kind == "conda"
    return bool((facts.probe or {}).get("conda_prefix"))


def _driver(facts: Facts) -> str:
    snapshot = facts.snapshot
    gpus = _gpus(snapshot)
    names = join_list(sorted({gpu.name or gettext("unknown GPU") for gpu in gpus}))
    unknown = gettext("unknown")
    return ngettext(
        "{count} GPU ({names}), driver {driver} (supports CUDA {cuda})",
        "{count} GPUs ({names}), driver {driver} (supports CUDA {cuda})",
        len(gpus),
    ).format(
        count=len(gpus),
        names=names,
        driver=snapshot.driver_version or unknown,
        cuda=snapshot.cuda_version or unknown,
    )


def cpu_only_torch(facts: Facts) -> Iterable[Finding]:
    """1. GPUs present, torch installed, but a CPU-only build."""
    is_cuda, _ = torch_cuda_build(facts)
    if not _gpus(facts.snapshot) or is_cuda is not False:
        return
    yield Finding(
        id="cpu-only-torch",
        severity="error",
        title=gettext("PyTorch is a CPU-only build, but this machine has GPUs"),
        evidence=gettext("torch {version} has no CUDA build; {driver}").format(
            version=_torch_version(facts), driver=_driver(facts)
        ),
        fix=_install_torch(facts, facts.snapshot.cuda_version),
        restart=True,
    )


def torch_import_fails(facts: Facts) -> Iterable[Finding]:
    """torch is installed but does not import (a broken or mixed install)."""
    torch = _probe_torch(facts) or {}
    if "import_error" not in torch:
        return
    yield Finding(
        id="torch-import-fails",
        severity="error",
        title=gettext("PyTorch is installed but cannot be imported"),
        evidence=f"import torch: {torch['import_error']}",
        fix=gettext("Reinstall it in this environment: {command}").format(
            command=_install_torch(facts, facts.snapshot.cuda_version if facts.snapshot else None)
        ),
        restart=True,
    )


def torch_newer_than_driver(facts: Facts) -> Iterable[Finding]:
    """2. torch built for a CUDA the driver does not (fully) support."""
    is_cuda, cuda = torch_cuda_build(facts)
    snapshot = facts.snapshot
    if not is_cuda or cuda is None or not _gpus(snapshot) or not snapshot.driver_version:
        return
    runs = driver_runs(snapshot.driver_version, cuda)
    driver_cuda = snapshot.cuda_version
    fix = gettext(
        "Upgrade the NVIDIA driver to {driver} or newer, or install the torch build for this "
        "driver: {command}"
    ).format(
        driver=minimum_driver(cuda),
        command=_install_torch(facts, driver_cuda),
    )
    if runs is False:
        yield Finding(
            id="torch-cuda-newer-than-driver",
            severity="error",
            title=gettext("PyTorch is built for CUDA {cuda}, which this driver cannot run").format(
                cuda=cuda
            ),
            evidence=gettext("torch {version} needs driver {driver} or newer; {gpus}").format(
                version=_torch_version(facts), driver=minimum_driver(cuda), gpus=_driver(facts)
            ),
            fix=fix,
            restart=True,
        )
    elif driver_cuda and version_tuple(cuda)[:2] > version_tuple(driver_cuda)[:2]:
        yield Finding(
            id="torch-cuda-newer-than-driver",
            severity="warning",
            title=gettext(
                "PyTorch is built for CUDA {cuda}, newer than the driver's CUDA {driver_cuda}"
            ).format(cuda=cuda, driver_cuda=driver_cuda),
            evidence=gettext(
                "It runs through CUDA minor version compatibility, without the features that "
                "need a newer driver (PTX JIT of newer kernels fails); {gpus}"
            ).format(gpus=_driver(facts)),
            fix=fix,
            restart=True,
        )


def _visible_devices(facts: Facts) -> str | None:
    probe = facts.probe or {}
    if "cuda_visible_devices" in probe:
        return probe["cuda_visible_devices"]
    if facts.process is not None:
        return facts.process.variables.get("CUDA_VISIBLE_DEVICES")
    return None


def _device_exists(entry: str, gpus: list) -> bool:
    if not entry:
        return False  # an empty entry names nothing (every UUID "starts with" it)
    if entry.isdigit():
        return int(entry) < len(gpus)
    # CUDA takes a unique prefix of a GPU's or MIG instance's UUID.
    uuids = [gpu.uuid or "" for gpu in gpus]
    uuids += [device.uuid or "" for gpu in gpus for device in gpu.mig_devices]
    return sum(uuid.startswith(entry) for uuid in uuids) == 1


def hidden_gpus(facts: Facts) -> Iterable[Finding]:
    """3. CUDA_VISIBLE_DEVICES hides every GPU, or names one that does not exist."""
    value = _visible_devices(facts)
    gpus = _gpus(facts.snapshot)
    if value is None or not gpus:
        return
    entries = [entry.strip() for entry in value.split(",")]
    valid = []
    for entry in entries:
        if not _device_exists(entry, gpus):
            break  # CUDA stops at the first entry it cannot use, ignoring the rest
        valid.append(entry)
    all_indices = ",".join(str(gpu.index) for gpu in gpus)
    fix = (
        f'import os; os.environ["CUDA_VISIBLE_DEVICES"] = "{",".join(valid) or all_indices}"  # '
        + gettext("then restart the kernel: CUDA reads it once, when it starts")
    )
    if not valid:
        yield Finding(
            id="cuda-visible-devices-hides-all",
            severity="error",
            title=gettext("CUDA_VISIBLE_DEVICES hides every GPU from this kernel"),
            evidence=f'CUDA_VISIBLE_DEVICES="{value}"; {_driver(facts)}',
            fix=fix,
            restart=True,
        )
    elif len(valid) < len(entries):
        bad = entries[len(valid)]
        yield Finding(
            id="cuda-visible-devices-unknown-gpu",
            severity="warning",
            title=gettext('CUDA_VISIBLE_DEVICES names "{entry}", which is not a GPU here').format(
                entry=bad
            ),
            evidence=gettext(
                'CUDA_VISIBLE_DEVICES="{value}": CUDA ignores "{entry}" and everything after it, '
                "so this kernel sees only {visible}; {gpus}"
            ).format(value=value, entry=bad, visible=",".join(valid), gpus=_driver(facts)),
            fix=fix,
            restart=True,
        )


def _running_prefix(facts: Facts) -> str | None:
    if facts.probe and facts.probe.get("prefix"):
        return facts.probe["prefix"]
    return facts.process.prefix if facts.process is not None else None


def wrong_environment(facts: Facts) -> Iterable[Finding]:
    """4. The kernel runs in another environment than the notebook recorded or the kernelspec
    names."""
    running = _running_prefix(facts)
    if running is None:
        return
    install = f'"{running}/bin/python" -m ipykernel install --user --name <name>'
    if facts.expected_prefix and facts.expected_prefix != running:
        yield Finding(
            id="kernel-not-in-recorded-environment",
            severity="warning",
            title=gettext("This kernel runs in another environment than the notebook recorded"),
            evidence=gettext("recorded: {recorded}; running: {running}").format(
                recorded=facts.expected_prefix, running=running
            ),
            fix=gettext(
                "Switch to the kernel of {prefix} (Kernel > Change Kernel), or register it: "
                "{command}"
            ).format(
                prefix=facts.expected_prefix,
                command=f'"{facts.expected_prefix}/bin/python" -m ipykernel install --user '
                "--name <name>",
            ),
        )
    interpreter = facts.kernelspec_interpreter
    spec = facts.kernelspec_name or gettext("this kernel")
    if interpreter and "/" not in interpreter and "\\" not in interpreter:
        yield Finding(
            id="kernelspec-depends-on-path",
            severity="info",
            title=gettext(
                'The kernelspec "{spec}" launches whatever "{interpreter}" is first on PATH'
            ).format(spec=spec, interpreter=interpreter),
            evidence=gettext(
                "it started {running}; another PATH starts another environment"
            ).format(running=running),
            fix=gettext("Register the kernel with its full interpreter path: {command}").format(
                command=install
            ),
        )
        return
    expected = facts.kernelspec_prefix
    if expected and expected != running:
        yield Finding(
            id="kernel-not-in-kernelspec-environment",
            severity="warning",
            title=gettext(
                'The kernel "{spec}" does not run in the environment its kernelspec names'
            ).format(spec=spec),
            evidence=gettext("kernelspec: {expected}; running: {running}").format(
                expected=expected, running=running
            ),
            fix=gettext(
                "Re-register the kernel from the environment it should use: {command}"
            ).format(command=install),
        )


def conda_and_pip_duplicates(facts: Facts) -> Iterable[Finding]:
    """5. The same package installed by conda and by pip in one environment."""
    pairs = conda_and_pip(facts.packages or [])
    if not pairs:
        return
    described = join_list(
        gettext("{conda} (conda) and {pip} (pip)").format(
            conda=f"{conda.name} {conda.version}", pip=f"{pip.name} {pip.version}"
        )
        for conda, pip in pairs
    )
    pip_names = " ".join(pip.name for _, pip in pairs)
    conda_names = " ".join(conda.name for conda, _ in pairs)
    # Named environment by environment: the pip and conda first on PATH may be another's.
    prefix = _running_prefix(facts)
    pip = f'"{interpreter(prefix)}" -m pip' if prefix else "pip"
    conda = f'conda install -p "{prefix}"' if prefix else "conda install"
    yield Finding(
        id="conda-and-pip-duplicate",
        severity="warning",
        title=gettext("Installed by both conda and pip: {names}").format(
            names=join_list(pip.name for _, pip in pairs)
        ),
        evidence=gettext(
            "{packages}: pip's files replaced conda's, so what imports depends on install "
            "order and conda no longer knows what is there"
        ).format(packages=described),
        fix=f"{pip} uninstall -y {pip_names} && {conda} --force-reinstall {conda_names}",
        restart=True,
    )


def _expects_cuda(facts: Facts) -> bool:
    is_cuda, _ = torch_cuda_build(facts)
    return bool(is_cuda) or _visible_devices(facts) is not None


def driver_failure_while_cuda_expected(facts: Facts) -> Iterable[Finding]:
    """6. nvidia-smi fails (driver not loaded, mismatch...) while the kernel expects CUDA."""
    snapshot = facts.snapshot
    if snapshot is None or snapshot.error is None or snapshot.error.kind not in DRIVER_FAILURES:
        return
    if not _expects_cuda(facts):
        return
    is_cuda, cuda = torch_cuda_build(facts)
    evidence = (
        gettext("torch is built for CUDA {cuda}; nvidia-smi: {error}")
        if is_cuda
        else gettext("CUDA_VISIBLE_DEVICES is set; nvidia-smi: {error}")
    )
    yield Finding(
        id="driver-failure",
        severity="error",
        title=gettext("This kernel expects CUDA, but the NVIDIA driver is not working"),
        evidence=evidence.format(cuda=cuda, error=snapshot.error.message),
        fix=snapshot.error.hint,
    )


def gpus_unreadable(facts: Facts) -> Iterable[Finding]:
    """6b. The GPUs cannot be read at all, where rule 6 does not already say so: a machine with
    no NVIDIA driver is information, unless the kernel expects CUDA (a CUDA build of torch in a
    container started without GPUs); any other failure is a warning, with its own fix."""
    snapshot = facts.snapshot
    if snapshot is None or snapshot.error is None:
        return
    if snapshot.error.kind in DRIVER_FAILURES and _expects_cuda(facts):
        return
    no_driver = snapshot.error.kind == "not_installed"
    yield Finding(
        id="gpus-unreadable",
        severity="info" if no_driver and not _expects_cuda(facts) else "warning",
        title=(
            gettext("No NVIDIA GPU found on this machine")
            if no_driver
            else gettext("The GPUs cannot be read")
        ),
        evidence=snapshot.error.message,
        fix=snapshot.error.hint,
    )


def idle_while_holding_memory(facts: Facts) -> Iterable[Finding]:
    """7. The GPUs this kernel holds memory on are mostly idle, and why, as the kernel's CPU
    tells it: busy preparing data (feed the GPU faster), or idle too (the memory is held for
    nothing: free it)."""
    loader = (
        "DataLoader(dataset, batch_size=..., num_workers=os.cpu_count() // 2, "
        "pin_memory=True, persistent_workers=True, prefetch_factor=4)"
    )
    free = "del model; torch.cuda.empty_cache()"
    cpu = facts.recent_cpu_percent
    for index, held in sorted(facts.held_memory_mib.items()):
        utilization = facts.recent_utilization.get(index)
        if held < HELD_MEMORY_MIB or utilization is None or utilization >= LOW_UTILIZATION_PERCENT:
            continue
        figures = {
            "utilization": f"{utilization:.0f}",
            "minutes": f"{facts.utilization_minutes:g}",
            "cpu": f"{cpu:.0f}" if cpu is not None else "",
        }
        if cpu is not None and cpu >= KERNEL_CPU_BUSY_PERCENT:
            evidence = gettext(
                "mean utilisation {utilization} % over the last {minutes} minutes while the "
                "kernel's CPU was busy ({cpu} % of a core): preparing data holds the GPU back"
            )
            fix = gettext("Prepare the data in worker processes: {loader}")
        elif cpu is not None and cpu < KERNEL_CPU_IDLE_PERCENT:
            evidence = gettext(
                "mean utilisation {utilization} % over the last {minutes} minutes while the "
                "kernel's CPU idled too ({cpu} %): the memory is held, not used"
            )
            fix = gettext(
                "Free it if the work is done: {free}, or Release cached GPU memory in My "
                "kernels; or restart the kernel"
            )
        else:
            evidence = gettext(
                "mean utilisation {utilization} % over the last {minutes} minutes; the GPU is "
                "waiting for data"
            )
            fix = gettext(
                "Feed it faster: {loader}; or free the memory if the work is done ({free})"
            )
        yield Finding(
            id="gpu-idle-while-holding-memory",
            severity="warning",
            title=gettext(
                "GPU {index} is mostly idle while this kernel holds {memory} GiB on it"
            ).format(index=index, memory=f"{held / 1024:.1f}"),
            evidence=evidence.format(**figures),
            fix=fix.format(loader=loader, free=free),
        )


def gpu_slows_down(facts: Facts) -> Iterable[Finding]:
    """7b. A GPU this kernel holds memory on slows its clocks down (heat, a power brake, a
    hardware signal): its training runs slower than the GPU can, whatever the code does."""
    for gpu in _gpus(facts.snapshot):
        if facts.held_memory_mib.get(gpu.index, 0) < HELD_MEMORY_MIB:
            continue
        reasons = [r for r in gpu.clock_throttle_reasons or [] if r in SLOWDOWN_FIXES]
        if not reasons:
            continue
        temperature = (
            gettext(" at {temperature} °C").format(temperature=f"{gpu.temperature_c:g}")
            if gpu.temperature_c is not None
            else ""
        )
        yield Finding(
            id="gpu-slows-down",
            severity="warning",
            title=gettext("GPU {index} slows its clocks down").format(index=gpu.index),
            evidence=gettext("the driver reports {reasons}{temperature}").format(
                reasons=join_list(reasons), temperature=temperature
            ),
            fix=gettext(SLOWDOWN_FIXES[reasons[0]]).format(
                command=f"nvidia-smi -q -d PERFORMANCE,TEMPERATURE -i {gpu.index}"
            ),
        )


def old_python(facts: Facts) -> Iterable[Finding]:
    """8. Python older than 3.11 in a training environment."""
    version = (facts.probe or {}).get("python_version")
    if not version or version_tuple(version)[:2] >= (3, 11):
        return
    yield Finding(
        id="python-older-than-3.11",
        severity="info",
        title=gettext("Python {version} is older than 3.11").format(version=version),
        evidence=gettext(
            "Python 3.11 runs pure-Python code 10-60 % faster (the specialising interpreter of "
            "PEP 659), and new releases of NumPy, pandas and PyTorch drop old Pythons first"
        ),
        fix=gettext("{create} (or: {uv}), then reinstall").format(
            create="conda create -n <name> python=3.12", uv="uv venv --python 3.12"
        ),
    )


def interpreter_missing(facts: Facts) -> Iterable[Finding]:
    """The kernelspec runs a program that is not there: its environment was deleted or moved,
    and the kernel cannot start again."""
    if not facts.interpreter_missing:
        return
    spec = facts.kernelspec_name or "<name>"
    yield Finding(
        id="kernel-interpreter-missing",
        severity="error",
        title=gettext("The kernel's program is gone: {interpreter}").format(
            interpreter=facts.kernelspec_interpreter
        ),
        evidence=gettext(
            'The kernelspec "{spec}" runs {interpreter}, which does not exist: its environment '
            "was deleted or moved. Remove the kernelspec, or recreate the environment there."
        ).format(spec=spec, interpreter=facts.kernelspec_interpreter),
        fix=f"jupyter kernelspec remove -y {spec}",
    )


# The rules about the GPUs, which hold for a kernel in any language.
GPU_RULES: tuple[Callable[[Facts], Iterable[Finding]], ...] = (
    gpus_unreadable,
    idle_while_holding_memory,
    gpu_slows_down,
)
# The rules about a Python kernel's environment, whose fixes are Python's.
PYTHON_RULES: tuple[Callable[[Facts], Iterable[Finding]], ...] = (
    torch_import_fails,
    cpu_only_torch,
    torch_newer_than_driver,
    hidden_gpus,
    wrong_environment,
    conda_and_pip_duplicates,
    driver_failure_while_cuda_expected,
    old_python,
)


def diagnose(facts: Facts) -> list[Finding]:
    """Every finding of every rule that fits the kernel, errors first: a kernel whose program
    is gone gets that finding alone among the environment's, a kernel in another language than
    Python only the GPUs'."""
    if facts.interpreter_missing:
        rules = (interpreter_missing, *GPU_RULES)
    elif (facts.kernel_language or "python").lower() != "python":
        rules = GPU_RULES
    else:
        rules = (*PYTHON_RULES, *GPU_RULES)
    findings = [finding for rule in rules for finding in rule(facts)]
    return sorted(findings, key=lambda finding: SEVERITY_ORDER[finding.severity])
