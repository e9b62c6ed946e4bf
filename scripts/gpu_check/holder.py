"""A process that holds GPU memory and keeps the GPU busy, as a training job does.

Two ways, tried in the order asked: PyTorch with CUDA (a tensor and a matrix product in a loop),
or the driver's own ``libcuda.so.1`` through ctypes (``cuMemAlloc`` and ``cuMemsetD8`` in a
loop), for a Python without torch. Standard library only: it also runs inside a kernel, whose
Python is not the check's.

    python holder.py MEBIBYTES [torch|driver ...]

prints one JSON line (``{"pid", "held_mib", "way", "failures"}``) once the memory is held, then
holds it until its stdin closes.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading

WAYS = ("torch", "driver")
MIB = 1024 * 1024
# The side of the square matrices the torch loop multiplies: 64 MiB each in float32, a few ms
# a product on any data-centre GPU, so that the GPU is never idle between launches.
MATRIX_SIDE = 4096


class NoCuda(Exception):
    """This way cannot reach a GPU here; the message says why."""


class Holding:
    """GPU memory held (``buffers``), and a thread that keeps the GPU busy until ``stop()``."""

    def __init__(self, way: str, held_mib: int, failures: dict[str, str], work, buffers=()):
        self.way = way
        self.held_mib = held_mib
        self.failures = failures
        self.buffers = buffers
        self.loop_error: str | None = None
        self._work = work
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        try:
            self._work(self._stopping)
        except Exception as error:  # kept for facts(): a silent idle GPU would mislead
            self.loop_error = f"{type(error).__name__}: {error}"

    def facts(self) -> dict:
        """What is held, by which way, why the ways tried before it failed, and why the busy
        loop ended if it did."""
        return {
            "pid": os.getpid(),
            "held_mib": self.held_mib,
            "way": self.way,
            "failures": self.failures,
            "loop_error": self.loop_error,
        }

    def stop(self) -> None:
        """End the busy loop (the memory goes with the process)."""
        self._stopping.set()
        self._thread.join(timeout=10)


def _torch_holding(mebibytes: int, failures: dict[str, str]) -> Holding:
    try:
        import torch
    except ImportError as error:
        raise NoCuda(f"torch does not import: {error}") from None
    if not torch.cuda.is_available():
        raise NoCuda(f"torch {torch.__version__} sees no CUDA device")
    held = torch.empty(mebibytes * MIB, dtype=torch.uint8, device="cuda")
    held.fill_(1)  # touched, so that the driver really backs every page
    matrix = torch.randn(MATRIX_SIDE, MATRIX_SIDE, device="cuda")
    product = torch.empty_like(matrix)

    def work(stopping: threading.Event) -> None:
        while not stopping.is_set():
            torch.mm(matrix, matrix, out=product)
            torch.cuda.synchronize()

    return Holding("torch", mebibytes, failures, work, buffers=(held, matrix, product))


def _driver_holding(mebibytes: int, failures: dict[str, str]) -> Holding:
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as error:
        raise NoCuda(f"libcuda.so.1 does not load: {error}") from None

    def call(name: str, *args) -> None:
        status = getattr(cuda, name)(*args)
        if status != 0:
            text = ctypes.c_char_p()
            cuda.cuGetErrorString(status, ctypes.byref(text))
            words = text.value.decode() if text.value else "unknown error"
            raise NoCuda(f"{name} failed with CUDA error {status}: {words}")

    device = ctypes.c_int()
    context = ctypes.c_void_p()
    pointer = ctypes.c_uint64()
    size = ctypes.c_size_t(mebibytes * MIB)
    call("cuInit", 0)
    call("cuDeviceGet", ctypes.byref(device), 0)
    # The primary context: the one call whose signature CUDA 13 did not change (cuCtxCreate did).
    call("cuDevicePrimaryCtxRetain", ctypes.byref(context), device)
    call("cuCtxSetCurrent", context)
    call("cuMemAlloc_v2", ctypes.byref(pointer), size)

    def work(stopping: threading.Event) -> None:
        # The loop's own thread needs the context current too.
        call("cuCtxSetCurrent", context)
        value = 0
        while not stopping.is_set():
            value = (value + 1) % 256
            call("cuMemsetD8_v2", pointer, ctypes.c_ubyte(value), size)
            call("cuCtxSynchronize")

    return Holding("driver", mebibytes, failures, work)


_HOLDINGS = {"torch": _torch_holding, "driver": _driver_holding}


def hold(mebibytes: int, ways: tuple[str, ...] = WAYS) -> Holding:
    """Hold ``mebibytes`` of GPU memory by the first of ``ways`` that works; NoCuda, saying
    why each failed, when none does."""
    failures: dict[str, str] = {}
    for way in ways:
        try:
            return _HOLDINGS[way](mebibytes, failures)
        except NoCuda as error:
            failures[way] = str(error)
        except Exception as error:  # out of memory, a broken install: try the next way
            failures[way] = f"{type(error).__name__}: {error}"
    raise NoCuda("; ".join(f"{way}: {reason}" for way, reason in failures.items()))


def main(argv: list[str]) -> int:
    mebibytes = int(argv[0])
    ways = tuple(argv[1:]) or WAYS
    try:
        holding = hold(mebibytes, ways)
    except NoCuda as error:
        print(json.dumps({"pid": os.getpid(), "held_mib": 0, "way": None, "error": str(error)}))
        sys.stdout.flush()
        sys.stdin.read()  # a machine without CUDA: held nothing, but stays until told
        return 0
    print(json.dumps(holding.facts()))
    sys.stdout.flush()
    sys.stdin.read()
    holding.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
