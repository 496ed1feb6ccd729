"""What a newcomer meets first in the Python module: a syntax error raised
where the source is given, tilec.Error's fields (kind, message, file, line,
column), the input names, dir() of a function, and a positional call
answered with how to call."""
import numpy as np

import tilec

# A syntax error at tilec.function, before any shape is known.
try:
    tilec.function("function (A[N]) -> (B) {\n  B = A +;\n}", name="bad.tile")
    raise AssertionError("no error for a syntax error")
except tilec.Error as e:
    assert e.kind == "user", e.kind
    assert (e.file, e.line, e.column) == ("bad.tile", 2, 10), (e.file, e.line, e.column)
    assert e.message == "expected an expression, found ';'", e.message
    assert "bad.tile:2:10: error:" in str(e), str(e)

f = tilec.function("function (X[N], G[N], B[N]) -> (Y) { Y = X * G + B; }")
assert f.inputs == ["X", "G", "B"], f.inputs
names = dir(f)
for attr in ("inputs", "constants", "compiled_count", "invalidate_constants"):
    assert attr in names, names

x = np.arange(3, dtype=np.float32)
try:
    f(x, x, x)
    raise AssertionError("a positional call ran")
except TypeError as e:
    text = str(e)
    assert "keyword arguments named like its inputs (X, G, B)" in text and "f(X=..., G=..., B=...)" in text, text
    assert "array" not in text, text  # no dump of the arguments
np.testing.assert_array_equal(f(X=x, G=x, B=x), x * x + x)

# An error at a call: the same fields, no location outside Tile source.
try:
    f(X=np.ones(4, np.float32), G=x, B=x)
    raise AssertionError("mismatched shapes ran")
except tilec.Error as e:
    assert e.kind == "user" and "'N' is 3 here but 4" in e.message, (e.kind, e.message)
print("ok")
