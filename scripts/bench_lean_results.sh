#!/usr/bin/env bash
# Lean results, measured (docs/benchmarks.md): the bytes and the round trip of
# `run_command "echo hi"` before and after, side by side in one run. "Before" is a real
# build of a baseline revision (default: the merge-base with main), checked out in a
# temporary git worktree; both servers run on the same demo policy and are called in turn
# through the official MCP Python SDK client (pinned, in a venv this script makes).
#
# usage: scripts/bench_lean_results.sh [BASELINE_REV] [ITERATIONS]
set -euo pipefail

MCP_VERSION=2.3.0
root=$(git rev-parse --show-toplevel)
cd "$root"
rev=${1:-$(git merge-base HEAD main)}
iterations=${2:-300}
target=${CARGO_TARGET_DIR:-$root/target}
work="$target/bench-lean"
mkdir -p "$work"

build() { # build the server and its launcher of the tree $1 in the target folder $2
    (cd "$1" && CARGO_TARGET_DIR="$2" cargo build --release -q -p safe-mcp -p safety --bins)
}

baseline_src="$work/baseline-src"
git worktree remove --force "$baseline_src" 2>/dev/null || rm -rf "$baseline_src"
git worktree add --quiet --detach "$baseline_src" "$rev"
trap 'git -C "$root" worktree remove --force "$baseline_src"' EXIT
echo "building the baseline ($(git rev-parse --short "$rev")) and the current tree (release)..." >&2
# The baseline builds in a target folder of its own: cargo names a workspace crate's
# artifacts by its path relative to the workspace, so two trees sharing one target folder
# would overwrite each other's binaries and each take the other's as up to date. The
# dependencies are copied over once from this tree's release build, when there is one.
baseline_target="$work/baseline-target"
if [ ! -d "$baseline_target/release" ] && [ -d "$target/release" ]; then
    mkdir -p "$baseline_target"
    cp -a "$target/release" "$baseline_target/"
fi
build "$baseline_src" "$baseline_target"
build "$root" "$target"
mkdir -p "$work/baseline-bin" "$work/current-bin"
cp "$baseline_target/release/safe-mcp" "$baseline_target/release/safe-mcp-sandbox-exec" "$work/baseline-bin/"
cp "$target/release/safe-mcp" "$target/release/safe-mcp-sandbox-exec" "$work/current-bin/"

venv="$work/venv"
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$MCP_VERSION')" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "mcp==$MCP_VERSION"
fi

# The demo's sandbox (policy, jail handed to nobody when root), kept for the servers.
sandbox=$("$work/current-bin/safe-mcp" demo --keep | sed -n 's/^sandbox kept at //p')
trap 'git -C "$root" worktree remove --force "$baseline_src"; rm -rf "$sandbox"' EXIT

dirty=""
git diff --quiet HEAD || dirty=" + uncommitted changes"
"$venv/bin/python" "$root/scripts/bench_lean_results.py" \
    --baseline "$work/baseline-bin/safe-mcp" --baseline-name "$(git log -1 --format='%h %s' "$rev")" \
    --current "$work/current-bin/safe-mcp" --current-name "$(git log -1 --format='%h %s' HEAD)$dirty" \
    --config "$sandbox/policy.example.toml" --state "$sandbox/state" --iterations "$iterations"
"$work/current-bin/safe-mcp" audit verify "$sandbox/state/bench-lean-current.jsonl"
