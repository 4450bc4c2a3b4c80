# Shared by benches/scan/realworld.sh and benches/scan/advisories.sh (sourced, not run): a
# work folder removed on exit unless KEEP=1, the scanner's release build, and the git copy of
# a public tree on disk. Expects `here` (this folder), `repo` (the workspace) and `repos_dir`
# to be set, and `work_name` to name the work folder.

work="$(mktemp -d -t "$work_name.XXXXXX")"
if [[ "${KEEP:-}" != 1 ]]; then trap 'rm -rf "$work"' EXIT; else echo "work folder: $work"; fi

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
(cd "$repo" && cargo build --quiet --release -p scan --example scan)
scanner="$CARGO_TARGET_DIR/release/examples/scan"

# The git directory of owner/name under repos_dir (named owner+name: a bare repository, a
# clone, or a folder with a `repo` git directory inside), or status 1.
git_dir_of() {
  local base="$repos_dir/${1/\//+}"
  for candidate in "$base/repo" "$base/.git" "$base"; do
    if git --git-dir="$candidate" rev-parse --git-dir >/dev/null 2>&1; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}

# The source files the scanner reads (and the TypeScript configs whose `paths` it follows),
# of one tree at one commit (a stored copy may lack its largest blobs).
extract() {
  local gd="$1" commit="$2" dest="$3"
  mkdir -p "$dest"
  git --git-dir="$gd" ls-tree -r -z "$commit" |
    while IFS= read -r -d '' entry; do
      path="${entry#*$'\t'}"; meta="${entry%%$'\t'*}"; blob="${meta##* }"
      case "$path" in *.ts|*.tsx|*.mts|*.cts|*.js|*.jsx|*.mjs|*.cjs|*.py|*.rs|tsconfig.json|*/tsconfig.json|jsconfig.json|*/jsconfig.json) ;; *) continue ;; esac
      [[ "$meta" == 100* ]] || continue
      mkdir -p "$dest/$(dirname "$path")"
      git --git-dir="$gd" cat-file blob "$blob" > "$dest/$path" 2>/dev/null || rm -f "$dest/$path"
    done
}
