"""Diagnoses, table-driven: real GPU captures (and real nvidia-smi failures) combined with kernel
probe answers of the shape the probe gives (test_probe.py runs the real one)."""

from __future__ import annotations

import json
import re

import pytest
import tomllib
from jupyterlab_gpu_monitor.conda.model import Package
from jupyterlab_gpu_monitor.conda.prefix import Project, manager_of, project_of
from jupyterlab_gpu_monitor.conda.records import packages
from jupyterlab_gpu_monitor.contract import constant
from jupyterlab_gpu_monitor.cuda_compat import (
    interpreter,
    minimum_driver,
    pytorch_install_command,
    pytorch_variant_for,
)
from jupyterlab_gpu_monitor.diagnose import FINDING_IDS, Facts, Finding, diagnose, torch_cuda_label
from jupyterlab_gpu_monitor.gpu.errors import error_from_output
from jupyterlab_gpu_monitor.gpu.model import Snapshot
from jupyterlab_gpu_monitor.gpu.smi_xml import parse_xml
from jupyterlab_gpu_monitor.kernel.env import KernelProcessFacts

from .conda_layouts import Dist, add_dist_info, make_conda_env
from .replay import SMI_FIXTURES


def capture(name: str) -> Snapshot:
    return parse_xml((SMI_FIXTURES / "xml" / name).read_text(), 0.0)


def failure(name: str) -> Snapshot:
    text = (SMI_FIXTURES / "errors" / name).read_text()
    return Snapshot(source="nvidia-smi", timestamp=0.0, error=error_from_output(text, 9).to_error())


A5000 = "rtx-a5000-x2-driver-590.44-v13-2procs.xml"  # driver 590.44.01, CUDA 13.1, 2 GPUs
T4 = "tesla-t4-linux-driver-515.105-v11-2procs.xml"  # driver 515.105.01, CUDA 11.7
A100_MIG = "a100-sxm4-80gb-mig-4instances-driver-535.54-v12.xml"  # 535.54.03, CUDA 12.2
RTX2080TI = "rtx2080ti-x2-ecc-na-driver-410.73-v10.xml"  # 410.73, CUDA 10.0


def probe(torch_version: str | None = None, cuda: str | None = None, **fields) -> dict:
    answer = {
        "executable": "/opt/envs/train/bin/python",
        "prefix": "/opt/envs/train",
        "python_version": "3.12.7",
        "conda_prefix": None,
        "cuda_visible_devices": None,
        "packages": {"torch": torch_version, "numpy": "2.1.3"},
        "torch": None,
    }
    if cuda is not None or (torch_version and fields.pop("imported", False)):
        answer["torch"] = {
            "version": torch_version,
            "cuda": cuda,
            "cuda_available": cuda is not None,
        }
    answer.update(fields)
    return answer


def ids(findings) -> list[tuple[str, str]]:
    return [(f.id, f.severity) for f in findings]


def held_at_12_percent(cpu_percent: float | None) -> Facts:
    return Facts(
        capture(A5000),
        probe(),
        held_memory_mib={0: 14336},
        recent_utilization={0: 12.0},
        recent_cpu_percent=cpu_percent,
    )


def slowing_down_at_91_c() -> Facts:
    """A kernel busy on GPU 0 of the A5000s, which the driver slows down for heat; GPU 1, where
    the kernel holds nothing, brakes for power."""
    facts = held_at_12_percent(None)
    facts.recent_utilization = {0: 95.0}
    gpu0, gpu1 = facts.snapshot.gpus
    gpu0.temperature_c = 91
    gpu0.clock_throttle_reasons = ["sw_power_cap", "hw_thermal_slowdown"]
    gpu1.clock_throttle_reasons = ["hw_power_brake_slowdown"]
    return facts


