"""The rule that tells a GPU its exporter stopped reporting (lost) from an exporter or a
Prometheus that stopped (nothing lost), on the samples of the real exporter scrapes, with the
sample times given: no Prometheus, no clock."""

from __future__ import annotations

from jupyterlab_gpu_monitor.gpu import staleness
from jupyterlab_gpu_monitor.gpu.model import Gpu, Snapshot
from jupyterlab_gpu_monitor.gpu.prometheus import snapshot_from_samples
from jupyterlab_gpu_monitor.gpu.staleness import (
    FORGET_AFTER_SECONDS,
    SeenGpus,
    age_text,
    lost_keys,
    stale_after_seconds,
)
from prometheus_client.parser import text_string_to_metric_families

from .prometheus_lab import PROMETHEUS_FIXTURES, scrape_body

A100 = "GPU-34319582-d595-d1c7-d1d2-179bcfa61660"
README = "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"


def scrape_samples(stem: str) -> list[tuple[dict[str, str], float]]:
    text = scrape_body(PROMETHEUS_FIXTURES / f"{stem}.prom").decode()
    return [
        ({"__name__": sample.name, **sample.labels}, sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    ]


# Two GPUs of one source: the A100 of the MIG scrape and the GPU of dcgm-exporter's README.
SAMPLES = {
    A100: scrape_samples("dcgm-exporter-a100-mig-k8s-2.4.0"),
    README: scrape_samples("dcgm-exporter-readme-excerpt-elided"),
}


def read(seen: SeenGpus, now: float, sampled: dict[str, float]) -> dict[str, Gpu]:
    """One read of the GPUs in ``sampled`` (uuid: time of its newest sample) at ``now``."""
    samples = [sample for uuid in sampled for sample in SAMPLES[uuid]]
    snapshot = snapshot_from_samples(samples, now)
    seen.mark_lost(snapshot, sampled, now, "DCGM")
    return {gpu.uuid: gpu for gpu in snapshot.gpus}


def lost(gpu: Gpu) -> bool:
    return gpu.error is not None and gpu.error.kind == "gpu_lost"


def test_stale_age_is_three_sample_gaps_and_never_under_30_seconds():
    assert stale_after_seconds([]) is None  # no gap known: nothing is judged by age
    assert stale_after_seconds([1.0, 1.0]) == 30
    assert stale_after_seconds([15.0, 15.0, 15.0]) == 45
    # The median: one GPU's samples that paused and came back do not move it.
    assert stale_after_seconds([60.0, 60.0, 3600.0]) == 180


def test_lost_are_the_absent_and_the_stale_while_one_gpu_is_fresh():
    newest = {"a": 100.0, "b": 10.0}
    assert lost_keys({"a", "b"}, {"c"}, newest, 100.0, 30.0) == {"b", "c"}
    # Every present GPU stale: the exporter or Prometheus stopped, not a GPU.
    assert lost_keys({"a", "b"}, {"c"}, newest, 200.0, 30.0) == set()
    # No sample gap known yet: only what vanished is lost.
    assert lost_keys({"a", "b"}, {"c"}, newest, 100.0, None) == {"c"}
    # A GPU without a sample time counts as fresh.
    assert lost_keys({"a", "d"}, set(), {"a": 10.0}, 100.0, 30.0) == {"a"}


def test_age_reads_in_seconds_then_minutes():
    assert (age_text(4.6), age_text(119), age_text(180), age_text(-1)) == (
        "4 s",
        "119 s",
        "3 min",
        "0 s",
    )


def test_gpu_that_vanishes_is_lost_as_last_seen_and_back_when_it_returns():
    seen = SeenGpus()
    read(seen, 100, {A100: 100, README: 100})
    gpus = read(seen, 101, {README: 101})
    assert set(gpus) == {A100, README} and not lost(gpus[README])
    assert gpus[README].sm_clock_mhz == 139
    assert (gpus[A100].index, gpus[A100].memory_used_mib, gpus[A100].mig_devices) == (0, None, [])
    assert gpus[A100].error.message == "GPU 0 is lost: DCGM has not reported it for 1 s"
    gpus = read(seen, 280, {README: 280})
    assert gpus[A100].error.message == "GPU 0 is lost: DCGM has not reported it for 3 min"
    gpus = read(seen, 281, {A100: 281, README: 281})
    assert gpus[A100].error is None and gpus[A100].memory_used_mib == 4845


def test_gpu_whose_samples_stop_is_lost_once_three_gaps_and_30_seconds_old():
    seen = SeenGpus()
    read(seen, 100, {A100: 100, README: 100})
    read(seen, 110, {A100: 110, README: 110})  # scraped every 10 s: stale after 30 s
    read(seen, 120, {A100: 120, README: 110})
    read(seen, 130, {A100: 130, README: 110})
    assert not lost(read(seen, 139, {A100: 130, README: 110})[README])
    gpus = read(seen, 141, {A100: 140, README: 110})
    assert lost(gpus[README]) and gpus[README].sm_clock_mhz is None
    assert gpus[README].error.message == "GPU 0 is lost: DCGM has not reported it for 31 s"
    assert gpus[A100].memory_used_mib == 4845
    assert not lost(read(seen, 150, {A100: 150, README: 150})[README])


def test_no_gpu_is_lost_when_every_gpu_stops():
    seen = SeenGpus()
    read(seen, 100, {A100: 100, README: 100})
    read(seen, 110, {A100: 110, README: 110})
    gpus = read(seen, 250, {A100: 110, README: 110})
    assert not any(lost(gpu) for gpu in gpus.values())
    assert gpus[A100].memory_used_mib == 4845


def test_a_gpu_absent_for_an_hour_is_forgotten():
    seen = SeenGpus()
    read(seen, 0, {A100: 0, README: 0})
    assert lost(read(seen, FORGET_AFTER_SECONDS, {README: FORGET_AFTER_SECONDS})[A100])
    gpus = read(seen, FORGET_AFTER_SECONDS + 1, {README: FORGET_AFTER_SECONDS + 1})
    assert set(gpus) == {README} and len(seen) == 1


def test_memory_of_gpus_seen_is_bounded(monkeypatch):
    # A smaller bound: each read shows every GPU remembered and absent as lost.
    monkeypatch.setattr(staleness, "MAX_REMEMBERED_GPUS", 20)
    seen = SeenGpus()
    for number in range(50):
        snapshot = Snapshot(source="prometheus", timestamp=number, gpus=[Gpu(0, f"GPU-{number}")])
        seen.mark_lost(snapshot, {}, float(number), "DCGM")
        assert len(seen) <= 20
    # Those seen last are kept: a read shows the bound's worth of lost GPUs at most.
    shown = {gpu.uuid: lost(gpu) for gpu in snapshot.gpus}
    assert shown == {"GPU-49": False, **{f"GPU-{number}": True for number in range(29, 49)}}
