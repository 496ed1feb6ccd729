#!/usr/bin/python3
"""bench/suite: Tilec against its peers and the machine's limits (bench/README.md).

For every case (a Tile program in this folder + shapes) it prints Tilec's
median time (`tilec bench --json`, default device), the best peer's median
measured in the same run (PyTorch on --threads threads; OpenBLAS for the
matmul and GEMV cases; oneDNN's primitives for every case oneDNN has one,
through bench_onednn: convolution, matmul, reduction, pooling, softmax,
layer and batch norm, reorder, eltwise, binary with post-ops), the
fraction of the machine's limit Tilec reaches (the larger of FLOPs / FMA peak
and bytes / streaming bandwidth, both measured at start by bench_machine, over
Tilec's median), Tilec's compile time, and the geometric means at the end.
Before timing, each case runs once on the same inputs on both sides and the
outputs are compared (normwise relative error; above 1e-3 it is a MISMATCH
and the exit code is 1).

Run with /usr/bin/python3 (numpy and torch). Not part of ctest except
`--smoke` (correctness only, two tiny cases).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time


# Every side's environment (huge pages, OpenBLAS's kernels for this CPU):
# bench/peer_env.py, set by executing this script again before torch loads.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import peer_env  # noqa: E402
peer_env.reexec()

import ctypes

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


# --- Cases -------------------------------------------------------------------
# name, family, Tile file, output name, input shapes (f32), peer (a function of
# the torch inputs, returning the output in Tilec's layout), input fix-ups;
# optional: layouts of tensors (Tilec's --layout), want (the logical result
# the check compares with, where the peer returns a physical layout),
# constant (the weights: inputs that oneDNN reorders into the layout it
# chooses once, outside its timed runs, and PyTorch's prep lays out
# beforehand; Tilec gets `--constant` for them, so the kernels that read
# only them, a relayout of the weights, run once too, as in bench_peers;
# --no-constants times those kernels in every run). The matmuls' B is not
# one: oneDNN gets it in the plain layout and packs it in every call.

def nhwc_conv(stride=1, padding=0, dilation=1):
    def run(t):
        x = t["D"].permute(0, 3, 1, 2)  # a channels_last view
        return F.conv2d(x, t["_w"], stride=stride, padding=padding,
                        dilation=dilation).permute(0, 2, 3, 1)
    return run


def conv_prep(t):
    # HWIO -> OIHW, stored OHWI (channels_last) like the NHWC data
    t["_w"] = t["K"].permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last)


def dw_prep(t):
    t["_w"] = t["K"].permute(2, 0, 1).unsqueeze(1).contiguous()  # [C, 1, 3, 3]


def blocked16(t):
    """X (N, C, H, W) as nChw16c's physical array (N, C/16, H, W, 16)."""
    n, c, h, w = t["X"].shape
    t["_b"] = t["X"].view(n, c // 16, 16, h, w).permute(0, 1, 3, 4, 2).contiguous()


def depthwise(stride):
    def run(t):
        x = t["D"].permute(0, 3, 1, 2)
        return F.conv2d(x, t["_w"], stride=stride, padding=1,
                        groups=x.shape[1]).permute(0, 2, 3, 1)
    return run


def conv(name, n, hw, ci, co, k, kind="same", relu=False):
    if kind == "same":
        tile = "conv_same_relu.tile" if relu else "conv_same.tile"
        peer = nhwc_conv(padding=(k - 1) // 2)
        if relu:
            inner = peer
            peer = lambda t: torch.relu(inner(t))  # noqa: E731
    elif kind == "stride2":
        tile, peer = "conv_stride2.tile", nhwc_conv(stride=2, padding=(k - 1) // 2)
    else:
        tile, peer = "conv_dilation2.tile", nhwc_conv(dilation=2)
    out = "R" if relu else "O"
    dnn = dict(n=n, h=hw, w=hw, ci=ci, co=co, k=k, relu=int(relu))
    if kind == "same":
        dnn.update(pad=(k - 1) // 2)
    elif kind == "stride2":
        dnn.update(stride=2, pad=(k - 1) // 2, oh=(hw + 1) // 2, ow=(hw + 1) // 2)
    else:
        dnn.update(dil=2)
    return dict(name=name, family="conv", tile=tile, out=out,
                shapes={"D": [n, hw, hw, ci], "K": [k, k, ci, co]}, peer=peer, prep=conv_prep,
                onednn=("conv", dnn), constant=["K"])


# OpenBLAS through its C ABI (Debian's libopenblas), for the matmul cases.
OPENBLAS = peer_env.load_openblas()
ROW_MAJOR, NO_TRANS = 101, 111


def ptr(a):
    return a.ctypes.data_as(ctypes.POINTER(ctypes.c_float))


def openblas_sgemm(a, b):
    (m, k), n = a.shape, b.shape[1]
    c = np.empty((m, n), np.float32)
    OPENBLAS.cblas_sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, m, n, k, ctypes.c_float(1), ptr(a), k,
                         ptr(b), n, ctypes.c_float(0), ptr(c), n)
    return c


def openblas_sgemv(a, x):
    m, k = a.shape
    y = np.empty(m, np.float32)
    OPENBLAS.cblas_sgemv(ROW_MAJOR, NO_TRANS, m, k, ctypes.c_float(1), ptr(a), k, ptr(x), 1,
                         ctypes.c_float(0), ptr(y), 1)
    return y


def nhwc_pool(fn):
    return lambda t: fn(t["I"].permute(0, 3, 1, 2)).permute(0, 2, 3, 1)


CASES = [
    conv("conv3x3 n1 56x56 64>64", 1, 56, 64, 64, 3),
    conv("conv3x3+relu n8 56x56 64>64", 8, 56, 64, 64, 3, relu=True),
    conv("conv1x1 n1 56x56 64>256", 1, 56, 64, 256, 1),
    conv("conv5x5 n1 28x28 32>64", 1, 28, 32, 64, 5),
    conv("conv7x7/2 n1 224x224 3>64", 1, 224, 3, 64, 7, kind="stride2"),
    conv("conv3x3/2 n1 56x56 64>128", 1, 56, 64, 128, 3, kind="stride2"),
    conv("conv3x3 dil2 n1 56x56 64>64", 1, 56, 64, 64, 3, kind="dilation2"),
    conv("conv3x3 n1 14x14 256>256", 1, 14, 256, 256, 3),
    conv("conv3x3 n8 14x14 256>256", 8, 14, 256, 256, 3),
    dict(name="depthwise3x3 n1 112x112 c32", family="depthwise", tile="depthwise.tile", out="O",
         shapes={"D": [1, 112, 112, 32], "K": [3, 3, 32]}, peer=depthwise(1), prep=dw_prep,
         onednn=("conv", dict(n=1, h=112, w=112, ci=32, k=3, pad=1, depthwise=1)), constant=["K"]),
    dict(name="depthwise3x3/2 n1 112x112 c64", family="depthwise", tile="depthwise_stride2.tile",
         out="O", shapes={"D": [1, 112, 112, 64], "K": [3, 3, 64]}, peer=depthwise(2),
         prep=dw_prep, onednn=("conv", dict(n=1, h=112, w=112, ci=64, k=3, stride=2, pad=1,
                                             depthwise=1, oh=56, ow=56)), constant=["K"]),
    dict(name="matmul 1024^3", family="matmul", tile="matmul.tile", out="C",
         shapes={"A": [1024, 1024], "B": [1024, 1024]}, peer=lambda t: t["A"] @ t["B"], blas="gemm",
         onednn=("matmul", dict(m=1024, n=1024, k=1024))),
    dict(name="matmul 333^3", family="matmul", tile="matmul.tile", out="C",
         shapes={"A": [333, 333], "B": [333, 333]}, peer=lambda t: t["A"] @ t["B"], blas="gemm",
         onednn=("matmul", dict(m=333, n=333, k=333))),
    dict(name="matmul 509^3 (prime)", family="matmul", tile="matmul.tile", out="C",
         shapes={"A": [509, 509], "B": [509, 509]}, peer=lambda t: t["A"] @ t["B"], blas="gemm",
         onednn=("matmul", dict(m=509, n=509, k=509))),
    dict(name="matmul tall 16384x64x64", family="matmul", tile="matmul.tile", out="C",
         shapes={"A": [16384, 64], "B": [64, 64]}, peer=lambda t: t["A"] @ t["B"], blas="gemm",
         onednn=("matmul", dict(m=16384, n=64, k=64))),
    dict(name="gemv 4096x4096", family="matmul", tile="gemv.tile", out="Y",
         shapes={"A": [4096, 4096], "X": [4096]}, peer=lambda t: torch.mv(t["A"], t["X"]),
         blas="gemv", onednn=("matmul", dict(m=4096, n=1, k=4096, b="X"))),
    dict(name="batched matmul 16x128^3", family="matmul", tile="batched_matmul.tile", out="C",
         shapes={"A": [16, 128, 128], "B": [16, 128, 128]},
         peer=lambda t: torch.bmm(t["A"], t["B"]),
         onednn=("matmul", dict(batch=16, m=128, n=128, k=128))),
    dict(name="matmul+bias+gelu 512x768>3072", family="matmul", tile="matmul_bias_gelu.tile",
         out="Y", shapes={"A": [512, 768], "W": [768, 3072], "Bias": [3072]},
         peer=lambda t: F.gelu(torch.addmm(t["Bias"], t["A"], t["W"]), approximate="tanh"),
         onednn=("matmul", dict(m=512, n=3072, k=768, b="W", bias=1, gelu="gelu_tanh"))),
    dict(name="row sum 4096x4096", family="reduce", tile="sum_rows.tile", out="Y",
         shapes={"X": [4096, 4096]}, peer=lambda t: t["X"].sum(1),
         onednn=("reduce", dict(src="4096,4096", dst="4096,1"))),
    dict(name="column sum 4096x4096", family="reduce", tile="sum_cols.tile", out="Y",
         shapes={"X": [4096, 4096]}, peer=lambda t: t["X"].sum(0),
         onednn=("reduce", dict(src="4096,4096", dst="1,4096"))),
    dict(name="sum all 4096x4096", family="reduce", tile="sum_all.tile", out="Y",
         shapes={"X": [4096, 4096]}, peer=lambda t: t["X"].sum(),
         onednn=("reduce", dict(src="4096,4096", dst="1,1"))),
    dict(name="global avg pool n8 28x28 c256", family="reduce", tile="global_avg_pool.tile",
         out="O", shapes={"I": [8, 28, 28, 256]}, peer=lambda t: t["I"].mean((1, 2)),
         onednn=("reduce", dict(src="8,784,256", dst="8,1,256", alg="mean", x="I"))),
    dict(name="maxpool 3x3/2 n8 56x56 c64", family="pool", tile="maxpool_3x3_s2.tile", out="O",
         shapes={"I": [8, 56, 56, 64]},
         peer=nhwc_pool(lambda x: F.max_pool2d(x, 3, 2, 0, ceil_mode=True)),
         onednn=("pool", dict(alg="max", n=8, h=56, w=56, c=64, k=3, stride=2, pad_r=1))),
    dict(name="avgpool 2x2/2 n8 56x56 c64", family="pool", tile="avgpool_2x2.tile", out="O",
         shapes={"I": [8, 56, 56, 64]}, peer=nhwc_pool(lambda x: F.avg_pool2d(x, 2)),
         onednn=("pool", dict(alg="avg", n=8, h=56, w=56, c=64, k=2, stride=2))),
    dict(name="softmax 1024x1024", family="norm", tile="softmax.tile", out="Y",
         shapes={"X": [1024, 1024]}, peer=lambda t: torch.softmax(t["X"], 1),
         onednn=("softmax", dict(m=1024, n=1024))),
    dict(name="log-softmax 1024x1024", family="norm", tile="log_softmax.tile", out="Y",
         shapes={"X": [1024, 1024]}, peer=lambda t: torch.log_softmax(t["X"], 1),
         onednn=("softmax", dict(m=1024, n=1024, log=1))),
    dict(name="layer norm 1024x1024", family="norm", tile="layer_norm.tile", out="Y",
         shapes={"X": [1024, 1024], "Gamma": [1024], "Beta": [1024]},
         peer=lambda t: F.layer_norm(t["X"], (1024,), t["Gamma"], t["Beta"], 1e-5),
         onednn=("layernorm", dict(m=1024, n=1024, eps=1e-5))),
    dict(name="batch norm n8 56x56 c64", family="norm", tile="batch_norm.tile", out="Y",
         shapes={"X": [8, 56, 56, 64], "Mean": [64], "Var": [64], "Gamma": [64], "Beta": [64]},
         peer=lambda t: F.batch_norm(t["X"].permute(0, 3, 1, 2), t["Mean"], t["Var"], t["Gamma"],
                                     t["Beta"], False, 0.0, 0.001).permute(0, 2, 3, 1),
         onednn=("batchnorm", dict(n=8, h=56, w=56, c=64, eps=0.001))),
    dict(name="transpose 2048x2048", family="transpose", tile="transpose.tile", out="O",
         shapes={"I": [2048, 2048]}, peer=lambda t: t["I"].t().contiguous(),
         onednn=("reorder", dict(dims="2048,2048", strides="1,2048", x="I"))),
    dict(name="permute 021 64x256x256", family="transpose", tile="permute_021.tile", out="Y",
         shapes={"X": [64, 256, 256]}, peer=lambda t: t["X"].permute(0, 2, 1).contiguous(),
         onednn=("reorder", dict(dims="64,256,256", strides="65536,1,256"))),
    dict(name="nchw>nhwc 8x64x56x56", family="transpose", tile="nchw_to_nhwc.tile", out="Y",
         shapes={"X": [8, 64, 56, 56]}, peer=lambda t: t["X"].permute(0, 2, 3, 1).contiguous(),
         onednn=("reorder", dict(dims="8,56,56,64", strides="200704,56,1,3136"))),
    # Relayouts between plain and blocked NCHW (issue 10's goal: >= 70% of the
    # streaming bandwidth), 25.7 MB each way: `Y = X` with X and Y in the
    # layouts given. Tilec's run and bench_onednn write outputs logical, so
    # the check compares with X; PyTorch's timed peer makes the blocked array.
    dict(name="nchw>nChw16c 8x64x112x112", family="transpose", tile="relayout.tile", out="Y",
         shapes={"X": [8, 64, 112, 112]}, layouts={"Y": "nChw16c"},
         peer=lambda t: t["X"].view(8, 4, 16, 112, 112).permute(0, 1, 3, 4, 2).contiguous(),
         want=lambda t: t["X"], onednn=("reorder", dict(dims="8,64,112,112", src="nchw", dst="nChw16c"))),
    dict(name="nChw16c>nchw 8x64x112x112", family="transpose", tile="relayout.tile", out="Y",
         shapes={"X": [8, 64, 112, 112]}, layouts={"X": "nChw16c"}, prep=blocked16,
         peer=lambda t: t["_b"].permute(0, 1, 4, 2, 3).reshape(8, 64, 112, 112),
         want=lambda t: t["X"], onednn=("reorder", dict(dims="8,64,112,112", src="nChw16c", dst="nchw"))),
    dict(name="sigmoid 8M", family="eltwise", tile="sigmoid.tile", out="Y",
         shapes={"X": [8 << 20]}, peer=lambda t: torch.sigmoid(t["X"]),
         onednn=("eltwise", dict(count=8 << 20, alg="logistic"))),
    dict(name="gelu(x+bias) 1024x3072", family="eltwise", tile="gelu_bias.tile", out="Y",
         shapes={"X": [1024, 3072], "Bias": [3072]},
         peer=lambda t: F.gelu(t["X"] + t["Bias"], approximate="tanh"),
         onednn=("bias_eltwise", dict(m=1024, n=3072, alg="gelu_tanh"))),
    dict(name="gelu erf 1024x3072", family="eltwise", tile="gelu_erf.tile", out="Y",
         shapes={"X": [1024, 3072]}, peer=lambda t: F.gelu(t["X"]),
         onednn=("eltwise", dict(count=1024 * 3072, alg="gelu_erf"))),
    dict(name="tanh 4M", family="eltwise", tile="tanh.tile", out="Y",
         shapes={"X": [4 << 20]}, peer=lambda t: torch.tanh(t["X"]),
         onednn=("eltwise", dict(count=4 << 20, alg="tanh"))),
    dict(name="log(1+exp(x)) 8M", family="eltwise", tile="softplus.tile", out="Y",
         shapes={"X": [8 << 20]}, peer=lambda t: torch.log1p(torch.exp(t["X"])),
         onednn=("eltwise", dict(count=8 << 20, alg="soft_relu"))),
    dict(name="pow+sqrt bcast 2048x2048", family="eltwise", tile="pow_sqrt.tile", out="Y",
         shapes={"X": [2048, 2048], "P": [2048]},
         peer=lambda t: torch.pow(t["X"].abs() + 1.0, t["P"]) + torch.sqrt(t["X"] * t["X"] + 1.0)),
]

SMOKE = [
    conv("smoke conv3x3 n1 9x9 5>7", 1, 9, 5, 7, 3),
    dict(name="smoke gelu(x+bias) 13x37", family="eltwise", tile="gelu_bias.tile", out="Y",
         shapes={"X": [13, 37], "Bias": [37]},
         peer=lambda t: F.gelu(t["X"] + t["Bias"], approximate="tanh"),
         onednn=("bias_eltwise", dict(m=13, n=37, alg="gelu_tanh"))),
]


# --- Measuring ---------------------------------------------------------------

def shape_args(case):
    return [a for n, dims in case["shapes"].items()
            for a in ("-s", "%s=f32[%s]" % (n, ",".join(map(str, dims))))] + layout_args(case)


def layout_args(case):
    """--layout for the tensors a case keeps in other layouts (inputs and outputs)."""
    return [a for n, layout in case.get("layouts", {}).items() for a in ("--layout", "%s=%s" % (n, layout))]


def make_inputs(case, seed):
    rng = np.random.default_rng(seed)
    arrays = {}
    for n, dims in case["shapes"].items():
        a = rng.uniform(-1, 1, size=dims).astype(np.float32)
        if n == "Var":
            a = np.abs(a)  # a variance
        arrays[n] = a
    return arrays


def torch_inputs(case, arrays):
    t = {n: torch.from_numpy(a) for n, a in arrays.items()}
    if "prep" in case:
        case["prep"](t)
    return t


def check(tilec, case, tmp):
    """Runs both sides once on the same inputs; the normwise relative error."""
    arrays = make_inputs(case, 7)
    cmd = [tilec, "run", os.path.join(HERE, case["tile"])]
    for n, a in arrays.items():
        path = os.path.join(tmp, n + ".npy")
        np.save(path, a)
        cmd += ["--in", "%s=%s" % (n, path)]
    out_path = os.path.join(tmp, "out.npy")
    cmd += ["--out", "%s=%s" % (case["out"], out_path)] + layout_args(case)
    subprocess.run(cmd, check=True, capture_output=True)
    got = np.load(out_path).astype(np.float64)
    with torch.no_grad():
        want = case.get("want", case["peer"])(torch_inputs(case, arrays))
        want = want.contiguous().numpy().astype(np.float64)
    case["_want"] = want  # the oneDNN peer is checked against it (time_onednn)
    return peer_env.rel_err(got, want)


# Seconds to wait before timing a tilec binary. The peers (PyTorch, OpenBLAS)
# ran just before in this process, and their worker threads keep spinning on
# a core for a while after the last call: a short tilec run started at once
# gets one core instead of two (matmul 333^3, identical kernels: 0.40 ms in
# 10 of 10 runs right after 0.3 s of PyTorch matmuls, 0.19 ms in 7 of 10
# after a 1 s pause; load 8).
TILEC_PAUSE_S = 1.0


# Untimed calls every side makes before its timed ones, at least (after its
# --warmup calls): PyTorch's and OpenBLAS's in median_ms, oneDNN's in
# onednn_case.cc, Tilec's with `tilec bench --warmup-time`. After the pause
# above a side's first calls find its worker threads asleep and the caches
# cold; three warm-up calls of a 0.05 ms kernel are over in 0.15 ms.
WARM_S = 0.3


def time_tilec(tilec, case, runs, warmup, constants=True):
    time.sleep(TILEC_PAUSE_S)
    cmd = [tilec, "bench", os.path.join(HERE, case["tile"]), "--json", "--runs", str(runs),
           "--warmup", str(warmup), "--warmup-time", f"{int(WARM_S * 1000)}ms"] + shape_args(case)
    if constants:
        cmd += [a for n in case.get("constant", []) for a in ("--constant", n)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode == 2 and "--warmup-time" in r.stderr:
        # A --baseline binary from before session 14: warm-up by count only.
        i = cmd.index("--warmup-time")
        r = subprocess.run(cmd[:i] + cmd[i + 2:], capture_output=True, text=True)
    if r.returncode != 0:
        raise subprocess.CalledProcessError(r.returncode, cmd, r.stdout, r.stderr)
    return json.loads(r.stdout)


def time_peers(case, runs, warmup):
    """{peer name: (median ms, min ms)}: PyTorch, and OpenBLAS for the BLAS cases."""
    arrays = make_inputs(case, 1)
    t = torch_inputs(case, arrays)
    with torch.no_grad():
        out = {"pytorch": peer_env.median_ms(lambda: case["peer"](t), runs, warmup, WARM_S)}
    if OPENBLAS is not None and case.get("blas") == "gemm":
        out["openblas"] = peer_env.median_ms(lambda: openblas_sgemm(arrays["A"], arrays["B"]), runs, warmup, WARM_S)
    if OPENBLAS is not None and case.get("blas") == "gemv":
        out["openblas"] = peer_env.median_ms(lambda: openblas_sgemv(arrays["A"], arrays["X"]), runs, warmup, WARM_S)
    return out


def time_onednn(build, case, tmp, runs, warmup, threads):
    """(median ms, min ms, rel err against PyTorch, implementation) of the case
    as oneDNN primitives (bench_onednn, its own process, on check()'s inputs),
    or None when the case has no oneDNN form or bench_onednn is not built."""
    exe = os.path.join(build, "bench", "bench_onednn")
    if "onednn" not in case or not os.path.exists(exe):
        return None
    op, params = case["onednn"]
    out_path = os.path.join(tmp, "onednn_out.npy")
    cmd = [exe, op] + ["%s=%s" % kv for kv in params.items()]
    for n in case["shapes"]:
        cmd += ["--in", "%s=%s" % (n, os.path.join(tmp, n + ".npy"))]
    cmd += ["--out", out_path, "--runs", str(runs), "--warmup", str(warmup), "--threads", str(threads)]
    time.sleep(TILEC_PAUSE_S)  # as for tilec: PyTorch's workers spin for a while
    r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    err = peer_env.rel_err(np.load(out_path).astype(np.float64), case["_want"])
    return r["median_ms"], r["min_ms"], err, r["impl"]


def tilec_model(tilec):
    """The llvm device's hardware model as `tilec devices` reports it (None if unknown)."""
    r = subprocess.run([tilec, "devices", "--json"], capture_output=True, text=True)
    try:
        for d in json.loads(r.stdout)["devices"]:
            if d["id"].startswith("llvm"):
                return d["hardware_model"]
    except (ValueError, KeyError):
        pass
    return None


def tilec_cpu(tilec):
    """The llvm device's CPU and vector width as `tilec devices` reports them."""
    hw = tilec_model(tilec)
    if not hw:
        return "unknown"
    return "%s, %s f32 lanes, %s vector registers" % (hw["name"], hw["vec_size"], hw["vector_registers"])


def machine(build, threads, lanes=0):
    """The FMA peak (on `lanes`-wide vectors: 8 for AVX2 code on an AVX-512 host; 0: the widest) and the triad."""
    cmd = [os.path.join(build, "bench", "bench_machine"), "--threads", str(threads)]
    if lanes:
        cmd += ["--lanes", str(lanes)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def geomean(values):
    values = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    root = os.path.dirname(os.path.dirname(HERE))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(root, "build"), help="the build folder")
    ap.add_argument("--tilec", help="the tilec binary (default: BUILD/tools/tilec)")
    ap.add_argument("--runs", type=int, default=10, help="timed runs per side (median)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="PyTorch's and the probes' threads")
    ap.add_argument("--only", default="", help="comma-separated substrings of case names or families")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds per case of Tilec, the peers and oneDNN one after the other; the "
                         "figures are medians over the rounds, the ratio the median of the rounds' own "
                         "ratios, so that a slow stretch of a shared machine falls on both sides")
    ap.add_argument("--quick", action="store_true", help="3 runs, 1 warm-up, 1 round")
    ap.add_argument("--smoke", action="store_true",
                    help="two tiny cases, correctness only (no timing; for ctest)")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--plot", help="also draw a roofline chart of every case into this PNG (python3-matplotlib): "
                    "achieved GFLOP/s against FLOPs per byte, Tilec and the best peer, under the FMA peak and "
                    "the streaming bandwidth")
    ap.add_argument("--cpu", help="Tilec plans and compiles for this CPU (TILEC_CPU: an LLVM CPU name or "
                    "x86-64 level, e.g. x86-64-v3 for the AVX2 code on an AVX-512 host); the peers are unchanged")
    ap.add_argument("--small-pages", action="store_true",
                    help="do not give the peers and probes transparent huge pages "
                         "(glibc.malloc.hugetlb=1); Tilec's buffers ask for them anyway")
    ap.add_argument("--no-constants", action="store_true",
                    help="Tilec: relayout the weights (the cases' `constant` inputs) in every timed run "
                         "(by default they are constant inputs, as the peers' weights)")
    ap.add_argument("--baseline", help="another tilec binary (e.g. an older build) timed too, "
                    "after Tilec and the peer of each case: column 'base ms'")
    args = ap.parse_args()
    if args.cpu:
        os.environ["TILEC_CPU"] = args.cpu
    tilec = args.tilec or os.path.join(args.build, "tools", "tilec")
    torch.set_num_threads(args.threads)
    if OPENBLAS is not None:
        OPENBLAS.openblas_set_num_threads(args.threads)
    if args.quick:
        args.runs, args.warmup, args.rounds = 3, 1, 1
    args.rounds = max(args.rounds, 1)

    cases = SMOKE if args.smoke else CASES
    if args.only:
        keys = [k.strip() for k in args.only.split(",") if k.strip()]
        cases = [c for c in cases if any(k in c["name"] or k == c["family"] for k in keys)]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        if args.smoke:
            for c in cases:
                err = check(tilec, c, tmp)
                ok = err <= 1e-3
                bad += not ok
                print("%-34s rel err %.2g %s" % (c["name"], err, "ok" if ok else "MISMATCH"))
                dnn = time_onednn(args.build, c, tmp, 1, 0, args.threads)
                if dnn is not None:  # bench_onednn is built (oneDNN installed)
                    ok = dnn[2] <= 1e-3
                    bad += not ok
                    print("%-34s oneDNN rel err %.2g %s" % ("", dnn[2], "ok" if ok else "MISMATCH"))
            print("%d passed, %d failed" % (len(cases) - bad, bad))
            return 1 if bad else 0

        # The FMA peak of the vectors Tilec's code uses (--cpu x86-64-v3 on an
        # AVX-512 host: 8 lanes), so the limits are those of that code.
        hw = tilec_model(tilec)
        lanes = 8 if hw and int(hw.get("vec_size", 16)) <= 8 else 0
        m = machine(args.build, args.threads, lanes)  # again at the end: the best of both counts
        print("machine: FMA peak %.1f GFLOP/s (%s, %d threads), streaming %.1f GB/s (triad); "
              "load %s" % (m["fma_gflops"], m["vector"], m["threads"], m["stream_gbps"],
                           " ".join("%.1f" % x for x in os.getloadavg())))
        print("tilec plans for: %s" % tilec_cpu(tilec))
        print(peer_env.describe(OPENBLAS))
        print("pages: Tilec's buffers ask for huge pages; the peers' and probes' %s"
              % ("too (glibc.malloc.hugetlb=1)" if "glibc.malloc.hugetlb=1" in os.environ.get("GLIBC_TUNABLES", "")
                 else "use small pages (--small-pages)"))
        print("%d round(s) per case, each side in turn; ms = median over the rounds; ratio = median "
              "of the rounds' peer median / Tilec median (> 1: Tilec faster); min r = the best peer's "
              "fastest run / Tilec's; limit = max(FLOPs / peak, bytes / bandwidth) / Tilec median; "
              "binds: F = FLOPs, B = bytes\n" % args.rounds)
        head = "%-32s %9s %9s %-8s %6s %6s %7s %2s %8s %8s %7s" % (
            "case", "tilec ms", "peer ms", "peer", "ratio", "min r", "limit", "", "GFLOP/s",
            "compile", "rel err")
        if args.baseline:
            head += " %9s" % "base ms"
        print(head)
        print("-" * len(head))
        rows = []
        for c in cases:
            err = check(tilec, c, tmp)
            if not err <= 1e-3:
                bad += 1
                print("%-32s MISMATCH (rel err %.3g): not timed" % (c["name"], err))
                continue
            # Rounds of each side in turn (--rounds): {side: [(median, min) per round]}.
            rounds = {}
            base_rounds = []
            dnn = None
            for _ in range(args.rounds):
                tj = time_tilec(tilec, c, args.runs, args.warmup, not args.no_constants)
                rounds.setdefault("tilec", []).append((tj["median_ms"], tj["min_ms"]))
                for name, figures in time_peers(c, args.runs, args.warmup).items():
                    rounds.setdefault(name, []).append(figures)
                dnn = time_onednn(args.build, c, tmp, args.runs, args.warmup, args.threads)
                if dnn is not None and dnn[2] <= 1e-3:
                    rounds.setdefault("onednn", []).append(dnn[:2])
                if args.baseline:
                    try:
                        base = time_tilec(args.baseline, c, args.runs, args.warmup, not args.no_constants)
                        base_rounds.append(base["median_ms"])
                    except subprocess.CalledProcessError:
                        base_rounds.append(float("nan"))  # e.g. an older tilec without a builtin the case uses
            if dnn is not None and not dnn[2] <= 1e-3:  # a peer that computes something else is a bug of this script
                bad += 1
                print("%-32s oneDNN (%s) MISMATCH against PyTorch (rel err %.3g)" % (c["name"], dnn[3], dnn[2]))
            tilec_rounds = rounds.pop("tilec")
            peers = {name: (statistics.median(m for m, _ in r), min(n for _, n in r)) for name, r in rounds.items()}
            peer = min(peers, key=lambda p: peers[p][0])
            peer_ms, peer_min = peers[peer]
            base_ms = statistics.median(base_rounds) if base_rounds else None
            t_ms = statistics.median(m for m, _ in tilec_rounds)
            tj["min_ms"] = min(n for _, n in tilec_rounds)
            ratio = statistics.median(p[0] / t[0] for p, t in zip(rounds[peer], tilec_rounds))
            flop_s = tj["flops"] / (m["fma_gflops"] * 1e9)
            byte_s = tj["bytes"] / (m["stream_gbps"] * 1e9)
            limit = max(flop_s, byte_s) * 1e3 / t_ms
            row = dict(case=c["name"], family=c["family"], tilec_ms=t_ms, peer=peer, peers=peers, bytes=tj["bytes"],
                       onednn_impl=dnn[3] if dnn else None,
                       peer_ms=peer_ms, ratio=ratio, limit=limit,
                       min_ratio=peer_min / tj["min_ms"], rounds=args.rounds,
                       binds="F" if flop_s >= byte_s else "B", gflops=tj["flops"] / (t_ms * 1e6),
                       compile_ms=tj["compile_ms"], rel_err=err, baseline_ms=base_ms)
            rows.append(row)
            print("%-32s %9.3f %9.3f %-8s %6.2f %6.2f %6.1f%% %2s %8.1f %6.0fms %7.1g%s" % (
                c["name"], t_ms, peer_ms, peer, row["ratio"], row["min_ratio"], 100 * limit, row["binds"], row["gflops"],
                tj["compile_ms"], err, " %9.3f" % base_ms if args.baseline else ""))
            sys.stdout.flush()
    if rows:
        m2 = machine(args.build, args.threads, lanes)
        # The limits against the best peak and bandwidth measured (start or end):
        # a machine read slow at the start would inflate every fraction.
        peak, bw = max(m["fma_gflops"], m2["fma_gflops"]), max(m["stream_gbps"], m2["stream_gbps"])
        print("\nmachine at the end: FMA peak %.1f GFLOP/s, streaming %.1f GB/s; the limits against the "
              "best of both (%.1f GFLOP/s, %.1f GB/s):" % (m2["fma_gflops"], m2["stream_gbps"], peak, bw))
        for r in rows:
            ms = r["tilec_ms"]
            best = max(r["gflops"] * ms * 1e6 / (peak * 1e9), r.get("bytes", 0) / (bw * 1e9)) * 1e3 / ms
            r["limit_start"], r["limit"] = r["limit"], best
            print("  %-32s %6.1f%% (start: %.1f%%)" % (r["case"], 100 * best, 100 * r["limit_start"]))
        compile_ms = sorted(r["compile_ms"] for r in rows)
        print("\ngeometric mean: ratio %.2f (min ratio %.2f), limit %.1f%%; compile median "
              "%.0f ms, max %.0f ms; %d cases, %d mismatches" % (
                  geomean([r["ratio"] for r in rows]), geomean([r["min_ratio"] for r in rows]), 100 * geomean([r["limit"] for r in rows]),
                  statistics.median(compile_ms), compile_ms[-1], len(rows), bad))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(machine=m, rows=rows), f, indent=1)
    if args.plot and rows:
        plot_roofline(args.plot, rows, peak, bw, tilec_cpu(tilec))
        print("roofline chart: %s" % args.plot)
    return 1 if bad else 0


def plot_roofline(path, rows, peak_gflops, bw_gbps, cpu):
    """A roofline chart: each case at its arithmetic intensity (FLOPs per
    byte of its inputs and outputs), Tilec's and the best peer's GFLOP/s,
    joined by a line, under min(peak, bandwidth x intensity)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    points, copies = [], []
    for r in rows:
        flops = r["gflops"] * r["tilec_ms"] * 1e6
        if r.get("bytes", 0) <= 0:
            continue
        if flops <= 0:  # copies and relayouts: bytes only
            copies.append((r["case"], r["bytes"] / (r["tilec_ms"] * 1e6), r["bytes"] / (r["peer_ms"] * 1e6)))
            continue
        x = flops / r["bytes"]
        points.append((x, r["gflops"], flops / (r["peer_ms"] * 1e6), r["case"], r["peer"]))
    if copies:
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(15, 7), gridspec_kw=dict(width_ratios=[2, 1]))
    else:
        fig, ax = plt.subplots(figsize=(11, 7))
    # Cases without arithmetic: achieved GB/s against the streaming bandwidth.
    for i, (name, tilec_gb, peer_gb) in enumerate(copies):
        bx.barh(i + 0.2, tilec_gb, height=0.4, color="tab:blue")
        bx.barh(i - 0.2, peer_gb, height=0.4, color="tab:orange")
    if copies:
        bx.axvline(bw_gbps, color="k", lw=1.5)
        bx.set_yticks(range(len(copies)), [c[0] for c in copies], fontsize=7)
        bx.set_xlabel("GB/s (inputs and outputs once; line: streaming bandwidth)")
        bx.set_title("cases without arithmetic (blue Tilec, orange best peer)", fontsize=9)
    if not points:
        fig.savefig(path, dpi=130)
        return
    xs = [p[0] for p in points]
    lo, hi = min(xs) / 2, max(xs) * 2
    grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax.plot(grid, [min(peak_gflops, bw_gbps * x) for x in grid], "k-", lw=1.5,
            label="limit: %.0f GFLOP/s, %.1f GB/s" % (peak_gflops, bw_gbps))
    for x, tilec_gf, peer_gf, name, peer in points:
        ax.plot([x, x], [peer_gf, tilec_gf], color="0.75", lw=1, zorder=1)
        ax.annotate(name, (x, tilec_gf), fontsize=6, xytext=(3, 2), textcoords="offset points")
    ax.scatter(xs, [p[1] for p in points], c="tab:blue", s=22, zorder=3, label="Tilec (%s)" % cpu)
    ax.scatter(xs, [p[2] for p in points], c="tab:orange", marker="x", s=22, zorder=3, label="best peer")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("FLOPs per byte (inputs and outputs once)")
    ax.set_ylabel("GFLOP/s (median)")
    ax.set_title("bench/suite: every case against the machine's limits")
    ax.grid(True, which="both", lw=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)


if __name__ == "__main__":
    sys.exit(main())
