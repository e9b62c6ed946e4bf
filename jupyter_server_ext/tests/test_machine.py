"""The machine beside the GPUs: the container's limits from cgroup trees of real layouts, this
machine's own readings through psutil, and each kernel's CPU and memory from real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from jupyterlab_gpu_monitor.kernel import usage as kernel_usage
from jupyterlab_gpu_monitor.kernel.usage import KernelUsageReader
from jupyterlab_gpu_monitor.machine import process_reads
from jupyterlab_gpu_monitor.machine.cgroup import LIMITS_SECONDS, Cgroup
from jupyterlab_gpu_monitor.machine.host import MachineReader
from jupyterlab_gpu_monitor.machine.model import MIB, rate_seconds, rate_window
from jupyterlab_gpu_monitor.machine.proc_files import DISKS_SECONDS, DiskCounters, read_meminfo

from . import cgroup_layouts as layouts

GIB = layouts.GIB


def test_v1_hybrid_layout_of_these_machines_reads_no_limit_and_the_usage_less_its_cache(tmp_path):
    cgroup = Cgroup.locate(layouts.v1_hybrid(tmp_path, memory_limit=None))
    assert cgroup is not None and cgroup.version == 1
    reading = cgroup.read()
    assert reading.memory_limit_bytes is None  # 9223372036854771712: the kernel's "none"
    assert reading.memory_used_bytes == 2 * GIB  # 3 GiB less 1 GiB of inactive file cache
    assert reading.cpu_quota_cores is None  # cfs_quota_us -1
    assert reading.cpu_usage_seconds == pytest.approx(2452.5)


def test_v1_container_limits_are_read_where_its_mount_shows_its_own_cgroup(tmp_path):
    # /proc/self/cgroup names /docker/<id>; the mount's root is that cgroup.
    root = layouts.v1_docker(tmp_path, memory_limit=4 * GIB, cpu_quota_us=150000)
    reading = Cgroup.locate(root).read()
    assert reading.memory_limit_bytes == 4 * GIB
    assert reading.memory_used_bytes == 2 * GIB
    assert reading.cpu_quota_cores == 1.5
    assert reading.swap_limit_bytes is None  # no swap accounting
    assert reading.cpu_usage_seconds == pytest.approx(0.9)


@pytest.mark.parametrize("layout", [layouts.v2_docker, layouts.v2_pod], ids=["docker", "pod"])
def test_v2_limits_are_read_in_a_private_namespace_and_by_the_whole_path(tmp_path, layout):
    reading = Cgroup.locate(layout(tmp_path, str(8 * GIB), "200000 100000")).read()
    assert reading.memory_limit_bytes == 8 * GIB
    assert reading.memory_used_bytes == GIB  # 1.5 GiB less 0.5 GiB of inactive file cache
    assert reading.cpu_quota_cores == 2.0
    assert (reading.swap_limit_bytes, reading.swap_used_bytes) == (0, 0)
    assert reading.cpu_usage_seconds == pytest.approx(7.25)


def test_v2_without_limits_says_none(tmp_path):
    reading = Cgroup.locate(layouts.v2_docker(tmp_path, "max", "max 100000")).read()
    assert reading.memory_limit_bytes is None and reading.cpu_quota_cores is None


def test_a_resized_container_shows_its_new_limit_within_the_limits_time(tmp_path):
    # `docker update --memory=4g --cpus=1` on a running container: the usage is read at every
    # read, the limits within LIMITS_SECONDS (a limit rarely changes; its files cost each read).
    system = layouts.v2_docker(tmp_path, str(8 * GIB), "200000 100000")
    cgroup = Cgroup.locate(system)
    assert cgroup.read(now=100.0).memory_limit_bytes == 8 * GIB
    (system / "sys/fs/cgroup/memory.max").write_text(f"{4 * GIB}\n")
    (system / "sys/fs/cgroup/cpu.max").write_text("100000 100000\n")
    (system / "sys/fs/cgroup/memory.current").write_text(f"{2 * GIB}\n")
    soon = cgroup.read(now=100.0 + LIMITS_SECONDS / 2)
    assert soon.memory_used_bytes == 3 * GIB // 2  # 2 GiB less the inactive cache
    later = cgroup.read(now=100.0 + LIMITS_SECONDS)
    assert (later.memory_limit_bytes, later.cpu_quota_cores) == (4 * GIB, 1.0)


def test_no_cgroup_to_read_is_none(tmp_path):
    assert Cgroup.locate(tmp_path) is None


def test_this_machines_own_cgroup_is_found_and_read():
    cgroup = Cgroup.locate()
    if cgroup is None:
        pytest.skip("this machine has no cgroup file system")
    reading = cgroup.read()
    assert reading.memory_used_bytes is not None and reading.memory_used_bytes > 0
    assert reading.cpu_usage_seconds is not None and reading.cpu_usage_seconds > 0


def test_the_host_reading_is_psutils_for_this_machine(tmp_path):
    reader = MachineReader(str(tmp_path))
    first = reader.read()
    # No span yet to measure CPU use or throughput over.
    assert first.cpu_percent is None and first.disk_read_bytes_per_second is None
    time.sleep(0.3)
    reading = reader.read()
    memory = psutil.virtual_memory()
    if reading.memory_scope == "host":
        assert reading.memory_total_mib == memory.total / MIB
        assert reading.memory_used_mib == pytest.approx(
            (memory.total - memory.available) / MIB, rel=0.05
        )
    if reading.cpu_scope == "host":
        assert reading.cpu_cores == psutil.cpu_count()
        assert len(reading.cpu_core_percents) == psutil.cpu_count()
    assert 0 <= reading.cpu_percent <= 100
    for rate in (reading.disk_write_bytes_per_second, reading.network_received_bytes_per_second):
        assert rate is None or rate >= 0
    assert reading.root_dir == str(tmp_path)
    assert 0 < reading.root_dir_free_mib <= reading.root_dir_total_mib


def test_a_container_limited_below_the_node_shows_its_own_memory_and_cores(tmp_path):
    # 4 GiB and 1.5 cores: what `docker run --memory=4g --cpus=1.5` gives on cgroup v1.
    system = layouts.v1_docker(tmp_path / "system", memory_limit=4 * GIB, cpu_quota_us=150000)
    reader = MachineReader(str(tmp_path), system_root=system)
    reading = reader.read()
    assert (reading.memory_scope, reading.memory_used_mib, reading.memory_total_mib) == (
        "container",
        2048,
        4096,
    )
    assert (reading.cpu_scope, reading.cpu_cores) == ("container", 1.5)
    # The container's CPU use from its cgroup's counter: 0.3 s of CPU in 0.2 s on 1.5 cores.
    usage = system / "sys/fs/cgroup/cpu,cpuacct/cpuacct.usage"
    usage.write_text("1200000000\n")
    time.sleep(0.2)
    later = reader.read()
    assert 0 < later.cpu_percent <= 100 * 0.3 / 0.2 / 1.5
    assert later.cpu_core_percents  # each core of the node, on hover


def test_a_limit_above_the_node_is_no_limit(tmp_path):
    system = layouts.v1_docker(tmp_path / "system", memory_limit=2**50, cpu_quota_us=-1)
    reading = MachineReader(str(tmp_path), system_root=system).read()
    assert (reading.memory_scope, reading.cpu_scope) == ("host", "host")


def test_a_missing_root_dir_says_why_its_room_is_unknown(tmp_path):
    reading = MachineReader(str(tmp_path / "gone")).read()
    assert reading.root_dir_free_mib is None
    assert "root_dir_free_mib" in reading.unavailable


# --- each kernel's tree -------------------------------------------------------------------

# The CPU time the busy child spends when told to (``burn``): a fixed amount, whatever else the
# machine runs, so that what a read measures does not depend on how loaded the machine is.
BURN_SECONDS = 0.5
BURN = f"""
import os, sys, time
folder = sys.argv[1]
while not os.path.exists(os.path.join(folder, "burn")):
    time.sleep(0.05)
