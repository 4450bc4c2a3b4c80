#!/usr/bin/env bash
# Advisory recall of `safe-mcp scan`: the public MCP server trees listed in
# benches/scan/advisories.txt, each at the commit just before a published command-injection or
# argument-injection advisory was fixed, scanned when a git copy is present on disk (nothing is
# fetched). For every vulnerable sink listed there it prints whether the scanner found it (a
# finding of any rule within 2 lines of the listed line, in that file), the finding's rule and
# severity, and whether it is marked tainted from tool input; then per advisory and overall the
# number of sinks, found and tainted, with percentages. The product target is the taint flag on
# at least 80 % of the sinks. Not a test: it exits 0 whatever the figures; it exits non-zero
# only on a real error (the build fails, the scanner writes no report, the list is malformed).
#
# Usage: benches/scan/advisories.sh [REPOS_DIR]
#   REPOS_DIR holds one git copy per tree, named owner+name (a bare repository, a clone, or a
#   folder with a `repo` git directory inside); default /work/.mirror. A tree or commit that is
#   not there is reported as absent and skipped.
#   KEEP=1 keeps the extracted trees and reports.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
repos_dir="${1:-/work/.mirror}"
list="$here/advisories.txt"
command -v jq >/dev/null || { echo "jq is required" >&2; exit 2; }
[[ -r "$list" ]] || { echo "missing $list" >&2; exit 2; }

work_name=safe-mcp-advisories
# shellcheck source=trees.sh
source "$here/trees.sh"

