"""The notebooks' GPU ledger (kernel/ledger.py): GPU-seconds busy and idle-held, energy and peak
memory per notebook and GPU, over reads of a real capture (the two RTX A5000 of a workstation,
idle, GPU 0 holding 22437 MiB and GPU 1 17253 MiB) with the readings a test sets."""

from __future__ import annotations

import copy
import re

import pytest
from jupyterlab_gpu_monitor.contract import constant
from jupyterlab_gpu_monitor.gpu.model import Snapshot
from jupyterlab_gpu_monitor.gpu.smi_xml import parse_xml
from jupyterlab_gpu_monitor.kernel.join import KernelGpuUsage
from jupyterlab_gpu_monitor.kernel.ledger import (
    MAX_ENTRIES,
    MAX_GAP_SECONDS,
    NotebookLedger,
    notebook_label,
)

from .replay import SMI_FIXTURES

A5000 = SMI_FIXTURES / "xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml"
CAPTURE = parse_xml(A5000.read_bytes(), 0.0)
HELD = constant("HeldMemoryMib")
LOW = constant("LowUtilizationPercent")


def read_at(timestamp: float, **gpu0) -> Snapshot:
    """The capture read at ``timestamp``, GPU 0's readings changed as given."""
    snapshot = copy.deepcopy(CAPTURE)
    snapshot.timestamp = timestamp
    for field, value in gpu0.items():
        setattr(snapshot.gpus[0], field, value)
    return snapshot


def holding(path: str | None, mib: float, kernel_id: str = "k-1", gpu: int = 0) -> KernelGpuUsage:
    """A kernel of ``path``'s notebook holding ``mib`` on a GPU of the capture."""
    return KernelGpuUsage(
        kernel_id=kernel_id,
        path=path,
        gpu_index=gpu,
        gpu_uuid=CAPTURE.gpus[gpu].uuid,
        gpu_name=CAPTURE.gpus[gpu].name,
        memory_used_mib=mib,
        utilization_gpu=CAPTURE.gpus[gpu].utilization_gpu,
    )


def run(ledger: NotebookLedger, seconds: int, usage: list[KernelGpuUsage], start=0.0, **gpu0):
    """Reads one second apart for ``seconds`` seconds, the same state at each."""
    for second in range(seconds + 1):
        ledger.record(read_at(start + second, **gpu0), usage)


def account(ledger: NotebookLedger, path: str, gpu: int = 0):
    (found,) = [
        entry
        for entry in ledger.accounts()
        if entry.notebook == notebook_label(path, ledger.label_mode) and entry.gpu_index == gpu
    ]
    return found


def test_a_notebook_idle_holding_a_gpu_for_ten_minutes_has_ten_minutes_idle_held():
    ledger = NotebookLedger()
    # The capture's GPU 0, idle, all its memory held by the notebook.
    run(ledger, 600, [holding("train.ipynb", 22437)])
    train = account(ledger, "train.ipynb")
    assert (train.idle_held_seconds, train.busy_seconds) == (600, 0)
    assert train.peak_memory_mib == 22437
    # Busy for the next five minutes: busy seconds, the idle-held ones stay.
    run(ledger, 300, [holding("train.ipynb", 22437)], start=601, utilization_gpu=97)
    assert (train.idle_held_seconds, train.busy_seconds) == (601, 300)


def test_the_rules_figures_decide_idle_held_busy_and_neither():
    ledger = NotebookLedger()
    # At the low-utilisation threshold the GPU is busy; held exactly the rule's MiB counts.
    run(ledger, 10, [holding("at.ipynb", HELD)], utilization_gpu=LOW, memory_used_mib=HELD)
    assert account(ledger, "at.ipynb").busy_seconds == 10
    # Under the held memory (a bare CUDA context) it is neither, though its peak is kept.
    run(ledger, 10, [holding("context.ipynb", HELD - 1)], start=20, memory_used_mib=HELD - 1)
    context = account(ledger, "context.ipynb")
    assert (context.busy_seconds, context.idle_held_seconds, context.peak_memory_mib) == (
        0,
        0,
        HELD - 1,
    )


def test_a_gpu_shared_by_two_notebooks_is_split_by_their_memory():
    ledger = NotebookLedger()
    run(
        ledger,
        100,
        [holding("a.ipynb", 6000, "k-a"), holding("b.ipynb", 18000, "k-b")],
        memory_used_mib=24000,
    )
    assert account(ledger, "a.ipynb").idle_held_seconds == pytest.approx(25)
    assert account(ledger, "b.ipynb").idle_held_seconds == pytest.approx(75)


def test_memory_of_processes_outside_the_server_takes_its_share_of_the_gpu():
    # Another user's 11 GiB on the GPU: the notebook holds half of what is in use.
    ledger = NotebookLedger()
    run(ledger, 100, [holding("mine.ipynb", 11000)], memory_used_mib=22000)
    assert account(ledger, "mine.ipynb").idle_held_seconds == pytest.approx(50)