start = time.process_time()
while time.process_time() - start < {BURN_SECONDS}:
    pass
open(os.path.join(folder, "burnt"), "w").close()
time.sleep(60)
"""
# A stand-in kernel: a child that burns the CPU when told to, one that sleeps, and 200 MiB of
# its own.
TREE = f"""
import subprocess, sys, time
busy = subprocess.Popen([sys.executable, "-c", {BURN!r}, sys.argv[1]])
idle = subprocess.Popen(["sleep", "60"])
held = bytearray(200 * 1024 * 1024)
print(busy.pid, idle.pid, flush=True)
time.sleep(60)
"""


@pytest.fixture
def burn(tmp_path):
    """Have the tree's busy child spend ``BURN_SECONDS`` of CPU; returns once it has."""

    def burn_now() -> None:
        (tmp_path / "burn").touch()
        for _ in range(1200):
            if (tmp_path / "burnt").exists():
                return
            time.sleep(0.05)
        raise AssertionError("the busy child did not spend its CPU")

    return burn_now


def spent_at_least(cpu_percent: float, seconds: float) -> bool:
    """Whether a CPU reading over at most ``seconds`` counts the burn (a tick short at most),
    and no more than the one core the burner had."""
    return 100 * (BURN_SECONDS - 0.02) / seconds <= cpu_percent <= 110


