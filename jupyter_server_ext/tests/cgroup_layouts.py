"""cgroup trees as a process finds them in ``/proc/self`` and ``/sys/fs/cgroup``, built under a
folder that stands for ``/``.

The layouts are those of real machines: the v1 hybrid one is this project's own build machines'
(their ``/proc/self/cgroup`` and ``mountinfo`` lines, kept as they are), the v2 ones those of
Docker with its private cgroup namespace (the default since Docker 20.10 on cgroup v2) and of a
Kubernetes pod seen without one. The files and their formats are the kernel's
(Documentation/admin-guide/cgroup-v1 and cgroup-v2.rst); the limits are those the containers
were given.
"""

from __future__ import annotations

from pathlib import Path

GIB = 1024**3

# /proc/self/mountinfo of a build machine here (cgroup v1 controllers and the v2 hierarchy).
V1_HYBRID_MOUNTINFO = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
23 27 0:22 / /sys rw,relatime - sysfs sysfs rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
V1_HYBRID_CGROUP = """\
9:name=systemd:/
4:memory:/process_api/9e93a8e0fec9dc9a7860f647cdb8d5f1
3:cpuset:/
2:cpuacct:/
1:cpu:/
0::/
"""

# Docker on cgroup v2 with a private cgroup namespace: the container's cgroup is the root.
V2_DOCKER_MOUNTINFO = """\
620 619 0:58 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
625 619 0:62 / /sys ro,nosuid,nodev,noexec,relatime - sysfs sysfs ro
626 625 0:30 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw,nsdelegate,memory_recursiveprot
"""
V2_DOCKER_CGROUP = "0::/\n"

# A Kubernetes pod's container on cgroup v2 without a cgroup namespace: the whole path.
V2_POD_PATH = (
    "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5c9a.slice/"
    "cri-containerd-3f1e.scope"
)
V2_POD_MOUNTINFO = """\
28 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def v1_hybrid(root: Path, memory_limit: int | None, cpu_quota_us: int = -1) -> Path:
    """The build machines' hybrid layout, with a memory limit (None: the kernel's "none") and
    a CFS quota (-1: none) on a 100 ms period; 3 GiB in use, 1 GiB of it inactive file cache,
    no swap; 2452.5 s of CPU used."""
    memory = "sys/fs/cgroup/memory/process_api/9e93a8e0fec9dc9a7860f647cdb8d5f1"
    unlimited = 9223372036854771712
    _write(
        root,
        {
            "proc/self/mountinfo": V1_HYBRID_MOUNTINFO,
            "proc/self/cgroup": V1_HYBRID_CGROUP,
            f"{memory}/memory.limit_in_bytes": f"{memory_limit or unlimited}\n",
            f"{memory}/memory.usage_in_bytes": f"{3 * GIB}\n",
            f"{memory}/memory.stat": f"cache {2 * GIB}\nrss {GIB}\ninactive_file {GIB}\n"
            f"total_cache {2 * GIB}\ntotal_rss {GIB}\ntotal_inactive_file {GIB}\n",
            f"{memory}/memory.memsw.limit_in_bytes": f"{memory_limit or unlimited}\n",
            f"{memory}/memory.memsw.usage_in_bytes": f"{3 * GIB}\n",
            "sys/fs/cgroup/cpu/cpu.cfs_quota_us": f"{cpu_quota_us}\n",
            "sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n",
            "sys/fs/cgroup/cpuacct/cpuacct.usage": "2452500000000\n",
        },
    )
    return root


def v2(root: Path, folder: str, memory_max: str, cpu_max: str, swap_max: str = "0") -> Path:
    """A v2 cgroup at ``folder`` (under /sys/fs/cgroup) with these limits, 1.5 GiB in use of
    which 0.5 GiB inactive file cache, no swap used, 7.25 s of CPU used."""
    _write(
        root,
        {
            f"{folder}/memory.max": f"{memory_max}\n",
            f"{folder}/memory.current": f"{3 * GIB // 2}\n",
            f"{folder}/memory.stat": f"anon {GIB}\nfile {GIB // 2}\ninactive_file {GIB // 2}\n"
            "active_file 0\n",
            f"{folder}/memory.swap.max": f"{swap_max}\n",
            f"{folder}/memory.swap.current": "0\n",
            f"{folder}/cpu.max": f"{cpu_max}\n",
            f"{folder}/cpu.stat": "usage_usec 7250000\nuser_usec 6000000\nsystem_usec 1250000\n",
        },
    )
    return root


def v2_docker(root: Path, memory_max: str, cpu_max: str) -> Path:
    """``docker run --memory=… --cpus=…`` on cgroup v2 (private cgroup namespace)."""
    _write(root, {"proc/self/mountinfo": V2_DOCKER_MOUNTINFO, "proc/self/cgroup": V2_DOCKER_CGROUP})
    return v2(root, "sys/fs/cgroup", memory_max, cpu_max)


def v2_pod(root: Path, memory_max: str, cpu_max: str) -> Path:
    """A pod's container on cgroup v2, its cgroup seen by its whole path."""
    _write(
        root,
        {"proc/self/mountinfo": V2_POD_MOUNTINFO, "proc/self/cgroup": f"0::{V2_POD_PATH}\n"},
    )
    return v2(root, f"sys/fs/cgroup{V2_POD_PATH}", memory_max, cpu_max)


# Docker on cgroup v1: each controller's mount shows the container's own cgroup, whose whole
# path /proc/self/cgroup still names.
V1_DOCKER_ID = "/docker/0b6d7c9e1f2a"
V1_DOCKER_MOUNTINFO = f"""\
812 808 0:52 {V1_DOCKER_ID} /sys/fs/cgroup/memory ro,nosuid,nodev,noexec,relatime master:23 - cgroup cgroup rw,memory
813 808 0:53 {V1_DOCKER_ID} /sys/fs/cgroup/cpu,cpuacct ro,nosuid,nodev,noexec,relatime master:24 - cgroup cgroup rw,cpu,cpuacct
"""
V1_DOCKER_CGROUP = f"""\
12:memory:{V1_DOCKER_ID}
4:cpu,cpuacct:{V1_DOCKER_ID}
0::/system.slice/containerd.service
"""


def v1_docker(root: Path, memory_limit: int, cpu_quota_us: int) -> Path:
    """``docker run --memory=… --cpus=…`` on cgroup v1: 3 GiB in use, 1 GiB of it inactive
    file cache, swap accounting off (no memsw files)."""
    _write(
        root,
        {
            "proc/self/mountinfo": V1_DOCKER_MOUNTINFO,
            "proc/self/cgroup": V1_DOCKER_CGROUP,
            "sys/fs/cgroup/memory/memory.limit_in_bytes": f"{memory_limit}\n",
            "sys/fs/cgroup/memory/memory.usage_in_bytes": f"{3 * GIB}\n",
            "sys/fs/cgroup/memory/memory.stat": f"total_inactive_file {GIB}\n",
            "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": f"{cpu_quota_us}\n",
            "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
            "sys/fs/cgroup/cpu,cpuacct/cpuacct.usage": "900000000\n",
        },
    )
    return root