def test_an_interval_longer_than_the_gap_counts_for_nothing():
    ledger = NotebookLedger()
    usage = [holding("train.ipynb", 22437)]
    ledger.record(read_at(0), usage)
    ledger.record(read_at(60), usage)  # a scrape a minute, waking the Sampler each time
    ledger.record(read_at(60 + MAX_GAP_SECONDS + 1), usage)  # the server slept
    assert account(ledger, "train.ipynb").idle_held_seconds == 60


def test_a_failed_read_changes_nothing_and_the_next_good_one_closes_the_interval():
    ledger = NotebookLedger()
    usage = [holding("train.ipynb", 22437)]
    ledger.record(read_at(0), usage)
    failed = read_at(5)
    failed.error = object()  # any error: the read has no numbers
    ledger.record(failed, [])
    ledger.record(read_at(10), usage)
    assert account(ledger, "train.ipynb").idle_held_seconds == 10


def test_energy_is_the_gpus_counter_shared_by_memory_or_power_times_time_estimated():
    ledger = NotebookLedger()
    usage = [holding("a.ipynb", 6000, "k-a"), holding("b.ipynb", 18000, "k-b")]
    ledger.record(read_at(0, memory_used_mib=24000, energy_consumed_j=1_000_000.0), usage)
    ledger.record(read_at(10, memory_used_mib=24000, energy_consumed_j=1_002_000.0), usage)
    a, b = account(ledger, "a.ipynb"), account(ledger, "b.ipynb")
    assert (a.energy_joules, b.energy_joules) == (500, 1500)
    assert not a.energy_estimated
    # A GPU without an energy counter (nvidia-smi has none): its power, 61.2 W, over 10 s.
    other = NotebookLedger()
    run(other, 10, [holding("c.ipynb", 22437)], power_draw_w=61.2)
    c = account(other, "c.ipynb")
    assert c.energy_joules == pytest.approx(612) and c.energy_estimated


def test_a_notebooks_restarted_kernels_count_on_in_one_account():
    ledger = NotebookLedger()
    for restart in range(5):
        run(ledger, 10, [holding("train.ipynb", 22437, f"k-{restart}")], start=restart * 11)
    assert len(ledger.accounts()) == 1
    assert account(ledger, "train.ipynb").idle_held_seconds == 5 * 10 + 4  # and the 1 s gaps


def test_a_thousand_notebooks_keep_the_accounts_bounded_and_the_active_ones():
    ledger = NotebookLedger()
    forever = holding("long-run.ipynb", 8000, "k-long", gpu=1)
    for number in range(1000):
        notebook = holding(f"scratch/{number}.ipynb", 2000, f"k-{number}")
        ledger.record(read_at(number * 2), [notebook, forever])
        ledger.record(read_at(number * 2 + 1), [notebook, forever])
    assert len(ledger.accounts()) == MAX_ENTRIES
    # The notebook holding a GPU all along stays, with all its time.
    assert account(ledger, "long-run.ipynb", gpu=1).idle_held_seconds == pytest.approx(
        1999 * 8000 / 17253
    )
    # Those that went longest ago went first.
    assert all(
        entry.notebook != notebook_label("scratch/0.ipynb", "hash") for entry in ledger.accounts()
    )
    assert account(ledger, "scratch/999.ipynb").idle_held_seconds > 0


def test_the_server_knows_what_its_latest_notebooks_hashes_stand_for_and_no_more():
    ledger = NotebookLedger()
    forever = holding("long-run.ipynb", 8000, "k-long", gpu=1)
    for number in range(1000):
        ledger.record(read_at(number), [holding(f"scratch/{number}.ipynb", 2000), forever])
    names = ledger.own_names()
    # For the lab to name them (its series hold the hashes): the latest, a bounded number.
    assert len(names) == MAX_ENTRIES
    for path in ("long-run.ipynb", "scratch/999.ipynb"):
        assert names[notebook_label(path, "hash")] == path
    assert notebook_label("scratch/0.ipynb", "hash") not in names
    # Where the labels are paths, or nothing, no hash stands for anything.
    for mode in ("path", "none"):
        ledger = NotebookLedger(mode)
        run(ledger, 2, [holding("a.ipynb", 6000)])
        assert ledger.own_names() == {}


def test_a_notebook_is_named_by_a_hash_of_its_path_unless_the_admin_says_otherwise():
    hashed = notebook_label("thesis/chapter-3.ipynb", "hash")
    assert re.fullmatch(r"[0-9a-f]{12}", hashed)
    assert hashed == notebook_label("thesis/chapter-3.ipynb", "hash")
    assert hashed != notebook_label("thesis/chapter-4.ipynb", "hash")
    assert notebook_label("thesis/chapter-3.ipynb", "path") == "thesis/chapter-3.ipynb"
    assert notebook_label("thesis/chapter-3.ipynb", "none") == ""
    assert notebook_label(None, "hash") == ""  # a console, or a kernel of the API
    ledger = NotebookLedger("none")
    run(ledger, 10, [holding("a.ipynb", 6000, "k-a"), holding("b.ipynb", 16437, "k-b")])
    (everything,) = ledger.accounts()
    assert everything.notebook == "" and everything.idle_held_seconds == pytest.approx(10)
    with pytest.raises(ValueError, match="one of"):
        NotebookLedger("name")
