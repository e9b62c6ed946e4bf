"""Package records of environments built from the real conda fixtures, and pip's packages."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import tornado
from jupyterlab_gpu_monitor.conda.records import channel_name, conda_and_pip, packages

from .conda_layouts import (
    CONDA_FIXTURES,
    Dist,
    add_dist_info,
    conda_capture,
    dists_of_conda_list_json,
    make_conda_env,
)

LIST_2021 = json.loads(conda_capture("conda-list-json-osx64-2021.json"))
SITE = "lib/python3.9/site-packages"
OWN_SITE_PACKAGES = Path(tornado.__file__).parents[1]


def test_packages_are_the_records_as_conda_list_shows_them(tmp_path):
    prefix = make_conda_env(tmp_path / "base", dists_of_conda_list_json(json.dumps(LIST_2021)))
    found = packages(str(prefix))
    assert [(p.name, p.version, p.build, p.channel, p.installer) for p in found] == [
        (item["name"], item["version"], item["build_string"], item["channel"], "conda")
        for item in sorted(LIST_2021, key=lambda item: item["name"])
    ]


@pytest.mark.parametrize(
    ("record", "channel"),
    [
        ("conda-meta-prefix-record-libffi-3.4.2-h3422bc3_5.json", "conda-forge"),
        ("conda-meta-prefix-record-python_abi-3.13-5_cp313t.json", "conda-forge"),
        ("conda-meta-prefix-record-ca-certificates-2018.03.07-0.json", "pkgs/main"),
        ("conda-meta-prefix-record-numpy-1.15.1-py36had7ef94_0.json", "pkgs/main"),
    ],
)
def test_channel_of_a_real_record(record, channel):
    assert channel_name(json.loads((CONDA_FIXTURES / record).read_text())) == channel


@pytest.mark.parametrize(
    ("field", "channel"),
    [
        ("https://conda.anaconda.org/t/tk-123/private-forge/noarch", "private-forge"),
        ("https://repo.continuum.io/pkgs/free/linux-64/", "pkgs/free"),
        ("https://prefix.dev/conda-forge/linux-64", "https://prefix.dev/conda-forge"),
        ("conda-forge/osx-arm64", "conda-forge"),
        ("", "unknown"),
    ],
)
def test_channel_names_of_other_servers_and_older_records(field, channel):
    assert channel_name({"channel": field}) == channel


def test_pip_packages_are_those_no_conda_record_owns(tmp_path):
    dists = [Dist("python", "3.9.5", "h88f2d9e_3"), Dist("six", "1.16.0", "pyhd3eb1b0_0")]
    prefix = make_conda_env(
        tmp_path / "env",
        dists,
        files={"six": [f"{SITE}/six.py", f"{SITE}/six-1.16.0.dist-info/RECORD"]},
    )
    site = prefix / SITE
    # conda-build writes INSTALLER "conda"; this one's record owns it anyway.
    add_dist_info(site, "six", "1.16.0", "conda")
    add_dist_info(site, "requests", "2.32.3", "pip")
    add_dist_info(site, "Typing_Extensions", "4.12.2", "uv")
    # Left by a record that is gone: conda says it installed it, so it is not pip's.
    add_dist_info(site, "idna", "3.7", "conda")

    pip = [
        (p.name, p.version, p.build, p.channel)
        for p in packages(str(prefix))
        if p.installer == "pip"
    ]

    assert pip == [("requests", "2.32.3", "", "pypi"), ("typing-extensions", "4.12.2", "", "pypi")]


def test_packages_are_read_again_once_conda_or_pip_changes_the_environment(tmp_path):
    dists = [Dist("python", "3.9.5", "h88f2d9e_3"), Dist("six", "1.16.0", "pyhd3eb1b0_0")]
    prefix = make_conda_env(tmp_path / "env", dists)
    meta = prefix / "conda-meta"
    site = prefix / SITE
    site.mkdir(parents=True, exist_ok=True)

    def names() -> list[tuple[str, str]]:
        return [(package.name, package.version) for package in packages(str(prefix))]

    assert names() == [("python", "3.9.5"), ("six", "1.16.0")]

    # A record edited in place, the folders' times kept: nothing says the environment changed.
    (record,) = meta.glob("six-*.json")
    times = meta.stat()
    record.write_text(record.read_text().replace('"1.16.0"', '"1.17.0"'))
    os.utime(meta, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert names() == [("python", "3.9.5"), ("six", "1.16.0")]

    add_dist_info(site, "requests", "2.32.3", "pip")
    assert names() == [("python", "3.9.5"), ("requests", "2.32.3"), ("six", "1.17.0")]
    record.unlink()
    assert names() == [("python", "3.9.5"), ("requests", "2.32.3")]


def test_the_same_distribution_from_conda_and_pip_is_reported_as_a_pair(tmp_path):
    numpy = json.loads(
        (CONDA_FIXTURES / "conda-meta-prefix-record-numpy-1.15.1-py36had7ef94_0.json").read_text()
    )
    dists = [
        Dist(numpy["name"], numpy["version"], numpy["build"], "pkgs/main", "osx-64"),
        Dist("pytorch", "2.1.0", "py3.9_cuda12.1_cudnn8.9.2_0", "pytorch"),
        Dist("python", "3.9.5", "h88f2d9e_3"),
    ]
    prefix = make_conda_env(
        tmp_path / "env",
        dists,
        # conda's pytorch installs the Python distribution "torch".
        files={"pytorch": [f"{SITE}/torch/__init__.py", f"{SITE}/torch-2.1.0.dist-info/RECORD"]},
    )
    add_dist_info(prefix / SITE, "numpy", "1.26.4", "pip")
    add_dist_info(prefix / SITE, "torch", "2.2.0", "pip")

    found = packages(str(prefix))

    pairs = [(c.name, c.version, p.name, p.version) for c, p in conda_and_pip(found)]
    assert pairs == [("numpy", "1.15.1", "numpy", "1.26.4"), ("pytorch", "2.1.0", "torch", "2.2.0")]
    assert [p.name for p in found if p.installer == "pip"] == ["numpy", "torch"]


def test_a_record_that_is_not_json_is_skipped_with_a_warning(tmp_path, conda_warnings):
    prefix = make_conda_env(tmp_path / "env", dists_of_conda_list_json(json.dumps(LIST_2021)))
    broken = prefix / "conda-meta" / "zlib-1.2.11-h1de35cc_3.json"
    broken.write_text(broken.read_text()[:100])
    found = packages(str(prefix))
    assert len(found) == 33 and "zlib" not in {p.name for p in found}
    assert len(conda_warnings) == 1
    assert conda_warnings[0].startswith(f"skipped the package record {broken}")


def test_a_venvs_packages_are_its_distributions(tmp_path):
    prefix = tmp_path / "venv"
    (prefix / "pyvenv.cfg").parent.mkdir()
    (prefix / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n")
    site = prefix / "lib" / "python3.11" / "site-packages"
    # Real dist-info folders of this test run's own environment, as pip wrote them.
    for name in ("tornado", "traitlets"):
        source = next(OWN_SITE_PACKAGES.glob(f"{name}-*.dist-info"))
        shutil.copytree(source, site / source.name)
    found = packages(str(prefix))
    assert [(p.name, p.installer, p.channel) for p in found] == [
        ("tornado", "pip", "pypi"),
        ("traitlets", "pip", "pypi"),
    ]
