#!/usr/bin/env bash
# Process replay against a base commit (default: HEAD): builds the base's
# `tilec` in a git worktree (.replay/BASE, kept for the next replay), builds
# the work tree's (build/), compiles the whole corpus with both and diffs
# what they emit (scripts/replay.py). Exit status 0: no generated code
# changed; 1: the outputs that differ are listed.
#
#   bash scripts/replay.sh [BASE] [-- replay.py options, e.g. --only 'suite/*' --out /tmp/replay]
set -euo pipefail
cd "$(dirname "$0")/.."

base="${1:-HEAD}"
[[ $# -gt 0 ]] && shift
[[ "${1:-}" == "--" ]] && shift
sha="$(git rev-parse --verify "$base^{commit}")"
tree=".replay/${sha:0:12}"
if [[ ! -d "$tree" ]]; then
  git worktree add --detach "$tree" "$sha" >/dev/null
fi
# ccache with paths relative to each tree: the base's objects that the work
# tree's build already compiled (unchanged files) are reused.
export CCACHE_NOHASHDIR=true
CCACHE_BASEDIR="$PWD/$tree" cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
CCACHE_BASEDIR="$PWD/$tree" ninja -C "$tree/build" tilec >/dev/null
CCACHE_BASEDIR="$PWD" cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
CCACHE_BASEDIR="$PWD" ninja -C build tilec >/dev/null
echo "replay: base ${sha:0:12} ($base) against the work tree"
exec /usr/bin/python3 scripts/replay.py --base "$tree/build/tools/tilec" --new build/tools/tilec "$@"
