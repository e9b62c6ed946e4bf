"""The environment endpoints through a real Jupyter server (pytest-jupyter), over a conda
layout built from the real fixtures, with a fake conda replaying real captures."""

from __future__ import annotations

import json
import os

import pytest
import tornado
import yaml

from .conda_layouts import (
    BASE_2021,
    HISTORY_2025,
    Dist,
    add_dist_info,
    conda_capture,
    env_2025,
    installed_by_history,
    make_conda_env,
)
from .replay import server_config

SITE = "lib/python3.13t/site-packages"


@pytest.fixture
def jp_server_config():
    return server_config(conda_timeout=3.0)


@pytest.fixture
def home(jp_environ, conda_home):
    """Two conda roots (so two "base"), and two environments of the 2025 history, one with
    pip's torch over conda's pytorch. After jp_environ, which sets its own HOME."""
    dists = installed_by_history(HISTORY_2025, "conda-forge", "osx-arm64")
    make_conda_env(conda_home / "miniconda3", BASE_2021, root=True)
    make_conda_env(conda_home / "anaconda3", BASE_2021, root=True)
    env_2025(conda_home / "miniconda3" / "envs" / "devops")
    train = make_conda_env(
        conda_home / "miniconda3" / "envs" / "train",
        [*dists, Dist("pytorch", "2.5.1", "py3.13_cpu_0", "pytorch")],
        history=HISTORY_2025,
        files={"pytorch": [f"{SITE}/torch-2.5.1.dist-info/RECORD"]},
    )
    add_dist_info(train / SITE, "torch", "2.6.0", "pip")
    return conda_home


async def get_json(jp_fetch, *path, **params):
    response = await jp_fetch("gpu-monitor", "api", *path, params=params or None)
    assert response.code == 200
    return json.loads(response.body)


async def fetch_error(jp_fetch, *path, **params):
    with pytest.raises(tornado.httpclient.HTTPClientError) as raised:
        await jp_fetch("gpu-monitor", "api", *path, params=params or None)
    return raised.value.code, json.loads(raised.value.response.body)


async def test_listing_names_every_environment_also_as_conda_env_list(home, jp_fetch):
    listing = await get_json(jp_fetch, "envs")
    prefixes = {e["prefix"].replace(str(home), "~"): e for e in listing["environments"]}
    assert {"~/miniconda3", "~/anaconda3", "~/miniconda3/envs/devops"} < set(prefixes)
    devops = prefixes["~/miniconda3/envs/devops"]
    assert (devops["id"], devops["kind"], devops["python_version"]) == (
        "devops",
        "conda-env",
        "3.13.2",
    )
    # The server's own Python runs its python3 kernelspec.
    assert any("python3" in e["kernelspecs"] for e in listing["environments"])
    # conda env list --json: the prefixes, and details keyed by prefix.
    assert listing["envs"] == [e["prefix"] for e in listing["environments"]]
    details = listing["envs_details"][str(home / "miniconda3")]
    assert (details["name"], details["base"], details["package_count"]) == ("base", True, 34)


async def test_packages_of_an_environment_with_pip_over_conda(home, jp_fetch):
    answer = await get_json(jp_fetch, "envs", "train")
    assert answer["environment"]["prefix"] == str(home / "miniconda3" / "envs" / "train")
    torch = [p for p in answer["packages"] if p["name"] == "torch"]
    assert torch == [
        {
            "name": "torch",
            "version": "2.6.0",
            "build": "",
            "channel": "pypi",
            "installer": "pip",
            "conda_name": "pytorch",
        }
    ]
    ((pair),) = answer["conda_and_pip"]
    assert (pair["conda"]["name"], pair["conda"]["channel"], pair["pip"]["version"]) == (
        "pytorch",
        "pytorch",
        "2.6.0",
    )


async def test_a_corrupt_record_costs_its_package_not_the_answer(home, jp_fetch):
    record = home / "miniconda3/envs/devops/conda-meta/pip-25.0.1-pyh145f28c_0.json"
    record.write_text("{")
    answer = await get_json(jp_fetch, "envs", "devops")
    assert "pip" not in {p["name"] for p in answer["packages"]}
    assert len(answer["packages"]) == 15


