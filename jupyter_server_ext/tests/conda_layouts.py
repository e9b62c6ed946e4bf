"""Environments built in a temp dir from the real conda records, histories and environments.txt
files in testdata/conda (provenance in PROVENANCE.md there), for tests and bench.

Every record written here is the real 2025 ``libffi`` PrefixRecord with the fields that name a
package (name, version, build, channel, file names, files) replaced by those of a package of a
real capture: a ``conda env export``, a ``conda list --json``, or the ``+`` lines of a history.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .replay import FIXTURES, install_fake

CONDA_FIXTURES = FIXTURES / "conda"
FAKE_CONDA = Path(__file__).with_name("fake_conda.py")

_TEMPLATE = json.loads(
    (CONDA_FIXTURES / "conda-meta-prefix-record-libffi-3.4.2-h3422bc3_5.json").read_text()
)
# "channel/subdir::name-version-build" (conda >= 4.4), "channel::name-version-build"
# (constructor), or a bare "name-version-build" (conda 3).
_DIST = re.compile(
    r"^(?:(?P<channel>[^:/]+)(?:/(?P<subdir>[^:]+))?::)?(?P<name>.+)-(?P<version>[^-]+)-(?P<build>[^-]+)$"
)


def conda_capture(name: str) -> str:
    """The text of one capture in testdata/conda."""
    return (CONDA_FIXTURES / name).read_text()


@dataclass(frozen=True)
class Dist:
    """A package as conda names it; ``channel`` as ``conda list`` shows it."""

    name: str
    version: str
    build: str
    channel: str = "conda-forge"
    subdir: str = "linux-64"


def parse_dist(text: str, channel: str, subdir: str) -> Dist:
    """One dist string of a history; ``defaults`` becomes ``pkgs/main``, as conda lists it."""
    match = _DIST.match(text)
    assert match, text
    found = match.group("channel") or channel
    return Dist(
        match.group("name"),
        match.group("version"),
        match.group("build"),
        "pkgs/main" if found == "defaults" else found,
        match.group("subdir") or subdir,
    )


def installed_by_history(text: str, channel: str, subdir: str) -> list[Dist]:
    """What a history says is installed now: conda's ``History.construct_states`` (a revision
    of bare dist names is the whole state; ``+``/``-`` lines change it)."""
    state: set[str] = set()
    for block in re.split(r"^==>.*<==$", text, flags=re.M)[1:]:
        lines = [line.strip() for line in block.splitlines()]
        dists = [line for line in lines if line and not line.startswith("#")]
        if not any(line[0] in "+-" for line in dists):
            state = set(dists)
            continue
        for line in dists:
            (state.add if line[0] == "+" else state.discard)(line[1:])
    return sorted((parse_dist(dist, channel, subdir) for dist in state), key=lambda d: d.name)


# The base-win64 export names its channels (conda-forge, defaults) but not each package's. These
# came from Anaconda's channels (pkgs/main, and pkgs/msys2 for the MSYS2 runtime), the rest
# from conda-forge: which one a package names changes nothing in the export but the channel
# list, and both are on it.
_WIN64_DEFAULTS = {"anaconda-clean", "console_shortcut", "powershell_shortcut"}


def dists_of_env_export(text: str) -> list[Dist]:
    """The ``name=version=build`` dependencies of a ``conda env export`` capture."""
    found = []
    for line in text.splitlines():
        match = re.fullmatch(r"  - ([^=\s]+)=([^=\s]+)=([^=\s]+)", line)
        if not match:
            continue
        name = match.group(1)
        channel = "conda-forge"
        if name in _WIN64_DEFAULTS:
            channel = "pkgs/main"
        elif name.startswith(("m2-", "m2w64-", "msys2-")):
            channel = "pkgs/msys2"
        found.append(Dist(*match.groups(), channel=channel, subdir="win-64"))
    return found


def dists_of_conda_list_json(text: str) -> list[Dist]:
    """The records of a ``conda list --json`` capture."""
    return [
        Dist(item["name"], item["version"], item["build_string"], item["channel"], item["platform"])
        for item in json.loads(text)
    ]


def prefix_record(dist: Dist, files: Iterable[str] = ()) -> dict:
    """A PrefixRecord for ``dist``: the real template with this package's fields."""
    record = copy.deepcopy(_TEMPLATE)
    server = (
        "https://repo.anaconda.com"
        if dist.channel.startswith("pkgs/")
        else ("https://conda.anaconda.org")
    )
    channel_url = f"{server}/{dist.channel}/{dist.subdir}"
    fn = f"{dist.name}-{dist.version}-{dist.build}.conda"
    build_number = dist.build.rsplit("_", 1)[-1]
    files = list(files)
    record.update(
        name=dist.name,
        version=dist.version,
        build=dist.build,
        build_number=int(build_number) if build_number.isdigit() else 0,
        channel=channel_url,
        subdir=dist.subdir,
        fn=fn,
        url=f"{channel_url}/{fn}",
        files=files,
        paths_data={
            "paths": [{"_path": f, "path_type": "hardlink", "size_in_bytes": 0} for f in files],
            "paths_version": 1,
        },
    )
    # The template's hashes are libffi's: a record of another package has none rather than
    # wrong ones.
    for key in ("md5", "sha256", "size"):
        record.pop(key, None)
    return record