CASES = [
    # 1. CPU-only torch next to GPUs: from the version's local tag, or the imported module.
    ("cpu build, from its version", Facts(capture(A5000), probe("2.13.0+cpu")), [("cpu-only-torch", "error")]),
    ("cpu build, imported", Facts(capture(A5000), probe("2.13.0", imported=True)), [("cpu-only-torch", "error")]),
    ("cpu build without GPUs: no cpu-only finding", Facts(failure("no-devices-were-found.txt"), probe("2.13.0+cpu")), [("gpus-unreadable", "warning")]),
    ("torch that does not import", Facts(capture(A5000), probe("2.5.1+cu121", torch={"version": "2.5.1+cu121", "import_error": "OSError: libcudnn.so.9: cannot open shared object file"})), [("torch-import-fails", "error")]),
    # 2. torch built for a newer CUDA than the driver.
    ("cu124 on a CUDA 11.7 driver", Facts(capture(T4), probe("2.5.1+cu124")), [("torch-cuda-newer-than-driver", "error")]),
    ("cu124 on a CUDA 12.2 driver: minor compatibility", Facts(capture(A100_MIG), probe("2.5.1", "12.4")), [("torch-cuda-newer-than-driver", "warning")]),
    ("cu121 on a CUDA 13.1 driver is fine", Facts(capture(A5000), probe("2.5.1+cu121")), []),
    ("CUDA 10.1 build on a 410 driver", Facts(capture(RTX2080TI), probe("1.4.0", "10.1")), [("torch-cuda-newer-than-driver", "error")]),
    # 3. CUDA_VISIBLE_DEVICES.
    ("empty CUDA_VISIBLE_DEVICES", Facts(capture(A5000), probe(cuda_visible_devices="")), [("cuda-visible-devices-hides-all", "error")]),
    ("empty CUDA_VISIBLE_DEVICES, one GPU", Facts(capture(T4), probe(cuda_visible_devices="")), [("cuda-visible-devices-hides-all", "error")]),
    ("CUDA_VISIBLE_DEVICES=-1", Facts(capture(A5000), probe(cuda_visible_devices="-1")), [("cuda-visible-devices-hides-all", "error")]),
    ("index past the last GPU", Facts(capture(A5000), probe(cuda_visible_devices="0,5,1")), [("cuda-visible-devices-unknown-gpu", "warning")]),
    ("both GPUs by index", Facts(capture(A5000), probe(cuda_visible_devices="1,0")), []),
    ("GPU by UUID", Facts(capture(A5000), probe(cuda_visible_devices="GPU-12345678-aaaa-bbbb-cccc-0123456789cd")), []),
    ("UUID prefix of both GPUs is no GPU", Facts(capture(A5000), probe(cuda_visible_devices="GPU-12345678")), [("cuda-visible-devices-hides-all", "error")]),
    # 5. conda and pip both installed a package.
    ("conda and pip torch", Facts(capture(A5000), probe("2.5.1+cu121"), packages=[
        Package("numpy", "2.1.3", "py312h58c1407_0", "conda-forge", "conda"),
        Package("pytorch", "2.5.1", "cuda121_py312h7c6f8d1_301", "conda-forge", "conda"),
        Package("numpy", "2.2.0", "", "pypi", "pip", conda_name="numpy"),
        Package("torch", "2.5.1", "", "pypi", "pip", conda_name="pytorch"),
    ]), [("conda-and-pip-duplicate", "warning")]),
    ("pip-only packages next to conda ones are fine", Facts(capture(A5000), probe("2.5.1+cu121"), packages=[
        Package("python", "3.12.7", "h2628c8c_0_cpython", "conda-forge", "conda"),
        Package("torch", "2.5.1", "", "pypi", "pip"),
    ]), []),
    # 6. nvidia-smi fails while the kernel expects CUDA.
    ("version mismatch with a CUDA torch", Facts(failure("nvml-driver-library-version-mismatch.txt"), probe("2.5.1+cu121")), [("driver-failure", "error")]),
    ("driver not loaded, CUDA_VISIBLE_DEVICES set", Facts(failure("driver-not-loaded-couldnt-communicate.txt"), probe(cuda_visible_devices="0")), [("driver-failure", "error")]),
    ("driver not loaded, CPU torch: only that the GPUs cannot be read", Facts(failure("driver-not-loaded-couldnt-communicate.txt"), probe("2.13.0+cpu")), [("gpus-unreadable", "warning")]),
    # 6b. The GPUs cannot be read at all: the CLI's doctor must not say "No problems found".
    ("no driver library, CPU torch: no GPU here, calmly", Facts(failure("libnvidia-ml-so-not-found.txt"), probe("2.13.0+cpu")), [("gpus-unreadable", "info")]),
    ("no driver library, CUDA torch: a GPU was expected", Facts(failure("libnvidia-ml-so-not-found.txt"), probe("2.5.1+cu121")), [("gpus-unreadable", "warning")]),
    # 7. Memory held on an idle GPU.
    ("14 GiB held at 12 %", Facts(capture(A5000), probe(), held_memory_mib={0: 14336}, recent_utilization={0: 12.0}), [("gpu-idle-while-holding-memory", "warning")]),
    ("14 GiB held at 80 %", Facts(capture(A5000), probe(), held_memory_mib={0: 14336}, recent_utilization={0: 80.0}), []),
    ("500 MiB held at 0 %", Facts(capture(A5000), probe(), held_memory_mib={0: 500}, recent_utilization={0: 0.0}), []),
    ("hot GPU the kernel uses", slowing_down_at_91_c(), [("gpu-slows-down", "warning")]),
    # 8. Old Python.
    ("Python 3.10", Facts(capture(A5000), probe(python_version="3.10.14")), [("python-older-than-3.11", "info")]),
    # 9. The kernel and its environments.
    ("kernel in another env than the recorded one", Facts(capture(A5000), probe(), expected_prefix="/opt/envs/other"), [("kernel-not-in-recorded-environment", "warning")]),
    ("kernelspec launches the python on PATH", Facts(capture(A5000), probe(), kernelspec_interpreter="python"), [("kernelspec-depends-on-path", "info")]),
    ("kernel not in its kernelspec's env", Facts(capture(A5000), probe(), kernelspec_interpreter="/opt/envs/other/bin/python", kernelspec_prefix="/opt/envs/other"), [("kernel-not-in-kernelspec-environment", "warning")]),
    ("kernel whose program is gone", Facts(capture(A5000), None, kernelspec_name="old-train", kernelspec_interpreter="/home/ana/venvs/old-train/bin/python", interpreter_missing=True), [("kernel-interpreter-missing", "error")]),
]  # fmt: skip


