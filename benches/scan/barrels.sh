#!/usr/bin/env bash
# Time and peak memory of `scan` on `export *` barrels across files: N modules of each kind
# re-exported by one barrel, each imported through it by a handler file of its own (so each
# name the barrel receives is wanted by one module only). Prints one line per kind and
# binary: seconds, max RSS, findings and how many are tainted from tool input. Each run has a
# 120 s timeout and a 4 GB address-space limit.
#
#   benches/scan/barrels.sh [N]                      # release build of this checkout, N=2000
#   BASELINE=path/to/old/safe-mcp benches/scan/barrels.sh 1000   # side by side with another
#
# Kinds: waiting (helpers that register nothing, not analysed when names reach the barrel),
# quiet (the same in Python), default (ESM modules with a default export too), commonjs
# (`module.exports = { g }`), no_export, namespace (`module.exports = lib` of a required
# module), nested (barrels of barrels), opaque (`module.exports = make(..)`), and
# imported_value (`module.exports = X` of an imported `X`: takes any name, bounded by
# project::MAX_OPEN_SEEDS, past which the barrel is an error of the scan). Barrels of barrels
# past their budget, with a handler per name: diamond (each module re-exports a shared module
# of N names and one of its own), twice (two shared modules of the same names), chain (each
# reaches the shared module through one more barrel), shadow (each re-exports a module that
# defines the shared module's names itself and re-exports it: the shared module's sinks are
# not reached), fan (a barrel per handler) and hub (a barrel per handler, each re-exporting one
# hub of N modules), hub_own (the same, each barrel re-exporting a small barrel of its own
# too), and kept (each module re-exports a module that defines the shared
# module's names itself and re-exports N barrels that each lead to it two ways: a name costs
# N steps, bounded by project::MAX_WALK_STEPS, past which names are sent on without that walk
# and the barrel is an error of the scan). Keep N at most 3 000 for these: past it the shared
# module has more than the 10 000 findings a file lists (exit 2, as designed).
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-2000}"
if [[ -z "${SCAN:-}" ]]; then
    cargo build -q --release -p safe-mcp
    SCAN=target/release/safe-mcp
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$n" "$work" <<'PY'
import os, sys
n, d = int(sys.argv[1]), sys.argv[2]
def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
esm = lambda i: f'import {{ execSync }} from "child_process";\nexport function g{i}(v) {{ execSync("ls " + v); }}\n'
cjs = lambda i: f'const {{ execSync }} = require("child_process");\nfunction g{i}(v) {{ execSync("ls " + v); }}\n'
kinds = {
    "waiting": lambda i: {f"w{i}.js": esm(i)},
    "default": lambda i: {f"w{i}.js": esm(i) + f"export default {{ g{i} }};\n"},
    "commonjs": lambda i: {f"w{i}.js": cjs(i) + f"module.exports = {{ g{i} }};\n"},
    "no_export": lambda i: {f"w{i}.js": cjs(i)},
    "namespace": lambda i: {f"w{i}.js": f'const lib = require("./v{i}.js");\nmodule.exports = lib;\n',
                            f"v{i}.js": cjs(i) + f"exports.g{i} = g{i};\n"},
    "nested": lambda i: {f"w{i}.js": f'export * from "./v{i}.js";\n', f"v{i}.js": esm(i)},
    "opaque": lambda i: {f"w{i}.js": cjs(i) + f"module.exports = make({{ g{i} }});\n"},
    "imported_value": lambda i: {f"w{i}.js": f'const {{ X }} = require("./v{i}.js");\nmodule.exports = X;\n',
                                 f"v{i}.js": 'const { execSync } = require("child_process");\n'
                                 f'class X {{ static g{i}(v) {{ execSync("ls " + v); }} }}\nmodule.exports = {{ X }};\n'},
}
for kind, files in kinds.items():
    write(f"{d}/{kind}/index.js", "".join(f'export * from "./w{i}.js";\n' for i in range(n)))
    for i in range(n):
        write(f"{d}/{kind}/m{i}.js", f'import {{ g{i} }} from "./index.js";\nconst server = {{}};\n'
              f'server.tool("t{i}", {{}}, async ({{x}}) => {{ g{i}(x); }});\n')
        for name, text in files(i).items():
            write(f"{d}/{kind}/{name}", text)
sinks = lambda p: 'import { execSync } from "child_process";\n' + "".join(
    f'export function {p}{i}(v) {{ execSync("ls " + v); }}\n' for i in range(n))
handler = lambda names, frm: (f'import {{ {", ".join(names)} }} from "./{frm}";\nconst server = {{}};\n'
    f'server.tool("t", {{}}, async ({{x}}) => {{ {" ".join(x + "(x);" for x in names)} }});\n')