async def test_export_in_each_style(home, jp_fetch):
    response = await jp_fetch(
        "gpu-monitor", "api", "envs", "devops", "export", params={"style": "from-history"}
    )
    assert response.headers["Content-Type"].startswith("application/yaml")
    assert yaml.safe_load(response.body)["dependencies"] == [
        "python_abi[build=*_cp313t]",
        "python=3.13",
        "pip",
    ]
    default = await jp_fetch("gpu-monitor", "api", "envs", "devops", "export")
    assert b"  - python=3.13.2\n" in default.body
    builds = await jp_fetch(
        "gpu-monitor", "api", "envs", "devops", "export", params={"style": "with-builds"}
    )
    assert b"  - python=3.13.2=hfd29fff_1_cp313t\n" in builds.body


async def test_export_requirements_and_pylock_of_the_pip_part(home, jp_fetch):
    site = home / "miniconda3/envs/devops/lib/python3.13t/site-packages"
    add_dist_info(site, "torch", "2.13.0+cpu", "pip")
    requirements = await jp_fetch(
        "gpu-monitor", "api", "envs", "devops", "export", params={"style": "requirements"}
    )
    assert requirements.headers["Content-Type"].startswith("text/plain")
    assert 'filename="requirements.txt"' in requirements.headers["Content-Disposition"]
    assert requirements.body.decode().splitlines()[1:] == [
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch==2.13.0+cpu",
    ]
    pylock = await jp_fetch(
        "gpu-monitor", "api", "envs", "devops", "export", params={"style": "pylock"}
    )
    assert pylock.headers["Content-Type"].startswith("application/toml")
    assert 'filename="pylock.toml"' in pylock.headers["Content-Disposition"]
    assert b'index = "https://download.pytorch.org/whl/cpu"\n' in pylock.body
    # conda env export writes no such file.
    code, error = await fetch_error(
        jp_fetch, "envs", "devops", "export", style="pylock", use_conda="1"
    )
    assert code == 400 and "environment.yml only" in error["message"]


async def test_a_folder_whose_name_is_not_utf8_is_listed_unreadable_not_a_500(home, jp_fetch):
    # A Latin-1 name (b"caf\xe9") in an envs folder: Python names it with a surrogate, which no
    # JSON answer can carry.
    envs = os.fsencode(home / "miniconda3" / "envs")
    latin1 = os.path.join(envs, b"caf\xe9")
    os.makedirs(os.path.join(latin1, b"conda-meta"))
    listing = await get_json(jp_fetch, "envs")
    assert "devops" in {environment["name"] for environment in listing["environments"]}
    (unreadable,) = listing["unreadable"]
    assert unreadable["prefix"].endswith("/envs/caf\ufffd")
    assert "not UTF-8" in unreadable["message"]
    # The other routes, which read the same listing, answer too.
    assert (await get_json(jp_fetch, "envs", "devops"))["environment"]["name"] == "devops"


async def test_unknown_environment_is_404(home, jp_fetch):
    code, error = await fetch_error(jp_fetch, "envs", "nope")
    assert code == 404 and "no environment is named 'nope'" in error["message"]
    code, _ = await fetch_error(jp_fetch, "envs", "nope", "export")
    assert code == 404


@pytest.mark.parametrize(
    "path",
    ["..%2F..", "%2Fetc", "..%2F..%2F..%2Fetc%2Fpasswd", "devops%2F..%2F..", "%2E%2E", "..%5C.."],
)
async def test_a_path_in_the_url_is_never_looked_up(
    home, jp_fetch, http_server_client, jp_base_url, jp_auth_header, path
):
    # Sent as written: jp_fetch would escape the "%" of these paths.
    base = f"{jp_base_url}gpu-monitor/api/envs/{path}"
    for url in (base, f"{base}/export"):
        response = await http_server_client.fetch(url, headers=jp_auth_header, raise_error=False)
        assert response.code == 404
        assert "is a path" in json.loads(response.body)["message"]


