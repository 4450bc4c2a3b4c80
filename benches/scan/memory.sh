#!/usr/bin/env bash
# Peak memory of `scan` on the densest inputs the token bound still admits, and on files past
# it (refused with a message, never parsed). Prints one line per file: size, outcome, max RSS.
#
#   benches/scan/memory.sh            # builds and uses the scan example (debug)
#   SCAN=path/to/safe-mcp benches/scan/memory.sh   # any binary taking `scan ARGS` or ARGS
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ -z "${SCAN:-}" ]]; then
    cargo build -q -p scan --example scan
    SCAN=(target/debug/examples/scan)
else
    SCAN=("$SCAN" scan)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import sys, os
d = sys.argv[1]
mb = 1024 * 1024
def write(name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)
# Densest code: `a=1;` is 4 tokens in 4 bytes. Just under the bounds (5 M tokens JS, 2 M
# Python/Rust), then four times past them.
write("dense-js-under.js", "a=1;" * (1_240_000))
write("dense-py-under.py", "a=1;" * (495_000) + "\n")
write("dense-rs-under.rs", "fn f(){" + "a=1;" * (495_000) + "}")
write("dense-js-over.js", "a=1;" * (5 * mb))
write("dense-py-over.py", "a=1;" * (2 * mb) + "\n")
# Ordinary-looking 20 MB file: long string literals, few tokens.
write("strings-20mb.js", "const rows = [\n" + ('  "' + "x" * 1000 + '",\n') * (20 * 1024) + "];\n")
# One 6.6 MB line with a finding every 11 bytes: bounded findings, linear columns.
write("one-line-hits.js", "const cp=require('child_process');" + "cp.exec(x);" * (600_000))
PY
for file in "$work"/*; do
    name=$(basename "$file")
    size=$(stat -c %s "$file")
    /usr/bin/time -f "%M" -o "$work/.rss" "${SCAN[@]}" "$file" --max-file-size 100000000 \
        --format json >"$work/.out" 2>"$work/.err" || true
    outcome=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
s = r["summary"]
why = (r["skipped"] or r["errors"] or [{}])[0]
print(f"scanned={s['"'"'files_scanned'"'"']} findings={len(r['"'"'findings'"'"'])} skipped={s['"'"'files_skipped'"'"']} errors={len(r['"'"'errors'"'"'])}", (why.get("reason") or why.get("message") or "")[:60])
' "$work/.out" 2>/dev/null || echo "no report: $(tail -1 "$work/.err")")
    printf '%-22s %10s bytes  max RSS %8s KB  %s\n' "$name" "$size" "$(tail -1 "$work/.rss")" "$outcome"
done
