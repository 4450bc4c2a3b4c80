#!/usr/bin/env bash
# Lay out a demo sandbox next to a policy file: sandbox/terminal, sandbox/files, state/.
# Usage: scripts/make_demo_sandbox.sh [DIR]   (DIR defaults to the repository root)
# The layout matches the relative paths in policy.example.toml.
set -euo pipefail
dir="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
mkdir -p "$dir/sandbox/terminal" "$dir/sandbox/files" "$dir/state"

# Terminal jail: one file to cat.
printf 'demo file\n' > "$dir/sandbox/terminal/notes.txt"

# Files workspace: ordinary files, a dotfile, an installer and a symlink.
ws="$dir/sandbox/files"
printf 'PNG demo image bytes, not a real picture\n' > "$ws/photo.png"   # 41 bytes
printf 'PDF demo report\n' > "$ws/report.pdf"                            # 16 bytes
printf 'alias ll="ls -l"\n' > "$ws/.bashrc"
printf 'MZ demo installer\n' > "$ws/setup.exe"
# A symlink that leads out of the workspace: never moved, whatever is asked.
printf 'outside the workspace\n' > "$dir/state/outside.pdf"
ln -sfn ../../state/outside.pdf "$ws/link.pdf"
echo "demo sandbox ready in $dir"
