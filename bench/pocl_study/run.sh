#!/bin/sh
# Builds the study driver against /work/build-lead's libraries and runs the
# main variants (run from anywhere; the .cl files are read from this folder).
# Usage: bench/pocl_study/run.sh [st]   (st: one thread each side)
set -e
cd "$(dirname "$0")"
B=${B:-/work/build-lead}
OUT=${OUT:-/work/build-poclstudy}  # the binary stays out of the source tree
mkdir -p "$OUT"
g++ -std=c++20 -O2 -Wall -Wextra -I/work/main driver.cc -o "$OUT/driver" \
  $B/runtime/libtilec_runtime.a $B/hal/libtilec_hal.a $B/compiler/libtilec_compiler.a \
  $B/tile_lang/libtilec_lang.a $B/support/libtilec_support.a -lfmt -lOpenCL -ldnnl
if [ "$1" = st ]; then export OMP_NUM_THREADS=1 POCL_MAX_PTHREAD_COUNT=1; fi
"$OUT/driver" --runs 40 --rounds 3 \
  'tilec_current wg256|tilec_current.cl|1792,4,2|256,1,1|0|' \
  'covec P4NV4 kt|covec.cl|1,14,56|1,1,1|1|-DPB=4 -DNV=4' \
  'civec P4C4|civec.cl|16,14,56|1,1,1|0|-DPB=4 -DCB=4' \
  'civec_g P4C4|civec_g.cl|16,14,56|1,1,1|0|-DPB=4 -DCB=4 -DLO=0' \
  'scalar P4CN64 kt|scalar_blk.cl|1,14,56|1,1,1|1|-DPB=4 -DCN=64 -DKT=1'
