#!/usr/bin/env bash
# Proves the wiring rule (docs/development.md): a server crate cannot touch the file system,
# start a process, open a socket, change its working folder or make raw system calls itself.
#
# 1. Every wiring crate's clippy.toml is a link to the one list, crates/wiring.clippy.toml.
# 2. The probe crate (crates/wiring-probe, outside the workspace, linked to the same list)
#    uses every listed item once, one per line, the item named in the line's comment; clippy
#    must flag every such line, naming that item, and every listed item must have a line.
#    A path that clippy cannot resolve (a typo, a moved item) is silently ignored by clippy,
#    so this is what shows the list holds.
# 3. No wiring crate depends directly on libc, rustix or nix (clippy cannot list a whole
#    crate); the same check run on the probe, which does depend on them, must refuse it.
# Offline: the probe's dependencies are the workspace's own, already in the cargo cache.
set -euo pipefail
cd "$(dirname "$0")/.."

LIST=crates/wiring.clippy.toml
PROBE=crates/wiring-probe
# The server crates. A new one is added here and links its clippy.toml.
WIRING_CRATES=(terminal files guard)
RAW_SYSCALL_CRATES='libc|rustix|nix'
failed=0
fail() {
  echo "wiring-lints: $*" >&2
  failed=1
}

# 1. One list.
list_real=$(realpath "$LIST")
for crate in "${WIRING_CRATES[@]}" ../crates/wiring-probe; do
  conf="crates/$crate/clippy.toml"
  [[ -L "$conf" && "$(realpath "$conf")" == "$list_real" ]] ||
    fail "$conf is not a link to $LIST"
done

# 2. The probe.
mapfile -t listed < <(grep -o 'path = "[^"]*"' "$LIST" | sed 's/path = "\(.*\)"/\1/' | sort)
# "line path" for each marked line of the probe.
mapfile -t marked < <(grep -n '// [A-Za-z_:]*$' "$PROBE/src/lib.rs" | sed 's/^\([0-9]*\):.*\/\/ \(.*\)$/\1 \2/')
((${#listed[@]} > 0)) || fail "no paths found in $LIST"
# (Here-strings, not pipes: `grep -q` leaving early would fail a pipe under pipefail.)
marked_paths=$(printf '%s\n' "${marked[@]#* }")
listed_text=$(printf '%s\n' "${listed[@]}")
for path in "${listed[@]}"; do
  grep -qxF "$path" <<<"$marked_paths" || fail "$path is listed but the probe does not use it"
done
for entry in "${marked[@]}"; do
  path=${entry#* }
  grep -qxF "$path" <<<"$listed_text" || fail "the probe marks $path, which the list does not hold"
done

target="${CARGO_TARGET_DIR:-$PWD/target}/wiring-probe"
# Clippy reads the list when it checks the crate: make it check again.
touch "$PROBE/src/lib.rs"
diagnostics=$(CARGO_TARGET_DIR="$target" cargo clippy --offline --locked --quiet \
  --manifest-path "$PROBE/Cargo.toml" --message-format=short 2>&1 || true)
flagged=0
for entry in "${marked[@]}"; do
  line=${entry%% *}
  path=${entry#* }
  on_line=$(grep -F "src/lib.rs:$line:" <<<"$diagnostics" || true)
  if grep -F "disallowed" <<<"$on_line" | grep -F "\`$path\`" >/dev/null; then
    flagged=$((flagged + 1))
  else
    fail "probe line $line ($path) is not flagged; its diagnostics: ${on_line:-none}"
  fi
done
echo "wiring-lints: ${#listed[@]} listed items, ${#marked[@]} probe lines, $flagged flagged"

# 3. No raw system call crates.
direct_deps() {
  cargo tree --offline --quiet "$@" --edges normal,build,dev --depth 1 --prefix none |
    tail -n +2 | awk '{print $1}' | sort -u
}
for crate in "${WIRING_CRATES[@]}"; do
  bad=$(direct_deps -p "$crate" | grep -xE "$RAW_SYSCALL_CRATES" || true)
  [[ -z "$bad" ]] || fail "wiring crate $crate depends on $(echo $bad)"
done
probe_bad=$(CARGO_TARGET_DIR="$target" direct_deps --manifest-path "$PROBE/Cargo.toml" |
  grep -xE "$RAW_SYSCALL_CRATES" | tr '\n' ' ' || true)
[[ "$probe_bad" == "libc nix rustix " ]] ||
  fail "the dependency check should find libc, nix and rustix in the probe, found: '$probe_bad'"

if ((failed)); then
  echo "wiring-lints: FAILED" >&2
  exit 1
fi
echo "wiring-lints: ok (${WIRING_CRATES[*]}: no libc, rustix or nix)"
