#!/usr/bin/env bash
# Speed benchmark for `safe-mcp scan`: installs real JavaScript (npm) and
# Python (pip) trees into a temporary folder, then scans them with our scanner (release build),
# semgrep (equivalent rules: benches/scan/semgrep-rules.yml) and bandit (Python part only), and
# prints files/s, lines/s and the ratios. Not a test: numbers depend on the machine.
#
# Usage: benches/scan/run.sh            (needs network access to npm and PyPI)
#        KEEP=1 benches/scan/run.sh     (keep the temporary folder and print its path)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
work="$(mktemp -d -t safe-mcp-scan-bench.XXXXXX)"
if [[ "${KEEP:-}" != 1 ]]; then trap 'rm -rf "$work"' EXIT; fi
echo "work folder: $work"
load_before="$(cut -d" " -f1-3 /proc/loadavg)"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
(cd "$repo" && cargo build --quiet --release -p scan --example scan)
scanner="$CARGO_TARGET_DIR/release/examples/scan"

# --- corpus -----------------------------------------------------------------------------
js="$work/js"; py="$work/py"
mkdir -p "$js" "$py"
(cd "$js" && npm init -y >/dev/null 2>&1 &&
  npm install --silent --no-audit --no-fund --ignore-scripts \
    typescript@5 @modelcontextprotocol/sdk execa shelljs zx webpack eslint @babel/core \
    rxjs lodash date-fns >/dev/null)
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check semgrep bandit
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --target "$py" \
  django==5.1.* requests sqlalchemy boto3 botocore
# Python 2 leftovers and test fixtures that are not Python 3 are real-world noise; keep them.

# Move the packages out of `node_modules` so semgrep's default ignores do not hide them; nested
# node_modules stay skipped by both tools (`.semgrepignore` below mirrors our own skip).
mv "$js/node_modules" "$js/corpus"
printf 'node_modules/\n.git/\n' > "$js/corpus/.semgrepignore"
printf '.git/\n' > "$py/.semgrepignore"

# Time a command: prints "wall_seconds cpu_seconds". The machine is shared, so CPU time
# (user+sys) is printed next to wall time.
timed() {
  sync # files just installed reach the disk first: writeback during a run slows it
  local TIMEFORMAT="%R %U %S" t
  t=$( { time "$@" >/dev/null 2>&1; } 2>&1 ) || true
  echo "$t" | tail -1 | awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }'
}

# Warm the page cache once so every tool reads from memory.
"$scanner" "$js/corpus" --format json --output "$work/ours-js.json" >/dev/null 2>&1 || true

semgrep_bin="$work/venv/bin/semgrep"
export SEMGREP_SEND_METRICS=off SEMGREP_ENABLE_VERSION_CHECK=0
semgrep_args=(scan --metrics=off --disable-version-check --no-git-ignore --config "$here/semgrep-rules.yml" --json --max-target-bytes 8000000 --timeout 0)
read -r ours_js ours_js_cpu < <(timed "$scanner" "$js/corpus" --format json --output "$work/ours-js.json")
read -r ours_py ours_py_cpu < <(timed "$scanner" "$py" --format json --output "$work/ours-py.json")
read -r semgrep_js semgrep_js_cpu < <(cd "$js/corpus" && timed "$semgrep_bin" "${semgrep_args[@]}" --output "$work/semgrep-js.json" .)
read -r semgrep_py semgrep_py_cpu < <(cd "$py" && timed "$semgrep_bin" "${semgrep_args[@]}" --output "$work/semgrep-py.json" .)
read -r bandit_py bandit_py_cpu < <(timed "$work/venv/bin/bandit" -q -r -f json -o "$work/bandit-py.json" "$py")

# Corpus size = the files and lines our scanner analysed (the same trees for every tool).
js_files=$(jq '.summary.files_scanned' "$work/ours-js.json"); js_lines=$(jq '.summary.lines_scanned' "$work/ours-js.json")
py_files=$(jq '.summary.files_scanned' "$work/ours-py.json"); py_lines=$(jq '.summary.lines_scanned' "$work/ours-py.json")
echo "corpus: JS/TS $js_files files, $js_lines lines; Python tree $py_files files, $py_lines lines"
rate() { echo "scale=0; $1 / $2" | bc -l; }

summary() { jq -r "$1" "$2" 2>/dev/null || echo "?"; }
echo
echo "our scanner saw:   JS $(summary '.summary | "\(.files_scanned) files, \(.lines_scanned) lines, \(.files_skipped) skipped"' "$work/ours-js.json"), $(summary '.errors | length' "$work/ours-js.json") parse errors, $(summary '.findings | length' "$work/ours-js.json") findings"
echo "                   Py $(summary '.summary | "\(.files_scanned) files, \(.lines_scanned) lines, \(.files_skipped) skipped"' "$work/ours-py.json"), $(summary '.errors | length' "$work/ours-py.json") parse errors, $(summary '.findings | length' "$work/ours-py.json") findings"
echo "semgrep saw:       JS $(summary '.paths.scanned | length' "$work/semgrep-js.json") files, $(summary '.errors | length' "$work/semgrep-js.json") errors, $(summary '.results | length' "$work/semgrep-js.json") results; Py $(summary '.paths.scanned | length' "$work/semgrep-py.json") files, $(summary '.results | length' "$work/semgrep-py.json") results"
echo "bandit saw:        Py $(summary '.metrics._totals.loc' "$work/bandit-py.json") loc, $(summary '.results | length' "$work/bandit-py.json") results"
echo
printf "%-24s %8s %8s %10s %12s\n" "tool / tree" "wall s" "cpu s" "files/s" "lines/s"
row() { printf "%-24s %8.2f %8.2f %10s %12s\n" "$1" "$2" "$3" "$(rate "$4" "$2")" "$(rate "$5" "$2")"; }
row "safe-mcp scan  JS/TS" "$ours_js" "$ours_js_cpu" "$js_files" "$js_lines"
row "semgrep        JS/TS" "$semgrep_js" "$semgrep_js_cpu" "$js_files" "$js_lines"
row "safe-mcp scan  Python" "$ours_py" "$ours_py_cpu" "$py_files" "$py_lines"
row "semgrep        Python" "$semgrep_py" "$semgrep_py_cpu" "$py_files" "$py_lines"
row "bandit         Python" "$bandit_py" "$bandit_py_cpu" "$py_files" "$py_lines"
echo "(files/s and lines/s: our scanner's file and line counts over each tool's wall time)"
echo
ratio() { echo "scale=1; $1 / $2" | bc -l; }
echo "semgrep / ours, wall: JS/TS $(ratio "$semgrep_js" "$ours_js")x, Python $(ratio "$semgrep_py" "$ours_py")x; cpu: JS/TS $(ratio "$semgrep_js_cpu" "$ours_js_cpu")x, Python $(ratio "$semgrep_py_cpu" "$ours_py_cpu")x"
echo "bandit / ours (Python), wall: $(ratio "$bandit_py" "$ours_py")x; cpu: $(ratio "$bandit_py_cpu" "$ours_py_cpu")x"
echo "cores: $(nproc); load average before: $load_before"
