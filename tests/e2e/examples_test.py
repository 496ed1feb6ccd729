#!/usr/bin/python3
"""End-to-end test of examples/*.tile against NumPy.

For every example, random inputs are made by its spec (example_specs.py),
written as .npy files, run through

    tilec run examples/NAME.tile --in X=x.npy ... --out Y=y.npy ... --target T

in a temporary directory, and the outputs are compared with the spec's NumPy
reference: exactly for integers and bools, with np.allclose for floats
(rtol 1e-4 / atol 1e-5 for f32, looser for f16, tighter for f64). Shapes and
element types must match exactly (a bool output may also come back as a 0/1
integer array).

Run with /usr/bin/python3 (the interpreter that has NumPy):
    tests/e2e/examples_test.py --tilec build/tools/tilec --source-dir .
    tests/e2e/examples_test.py --tilec ... --source-dir . --only matmul
    tests/e2e/examples_test.py --source-dir . --list
    tests/e2e/examples_test.py --source-dir . --check-specs
Exit status 0 when every selected example passes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import example_specs  # noqa: E402

# Default (rtol, atol) per float dtype.
FLOAT_TOL = {
    np.dtype(np.float16): (1e-2, 1e-2),
    np.dtype(np.float32): (1e-4, 1e-5),
    np.dtype(np.float64): (1e-10, 1e-12),
}
RUN_TIMEOUT_S = 300


def example_names(source_dir: Path) -> list[str]:
    return sorted(p.stem for p in (source_dir / "examples").glob("*.tile"))


def check_specs(source_dir: Path) -> list[str]:
    """Problems with the pairing of example files and specs (empty if none)."""
    files = set(example_names(source_dir))
    specs = set(example_specs.SPECS)
    problems = [f"examples/{n}.tile has no spec in example_specs.py" for n in sorted(files - specs)]
    problems += [f"spec {n} has no examples/{n}.tile" for n in sorted(specs - files)]
    return problems


def compare(name: str, expected: np.ndarray, actual: np.ndarray,
            tol: tuple[float, float] | None) -> str | None:
    """None if `actual` matches `expected`, else a one-line description of the difference."""
    if actual.shape != expected.shape:
        return f"{name}: shape {actual.shape}, expected {expected.shape}"
    if expected.dtype == np.bool_:
        if actual.dtype != np.bool_:
            if not (np.issubdtype(actual.dtype, np.integer) and np.isin(actual, (0, 1)).all()):
                return f"{name}: dtype {actual.dtype} with non-0/1 values, expected bool"
            actual = actual.astype(np.bool_)
    elif actual.dtype != expected.dtype:
        return f"{name}: dtype {actual.dtype}, expected {expected.dtype}"

    if np.issubdtype(expected.dtype, np.floating):
        rtol, atol = tol or FLOAT_TOL[expected.dtype]
        a64, e64 = actual.astype(np.float64), expected.astype(np.float64)
        ok = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
    else:
        a64, e64 = actual.astype(np.int64), expected.astype(np.int64)
        ok = a64 == e64
    if ok.all():
        return None

    bad = np.argwhere(~ok)
    first = tuple(int(i) for i in bad[0]) if expected.ndim else ()
    with np.errstate(invalid="ignore"):
        err = np.abs(a64 - e64)
    finite = err[np.isfinite(err)]
    max_err = finite.max() if finite.size else float("nan")
    return (f"{name}: {len(bad)} of {expected.size} elements differ, max abs error {max_err:.6g}, "
            f"first at {list(first)}: got {actual[first]!r}, expected {expected[first]!r}")


def run_example(name: str, tilec: str, source_dir: Path, target: str) -> tuple[bool, str]:
    spec = example_specs.SPECS[name]
    # A seed per example, stable across runs and independent of the run order.
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    inputs, expected = spec.make(rng)
    tile = source_dir / "examples" / f"{name}.tile"
    with tempfile.TemporaryDirectory(prefix=f"tilec_example_{name}_") as tmp:
        cmd = [tilec, "run", str(tile)]
        for key, value in inputs.items():
            path = os.path.join(tmp, f"in_{key}.npy")
            np.save(path, np.asarray(value))
            cmd += ["--in", f"{key}={path}"]
        out_paths = {key: os.path.join(tmp, f"out_{key}.npy") for key in expected}
        for key, path in out_paths.items():
            cmd += ["--out", f"{key}={path}"]
        cmd += ["--target", target]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return False, f"timed out after {RUN_TIMEOUT_S} s: {' '.join(cmd)}"
        if proc.returncode != 0:
            msg = (proc.stderr or proc.stdout).strip()
            return False, f"tilec exited with {proc.returncode}:\n    " + msg.replace("\n", "\n    ")
        problems = []
        for key, path in out_paths.items():
            if not os.path.exists(path):
                problems.append(f"{key}: tilec wrote no {os.path.basename(path)}")
                continue
            try:
                actual = np.load(path, allow_pickle=False)
            except Exception as e:  # noqa: BLE001 (any unreadable file is a failure)
                problems.append(f"{key}: cannot read the output .npy: {e}")
                continue
            diff = compare(key, np.asarray(expected[key]), actual, spec.tol)
            if diff:
                problems.append(diff)
        if problems:
            return False, "\n    ".join(problems)
    return True, ""


def main() -> int:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tilec", help="path to the tilec binary")
    parser.add_argument("--source-dir", type=Path, default=here.parent.parent,
                        help="repository root (holds examples/)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="run only this example (repeatable)")
    parser.add_argument("--target", default="ref", help="tilec --target (default: ref)")
    parser.add_argument("--list", action="store_true", help="list the examples and exit")
    parser.add_argument("--check-specs", action="store_true",
                        help="only check that every example has a spec and vice versa")
    args = parser.parse_args()

    source_dir = args.source_dir.resolve()
    names = example_names(source_dir)
    if args.list:
        print("\n".join(names))
        return 0

    problems = check_specs(source_dir)
    for p in problems:
        print(f"FAIL spec-coverage: {p}")
    if args.check_specs:
        if not problems:
            print(f"PASS spec-coverage: {len(names)} examples, each with a spec")
        return 1 if problems else 0

    if not args.tilec:
        parser.error("--tilec is required to run examples")
    selected = args.only or names
    unknown = [n for n in selected if n not in example_specs.SPECS or n not in names]
    if unknown:
        print(f"FAIL unknown example(s): {', '.join(unknown)}")
        return 1
    if args.only:
        problems = []  # coverage is its own ctest; a single example does not fail on it

    failed = []
    for name in selected:
        ok, detail = run_example(name, args.tilec, source_dir, args.target)
        print(f"{'PASS' if ok else 'FAIL'} {name}" + ("" if ok else f"\n    {detail}"), flush=True)
        if not ok:
            failed.append(name)
    print(f"{len(selected) - len(failed)} of {len(selected)} examples passed"
          + (f"; failed: {' '.join(failed)}" if failed else ""))
    return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main())