def make_conda_env(
    prefix: Path,
    dists: Iterable[Dist],
    *,
    history: str | None = None,
    files: Mapping[str, list[str]] | None = None,
    state: dict | None = None,
    pixi: dict | None = None,
    root: bool = False,
) -> Path:
    """A conda prefix: one record per dist in ``conda-meta/`` (with ``files`` by package
    name), a history, conda's ``state`` file, pixi's ``conda-meta/pixi``; a root gets
    ``condabin/``, as conda's installers make it."""
    meta = prefix / "conda-meta"
    meta.mkdir(parents=True)
    for dist in dists:
        record = prefix_record(dist, (files or {}).get(dist.name, ()))
        (meta / f"{dist.name}-{dist.version}-{dist.build}.json").write_text(json.dumps(record))
    if history is not None:
        (meta / "history").write_text(history)
    if state is not None:
        (meta / "state").write_text(json.dumps(state))
    if pixi is not None:
        (meta / "pixi").write_text(json.dumps(pixi))
    if root:
        (prefix / "condabin").mkdir()
    return prefix


def add_dist_info(site_packages: Path, name: str, version: str, installer: str | None) -> Path:
    """A ``*.dist-info`` folder with the files pip writes (PEP 376 and 627): METADATA,
    INSTALLER (unless None), RECORD."""
    folder = site_packages / f"{re.sub(r'[-_.]+', '_', name)}-{version}.dist-info"
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if installer is not None:
        (folder / "INSTALLER").write_text(f"{installer}\n")
    (folder / "RECORD").write_text(f"{folder.name}/METADATA,,\n{folder.name}/RECORD,,\n")
    return folder


def install_fake_conda(folder: Path) -> Path:
    """Write a ``conda`` into ``folder`` that runs the fake with this interpreter."""
    return install_fake(folder, "conda", FAKE_CONDA)


class FakeConda:
    """Controls the fake conda of one test."""

    def __init__(self, monkeypatch, log: Path, pidfile: Path):
        self._monkeypatch = monkeypatch
        self.log = log
        self.pidfile = pidfile
        self._runs = log.with_name("conda-runs.log")
        monkeypatch.setenv("FAKE_CONDA_LOG", str(log))
        monkeypatch.setenv("FAKE_CONDA_PIDFILE", str(pidfile))
        for name in (
            "FAKE_CONDA_MODE",
            "FAKE_CONDA_PATHS",
            "FAKE_CONDA_STDERR",
            "FAKE_CONDA_DELAY",
            "FAKE_CONDA_RUNS",
        ):
            monkeypatch.delenv(name, raising=False)

    def replay(
        self,
        info: str = "conda-info-json-conda-3.9.0-osx64.json",
        env_list: str = "conda-env-list-json-windows-3envs.json",
        export: str = "conda-env-export-base-win64-conda-forge-2021.yml",
        paths: Mapping[str, str] | None = None,
    ) -> None:
        """Answer with these captures (file names in the conda fixtures), their paths
        replaced as ``paths`` says."""
        self._monkeypatch.setenv("FAKE_CONDA_INFO", str(CONDA_FIXTURES / info))
        self._monkeypatch.setenv("FAKE_CONDA_ENV_LIST", str(CONDA_FIXTURES / env_list))
        self._monkeypatch.setenv("FAKE_CONDA_EXPORT", str(CONDA_FIXTURES / export))
        self._monkeypatch.setenv("FAKE_CONDA_PATHS", json.dumps(dict(paths or {})))

    def hang(self) -> None:
        """Never answer."""
        self._monkeypatch.setenv("FAKE_CONDA_MODE", "hang")

    def fail(self, stderr: str) -> None:
        """Print ``stderr`` and exit 1."""
        self._monkeypatch.setenv("FAKE_CONDA_MODE", "fail")
        self._monkeypatch.setenv("FAKE_CONDA_STDERR", stderr)

    def take(self, seconds: float) -> None:
        """Answer after ``seconds``, as a real conda does, noting when each run started and
        ended."""
        self._monkeypatch.setenv("FAKE_CONDA_DELAY", str(seconds))
        self._monkeypatch.setenv("FAKE_CONDA_RUNS", str(self._runs))

    def most_at_once(self) -> int:
        """The most runs that overlapped in time since ``take``."""
        edges = []
        for line in self._runs.read_text().splitlines():
            start, end = map(float, line.split())
            edges += [(start, 1), (end, -1)]
        running = most = 0
        for _, change in sorted(edges):
            running += change
            most = max(most, running)
        return most

    def calls(self) -> list[list[str]]:
        """The arguments of each call so far."""
        if not self.log.exists():
            return []
        return [line.split() for line in self.log.read_text().splitlines()]


# The captures most tests build their environments from.
HISTORY_2025 = conda_capture("conda-meta-history-osx-arm64-py313t-conda-25.1.2.txt")
BASE_2021 = dists_of_conda_list_json(conda_capture("conda-list-json-osx64-2021.json"))


def env_2025(prefix: Path, history: str = HISTORY_2025, **options) -> Path:
    """The free-threaded Python 3.13 environment of the 2025 history (conda-forge)."""
    dists = installed_by_history(history, "conda-forge", "osx-arm64")
    return make_conda_env(prefix, dists, history=history, **options)
