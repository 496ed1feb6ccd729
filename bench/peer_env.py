"""The environment the peers (PyTorch, OpenBLAS) are timed in, and the helpers
that load and time them, shared by the benchmark scripts (bench/suite,
bench/models, bench/grad).

  * Large buffers on transparent huge pages, as Tilec's runtime asks for its
    own (hal/llvm/llvm_device.cc): glibc's malloc tunable. --small-pages: not.
  * OpenBLAS's kernels for the CPU's instruction set. OpenBLAS (the matmul
    peer, and PyTorch's BLAS on Debian: libblas.so.3 is OpenBLAS's) picks its
    kernels by CPU model, and Debian's 0.3.21 does not know every CPU: on a
    Sapphire Rapids VM ("Intel(R) Xeon(R) Processor") it chose "Prescott"
    (SSE3), and PyTorch's 1024^3 matmul took 123 ms instead of 29 ms with
    OPENBLAS_CORETYPE=SkylakeX. Unless set, it is set from the CPU's flags
    (AVX-512: SkylakeX, AVX2: Haswell).

Both are read when the libraries load, so the script executes itself again
once with them set (call `reexec()` before importing torch).
"""
import ctypes
import ctypes.util
import os
import statistics
import sys
import time


def openblas_coretype():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(line for line in f if line.startswith("flags")).split()
    except (OSError, StopIteration):
        return None
    return "SkylakeX" if "avx512f" in flags else "Haswell" if "avx2" in flags else None


def reexec():
    env = dict(os.environ)
    if "OPENBLAS_CORETYPE" not in env and openblas_coretype():
        env["OPENBLAS_CORETYPE"] = openblas_coretype()
    if "--small-pages" not in sys.argv and "glibc.malloc.hugetlb" not in env.get("GLIBC_TUNABLES", ""):
        env["GLIBC_TUNABLES"] = ":".join(filter(None, [env.get("GLIBC_TUNABLES"), "glibc.malloc.hugetlb=1"]))
    if env != os.environ:
        os.execve(sys.executable, [sys.executable] + sys.argv, env)


def describe(openblas=None):
    """One header line: the OpenBLAS core the peers use (`openblas`: the
    loaded library, a ctypes.CDLL), and where it came from."""
    core = "unknown"
    if openblas is not None:
        try:
            openblas.openblas_get_corename.restype = ctypes.c_char_p
            core = openblas.openblas_get_corename().decode()
        except AttributeError:
            pass
    return "openblas core: %s (OPENBLAS_CORETYPE=%s; Debian's PyTorch multiplies with it too)" % (
        core, os.environ.get("OPENBLAS_CORETYPE", "unset"))


def load_openblas():
    """OpenBLAS through its C ABI (Debian's libopenblas), or None."""
    for name in ("libopenblas.so.0", ctypes.util.find_library("openblas")):
        try:
            return ctypes.CDLL(name) if name else None
        except OSError:
            pass
    return None


def median_ms(fn, runs, warmup, warm_s=0.3):
    """(median, min) of `runs` timed calls after `warmup` calls and at least `warm_s`
    seconds of calls: the peers' OpenMP workers sleep while tilec runs, and on
    a loaded machine the first parallel regions after that wait for a core
    (measured: 72 ms instead of 0.5 ms per conv)."""
    start = time.perf_counter()
    i = 0
    while i < warmup or time.perf_counter() - start < warm_s:
        fn()
        i += 1
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times)


def rel_err(got, want):
    """Normwise relative error max|got - want| / max|want| (inf on a size mismatch)."""
    import numpy as np
    got, want = np.asarray(got, np.float64).reshape(-1), np.asarray(want, np.float64).reshape(-1)
    if got.size != want.size:
        return float("inf")
    scale = np.max(np.abs(want))
    if scale == 0 or not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.max(np.abs(got - want)) / scale)
