#!/usr/bin/env bash
# Speed benchmark for `safe-mcp scan` (issue 5, item 8): installs real JavaScript (npm) and
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

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/work/target-scan}"
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

count() { # files lines for a tree and a find expression
  local root="$1"; shift
  local files lines
  files=$(find "$root" -type d -name node_modules -prune -o -type f \( "$@" \) -print | wc -l)
  lines=$(find "$root" -type d -name node_modules -prune -o -type f \( "$@" \) -print0 | xargs -0 cat | wc -l)
  echo "$files $lines"
}
# The JS corpus is node_modules itself (the packages), scanned as the root.
read -r js_files js_lines < <(count "$js/node_modules" -name '*.js' -o -name '*.mjs' -o -name '*.cjs' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.tsx' -o -name '*.jsx')
read -r py_files py_lines < <(count "$py" -name '*.py')
echo "corpus: JS/TS $js_files files, $js_lines lines; Python $py_files files, $py_lines lines"

now() { date +%s.%N; }
timed() { # label command... ; prints seconds
  local start end
  start=$(now)
  "$@" >/dev/null 2>&1 || true
  end=$(now)
  echo "$end - $start" | bc -l
}
rate() { echo "scale=0; $1 / $2" | bc -l; }

# Warm the page cache once so every tool reads from memory.
cat "$js"/node_modules -r >/dev/null 2>&1 || true
"$scanner" "$js/node_modules" --format json --output "$work/ours-js.json" >/dev/null 2>&1 || true

ours_js=$(timed "$scanner" "$js/node_modules" --format json --output "$work/ours-js.json")
ours_py=$(timed "$scanner" "$py" --format json --output "$work/ours-py.json")
semgrep_bin="$work/venv/bin/semgrep"
export SEMGREP_SEND_METRICS=off SEMGREP_ENABLE_VERSION_CHECK=0
semgrep_js=$(timed "$semgrep_bin" scan --metrics=off --disable-version-check --no-git-ignore --config "$here/semgrep-rules.yml" --json --output "$work/semgrep-js.json" --max-target-bytes 8000000 --exclude-rule python_shell --exclude-rule python_exec_dynamic "$js/node_modules")
semgrep_py=$(timed "$semgrep_bin" scan --metrics=off --disable-version-check --no-git-ignore --config "$here/semgrep-rules.yml" --json --output "$work/semgrep-py.json" --max-target-bytes 8000000 "$py")
bandit_py=$(timed "$work/venv/bin/bandit" -q -r -f json -o "$work/bandit-py.json" "$py")

summary() { jq -r "$1" "$2" 2>/dev/null || echo "?"; }
echo
echo "our scanner saw:   JS $(summary '.summary | "\(.files_scanned) files, \(.lines_scanned) lines, \(.files_skipped) skipped"' "$work/ours-js.json"), $(summary '.errors | length' "$work/ours-js.json") parse errors, $(summary '.findings | length' "$work/ours-js.json") findings"
echo "                   Py $(summary '.summary | "\(.files_scanned) files, \(.lines_scanned) lines, \(.files_skipped) skipped"' "$work/ours-py.json"), $(summary '.errors | length' "$work/ours-py.json") parse errors, $(summary '.findings | length' "$work/ours-py.json") findings"
echo "semgrep saw:       JS $(summary '.paths.scanned | length' "$work/semgrep-js.json") files, $(summary '.results | length' "$work/semgrep-js.json") results; Py $(summary '.paths.scanned | length' "$work/semgrep-py.json") files, $(summary '.results | length' "$work/semgrep-py.json") results"
echo "bandit saw:        Py $(summary '.metrics._totals.loc' "$work/bandit-py.json") loc, $(summary '.results | length' "$work/bandit-py.json") results"
echo
printf "%-26s %10s %12s %14s\n" "tool / tree" "seconds" "files/s" "lines/s"
row() { printf "%-26s %10.2f %12s %14s\n" "$1" "$2" "$(rate "$3" "$2")" "$(rate "$4" "$2")"; }
row "safe-mcp scan  JS/TS" "$ours_js" "$js_files" "$js_lines"
row "semgrep        JS/TS" "$semgrep_js" "$js_files" "$js_lines"
row "safe-mcp scan  Python" "$ours_py" "$py_files" "$py_lines"
row "semgrep        Python" "$semgrep_py" "$py_files" "$py_lines"
row "bandit         Python" "$bandit_py" "$py_files" "$py_lines"
echo
printf "speed-up vs semgrep: JS/TS %.1fx, Python %.1fx; vs bandit (Python): %.1fx\n" \
  "$(echo "$semgrep_js / $ours_js" | bc -l)" "$(echo "$semgrep_py / $ours_py" | bc -l)" "$(echo "$bandit_py / $ours_py" | bc -l)"
echo "cores: $(nproc)"
