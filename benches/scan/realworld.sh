#!/usr/bin/env bash
# Real-world check for `safe-mcp scan`: the public MCP server trees listed in
# benches/scan/realworld.txt, each at its pinned commit, scanned when a git copy is present on
# disk (nothing is fetched). Prints, per tree and in total, files, lines, time and findings per
# severity, then findings per rule (with how many are tainted from tool input and how many are
# in test code), and the time of semgrep (benches/scan/semgrep-rules.yml) and bandit (Python)
# on the same trees when those are installed. Not a test: figures depend on the machine.
#
# Usage: benches/scan/realworld.sh [REPOS_DIR]
#   REPOS_DIR holds one git copy per tree, named owner+name (a bare repository, a clone, or a
#   folder with a `repo` git directory inside); default /work/.mirror.
#   KEEP=1 keeps the extracted trees and reports.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
repos_dir="${1:-/work/.mirror}"
work_name=safe-mcp-realworld
# shellcheck source=trees.sh
source "$here/trees.sh"

trees=()
while read -r name commit; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  if ! gd="$(git_dir_of "$name")" || ! git --git-dir="$gd" cat-file -e "$commit^{commit}" 2>/dev/null; then
    echo "absent: $name at ${commit:0:12} (not on disk; skipped)"
    continue
  fi
  extract "$gd" "$commit" "$work/trees/${name/\//+}"
  trees+=("$name")
done < "$here/realworld.txt"
if [[ ${#trees[@]} -eq 0 ]]; then
  echo "no tree of benches/scan/realworld.txt is present under $repos_dir"; exit 1
fi

# Wall time of one run, after the files just written have reached the disk: writeback
# during a run added up to 40 % to it.
timed() {
  sync
  local TIMEFORMAT="%R" t
  t=$( { time "$@" >/dev/null 2>&1; } 2>&1 ) || true
  echo "$t" | tail -1
}

mkdir -p "$work/ours"
printf "\n%-36s %6s %8s %7s %5s %5s %5s %5s %5s\n" tree files lines "time s" CRIT HIGH MED LOW test
for name in "${trees[@]}"; do
  key="${name/\//+}"
  out="$work/ours/$key.json"
  t=$(timed "$scanner" "$work/trees/$key" --format json --severity-floor LOW --output "$out")
  jq -r --arg name "$name" --arg t "$t" '
    def n(s): [.findings[] | select(.severity == s)] | length;
    [$name, .summary.files_scanned, .summary.lines_scanned, $t,
     n("CRITICAL"), n("HIGH"), n("MEDIUM"), n("LOW"),
     ([.findings[] | select(.context == "test")] | length)] | @tsv' "$out" |
    awk -F'\t' '{ printf "%-36s %6s %8s %7.2f %5s %5s %5s %5s %5s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }'
done

# The whole corpus in one run: the time beside the other tools.
t_all=$(timed "$scanner" "$work/trees" --format json --severity-floor LOW --output "$work/all.json")
jq -r '"\nall trees: \(.summary.files_scanned) files, \(.summary.lines_scanned) lines, \(.findings | length) findings (\([.findings[] | select(.context == "test")] | length) in test code, \([.findings[] | select(.tainted_from_tool_input)] | length) tainted)"' "$work/all.json"
printf "\n%-40s %6s %6s %6s %6s %8s %6s\n" rule CRIT HIGH MED LOW tainted test
jq -r '.findings | group_by(.rule_id)[] |
  [.[0].rule_id,
   ([.[] | select(.severity == "CRITICAL")] | length),
   ([.[] | select(.severity == "HIGH")] | length),
   ([.[] | select(.severity == "MEDIUM")] | length),
   ([.[] | select(.severity == "LOW")] | length),
   ([.[] | select(.tainted_from_tool_input)] | length),
   ([.[] | select(.context == "test")] | length)] | @tsv' "$work/all.json" |
  awk -F'\t' '{ printf "%-40s %6s %6s %6s %6s %8s %6s\n", $1, $2, $3, $4, $5, $6, $7 }'

# Each language alone: the same files split by extension, lines per second of wall time.
printf "\n%-12s %8s %9s %7s %12s\n" language files lines "time s" "lines/s"
for language in python javascript; do
  case "$language" in
    python) pattern='.*\.py$' ;;
    javascript) pattern='.*\.\(ts\|tsx\|mts\|cts\|js\|jsx\|mjs\|cjs\)$' ;;
  esac
  dest="$work/by-language/$language"
  mkdir -p "$dest"
  (cd "$work/trees" && find . -type f -regex "$pattern" -print0 | xargs -0 cp --parents -t "$dest")
  t=$(timed "$scanner" "$dest" --format json --severity-floor LOW --output "$work/$language.json")
  jq -r --arg language "$language" --arg t "$t" \
    '[$language, .summary.files_scanned, .summary.lines_scanned, $t] | @tsv' "$work/$language.json" |
    awk -F'\t' '{ printf "%-12s %8s %9s %7.2f %12.0f\n", $1, $2, $3, $4, ($4 > 0 ? $3 / $4 : 0) }'
done

printf "\n%-28s %8s %8s\n" tool "wall s" ratio
printf "%-28s %8.2f %8s\n" "safe-mcp scan (all trees)" "$t_all" "1.0"
if command -v semgrep >/dev/null; then
  export SEMGREP_SEND_METRICS=off SEMGREP_ENABLE_VERSION_CHECK=0
  # The same files as ours: semgrep's default ignores (tests/, *.min.js, files over 1 MB, ...)
  # are replaced by our own skips, or it would read under half the lines.
  printf 'node_modules/\n.git/\n' > "$work/trees/.semgrepignore"
  t=$(cd "$work/trees" && timed semgrep scan --metrics=off --disable-version-check --no-git-ignore \
    --config "$here/semgrep-rules.yml" --json --timeout 0 --max-target-bytes 8388608 \
    --output "$work/semgrep.json" .)
  rm -f "$work/trees/.semgrepignore"
  printf "%-28s %8.2f %8.1fx  (%s files)\n" "semgrep (same rules)" "$t" "$(echo "$t / $t_all" | bc -l)" \
    "$(jq '.paths.scanned | length' "$work/semgrep.json")"
else
  echo "semgrep: not installed (pip install semgrep), not timed"
fi
if command -v bandit >/dev/null; then
  t=$(timed bandit -q -r -f json -o "$work/bandit.json" "$work/trees")
  printf "%-28s %8.2f %8.1fx\n" "bandit (Python only)" "$t" "$(echo "$t / $t_all" | bc -l)"
else
  echo "bandit: not installed (pip install bandit), not timed"
fi
