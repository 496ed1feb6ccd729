#!/usr/bin/env bash
# The main job: build tilec, compile the seed's fused 3x3 convolution + ReLU
# (examples/conv_relu.tile) for the default device and run it on random
# inputs D f32[1,56,56,64] and K f32[3,3,64,64]; check the result against the
# reference evaluator, and the reference evaluator against NumPy.
#   bash scripts/main.sh [TARGET]     (TARGET defaults to llvm, the default device: the host CPU)
# Exits 1 if the result does not match.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET="${1:-llvm}"
PYTHON=/usr/bin/python3  # Debian's NumPy belongs to this interpreter

bash scripts/setup.sh
# Same configuration as scripts/test.sh, so the two share build/.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTILEC_WERROR=ON >/dev/null
ninja -C build tilec

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$PYTHON" - "$work" <<'PY'
import sys
import numpy as np
work = sys.argv[1]
rng = np.random.default_rng(2024)
np.save(f"{work}/d.npy", rng.uniform(-1, 1, (1, 56, 56, 64)).astype(np.float32))
np.save(f"{work}/k.npy", rng.uniform(-1, 1, (3, 3, 64, 64)).astype(np.float32))
PY

build/tools/tilec run examples/conv_relu.tile --target ref \
  --in D="$work/d.npy" --in K="$work/k.npy" --out R="$work/r_ref.npy"
start=$(date +%s.%N)
build/tools/tilec run examples/conv_relu.tile --target "$TARGET" \
  --in D="$work/d.npy" --in K="$work/k.npy" --out R="$work/r.npy"
end=$(date +%s.%N)

"$PYTHON" - "$work" "$TARGET" "$start" "$end" <<'PY'
import sys
import numpy as np
work, target, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
d = np.load(f"{work}/d.npy").astype(np.float64)
k = np.load(f"{work}/k.npy").astype(np.float64)
r = np.load(f"{work}/r.npy")
r_ref = np.load(f"{work}/r_ref.npy")
# O[n, x, y, co] = sum over i, j, ci of D[n, x+i-1, y+j-1, ci] * K[i, j, co, ci];
# taps outside D do not exist, which is zero padding by 1; then R = relu(O).
n, X, Y, ci = d.shape
padded = np.pad(d, ((0, 0), (1, 1), (1, 1), (0, 0)))
o = np.zeros((n, X, Y, k.shape[2]))
for i in range(3):
    for j in range(3):
        o += np.einsum("nxyc,oc->nxyo", padded[:, i:i + X, j:j + Y, :], k[i, j])
expected = np.maximum(o, 0)

def compare(name, got, want):
    ok = got.shape == want.shape and got.dtype == np.float32
    err = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max()) if ok else float("inf")
    ok = ok and bool(np.allclose(got, want, rtol=1e-4, atol=1e-4))
    print(f"{name}: max abs error {err:.2g} over {want.size} elements: {'OK' if ok else 'MISMATCH'}")
    if not ok:
        print(f"  got shape {got.shape} dtype {got.dtype}, expected {want.shape}", file=sys.stderr)
    return ok

ok = compare(f"conv_relu [{target}, {end - start:.2f} s] vs reference evaluator", r, r_ref)
ok = compare("reference evaluator vs NumPy", r_ref, expected) and ok
sys.exit(0 if ok else 1)
PY
