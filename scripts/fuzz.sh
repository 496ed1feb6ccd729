#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz, build-fuzz/, clang-19 with
# ASan+UBSan) and runs each for a fixed number of executions with a fixed
# seed, starting from its seed corpus. Any crash, sanitizer report, timeout
# (an input running longer than 25 s, or TILEC_FUZZ_TIMEOUT) or InternalError
# fails the script; the failing input is left in build-fuzz/findings/ (see docs/testing.md).
#   scripts/fuzz.sh [RUNS] [HARNESS...]     RUNS defaults to 20000; harnesses:
#                                           parse bind compile npy layout capi sem
# CI (scripts/test.sh) runs `scripts/fuzz.sh 20000`; a campaign is
# `scripts/fuzz.sh 1000000`. TILEC_FUZZ_SEED (default 1) picks the seed;
# TILEC_FUZZ_TIMEOUT (default 25) the seconds after which an input counts as
# a hang (a campaign beside other work: a slow input starved of CPU is not one).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS="${1:-20000}"
shift || true
HARNESSES=("$@")
if ((${#HARNESSES[@]} == 0)); then HARNESSES=(parse bind compile npy layout capi sem); fi
SEED="${TILEC_FUZZ_SEED:-1}"
TIMEOUT="${TILEC_FUZZ_TIMEOUT:-25}"
JOBS="${TILEC_JOBS:-2}"
DIR=build-fuzz

# -O1 with line tables: the usual fuzzing build, and half the compile time of
# -O2 -g under the sanitizers. Assertions stay on (no NDEBUG).
cmake -S . -B "$DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTILEC_FUZZ=ON \
  -DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_C_COMPILER=clang-19 \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" >/dev/null
targets=()
for h in "${HARNESSES[@]}"; do targets+=("fuzz_$h"); done
ninja -C "$DIR" -j "$JOBS" "${targets[@]}"

# Seed corpora: the directories tests/fuzz/CMakeLists.txt replays in ctest.
seeds() {
  case "$1" in
    parse) echo examples tests/data/parse ;;
    bind | compile) echo examples ;;
    capi) echo examples tests/fuzz/seeds/capi ;;
    npy | layout | sem) echo "tests/fuzz/seeds/$1" ;;
  esac
  if [[ -d "tests/fuzz/regressions/$1" ]]; then echo "tests/fuzz/regressions/$1"; fi
}

export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
status=0
for h in "${HARNESSES[@]}"; do
  # A fresh working corpus each time, so a run depends only on RUNS and SEED.
  work="$DIR/corpus/$h"
  rm -rf "$work"
  mkdir -p "$work" "$DIR/findings"
  echo "== fuzz $h: $RUNS runs, seed $SEED"
  # shellcheck disable=SC2046
  if ! "$DIR/tests/fuzz/fuzz_$h" -runs="$RUNS" -seed="$SEED" -timeout="$TIMEOUT" -rss_limit_mb=2560 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$DIR/findings/$h-" \
      "$work" $(seeds "$h") 2>"$DIR/fuzz_$h.log"; then
    tail -n 60 "$DIR/fuzz_$h.log" >&2
    echo "fuzz $h: FINDING (input in $DIR/findings/, log in $DIR/fuzz_$h.log)" >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$DIR/fuzz_$h.log" || true
  fi
done
exit "$status"
