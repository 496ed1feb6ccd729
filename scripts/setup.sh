#!/usr/bin/env bash
# Installs the Debian packages Tilec needs to build, test and benchmark.
# Idempotent: installs only what is missing, and runs apt-get update only then.
set -euo pipefail

PACKAGES=(
  # build (ccache: scripts/test.sh shares objects between checkouts)
  g++ cmake ninja-build pkg-config ccache
  # libraries
  libfmt-dev libcli11-dev libgtest-dev
  # OpenCL: ICD loader, headers, PoCL as the CPU driver
  ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers pocl-opencl-icd clinfo
  # LLVM backend
  llvm-19-dev
  # libFuzzer harnesses (tests/fuzz, scripts/fuzz.sh)
  clang-19 libclang-rt-19-dev
  # tests compare against NumPy (Debian's numpy is for /usr/bin/python3)
  python3-numpy
  # bench/suite's smoke test compares with PyTorch; the Python module (pybind11)
  # and its PyTorch client, for /usr/bin/python3
  python3-dev pybind11-dev python3-pybind11 python3-torch libdlpack-dev
  # libtorch's headers: the module's optional C++ reader of torch tensors
  # (tilec._torch_fast, python/_torch_fast.cc)
  libtorch-dev
  # ONNX models (frontend/onnx): libonnx's protobuf classes, the ONNX project's
  # backend node tests (tests/onnx), and onnx and torchvision for Python's
  # model tests and bench/models
  libonnx-dev libprotobuf-dev libonnx-testdata python3-onnx python3-torchvision
  # AArch64 ahead-of-time output (tests/e2e/aarch64_aot_test.py): a cross C
  # compiler and libc to build the generated files, qemu-aarch64 to run them
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
)
if [[ "${TILEC_BENCH_DEPS:-0}" == 1 ]]; then
  PACKAGES+=(libdnnl-dev libopenblas-dev python3-matplotlib)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) != 0 ]]; then SUDO=sudo; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