# Parse the list into blocks: advisories.tsv (index, repo, commit, id) and sinks.tsv
# (index, path, line).
: > "$work/advisories.tsv"; : > "$work/sinks.tsv"
index=0; lineno=0
while IFS= read -r raw || [[ -n "$raw" ]]; do
  lineno=$((lineno + 1))
  [[ -z "${raw//[[:space:]]/}" || "$raw" =~ ^[[:space:]]*# ]] && continue
  if [[ "$raw" =~ ^[[:space:]] ]]; then
    sink="${raw#"${raw%%[![:space:]]*}"}"; sink="${sink%%[[:space:]]*}"
    [[ $index -gt 0 && "$sink" =~ ^(.+):([0-9]+)$ ]] ||
      { echo "$list:$lineno: expected '  path:line' inside a block: $raw" >&2; exit 2; }
    printf '%s\t%s\t%s\n' "$index" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" >> "$work/sinks.tsv"
  else
    read -r name commit id extra <<< "$raw"
    [[ -n "${id:-}" && -z "${extra:-}" && "$name" == */* && "$commit" =~ ^[0-9a-f]{7,40}$ ]] ||
      { echo "$list:$lineno: expected 'owner/name <commit> <advisory-id>': $raw" >&2; exit 2; }
    index=$((index + 1))
    printf '%s\t%s\t%s\t%s\n' "$index" "$name" "$commit" "$id" >> "$work/advisories.tsv"
  fi
done < "$list"
[[ $index -gt 0 ]] || { echo "$list lists no advisory" >&2; exit 2; }

# Per-sink results: index, path, line, found (1/0), rule, severity, tainted (1/0), finding line.
: > "$work/results.tsv"
present=0
while IFS=$'\t' read -r i name commit id; do
  if ! gd="$(git_dir_of "$name")" || ! git --git-dir="$gd" cat-file -e "$commit^{commit}" 2>/dev/null; then
    echo "absent: $name at ${commit:0:12} ($id; not on disk; skipped)"
    continue
  fi
  present=$((present + 1))
  tree="$work/trees/$i-${name/\//+}"
  extract "$gd" "$commit" "$tree"
  report="$work/reports/$i.json"
  mkdir -p "$work/reports"
  rc=0
  "$scanner" "$tree" --format json --severity-floor LOW --output "$report" >/dev/null 2>"$work/reports/$i.stderr" || rc=$?
  if [[ $rc -gt 2 || ! -s "$report" ]] || ! jq -e '.findings' "$report" >/dev/null 2>&1; then
    echo "error: the scanner wrote no report for $name at ${commit:0:12} (exit $rc):" >&2
    cat "$work/reports/$i.stderr" >&2
    exit 2
  fi
  errors=$(jq '.errors | length' "$report")
  [[ "$errors" -eq 0 ]] || echo "note: $name at ${commit:0:12}: $errors file(s) not parsed: $(jq -r '[.errors[].file | sub(".*/trees/[^/]+/"; "")] | join(", ")' "$report")"
  while IFS=$'\t' read -r si path line; do
    [[ "$si" == "$i" ]] || continue
    # The best finding near the sink: tainted first, then the highest severity, then the
    # nearest line.
    jq -r --arg path "$path" --argjson line "$line" --arg i "$i" '
      def rank(s): {"CRITICAL": 0, "HIGH": 1, "MEDIUM": 2, "LOW": 3}[s] // 4;
      [.findings[]
       | select((.file | ltrimstr("./")) as $f | $f == $path or ($f | endswith("/" + $path)))
       | select((.line - $line) | fabs <= 2)]
      | sort_by([(if .tainted_from_tool_input then 0 else 1 end), rank(.severity), ((.line - $line) | fabs)])
      | if length == 0 then [$i, $path, $line, 0, "-", "-", 0, "-"]
        else .[0] | [$i, $path, $line, 1, .rule_id, .severity,
                     (if .tainted_from_tool_input then 1 else 0 end), .line] end
      | @tsv' "$report" >> "$work/results.tsv"
  done < "$work/sinks.tsv"
done < "$work/advisories.tsv"
if [[ $present -eq 0 ]]; then
  echo "no tree of benches/scan/advisories.txt is present under $repos_dir"; exit 0
fi

pct() { if [[ "$2" -eq 0 ]]; then echo "-"; else awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f%%", 100 * a / b }'; fi; }

while IFS=$'\t' read -r i name commit id; do
  grep -q "^$i"$'\t' "$work/results.tsv" || continue
  printf "\n%s %s %s\n" "$id" "$name" "${commit:0:12}"
  printf "  %-52s %-6s %-6s %-32s %-9s\n" sink found taint rule severity
  awk -F'\t' -v i="$i" '$1 == i {
    sink = $2 ":" $3; if ($4 == 1 && $8 != $3) sink = sink " (@" $8 ")"
    printf "  %-52s %-6s %-6s %-32s %-9s\n", sink, ($4 ? "yes" : "NO"), ($7 ? "yes" : "NO"), $5, $6
  }' "$work/results.tsv"
done < "$work/advisories.tsv"

printf "\n%-22s %-40s %6s %6s %6s %8s %8s\n" advisory repository sinks found tainted "found %" "taint %"
total=0; total_found=0; total_tainted=0
while IFS=$'\t' read -r i name commit id; do
  grep -q "^$i"$'\t' "$work/results.tsv" || continue
  read -r n f t < <(awk -F'\t' -v i="$i" '$1 == i { n++; f += $4; t += $7 } END { print n + 0, f + 0, t + 0 }' "$work/results.tsv")
  total=$((total + n)); total_found=$((total_found + f)); total_tainted=$((total_tainted + t))
  printf "%-22s %-40s %6s %6s %6s %8s %8s\n" "$id" "$name" "$n" "$f" "$t" "$(pct "$f" "$n")" "$(pct "$t" "$n")"
done < "$work/advisories.tsv"
printf "%-22s %-40s %6s %6s %6s %8s %8s\n" all "$present of $index advisories present" "$total" "$total_found" "$total_tainted" "$(pct "$total_found" "$total")" "$(pct "$total_tainted" "$total")"
if [[ $total -gt 0 ]] && awk -v t="$total_tainted" -v n="$total" 'BEGIN { exit !(t * 100 >= 80 * n) }'; then
  echo "target (taint flag on >= 80 % of the sinks): met"
else
  echo "target (taint flag on >= 80 % of the sinks): not met"
fi
