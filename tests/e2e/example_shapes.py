"""Prints the input shapes each example of examples/ is tested with, one line
per example: `NAME INPUT=TYPE[DIMS] ...` (the shapes of the inputs
tests/e2e/example_specs.py makes, with the seed scripts/replay.py uses).
For C++ tests that compile every example (sem_parser_test); the build
writes the list (tests/CMakeLists.txt).

    /usr/bin/python3 tests/e2e/example_shapes.py [OUTPUT]   # default: stdout
"""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "int8": "i8", "int16": "i16",
          "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
          "uint64": "u64", "bool": "bool"}


def lines() -> list[str]:
    try:
        import numpy as np
    except ImportError:  # the test that reads the list says what is missing
        return ["# no shapes: this Python has no NumPy (set TILEC_PYTHON)"]
    sys.path.insert(0, str(HERE))
    import example_specs  # noqa: E402 (the specs live beside this script)
    examples = HERE.parent.parent / "examples"
    out = []
    for name, spec in sorted(example_specs.SPECS.items()):
        if not (examples / f"{name}.tile").exists():
            continue
        inputs, _ = spec.make(np.random.default_rng(zlib.crc32(name.encode())))
        shapes = []
        for key, value in inputs.items():
            value = np.asarray(value)
            dims = ",".join(str(d) for d in value.shape)
            shapes.append(f"{key}={DTYPES[str(value.dtype)]}[{dims}]")
        out.append(" ".join([name, *shapes]))
    return out


def main() -> None:
    text = "".join(line + "\n" for line in lines())
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
