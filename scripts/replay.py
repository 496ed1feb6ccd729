"""Process replay: compile a corpus of Tile programs with two `tilec` binaries
and diff what they emit, so a refactor shows it changes no generated code.

    /usr/bin/python3 scripts/replay.py --base BASE_TILEC --new NEW_TILEC [--out DIR] [--only PATTERN]

scripts/replay.sh BASE builds BASE's tilec in a git worktree and calls this
with the work tree's build/tools/tilec.

The corpus: every program of examples/ (shapes from tests/e2e/example_specs.py),
every case of bench/suite (its shapes and layouts), and every `tilec compile`
or `tilec explain` line of the golden tests. Each program is emitted as the
sem IR and the LLVM IR (llvm target) and as OpenCL C (opencl target), for a
named CPU (`--cpu x86-64-v4` where both binaries take it), so the replay
does not depend on the host. Exit status 0 when every output is identical,
1 when some differ (each listed, with a unified diff of the first few).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import difflib
import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "int8": "i8", "int16": "i16",
          "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool"}
CPU = "x86-64-v4"


def example_programs() -> list[tuple[str, list[str]]]:
    """(name, tilec arguments) for every example with a spec."""
    import numpy as np
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    import example_specs  # noqa: E402 (the spec module lives beside the e2e tests)
    out = []
    for name, spec in sorted(example_specs.SPECS.items()):
        tile = ROOT / "examples" / f"{name}.tile"
        if not tile.exists():
            continue
        inputs, _ = spec.make(np.random.default_rng(zlib.crc32(name.encode())))
        args = [str(tile)]
        for key, value in inputs.items():
            value = np.asarray(value)
            dims = ",".join(str(d) for d in value.shape)
            args += ["-s", f"{key}={DTYPES[str(value.dtype)]}[{dims}]"]
        out.append((f"example/{name}", args))
    return out


def suite_programs() -> list[tuple[str, list[str]]]:
    """(name, tilec arguments) for every bench/suite case."""
    sys.path.insert(0, str(ROOT / "bench" / "suite"))
    import suite  # noqa: E402
    out = []
    for case in suite.CASES:
        args = [str(ROOT / "bench" / "suite" / case["tile"])]
        for key, dims in case["shapes"].items():
            args += ["-s", f"{key}=f32[{','.join(str(d) for d in dims)}]"]
        for key, layout in case.get("layouts", {}).items():
            args += ["--layout", f"{key}={layout}"]
        slug = re.sub(r"[^A-Za-z0-9]+", "_", case["name"]).strip("_")
        out.append((f"suite/{slug}", args))
    return out


def golden_commands(corpus: Path) -> list[tuple[str, list[str]]]:
    """(name, full tilec arguments) of every golden RUN line that compiles;
    each `// -----` case is written to its own file under `corpus`, as the
    golden runner does."""
    out = []
    for test in sorted((ROOT / "tests" / "golden").rglob("*.test")):
        rel = test.relative_to(ROOT / "tests" / "golden")
        cases = re.split(r"(?m)^\s*//\s*-----.*$", test.read_text())
        for c, text in enumerate(cases):
            path = corpus / f"{rel}.{c}.tile"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            for n, line in enumerate(text.splitlines(), 1):
                m = re.match(r"\s*//\s*RUN:\s*tilec\s+(.*)$", line)
                if not m:
                    continue
                words = shlex.split(m.group(1).replace("%s", str(path)))
                if not words or words[0] not in ("compile", "explain") or "-o" in words:
                    continue
                out.append((f"golden/{rel}.{c}:{n}", words))
    return out


def takes_cpu(tilec: str) -> bool:
    text = subprocess.run([tilec, "compile", "--help"], capture_output=True, text=True).stdout
    return "--cpu" in text


def jobs(only: str | None, cpu: bool, corpus: Path) -> list[tuple[str, list[str]]]:
    """Every (output name, tilec arguments) of the corpus."""
    pin = ["--cpu", CPU] if cpu else []
    out = []
    for name, args in example_programs() + suite_programs():
        out.append((f"{name}.sem", ["compile", *args, "--emit", "sem", *pin]))
        out.append((f"{name}.ll", ["compile", *args, "--emit", "llvm", *pin]))
        out.append((f"{name}.cl", ["compile", *args, "--target", "opencl", "--emit", "cl", *pin]))
    for name, words in golden_commands(corpus):
        out.append((f"{name}.txt", words + (pin if "--cpu" not in words else [])))
    if only:
        out = [j for j in out if fnmatch.fnmatch(j[0], only)]
    return out


def run(tilec: str, args: list[str]) -> str:
    env = dict(os.environ, TILEC_CACHE="0", TILEC_TUNING_CACHE="0")
    env.pop("TILEC_CPU", None)
    p = subprocess.run([tilec, *args], capture_output=True, text=True, env=env, timeout=600)
    # Timings are the only output that may change from run to run.
    text = re.sub(r"\b\d+(\.\d+)? ?(ms|us|s)\b", "<time>", p.stdout + p.stderr)
    text = re.sub(r'("[a-z_.]+": )\d+\.\d+', r"\1<time>", text)  # --json timings
    return f"exit {p.returncode}\n{text}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the tilec binary of the base commit")
    parser.add_argument("--new", required=True, help="the tilec binary of the work tree")
    parser.add_argument("--out", type=Path, help="write both sides' outputs under this folder")
    parser.add_argument("--only", help="only the outputs whose name matches this glob (e.g. 'suite/*')")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    cpu = takes_cpu(args.base) and takes_cpu(args.new)
    corpus = Path(tempfile.mkdtemp(prefix="tilec-replay-"))
    work = jobs(args.only, cpu, corpus)
    print(f"replay: {len(work)} outputs{' for --cpu ' + CPU if cpu else ' (the host CPU: a binary lacks --cpu)'}",
          flush=True)

    def both(job):
        name, words = job
        return name, run(args.base, words), run(args.new, words)

    differ = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, base, new in pool.map(both, work):
            if args.out:
                for side, text in (("base", base), ("new", new)):
                    path = args.out / side / name
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text)
            if base != new:
                differ.append((name, base, new))
    for name, base, new in differ[:5]:
        diff = difflib.unified_diff(base.splitlines(), new.splitlines(), f"base/{name}", f"new/{name}", lineterm="")
        print("\n".join(list(diff)[:60]))
    for name, _, _ in differ:
        print(f"differs: {name}")
    print(f"replay: {len(work) - len(differ)} identical, {len(differ)} differ")
    shutil.rmtree(corpus, ignore_errors=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
