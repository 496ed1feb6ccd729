#!/usr/bin/env bash
# Builds Tilec twice and runs every test (ctest: unit, golden and end-to-end):
#   build/       RelWithDebInfo, warnings are errors
#   build-asan/  AddressSanitizer + UndefinedBehaviorSanitizer
# then the concurrency tests under ThreadSanitizer (build-tsan/) and a short
# fixed-seed run of every libFuzzer harness (build-fuzz/, scripts/fuzz.sh).
# Exits non-zero if any step or test fails.
set -euo pipefail
cd "$(dirname "$0")/.."

JOBS="${TILEC_JOBS:-2}"
# Every ctest run's output is copied here; the closing line adds them up.
CTEST_LOG="$(mktemp)"
trap 'rm -f "$CTEST_LOG"' EXIT

bash scripts/setup.sh

# ccache (setup.sh installs it; CMakeLists.txt uses it as the compiler
# launcher) shares compiled objects between checkouts of the same sources:
# paths are taken relative to this checkout, so a fresh clone elsewhere
# (CI's) hits what an earlier build compiled. A cold run builds everything.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-12G}"

# Configure, build and test one build directory. (Steps are chained with &&
# because `set -e` does not apply inside a function called from `||`.)
run_suite() {
  local dir="$1"
  shift
  echo "== configure $dir" &&
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTILEC_WERROR=ON "$@" &&
    echo "== build $dir" &&
    ninja -C "$dir" -j "$JOBS" &&
    echo "== test $dir" &&
    TILEC_CACHE_DIR="$PWD/$dir/test-kernel-cache" \
      ctest --test-dir "$dir" --output-on-failure -j "$JOBS" ${CTEST_EXTRA:-} 2>&1 |
      tee -a "$CTEST_LOG"
}

status=0
run_suite build || status=1

# Whatever CPU CI has, the AVX2 code runs: the LLVM execution tests and the
# difftest batch again, planned and compiled for x86-64-v3 (on an AVX-512
# host the normal pass ran the 16-lane code, this one runs the 8-lane code),
# and the examples once more for SSE4.2 (x86-64-v2, 4 lanes). Tests that
# check a plan pin their own CPU (testing::PinnedDevice, `--cpu`), so
# TILEC_CPU does not move them; see docs/testing.md.
for cpu_pass in "x86-64-v3:-LE opencl" "x86-64-v2:-R ^example\.llvm\."; do
  cpu="${cpu_pass%%:*}"
  echo "== test build (TILEC_CPU=$cpu)"
  # shellcheck disable=SC2086 # the selection is two words
  TILEC_CPU="$cpu" TILEC_CACHE_DIR="$PWD/build/test-kernel-cache-$cpu" \
    ctest --test-dir build --output-on-failure -j "$JOBS" ${cpu_pass#*:} --no-tests=error 2>&1 |
    tee -a "$CTEST_LOG" || status=1
done

export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# Under the sanitizers:
#  * the examples' OpenCL runs are left out: they check generated kernels (run
#    by PoCL, not instrumented), which the normal build already compares with
#    NumPy; the host code they use is covered by the OpenCL unit tests;
#  * every other test runs with AddressSanitizer and UBSan, and with
#    LeakSanitizer except the tests labelled `opencl` (they load PoCL, whose
#    worker threads crash LeakSanitizer's exit-time tracer on some machines:
#    "Tracer caught signal 11"); see docs/testing.md.
ASAN_LEAKS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
ASAN_NO_LEAKS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
ASAN_OPTIONS="$ASAN_LEAKS" CTEST_EXTRA="-LE opencl" run_suite build-asan -DTILEC_SANITIZE=ON || status=1
echo "== test build-asan (OpenCL tests, without LeakSanitizer)"
ASAN_OPTIONS="$ASAN_NO_LEAKS" TILEC_CACHE_DIR="$PWD/build-asan/test-kernel-cache" \
  ctest --test-dir build-asan --output-on-failure -j "$JOBS" -L opencl -E '^example\.opencl\.' \
  --no-tests=error 2>&1 | tee -a "$CTEST_LOG" || status=1

# ThreadSanitizer: only the tests labelled `threads` (tests/CMakeLists.txt),
# and only their binaries are built. They use the LLVM device only: PoCL's
# own threads are not instrumented (docs/testing.md).
echo "== configure build-tsan" &&
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTILEC_WERROR=ON \
    -DTILEC_TSAN=ON &&
  echo "== build build-tsan" &&
  ninja -C build-tsan -j "$JOBS" tilec_threads_tests &&
  echo "== test build-tsan" &&
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}" \
    ctest --test-dir build-tsan --output-on-failure -j "$JOBS" -L threads --no-tests=error 2>&1 |
    tee -a "$CTEST_LOG" || status=1

# libFuzzer: every harness for 20000 executions with seed 1.
bash scripts/fuzz.sh 20000 || status=1

# One closing line for the whole run, over every ctest summary above
# ("N% tests passed, F tests failed out of T").
read -r passed failed < <(sed -n 's/^[0-9]*% tests passed, \([0-9]*\) tests\{0,1\} failed out of \([0-9]*\)$/\1 \2/p' \
  "$CTEST_LOG" | awk '{f += $1; t += $2} END {print t - f, f + 0}')
if ((${passed:-0} == 0)); then
  echo "test.sh: no test ran" >&2
  status=1
fi

if ((status != 0)); then
  echo "test.sh: FAILED (see the output above)" >&2
else
  echo "test.sh: all builds and tests passed"
fi
echo "ctest: ${passed:-0} passed, ${failed:-0} failed"
exit "$status"
