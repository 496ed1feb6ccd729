#!/usr/bin/env python3
"""Golden text tests: a small FileCheck.

Each test file holds one or more cases separated by a line `// -----`. A case
has one `// RUN: <command>` line, where `tilec` is the binary under test and
`%s` is a temporary file holding the case's own text (so a case is a Tile
program followed or preceded by its directives), and directives checked
against the command's combined stdout+stderr:

    // CHECK: text         text occurs at or after the current position
    // CHECK-NEXT: text    text occurs on the line right after the last match
    // CHECK-NOT: text     text does not occur between the last match and the next one
    // CHECK-EXIT: N       the command exits with N (default 0)

Matching is by substring on one line; `{{regex}}` embeds a regular expression.
Usage: run_golden.py --tilec PATH FILE...
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

DIRECTIVE = re.compile(r"^\s*//\s*(RUN|CHECK|CHECK-NEXT|CHECK-NOT|CHECK-EXIT):\s?(.*)$")


def compile_pattern(text):
    parts = re.split(r"\{\{(.*?)\}\}", text)
    regex = "".join(re.escape(p) if i % 2 == 0 else p for i, p in enumerate(parts))
    return re.compile(regex)


def run_case(tilec, case_text, where):
    run = None
    checks = []
    exit_code = 0
    for line in case_text.splitlines():
        m = DIRECTIVE.match(line)
        if not m:
            continue
        kind, arg = m.group(1), m.group(2).rstrip()
        if kind == "RUN":
            run = arg
        elif kind == "CHECK-EXIT":
            exit_code = int(arg)
        else:
            checks.append((kind, arg))
    if run is None:
        return [f"{where}: no RUN line"]
    with tempfile.NamedTemporaryFile("w", suffix=".tile", delete=False) as f:
        f.write(case_text)
        path = f.name
    try:
        argv = [tilec if a == "tilec" else a.replace("%s", path) for a in shlex.split(run)]
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    finally:
        os.unlink(path)
    output = proc.stdout.decode("utf-8", "replace").replace(path, "INPUT")
    lines = output.splitlines()
    errors = []
    if proc.returncode != exit_code:
        errors.append(f"{where}: exit code {proc.returncode}, expected {exit_code}")
    pos = 0          # next line to search from
    last = -1        # line of the last match
    pending_not = []
    for kind, arg in checks:
        pat = compile_pattern(arg)
        if kind == "CHECK-NOT":
            pending_not.append((arg, pat))
            continue
        if kind == "CHECK-NEXT":
            found = last + 1 if last + 1 < len(lines) and pat.search(lines[last + 1]) else None
        else:
            found = next((i for i in range(pos, len(lines)) if pat.search(lines[i])), None)
        if found is None:
            errors.append(f"{where}: {kind}: '{arg}' not found after line {last + 1}")
            break
        for text, npat in pending_not:
            for i in range(pos, found):
                if npat.search(lines[i]):
                    errors.append(f"{where}: CHECK-NOT: '{text}' found on output line {i + 1}")
        pending_not = []
        last, pos = found, found + 1
    for text, npat in pending_not:
        for i in range(pos, len(lines)):
            if npat.search(lines[i]):
                errors.append(f"{where}: CHECK-NOT: '{text}' found on output line {i + 1}")
    if errors:
        errors.append("--- output ---\n" + output + "--------------")
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tilec", required=True)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    failed = 0
    total = 0
    for path in args.files:
        text = open(path, encoding="utf-8").read()
        cases = re.split(r"^\s*//\s*-----\s*$", text, flags=re.M)
        line = 1
        for case in cases:
            total += 1
            errors = run_case(args.tilec, case, f"{os.path.basename(path)}:{line}")
            line += case.count("\n") + 1
            if errors:
                failed += 1
                print("\n".join(errors))
    print(f"{total - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