async def test_a_name_several_environments_share_asks_for_an_id(home, jp_fetch):
    code, error = await fetch_error(jp_fetch, "envs", "base")
    assert code == 409
    assert len(error["ids"]) == 2 and all(i.startswith("base-") for i in error["ids"])
    answer = await get_json(jp_fetch, "envs", error["ids"][0])
    assert answer["environment"]["name"] == "base"


@pytest.mark.parametrize(
    ("params", "word"), [({"style": "explicit"}, "style"), ({"use_conda": "maybe"}, "use_conda")]
)
async def test_bad_query_arguments_are_400(home, jp_fetch, params, word):
    code, error = await fetch_error(jp_fetch, "envs", "devops", "export", **params)
    assert code == 400 and word in error["message"]


async def test_export_through_conda_replays_conda_itself(home, fake_conda, jp_fetch):
    response = await jp_fetch(
        "gpu-monitor", "api", "envs", "devops", "export", params={"use_conda": "1"}
    )
    assert response.body.decode() == conda_capture(
        "conda-env-export-base-win64-conda-forge-2021.yml"
    )
    prefix = str(home / "miniconda3" / "envs" / "devops")
    # The name is looked up among conda's own environments too, as the listing shows them.
    assert fake_conda.calls() == [
        ["info", "--json"],
        ["env", "export", "--prefix", prefix, "--no-builds"],
    ]


async def test_conda_that_hangs_is_a_504_and_conda_missing_a_503(home, fake_conda, jp_fetch):
    fake_conda.hang()
    code, error = await fetch_error(jp_fetch, "envs", "devops", "export", use_conda="1")
    assert code == 504 and error["error"]["kind"] == "timeout"
    assert "conda_timeout" in error["error"]["hint"]
    os.environ["PATH"] = str(home / "no-bin")  # restored by the fake_conda fixture
    code, error = await fetch_error(jp_fetch, "envs", use_conda="1")
    assert code == 503 and error["error"]["kind"] == "not_installed"


async def test_listing_through_conda_adds_the_environments_conda_knows(home, fake_conda, jp_fetch):
    # The real `conda info --json` of a 2015 Mac, its anaconda moved into our home: a root
    # that is in no usual install place, two of its eight environments still there.
    anaconda = home / "anaconda"
    dists = installed_by_history(HISTORY_2025, "conda-forge", "osx-arm64")
    make_conda_env(anaconda, [], root=True)
    for name in ("py27", "py3"):
        make_conda_env(anaconda / "envs" / name, dists, history=HISTORY_2025)
    fake_conda.replay(paths={"/Users/calebhattingh/anaconda": str(anaconda)})

    def under_anaconda(listing) -> set[str]:
        return {
            e["prefix"]
            for e in listing["environments"]
            if os.path.commonpath([e["prefix"], anaconda]) == str(anaconda)
        }

    assert under_anaconda(await get_json(jp_fetch, "envs")) == set()
    found = under_anaconda(await get_json(jp_fetch, "envs", use_conda="1"))
    assert found == {str(anaconda), str(anaconda / "envs/py27"), str(anaconda / "envs/py3")}
    assert fake_conda.calls() == [["info", "--json"]]
    # What the listing showed through conda can be opened and exported through conda by name.
    opened = await get_json(jp_fetch, "envs", "py27", use_conda="1")
    assert opened["environment"]["prefix"] == str(anaconda / "envs/py27")
    code, _ = await fetch_error(jp_fetch, "envs", "py27")
    assert code == 404  # not on disk where the server looks without conda
    exported = await jp_fetch(
        "gpu-monitor", "api", "envs", "py27", "export", params={"use_conda": "1"}
    )
    assert exported.code == 200
    assert fake_conda.calls()[-1] == [
        "env",
        "export",
        "--prefix",
        str(anaconda / "envs/py27"),
        "--no-builds",
    ]


@pytest.mark.parametrize("path", [("envs",), ("envs", "devops"), ("envs", "devops", "export")])
async def test_anonymous_request_gets_no_environment(home, jp_fetch, path):
    with pytest.raises(tornado.httpclient.HTTPClientError) as raised:
        await jp_fetch("gpu-monitor", "api", *path, headers={"Authorization": ""})
    assert raised.value.code == 403
    assert b"devops" not in raised.value.response.body
