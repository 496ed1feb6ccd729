"""`tilec cache info|list|clear` and the disk cache seen from two `tilec run`
processes: the first fills it, the second finds it; TILEC_CACHE=0 leaves it
alone. Usage: test_cache_cli.py TILEC SOURCE_DIR"""
import os
import subprocess
import sys
import tempfile

tilec, source_dir = sys.argv[1], sys.argv[2]
conv = os.path.join(source_dir, "examples", "conv_relu.tile")


def run(*args, env):
    result = subprocess.run([tilec, *args], env=env, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        sys.exit(f"tilec {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
    return result.stdout


with tempfile.TemporaryDirectory() as cache:
    env = dict(os.environ, TILEC_CACHE_DIR=cache)
    env.pop("TILEC_CACHE", None)
    conv_args = ["run", conv, "--random-inputs", "-s", "D=f32[1,6,5,3]", "-s", "K=f32[3,3,4,3]"]
    info = run("cache", "info", env=env)
    assert f"directory: {cache}" in info and "entries: 0" in info and "enabled: yes" in info, info
    first = run(*conv_args, env=env)
    assert "entries: 1\n" in run("cache", "info", env=env)
    second = run(*conv_args, env=env)
    assert first == second, (first, second)  # same output from the cached code
    listing = run("cache", "list", env=env).splitlines()
    assert len(listing) == 1 and listing[0].split()[0].endswith(".bin"), listing
    assert "removed 1 compiled kernels" in run("cache", "clear", env=env)
    assert "entries: 0" in run("cache", "info", env=env)
    # The tuning cache: info shows it, clear leaves it unless asked.
    tuning = os.path.join(cache, "tuning.jsonl")
    with open(tuning, "w") as f:
        f.write('{"a": 1}\n{"b": 2}\n')
    info = run("cache", "info", env=env)
    assert f"file: {tuning}" in info and "records: 2" in info, info
    assert "tuning records" not in run("cache", "clear", env=env)
    assert os.path.exists(tuning)
    out = run("cache", "clear", "--tuning", env=env)
    assert "removed 2 tuning records" in out and "compiled kernels" not in out, out
    assert not os.path.exists(tuning) and "records: 0" in run("cache", "info", env=env)
    # No subcommand: what to say.
    bare = subprocess.run([tilec, "cache"], env=env, capture_output=True, text=True, timeout=60)
    assert bare.returncode == 1 and "info (both caches), list" in bare.stderr, bare.stderr
    off = dict(env, TILEC_CACHE="0")
    run(*conv_args, env=off)
    assert "entries: 0" in run("cache", "info", env=env)
    assert "enabled: no" in run("cache", "info", env=off)
print("ok")
