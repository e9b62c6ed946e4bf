"""GPUs an exporter stopped reporting: lost, as NVML and nvidia-smi call a GPU off the bus.

When a GPU falls off the bus, its exporter (dcgm-exporter, nvidia_gpu_exporter) stops
exporting its series, or stops updating them, while the node's other GPUs go on. Prometheus
then drops the series from an instant query's answer (the scrape no longer has them), or keeps
answering with their last sample, which grows old (a federated Prometheus, samples with the
exporter's own timestamps). ``SeenGpus`` remembers the GPUs a source has seen and shows either
kind of silence as a lost GPU, as long as another GPU of the same source is still fresh: when
every GPU is silent, the exporter or Prometheus is what stopped, not a GPU.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..translation import gettext
from .errors import gpu_lost
from .model import Gpu, Snapshot

# A GPU is stale once its newest sample is this many sample gaps older than the answer: one
# missed scrape is jitter (a slow scrape, a read that fell just before the next sample), two
# are a hiccup, three in a row are a GPU the exporter no longer reports.
STALE_AFTER_GAPS = 3
# ...and never sooner than this: with scrapes a second or a few apart, a slow scrape
# (dcgm-exporter's take seconds on a busy node) or a busy Prometheus would make a GPU lost for
# a moment.
MIN_STALE_SECONDS = 30.0
# A GPU absent this long is forgotten (no longer shown as lost), and at most this many GPUs are
# remembered (those seen longest ago are forgotten first), so that the memory of a source over
# a whole cluster does not grow with time.
FORGET_AFTER_SECONDS = 3600.0
MAX_REMEMBERED_GPUS = 1024


def gpu_key(uuid: str | None, index: int) -> str:
    """The key a GPU is remembered by: its uuid, else its index (as the snapshot keys it)."""
    return uuid or f"index {index}"


def stale_after_seconds(sample_gaps: Iterable[float]) -> float | None:
    """How old a GPU's newest sample may be before it counts as stale, from the gaps seen
    between the GPUs' successive samples (their scrape interval); None while no gap is known,
    as then a slow scrape interval cannot be told from a silent GPU."""
    gaps = [gap for gap in sample_gaps if gap > 0]
    if not gaps:
        return None
    # The median: one GPU whose samples stopped and came back has a long gap, not the others.
    return max(MIN_STALE_SECONDS, STALE_AFTER_GAPS * statistics.median(gaps))


def lost_keys(
    present: Iterable[str],
    absent: Iterable[str],
    newest_sample: Mapping[str, float],
    now: float,
    stale_after: float | None,
) -> set[str]:
    """The GPUs to show as lost: those ``absent`` from the answer, and those ``present`` whose
    newest sample is more than ``stale_after`` seconds older than ``now``; none at all when no
    present GPU is fresh. A GPU whose sample time is unknown, or any GPU while ``stale_after``
    is unknown, counts as fresh."""
    present = set(present)
    stale = (
        {key for key in present if key in newest_sample and now - newest_sample[key] > stale_after}
        if stale_after is not None
        else set()
    )
    if not present - stale:
        return set()
    return stale | (set(absent) - present)


def age_text(seconds: float) -> str:
    """A silence's length, to the second under two minutes, else to the minute."""
    seconds = max(0, int(seconds))
    if seconds < 120:
        return gettext("{seconds} s").format(seconds=seconds)
    return gettext("{minutes} min").format(minutes=seconds // 60)


@dataclass
class _Seen:
    """A GPU as a source last saw it fresh, and when."""

    gpu: Gpu  # index, uuid, name and bus id only
    fresh_at: float  # its newest sample when it was last fresh (Prometheus' clock)
    seen_at: float  # the last answer it was in
    newest_sample: float | None = None
    sample_gap: float | None = None


class SeenGpus:
    """The GPUs one source has seen, for telling a GPU that went silent from one never there."""

    def __init__(self) -> None:
        self._seen: dict[str, _Seen] = {}

    def __len__(self) -> int:
        return len(self._seen)

    def mark_lost(
        self,
        snapshot: Snapshot,
        newest_sample: Mapping[str, float],
        now: float,
        exporter: str,
    ) -> None:
        """Replace the GPUs of ``snapshot`` that went stale by a lost GPU, and add the GPUs seen
        before that the answer no longer has; then remember this answer's GPUs.

        ``newest_sample`` holds the time of each GPU's newest sample by ``gpu_key``, ``now`` the
        moment of the answer, both on Prometheus' clock; ``exporter`` is named in the message
        ("DCGM has not reported it for 3 min").
        """
        self._forget(now)
        present = {gpu_key(gpu.uuid, gpu.index): gpu for gpu in snapshot.gpus}
        # The gap between a GPU's last two samples, as far as reads saw it: its scrape interval
        # when reads come faster than scrapes, else longer (reads that paused), never shorter.
        for key, sample_time in newest_sample.items():
            seen = self._seen.get(key)
            if seen is not None and seen.newest_sample is not None and key in present:
                if sample_time > seen.newest_sample:
                    seen.sample_gap = sample_time - seen.newest_sample
        stale_after = stale_after_seconds(
            self._seen[key].sample_gap or 0 for key in present if key in self._seen
        )
        lost = lost_keys(present, self._seen, newest_sample, now, stale_after)
        gpus = [gpu for key, gpu in present.items() if key not in lost]
        for key in lost:
            seen = self._seen.get(key)
            if key in present:
                identity, silent_since = present[key], newest_sample[key]
            elif seen is not None:
                identity, silent_since = seen.gpu, seen.fresh_at
            else:
                continue
            gpus.append(_lost(identity, exporter, now - silent_since))
        snapshot.gpus = sorted(gpus, key=lambda gpu: gpu.index)
        self._remember(present, lost, newest_sample, now)

    def _forget(self, now: float) -> None:
        for key in [
            key for key, seen in self._seen.items() if now - seen.seen_at > FORGET_AFTER_SECONDS
        ]:
            del self._seen[key]

    def _remember(
        self,
        present: Mapping[str, Gpu],
        lost: set[str],
        newest_sample: Mapping[str, float],
        now: float,
    ) -> None:
        for key, gpu in present.items():
            seen = self._seen.get(key)
            identity = Gpu(index=gpu.index, uuid=gpu.uuid, name=gpu.name, pci_bus_id=gpu.pci_bus_id)
            if seen is None:
                # Stale from the first answer on, it was last fresh at its newest sample too.
                fresh_at = newest_sample.get(key, now)
                seen = self._seen[key] = _Seen(identity, fresh_at=fresh_at, seen_at=now)
            seen.seen_at = now
            seen.newest_sample = newest_sample.get(key, seen.newest_sample)
            if key not in lost:
                seen.gpu = identity
                seen.fresh_at = newest_sample.get(key, now)
        if len(self._seen) > MAX_REMEMBERED_GPUS:
            by_age = sorted(self._seen, key=lambda key: self._seen[key].seen_at)
            for key in by_age[: len(self._seen) - MAX_REMEMBERED_GPUS]:
                del self._seen[key]


def _lost(identity: Gpu, exporter: str, silent_seconds: float) -> Gpu:
    reason = gettext("{exporter} has not reported it for {age}").format(
        exporter=exporter, age=age_text(silent_seconds)
    )
    return Gpu(
        index=identity.index,
        uuid=identity.uuid,
        name=identity.name,
        pci_bus_id=identity.pci_bus_id,
        error=gpu_lost(identity.index, reason),
    )