@pytest.fixture
def kernel_tree(tmp_path):
    parent = subprocess.Popen(
        [sys.executable, "-c", TREE, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    children = [int(pid) for pid in parent.stdout.readline().split()]
    yield parent.pid, children
    for pid in [*children, parent.pid]:
        try:
            psutil.Process(pid).kill()
        except psutil.NoSuchProcess:
            pass
    parent.wait()


def killed(pid: int) -> None:
    """Kill a child of the tree; it is a zombie (counted for nothing) until its parent reaps
    it, which this one never does."""
    process = psutil.Process(pid)
    process.kill()
    for _ in range(100):
        if process.status() == psutil.STATUS_ZOMBIE:
            return
        time.sleep(0.05)
    raise AssertionError(f"{pid} still runs")


@pytest.mark.parametrize("proc", [Path("/proc"), Path("/nonexistent")], ids=["proc", "psutil"])
def test_a_kernels_cpu_and_memory_count_the_processes_it_started(kernel_tree, burn, proc):
    pid, children = kernel_tree
    reader = KernelUsageReader(proc=proc)
    started = time.monotonic()
    first = reader.read({"train": pid})["train"]
    assert first.cpu_percent is None and first.processes == 3
    burn()
    use = reader.read({"train": pid})["train"]
    # The CPU its child spent between the two reads; the 200 MiB are the kernel's own.
    assert spent_at_least(use.cpu_percent, time.monotonic() - started)
    assert use.memory_rss_mib > 200
    # Without that child (killed, a zombie until the kernel reaps it): the kernel is idle.
    killed(children[0])
    time.sleep(0.5)
    calm = reader.read({"train": pid})["train"]
    assert calm.processes == 2 and calm.cpu_percent < 5


@pytest.mark.parametrize("proc", [Path("/proc"), Path("/nonexistent")], ids=["proc", "psutil"])
def test_a_gpu_process_of_ours_gets_its_own_cpu_memory_and_command(
    kernel_tree, burn, proc, tmp_path
):
    pid, (busy, idle) = kernel_tree
    reader = KernelUsageReader(proc=proc)
    started = time.monotonic()
    first = reader.read_processes({pid, busy, idle})
    assert first[busy].cpu_percent is None  # nothing to compare with yet
    burn()
    uses = reader.read_processes({pid, busy, idle, 999_999_999})
    assert 999_999_999 not in uses  # no such process
    # What the busy one spent between the reads, and a sleeping process at rest.
    assert spent_at_least(uses[busy].cpu_percent, time.monotonic() - started)
    assert uses[idle].cpu_percent < 5
    assert uses[busy].command == f"{sys.executable} -c {BURN} {tmp_path}"
    assert uses[idle].command == "sleep 60"
    assert uses[pid].memory_rss_mib > 200  # its own bytes, not its children's
    assert uses[idle].memory_rss_mib < 20


def test_an_idle_kernels_tree_is_walked_again_after_a_while_a_busy_ones_at_each_read(
    kernel_tree, monkeypatch
):
    pid, (busy, idle) = kernel_tree
    reader = KernelUsageReader()
    first = reader.read({"k": pid}, settled={"k"})["k"]
    assert first.processes == 3 and first.cpu_percent is None
    # Idle from its first read: walked again at the next, for its CPU.
    assert reader.read({"k": pid}, settled={"k"})["k"].cpu_percent is not None
    for child in (busy, idle):
        killed(child)
    # Idle, walked a moment ago: its figures are the walk's.
    kept = reader.read({"k": pid}, settled={"k"})["k"]
    assert kept.processes == 3
    # Busy: walked at each read.
    assert reader.read({"k": pid})["k"].processes == 1
    # Idle again, once its last walk is old enough: walked again, its CPU over the two walks.
    monkeypatch.setattr(kernel_usage, "SETTLED_SECONDS", 0.0)
    walked = reader.read({"k": pid}, settled={"k"})["k"]
    assert walked.processes == 1 and walked.cpu_percent is not None


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_trees_files_stay_open_between_reads_and_close_once_its_processes_end(kernel_tree):
    # A read opens each process's stat and children files once and reads them again at the
    # next reads (the CPU test above reads through them); a server reading hundreds of kernels
    # for weeks must not keep the files of a process that ended, nor more than its share.
    pid, (busy, idle) = kernel_tree
    before = open_files()
    reader = KernelUsageReader()
    for _ in range(3):
        assert reader.read({"train": pid})["train"].processes == 3
    assert open_files() == before + 2 * 3
    for child in (busy, idle):
        killed(child)
    assert reader.read({"train": pid})["train"].processes == 1
    assert open_files() == before + 2

    # One reaped (no zombie left): its kept file answers ESRCH, and is closed.
    kept = process_reads.KeptFiles()
    sleeper = subprocess.Popen(["sleep", "60"])
    assert process_reads.ProcessReads(kept=kept).stat(sleeper.pid) is not None
    assert open_files() == before + 2 + 1
    sleeper.kill()
    sleeper.wait()
    assert process_reads.ProcessReads(kept=kept).stat(sleeper.pid) is None
    assert open_files() == before + 2

    reads = process_reads.ProcessReads(kept=process_reads.KeptFiles(limit=1))
    assert all(reads.stat(member) is not None for member in (pid, os.getpid(), os.getppid()))
    assert open_files() == before + 2 + 1


def test_past_a_reads_budget_trees_and_processes_are_read_in_turns(kernel_tree, monkeypatch):
    # Three kernels busy, the budget of a read spent: one tree a read, the longest unwalked
    # first, the others as last walked (a server with hundreds of kernels and processes).
    pid, (busy, idle) = kernel_tree
    kernels = {"notebook": pid, "worker": busy, "script": idle}
    monkeypatch.setattr(process_reads, "READ_BUDGET", 0)
    reader = KernelUsageReader()
    for _ in range(2):  # new kernels, then their CPU: walked at once, whatever the budget
        reader.read(kernels)
        reader.read_processes({busy, idle})
    killed(idle)
    reads = [reader.read(kernels) for _ in range(3)]
    assert [read["script"].processes for read in reads] == [1, 1, 0]
    assert [read["notebook"].processes for read in reads] == [2, 2, 2]
    # The same for the GPU processes measured one by one: one a read, so the dead one is gone
    # within two.
    assert idle not in [reader.read_processes({busy, idle}) for _ in range(2)][-1]
    # Within the budget (a server of a few kernels) everything is read at every read.
    monkeypatch.setattr(process_reads, "READ_BUDGET", 96)
    killed(busy)
    assert reader.read(kernels)["worker"].processes == 0
    assert busy not in reader.read_processes({busy})


def test_rates_over_a_pause_of_the_sampler_are_none_not_its_average(kernel_tree):
    # Reads 1 s apart where reads come every 0.1 s: the Sampler paused (nobody watched).
    pid, (busy, _) = kernel_tree
    assert rate_window(0.1) == 5.0 and rate_window(4) == 12
    machine = MachineReader("/", max_rate_seconds=0.5)
    kernels = KernelUsageReader(max_rate_seconds=0.5)
    for _ in range(2):
        reading = machine.read()
        use = kernels.read({"train": pid})["train"]
        process = kernels.read_processes({busy})[busy]
        time.sleep(1.0)
    assert reading.cpu_percent is None and reading.network_received_bytes_per_second is None
    assert use.cpu_percent is None and process.cpu_percent is None
    assert use.memory_rss_mib > 200  # what is not a rate is read as ever
    # Within the window, the same readers measure.
    machine.read()
    assert machine.read().cpu_percent is not None


def test_a_rate_is_taken_over_up_to_its_whole_window_and_never_over_no_time():
    # The rule of every rate (machine, kernels, processes, GPU links): a read exactly the
    # window after the last still measures; a second read at the same instant (a clock that
    # did not move) or none before gives no rate rather than a division by zero.
    assert rate_seconds(100.0, 105.0, window=5.0) == 5.0
    assert rate_seconds(100.0, 105.5, window=5.0) is None
    assert rate_seconds(100.0, 100.0, window=5.0) is None
    assert rate_seconds(100.0, 99.0, window=5.0) is None
    assert rate_seconds(None, 100.0, window=5.0) is None


def test_a_kernel_that_is_gone_uses_nothing():
    reader = KernelUsageReader()
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert reader.read({"gone": gone.pid})["gone"].processes == 0


def test_memory_and_swap_from_one_meminfo_read_are_psutils():
    memory = read_meminfo(Path("/"))
    if memory is None:
        pytest.skip("no /proc/meminfo with MemAvailable here")
    host, swap = psutil.virtual_memory(), psutil.swap_memory()
    assert (memory.total, memory.swap_total) == (host.total, swap.total)
    assert memory.used == pytest.approx(host.total - host.available, rel=0.05)
    assert memory.swap_used == pytest.approx(swap.used, abs=64 * MIB)


def test_disk_counters_sum_the_whole_disks_psutil_sums(tmp_path):
    mine = DiskCounters(Path("/")).read()
    theirs = psutil.disk_io_counters()
    if mine is None or theirs is None:
        pytest.skip("no disk counters here")
    # Counters only grow: psutil, asked second, has at least what was read first.
    assert 0 <= mine[0] <= theirs.read_bytes and 0 <= mine[1] <= theirs.write_bytes
    assert theirs.read_bytes - mine[0] < 64 * MIB


def test_a_disk_attached_counts_within_the_disks_time(tmp_path):
    # A partition's sectors are already its disk's; a disk attached shows within DISKS_SECONDS.
    (tmp_path / "sys/block/sda").mkdir(parents=True)
    (tmp_path / "sys/block/cciss!c0d0").mkdir()
    (tmp_path / "proc").mkdir()
    diskstats = tmp_path / "proc/diskstats"
    lines = [
        "   8       0 sda 100 0 2000 0 50 0 1000 0 0 0 0",
        "   8       1 sda1 90 0 1800 0 40 0 800 0 0 0 0",
        " 104       0 cciss/c0d0 10 0 20 0 5 0 10 0 0 0 0",
    ]
    diskstats.write_text("\n".join(lines) + "\n")
    disks = DiskCounters(tmp_path)
    assert disks.read(now=0.0) == (2020 * 512, 1010 * 512)
    (tmp_path / "sys/block/nvme0n1").mkdir()
    lines.append(" 259       0 nvme0n1 1 0 8 0 1 0 8 0 0 0 0")
    diskstats.write_text("\n".join(lines) + "\n")
    assert disks.read(now=DISKS_SECONDS / 2) == (2020 * 512, 1010 * 512)
    assert disks.read(now=DISKS_SECONDS) == (2028 * 512, 1018 * 512)