nested = {
    "diamond": lambda i: 'export * from "./shared.js";\n',
    "twice": lambda i: 'export * from "./shared.js";\nexport * from "./shared2.js";\n',
    "chain": lambda i: f'export * from "./x{i}.js";\n',
    "shadow": lambda i: 'export * from "./q.js";\n',
    "fan": lambda i: 'export * from "./shared.js";\n',
}
for kind, first in nested.items():
    if kind != "fan":
        write(f"{d}/{kind}/index.js", "".join(f'export * from "./w{i}.js";\n' for i in range(n)))
    write(f"{d}/{kind}/shared.js", sinks("s"))
    for i in range(n):
        write(f"{d}/{kind}/w{i}.js", first(i) + f'export * from "./v{i}.js";\n')
        write(f"{d}/{kind}/v{i}.js", esm(i).replace(f"g{i}", f"h{i}"))
        frm = "index.js"
        if kind == "fan":
            write(f"{d}/fan/t{i}.js", f'export * from "./w{i}.js";\n')
            frm = f"t{i}.js"
        write(f"{d}/{kind}/m{i}.js", handler([f"s{i}", f"h{i}"], frm))
write(f"{d}/twice/shared2.js", sinks("s"))
write(f"{d}/shadow/q.js", sinks("s") + 'export * from "./shared.js";\n')
for i in range(n):
    write(f"{d}/chain/x{i}.js", 'export * from "./shared.js";\n')
write(f"{d}/hub_own/hub.js", "".join(f'export * from "./g{i}.js";\n' for i in range(n)))
for i in range(n):
    write(f"{d}/hub_own/g{i}.js", esm(i))
    write(f"{d}/hub_own/t{i}.js", f'export * from "./hub.js";\nexport * from "./x{i}.js";\n')
    write(f"{d}/hub_own/x{i}.js", f'export * from "./y{i}.js";\n')
    write(f"{d}/hub_own/y{i}.js", esm(i).replace(f"g{i}", f"u{i}"))
    write(f"{d}/hub_own/m{i}.js", handler([f"g{i}", f"u{i}"], f"t{i}.js"))
write(f"{d}/kept/index.js", "".join(f'export * from "./w{i}.js";\n' for i in range(n)))
write(f"{d}/kept/shared.js", sinks("s"))
write(f"{d}/kept/q.js", "".join(f"export function s{i}(v) {{ }}\n" for i in range(n))
      + "".join(f'export * from "./y{i}.js";\nexport * from "./z{i}.js";\n' for i in range(n)))
for i in range(n):
    write(f"{d}/kept/w{i}.js", f'export * from "./q.js";\nexport * from "./v{i}.js";\n')
    write(f"{d}/kept/z{i}.js", f'export * from "./y{i}.js";\n')
    write(f"{d}/kept/y{i}.js", 'export * from "./shared.js";\n')
    write(f"{d}/kept/v{i}.js", esm(i).replace(f"g{i}", f"h{i}"))
    write(f"{d}/kept/m{i}.js", handler([f"s{i}", f"h{i}"], "index.js"))
write(f"{d}/hub/hub.js", "".join(f'export * from "./g{i}.js";\n' for i in range(n)))
for i in range(n):
    write(f"{d}/hub/g{i}.js", esm(i))
    write(f"{d}/hub/t{i}.js", 'export * from "./hub.js";\n')
    write(f"{d}/hub/m{i}.js", handler([f"g{i}"], f"t{i}.js"))
write(f"{d}/quiet/pkg/__init__.py", "".join(f"from .w{i} import *\n" for i in range(n)))
for i in range(n):
    write(f"{d}/quiet/pkg/m{i}.py", f'from mcp.server.fastmcp import FastMCP\nfrom pkg import g{i}\n'
          f'mcp = FastMCP("x")\n@mcp.tool()\ndef t{i}(x: str):\n    g{i}(x)\n')
    write(f"{d}/quiet/pkg/w{i}.py", f'import os\ndef g{i}(v):\n    os.system("ls " + v)\n')
PY
run() {
    local label="$1" binary="$2" kind="$3"
    local code=0
    /usr/bin/time -f "%e %M" -o "$work/time" timeout 120 prlimit --as=4000000000 \
        "$binary" scan "$work/$kind" --format json > "$work/out.json" 2> "$work/err" || code=$?
    read -r seconds kb < <(tail -n 1 "$work/time")
    local counts
    counts=$(python3 -c '
import json, sys
try:
    report = json.load(open(sys.argv[1]))
except Exception:
    print("no report"); sys.exit()
f = report["findings"]
tainted = sum(1 for x in f if x["tainted_from_tool_input"])
print(len(f), "findings,", tainted, "tainted,", len(report["errors"]), "errors")
' "$work/out.json")
    printf '%-9s %-15s n=%-5s exit %-3s %7s s %8.1f MB  %s\n' "$label" "$kind" "$n" "$code" "$seconds" "$(echo "$kb / 1024" | bc -l)" "$counts"
}
for kind in waiting quiet default commonjs no_export namespace nested opaque imported_value \
    diamond twice chain shadow fan hub hub_own kept; do
    run this "$SCAN" "$kind"
    if [[ -n "${BASELINE:-}" ]]; then
        run baseline "$BASELINE" "$kind"
    fi
done
