#!/usr/bin/env bash
# How much of the scanner's Python time is the parse: the Python files of the real-world trees
# (benches/scan/realworld.txt, at their pinned commits, from git copies on disk; nothing is
# fetched), scanned whole by `safe-mcp scan` and parsed alone by tree-sitter-python (the
# scanner's parser) and by ruff_python_parser (benches/scan/parse, a package outside the
# workspace), RUNS times, alternating. Prints seconds and lines per second of each, and the
# share of the scan that tree-sitter's parse alone takes. Not a test: figures depend on the
# machine.
#
# Usage: benches/scan/parse.sh [REPOS_DIR] [RUNS]   (default /work/.mirror, 3 runs)
#   KEEP=1 keeps the extracted files.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
repos_dir="${1:-/work/.mirror}"
runs="${2:-3}"
work_name=safe-mcp-parse
# shellcheck source=trees.sh
source "$here/trees.sh"
(cd "$here/parse" && CARGO_TARGET_DIR="$CARGO_TARGET_DIR/parse-bench" cargo build --quiet --release)
parse_bench="$CARGO_TARGET_DIR/parse-bench/release/parse-bench"

python="$work/python"
while read -r name commit; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  if ! gd="$(git_dir_of "$name")" || ! git --git-dir="$gd" cat-file -e "$commit^{commit}" 2>/dev/null; then
    echo "absent: $name at ${commit:0:12} (not on disk; skipped)"
    continue
  fi
  tree="$work/tree/${name/\//+}"
  extract "$gd" "$commit" "$tree"
  (cd "$work/tree" && find "${name/\//+}" -type f -name '*.py' -print0 | xargs -0 -r cp --parents -t "$python")
  rm -rf "$tree"
done < <(mkdir -p "$python"; cat "$here/realworld.txt")
if [[ -z "$(find "$python" -name '*.py' -print -quit)" ]]; then
  echo "no Python file of benches/scan/realworld.txt is present under $repos_dir"; exit 1
fi

printf "%-4s %-26s %6s %9s %8s %10s %9s\n" run what files lines "wall s" "lines/s" "of scan"
for run in $(seq 1 "$runs"); do
  sync
  start=$(date +%s.%N)
  "$scanner" "$python" --format json --severity-floor LOW --output "$work/scan.json" >/dev/null 2>&1 || true
  end=$(date +%s.%N)
  scan_s=$(echo "$end - $start" | bc -l)
  jq -r --arg run "$run" --arg s "$scan_s" \
    '[$run, "safe-mcp scan", .summary.files_scanned, .summary.lines_scanned, $s] | @tsv' "$work/scan.json" |
    awk -F'\t' '{ printf "%-4s %-26s %6s %9s %8.2f %10.0f %9s\n", $1, $2, $3, $4, $5, $4 / $5, "1.00" }'
  "$parse_bench" "$python" |
    awk -F'\t' -v run="$run" -v scan="$scan_s" \
      '{ printf "%-4s %-26s %6s %9s %8.2f %10.0f %9.2f%s\n", run, $1 " parse", $2, $3, $4, $5, $4 / scan, ($6 > 0 ? "  (" $6 " files rejected)" : "") }'
done
