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
    assert "removed 1 entries" in run("cache", "clear", env=env)
    assert "entries: 0" in run("cache", "info", env=env)
    off = dict(env, TILEC_CACHE="0")
    run(*conv_args, env=off)
    assert "entries: 0" in run("cache", "info", env=env)
    assert "enabled: no" in run("cache", "info", env=off)
print("ok")
