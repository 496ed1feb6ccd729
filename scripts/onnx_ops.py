#!/usr/bin/python3
"""The table of supported ONNX ops in docs/onnx.md, generated from the
importer's registry (`tilec import --ops`) and the ONNX backend node tests'
per-op counts (`tilec_onnx_node_tests --ops`).

    /usr/bin/python3 scripts/onnx_ops.py --build build            # rewrite the table
    /usr/bin/python3 scripts/onnx_ops.py --build build --check    # fail if the ops listed differ (ctest)
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

BEGIN, END = "<!-- ops:begin (scripts/onnx_ops.py) -->", "<!-- ops:end -->"


def registry(tilec):
    out = subprocess.run([tilec, "import", "--ops"], check=True, capture_output=True, text=True).stdout
    ops = {}
    for line in out.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        ops[cells[0]] = cells[1]
    return ops


def table_ops(text):
    body = text.split(BEGIN)[1].split(END)[0]
    ops = {}
    for line in body.splitlines():
        m = re.match(r"\| (\w+) \| ([0-9, ]+) \|", line)
        if m:
            ops[m.group(1)] = m.group(2).strip()
    return ops


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(root, "build"))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    tilec = os.path.join(args.build, "tools", "tilec")
    doc = os.path.join(root, "docs", "onnx.md")
    with open(doc) as f:
        text = f.read()
    ops = registry(tilec)
    if args.check:
        listed = table_ops(text)
        if listed != ops:
            missing = sorted(set(ops) - set(listed))
            extra = sorted(set(listed) - set(ops))
            changed = sorted(k for k in set(ops) & set(listed) if ops[k] != listed[k])
            print(f"docs/onnx.md's op table is stale: missing {missing}, not converted {extra}, versions "
                  f"differ {changed}; run /usr/bin/python3 scripts/onnx_ops.py")
            return 1
        print(f"docs/onnx.md lists the {len(ops)} converted ops")
        return 0
    counts = {}
    summary = {}
    with tempfile.TemporaryDirectory() as tmp:
        for target in ("llvm", "opencl"):
            path = os.path.join(tmp, target + ".md")
            r = subprocess.run([os.path.join(args.build, "tests", "onnx", "tilec_onnx_node_tests"), "--target", target,
                                "--ops", path], capture_output=True, text=True)
            summary[target] = r.stdout.strip().splitlines()[-1]
            with open(path) as f:
                for line in f.read().splitlines()[2:]:
                    cells = [c.strip() for c in line.strip("|").split("|")]
                    counts.setdefault(cells[0], {})[target] = (int(cells[1]), int(cells[2]))
    lines = [BEGIN, "", f"{summary['llvm']}  ", f"{summary['opencl']}", "",
             "| op | converter versions (opset) | node tests passed / failed on llvm | on opencl |",
             "|---|---|---|---|"]
    for op, versions in sorted(ops.items()):
        c = counts.get(op, {})
        cell = lambda t: f"{c[t][0]} / {c[t][1]}" if t in c else "-"
        lines.append(f"| {op} | {versions} | {cell('llvm')} | {cell('opencl')} |")
    lines += ["", END]
    text = text.split(BEGIN)[0] + "\n".join(lines) + text.split(END)[1]
    with open(doc, "w") as f:
        f.write(text)
    print(f"wrote {len(ops)} ops into docs/onnx.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