@pytest.mark.parametrize("facts,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_diagnosis(facts: Facts, expected):
    assert ids(diagnose(facts)) == expected


def test_every_finding_of_the_contract_has_a_case_and_no_rule_names_another():
    # Clients act on a finding by its id: each one the contract lists is raised by a case here,
    # and a rule that names an id the contract lacks fails where it fires.
    assert {id for _name, _facts, expected in CASES for id, _severity in expected} == FINDING_IDS
    with pytest.raises(ValueError, match="'gpu-too-hot' is not a FindingId"):
        Finding(id="gpu-too-hot", severity="warning", title="", evidence="", fix="")


def test_an_idle_gpu_finding_says_why_from_the_kernels_cpu():
    (busy,) = diagnose(held_at_12_percent(97.0))
    assert busy.evidence.endswith(
        "while the kernel's CPU was busy (97 % of a core): preparing data holds the GPU back"
    )
    assert busy.fix.startswith("Prepare the data in worker processes: DataLoader(")
    (idle,) = diagnose(held_at_12_percent(0.4))
    assert idle.evidence.endswith(
        "while the kernel's CPU idled too (0 %): the memory is held, not used"
    )
    assert idle.fix.startswith("Free it if the work is done: del model; torch.cuda.empty_cache()")
    # Between the two, or not measured: the data-loading advice, and freeing.
    for cpu in (30.0, None):
        (unsure,) = diagnose(held_at_12_percent(cpu))
        assert unsure.evidence.endswith("the GPU is waiting for data")


def test_the_idle_gpu_rule_takes_its_figures_at_their_word():
    # Held exactly the rule's MiB counts as held; exactly the threshold is not low; exactly
    # the busy CPU is busy, exactly the idle one is not idle (api_schema/rules.json).
    held, low = constant("HeldMemoryMib"), constant("LowUtilizationPercent")
    at = held_at_12_percent(constant("KernelCpuBusyPercent"))
    at.held_memory_mib = {0: held}
    (finding,) = diagnose(at)
    assert "preparing data holds the GPU back" in finding.evidence
    at.recent_cpu_percent = constant("KernelCpuIdlePercent")
    (finding,) = diagnose(at)
    assert finding.evidence.endswith("the GPU is waiting for data")
    at.recent_utilization = {0: low}
    assert diagnose(at) == []
    at.recent_utilization, at.held_memory_mib = {0: low - 0.5}, {0: held - 1}
    assert diagnose(at) == []
    slowing = slowing_down_at_91_c()
    slowing.held_memory_mib = {0: held}
    assert ids(diagnose(slowing)) == [("gpu-slows-down", "warning")]
    slowing.held_memory_mib = {0: held - 1}
    assert diagnose(slowing) == []


def test_a_gpu_the_kernel_uses_that_slows_down_is_a_finding_with_its_reason():
    facts = slowing_down_at_91_c()
    gpu0 = facts.snapshot.gpus[0]
    (finding,) = diagnose(facts)
    assert (finding.id, finding.severity) == ("gpu-slows-down", "warning")
    assert finding.title == "GPU 0 slows its clocks down"
    assert finding.evidence == "the driver reports hw_thermal_slowdown at 91 °C"
    assert finding.fix == (
        "Check its fans and the airflow around it: nvidia-smi -q -d PERFORMANCE,TEMPERATURE -i 0"
    )
    # At its power limit under load: normal, no finding.
    gpu0.clock_throttle_reasons = ["sw_power_cap"]
    assert diagnose(facts) == []


def test_cpu_only_fix_installs_the_build_for_the_drivers_cuda_into_the_kernels_env_pinned():
    # The kernel's own interpreter, torch and torchvision at their installed versions of the
    # new build: a bare `pip` may be another environment's, torch alone would leave
    # torchvision's CPU build, and `--force-reinstall` would move every dependency too.
    packages = {"torch": "2.5.1+cpu", "torchvision": "0.20.1+cpu", "numpy": "2.1.3"}
    pip = diagnose(Facts(capture(T4), probe("2.5.1+cpu", packages=packages)))[0]
    assert pip.fix == (  # a CUDA 11.7 driver
        '"/opt/envs/train/bin/python" -m pip install "torch==2.5.1+cu118" '
        '"torchvision==0.20.1+cu118" --index-url https://download.pytorch.org/whl/cu118'
    )
    conda_process = KernelProcessFacts(1, None, None, "/opt/conda/envs/train", "conda", {})
    conda = diagnose(
        Facts(
            capture(A100_MIG),
            probe("2.13.0+cpu", prefix="/opt/conda/envs/train"),
            process=conda_process,
        )
    )[0]
    # conda-forge builds a release for several CUDA versions: any the driver runs (CUDA 12.2).
    assert conda.fix == (
        'conda install -p "/opt/conda/envs/train" -c conda-forge "pytorch=2.13.0=cuda*" '
        '"cuda-version<=12.2"'
    )


# A conda environment whose torch pip installed: records as the server reads them from disk.
CONDA_ENV = "/opt/conda/envs/train"
PIP_TORCH_IN_CONDA = [
    Package("numpy", "2.1.3", "py312h58c1407_0", "conda-forge", "conda"),
    Package("python", "3.12.7", "hc5c86c4_0_cpython", "conda-forge", "conda"),
    Package("torch", "2.13.0+cpu", "", "pypi", "pip"),
    Package("torchvision", "0.28.0+cpu", "", "pypi", "pip"),
]


CONDA_PYTORCH = [
    Package("python", "3.12.7", "hc5c86c4_0_cpython", "conda-forge", "conda"),
    Package("pytorch", "2.13.0", "cpu_mkl_py312h_100", "conda-forge", "conda"),
]
PIP_TORCH = [Package("torch", "2.13.0+cpu", "", "pypi", "pip")]
PIP_COMMAND = '"{prefix}/bin/python" -m pip install "torch==2.13.0+cu130" '
INDEX = "--index-url https://download.pytorch.org/whl/cu130"


@pytest.mark.parametrize(
    ("prefix", "kind", "manager", "records", "fix"),
    [
        # pip owns torch there: conda's pytorch on top would install it twice.
        (CONDA_ENV, "conda", "conda", PIP_TORCH_IN_CONDA, None),
        ("/home/ana/venvs/train", "venv", "venv", PIP_TORCH, PIP_COMMAND + INDEX),
        (
            "/srv/project/.venv",
            "venv",
            "uv",
            PIP_TORCH,
            'uv pip install --python "{prefix}/bin/python" "torch==2.13.0+cu130" ' + INDEX,
        ),
        (
            CONDA_ENV,
            "conda",
            "conda",
            CONDA_PYTORCH,
            'conda install -p "{prefix}" -c conda-forge "pytorch=2.13.0=cuda*" '
            '"cuda-version<=13.1"',
        ),
    ],
    ids=["conda-env-pip-torch", "pip-venv", "uv-venv", "conda-env-conda-pytorch"],
)
def test_the_panel_and_the_cli_give_one_fix_with_the_installer_of_torch(
    prefix, kind, manager, records, fix
):
    # The panel's facts: the kernel's process, the env's records, no probe (a busy kernel).
    process = KernelProcessFacts(1, None, None, prefix, kind, {})
    panel = Facts(capture(A5000), None, process=process, packages=records, env_manager=manager)
    # `doctor --env`'s: the probe of the env's interpreter, the same records.
    torch = next(p.version for p in records if p.name in ("torch", "pytorch"))
    answer = probe(torch, prefix=prefix, conda_prefix=prefix if kind == "conda" else None)
    answer["executable"] = f"{prefix}/bin/python"
    answer["packages"].update({p.name: p.version for p in records if p.name == "torchvision"})
    cli = Facts(capture(A5000), answer, packages=records, env_manager=manager)
    (from_panel,) = diagnose(panel)
    (from_cli,) = diagnose(cli)
    assert from_panel.fix == from_cli.fix
    expected = fix or (PIP_COMMAND + '"torchvision==0.28.0+cu130" ' + INDEX)
    assert from_cli.fix == expected.format(prefix=prefix)


def test_a_busy_venv_kernels_fix_is_pinned_from_its_records():
    # No probe while the kernel trains: the venv's records name the distribution, torch.
    records = [Package("torch", "2.13.0+cpu", "", "pypi", "pip")]
    process = KernelProcessFacts(1, None, None, "/home/ana/venvs/train", "venv", {})
    (finding,) = diagnose(Facts(capture(A5000), None, process=process, packages=records))
    assert finding.fix == (
        '"/home/ana/venvs/train/bin/python" -m pip install "torch==2.13.0+cu130" '
        "--index-url https://download.pytorch.org/whl/cu130"
    )


def test_a_uv_projects_env_is_fixed_in_the_project_with_pytorchs_index(tmp_path):
    # uv pip install in a project's .venv is undone by the next `uv sync` or `uv run`.
    project = tmp_path / "train"
    (project / ".venv").mkdir(parents=True)
    assert project_of(str(project / ".venv")) is None  # a bare .venv: no project
    (project / "pyproject.toml").write_text('[project]\nname = "t"\n\n[tool.uv]\n')
    assert project_of(str(project / ".venv")) == Project("uv", str(project))
    (project / "pyproject.toml").write_text('[project]\nname = "t"\n')
    (project / "uv.lock").write_text("version = 1\n")
    assert project_of(str(project / ".venv") + "/") == Project("uv", str(project))
    records = [Package("torch", "2.13.0+cpu", "", "pypi", "pip")]
    process = KernelProcessFacts(1, None, None, str(project / ".venv"), "venv", {})
    facts = Facts(
        capture(A5000),
        None,
        process=process,
        packages=records,
        env_manager="uv",
        project=Project("uv", str(project)),
    )
    (finding,) = diagnose(facts)
    assert finding.fix == (
        f'uv add --project "{project}" "torch==2.13.0+cu130" '
        "--index pytorch-cu130=https://download.pytorch.org/whl/cu130"
    )


def pixi_workspace(folder, manifest: str, environment: str, torch: str) -> str:
    """A pixi workspace's environment as pixi lays it out: ``.pixi/envs/<name>`` with conda's
    records and pixi's own (``conda-meta/pixi``), torch from conda-forge (``conda``) or from
    PyPI through pixi's uv (``pypi``)."""
    folder.mkdir()
    tables = "tool.pixi." if manifest == "pyproject.toml" else ""
    (folder / manifest).write_text(
        f'[{tables}workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n\n'
        f'[{tables}dependencies]\npython = "3.12.*"\n'
    )
    prefix = folder / ".pixi" / "envs" / environment
    dists = [Dist("python", "3.12.7", "hc5c86c4_0_cpython")]
    if torch == "conda":
        dists += [
            Dist("pytorch", "2.13.0", "cpu_mkl_py312h_100"),
            Dist("torchvision", "0.28.0", "cpu_py312h_0"),
        ]
    record = {"manifest_path": str(folder / manifest), "environment_name": environment}
    make_conda_env(prefix, dists, pixi=record)
    if torch == "pypi":
        add_dist_info(prefix / "lib/python3.12/site-packages", "torch", "2.13.0+cpu", "uv-pixi")
    return str(prefix)


def fix_read_from_disk(prefix: str) -> str:
    """The CPU-only finding's fix from what the server reads of a conda-layout environment
    while its kernel is busy: its records, its manager and its project."""
    process = KernelProcessFacts(1, None, None, prefix, "conda", {})
    facts = Facts(
        capture(A5000),
        None,
        process=process,
        packages=packages(prefix),
        env_manager=manager_of(prefix),
        project=project_of(prefix),
    )
    (finding,) = diagnose(facts)
    return finding.fix


def apply_manifest_edit(fix: str, manifest) -> dict:
    """Put the table and keys the fix names into the manifest, as its reader would, and read
    the manifest back."""
    table, entries = re.search(r"\[([\w.-]+)\] (.*?)\)?, then run:", fix).groups()
    keys = re.findall(r'[\w-]+ = (?:\{[^}]*\}|"[^"]*")', entries)
    manifest.write_text(manifest.read_text() + f"\n[{table}]\n" + "\n".join(keys) + "\n")
    return tomllib.loads(manifest.read_text())


@pytest.mark.parametrize(
    ("manifest_name", "environment", "torch", "fix", "table", "declared"),
    [
        # `conda install -p` into .pixi/envs/default is undone by the next `pixi run`, and
        # pixi solves for the CUDA the workspace declares, not for this machine's driver.
        (
            "pixi.toml",
            "default",
            "conda",
            'pixi manages this environment: in "{manifest}", declare the driver\'s CUDA '
            '([system-requirements] cuda = "13.1"), then run: pixi add --manifest-path '
            '"{manifest}" "pytorch-gpu==2.13.0" "torchvision==0.28.0"',
            ("system-requirements",),
            {"cuda": "13.1"},
        ),
        # A non-default environment of a pyproject.toml workspace, torch from PyPI: its
        # feature's pypi-dependencies name PyTorch's index for the CUDA build.
        (
            "pyproject.toml",
            "gpu",
            "pypi",
            'pixi manages this environment: in "{manifest}", set '
            "[tool.pixi.feature.gpu.pypi-dependencies] torch = "
            '{{ version = "==2.13.0", index = "https://download.pytorch.org/whl/cu130" }}, '
            'then run: pixi install --manifest-path "{manifest}" --environment gpu',
            ("tool", "pixi", "feature", "gpu", "pypi-dependencies"),
            {"torch": {"version": "==2.13.0", "index": "https://download.pytorch.org/whl/cu130"}},
        ),
    ],
    ids=["conda-pytorch", "pypi-torch-in-a-feature"],
)
def test_a_pixi_environment_is_fixed_in_its_workspace(
    tmp_path, manifest_name, environment, torch, fix, table, declared
):
    prefix = pixi_workspace(tmp_path / "train", manifest_name, environment, torch)
    manifest = tmp_path / "train" / manifest_name
    assert project_of(prefix) == Project("pixi", str(manifest), environment)
    given = fix_read_from_disk(prefix)
    assert given == fix.format(manifest=manifest)
    # What the fix says to write is TOML that puts the declaration where pixi reads it.
    edited = apply_manifest_edit(given, manifest)
    for key in table:
        edited = edited[key]
    assert edited == declared


def test_a_pixi_workspace_is_found_from_its_record_or_its_manifest(tmp_path):
    prefix = pixi_workspace(tmp_path / "w", "pixi.toml", "default", "conda")
    # pixi's record names the manifest; without the record, the workspace's own.
    (tmp_path / "w/.pixi/envs/default/conda-meta/pixi").unlink()
    assert project_of(prefix) == Project("pixi", str(tmp_path / "w/pixi.toml"), "default")
    (tmp_path / "w/pixi.toml").rename(tmp_path / "w/pyproject.toml")
    assert project_of(prefix) is None  # a pyproject.toml without pixi's tables
    (tmp_path / "w/pyproject.toml").write_text("[tool.pixi.workspace]\n")
    assert project_of(prefix) == Project("pixi", str(tmp_path / "w/pyproject.toml"), "default")
    record = tmp_path / "w/.pixi/envs/default/conda-meta/pixi"
    record.write_text(json.dumps({"manifest_path": str(tmp_path / "gone.toml")}))
    assert project_of(prefix).path == str(tmp_path / "w/pyproject.toml")


def test_an_env_uv_made_is_fixed_with_uv_aimed_at_its_python():
    records = [Package("torch", "2.13.0+cpu", "", "pypi", "pip")]
    process = KernelProcessFacts(1, None, None, "/srv/project/.venv", "venv", {})
    facts = Facts(capture(A5000), None, process=process, packages=records, env_manager="uv")
    (finding,) = diagnose(facts)
    assert finding.fix == (
        'uv pip install --python "/srv/project/.venv/bin/python" "torch==2.13.0+cu130" '
        "--index-url https://download.pytorch.org/whl/cu130"
    )


def test_the_fix_names_the_python_of_a_windows_env_and_the_records_versions_without_a_probe():
    assert interpreter("C:\\Users\\ana\\miniconda3\\envs\\train") == (
        "C:\\Users\\ana\\miniconda3\\envs\\train\\python.exe"
    )
    assert interpreter("/opt/envs/train/") == "/opt/envs/train/bin/python"
    records = [
        Package("pytorch", "2.5.1", "cpu_mkl_py312h_100", "conda-forge", "conda"),
        Package("torchaudio", "2.5.1", "py312_cpu", "pytorch", "conda"),
    ]
    process = KernelProcessFacts(1, None, None, "/opt/conda/envs/audio", "conda", {})
    (finding,) = diagnose(Facts(capture(A5000), None, process=process, packages=records))
    assert finding.fix == (
        'conda install -p "/opt/conda/envs/audio" -c conda-forge "pytorch=2.5.1=cuda*" '
        '"torchaudio=2.5.1" "cuda-version<=13.1"'
    )


def test_unknown_gpu_in_cuda_visible_devices_says_what_the_kernel_sees():
    (finding,) = diagnose(Facts(capture(A5000), probe(cuda_visible_devices="0,5,1")))
    assert "sees only 0" in finding.evidence
    assert 'os.environ["CUDA_VISIBLE_DEVICES"] = "0"' in finding.fix and "restart" in finding.fix


def test_mig_instance_uuid_is_a_valid_device():
    snapshot = capture(A100_MIG)
    snapshot.gpus[0].mig_devices[0].uuid = "MIG-00000000-0000-0000-0000-000000000000"
    assert diagnose(Facts(snapshot, probe(cuda_visible_devices="MIG-00000000"))) == []


def test_cuda_visible_devices_from_the_kernels_start_when_no_probe_ran():
    process = KernelProcessFacts(
        7, None, None, "/opt/envs/train", "venv", {"CUDA_VISIBLE_DEVICES": ""}
    )
    assert ids(diagnose(Facts(capture(A5000), None, process=process))) == [
        ("cuda-visible-devices-hides-all", "error")
    ]


@pytest.mark.parametrize(
    "expected_prefix,interpreter,kernelspec_prefix,expected",
    [
        # `conda run -p /opt/envs/train python -m ipykernel`: base's conda, train's Python.
        (None, "/opt/conda/bin/conda", "/opt/envs/train", []),
        ("/opt/envs/train", "/opt/envs/train/bin/python", "/opt/envs/train", []),
    ],
)
def test_kernel_outside_the_expected_environment(
    expected_prefix, interpreter, kernelspec_prefix, expected
):
    facts = Facts(
        capture(A5000),
        probe(),
        expected_prefix=expected_prefix,
        kernelspec_interpreter=interpreter,
        kernelspec_prefix=kernelspec_prefix,
    )
    assert ids(diagnose(facts)) == expected


def test_findings_come_errors_first():
    facts = Facts(
        capture(T4), probe("2.13.0+cpu", python_version="3.9.18", cuda_visible_devices="0,7")
    )
    assert [f.severity for f in diagnose(facts)] == ["error", "warning", "info"]


def test_driver_failure_fix_is_the_errors_own_hint():
    facts = Facts(failure("nvml-driver-library-version-mismatch.txt"), probe("2.5.1+cu121"))
    (finding,) = diagnose(facts)
    assert finding.fix == facts.snapshot.error.hint
    assert "Driver/library version mismatch" in finding.evidence


@pytest.mark.parametrize(
    "cuda,driver",
    [
        ("13.0", "580"),
        ("12.8", "525.60.13"),
        ("11.8", "450.80.02"),
        ("10.2", "440.33"),
        ("7.5", None),
    ],
)
def test_minimum_driver_table(cuda, driver):
    assert minimum_driver(cuda) == driver


@pytest.mark.parametrize(
    "driver_cuda,torch,variant",
    [
        ("13.1", None, "13.0"),
        # torch 2.5 was built for CUDA 11.8, 12.1 and 12.4: the newest a 12.2 driver runs.
        ("12.2", "2.5.1", "12.1"),
        # The current release has no 12.1 build: its 12.6 build, through minor version
        # compatibility.
        ("12.2", None, "12.6"),
        ("12.2", "2.13.0", "12.6"),
        ("12.0", "2.3.0", "11.8"),
        ("11.4", "2.7.1", "11.8"),
        ("11.4", None, None),
        ("10.2", None, None),
        # A line older than the table: no build known.
        ("11.4", "1.8.1", None),
    ],
)
def test_pytorch_build_for_a_driver_and_the_torch_release(driver_cuda, torch, variant):
    assert pytorch_variant_for(driver_cuda, torch) == variant


def test_a_torch_release_without_a_build_for_the_driver_names_the_way_out():
    installed = {"torch": "2.8.0+cpu", "torchvision": "0.23.0+cpu"}
    # A CUDA 11.7 driver (the T4 capture's): torch 2.8 was built for CUDA 12.6 and later only.
    assert pytorch_install_command("11.7", "pip", installed=installed) == (
        "torch 2.8.0 has no build for the CUDA this driver supports (11.7): upgrade the NVIDIA "
        "driver, or install torch 2.7 (built for CUDA 11.8)."
    )
    assert pytorch_install_command("9.2", "pip", installed=installed) == (
        "The driver supports CUDA 9.2, older than any PyTorch build: upgrade the NVIDIA driver "
        "first."
    )


def test_conda_and_pip_finding_names_both_packages_and_the_fix():
    packages = [
        Package("pytorch", "2.5.1", "cuda121_py312h7c6f8d1_301", "conda-forge", "conda"),
        Package("torch", "2.5.1", "", "pypi", "pip", conda_name="pytorch"),
    ]
    (finding,) = diagnose(Facts(capture(A5000), probe("2.5.1+cu121"), packages=packages))
    assert "pytorch 2.5.1 (conda) and torch 2.5.1 (pip)" in finding.evidence
    # Each tool aimed at the kernel's environment: with base active in a terminal, a bare pip
    # or conda would change base.
    assert finding.fix == (
        '"/opt/envs/train/bin/python" -m pip uninstall -y torch && '
        'conda install -p "/opt/envs/train" --force-reinstall pytorch'
    )


@pytest.mark.parametrize(
    ("probe", "packages", "label"),
    [
        # torch imported (a deep check, or the user): torch's own word.
        (
            {"torch": {"version": "2.13.0+cpu", "cuda": None}, "packages": {"torch": "2.13.0+cpu"}},
            None,
            "cpu",
        ),
        (
            {"torch": {"version": "2.5.1", "cuda": "12.4"}, "packages": {"torch": "2.5.1"}},
            None,
            "12.4",
        ),
        # Not imported: pip's local version.
        ({"torch": None, "packages": {"torch": "2.13.0+cpu"}}, None, "cpu"),
        ({"torch": None, "packages": {"torch": "2.5.1+cu121"}}, None, "12.1"),
        # A conda build: its build string, when the records are there.
        ({"torch": None, "packages": {"torch": "2.5.1"}}, None, None),
        (
            {"torch": None, "packages": {"torch": "2.5.1"}},
            [Package("pytorch", "2.5.1", "py3.12_cuda12.1_cudnn9.1.0_0", "pytorch", "conda")],
            "12.1",
        ),
        (
            {"torch": None, "packages": {"torch": "2.5.1"}},
            [Package("pytorch", "2.5.1", "py3.12_cpu_0", "pytorch", "conda")],
            "cpu",
        ),
        # No torch.
        ({"torch": None, "packages": {"torch": None}}, None, None),
    ],
)
def test_torch_cuda_build_is_read_from_the_best_evidence(probe, packages, label):
    assert torch_cuda_label(Facts(probe=probe, packages=packages)) == label


def test_a_kernel_whose_program_is_gone_is_told_so_with_its_fix():
    # A dead kernel whose venv was deleted: no probe, no process, no records.
    facts = Facts(
        capture(A5000),
        None,
        kernelspec_name="old-train",
        kernelspec_interpreter="/home/ana/venvs/old-train/bin/python",
        interpreter_missing=True,
    )
    (finding,) = diagnose(facts)
    assert (finding.id, finding.severity) == ("kernel-interpreter-missing", "error")
    assert finding.title == "The kernel's program is gone: /home/ana/venvs/old-train/bin/python"
    assert "recreate the environment" in finding.evidence
    assert finding.fix == "jupyter kernelspec remove -y old-train"


def test_a_bash_kernel_gets_no_python_fix_but_its_gpu_findings():
    # A bash kernel launched through a bare "python" would get an ipykernel fix, a CPU-only
    # torch in the server's records a pip fix: neither is about this kernel.
    records = [Package("torch", "2.13.0+cpu", "", "pypi", "pip")]
    process = KernelProcessFacts(1, "/usr/bin/bash", None, "/usr", "system", {})
    facts = Facts(
        capture(A5000),
        None,
        process=process,
        packages=records,
        kernelspec_name="bash",
        kernelspec_interpreter="bash",
        kernel_language="bash",
        held_memory_mib={0: 20000.0},
        recent_utilization={0: 0.0},
        recent_cpu_percent=0.0,
    )
    assert [f.id for f in diagnose(facts)] == ["gpu-idle-while-holding-memory"]
    python = Facts(**{**facts.__dict__, "kernel_language": "python"})
    assert "cpu-only-torch" in [f.id for f in diagnose(python)]
