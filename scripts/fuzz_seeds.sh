#!/usr/bin/env bash
# Refresh the committed fuzz seeds (fuzz/seeds/<target>/) from the local corpus
# (fuzz/corpus/<target>/, git-ignored). Needs nightly and cargo-fuzz.
# Usage: scripts/fuzz_seeds.sh [TARGET...]   (default: parse_command request)
#
# Per target:
#   1. the generated seeds already committed are copied into the corpus, so none is lost;
#   2. `cargo fuzz cmin` with libFuzzer's -set_cover_merge=1 minimises the corpus in place;
#   3. the generated seeds are replaced by the minimised corpus's files of at most 4096
#      bytes, taken in name order (a name is the SHA-1 of the content) until the folder
#      holds 400 files. Hand-written seeds (named hand-*) are never removed and count
#      towards the 400.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

max_files=400
max_bytes=4096
export LC_ALL=C

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(parse_command request)
fi

for target in "${targets[@]}"; do
  seeds="seeds/$target"
  corpus="corpus/$target"
  mkdir -p "$seeds" "$corpus"
  find "$seeds" -maxdepth 1 -type f ! -name 'hand-*' -exec cp -t "$corpus" {} +
  cargo +nightly fuzz cmin "$target" -- -set_cover_merge=1
  find "$seeds" -maxdepth 1 -type f ! -name 'hand-*' -delete
  hand=$(find "$seeds" -maxdepth 1 -type f -name 'hand-*' | wc -l)
  room=$((max_files - hand))
  find "$corpus" -maxdepth 1 -type f -size -$((max_bytes + 1))c -printf '%f\n' \
    | sort | head -n "$room" \
    | while read -r name; do cp "$corpus/$name" "$seeds/$name"; done
  echo "$target: $(find "$seeds" -maxdepth 1 -type f | wc -l) seeds ($hand hand-written), $(du -sb "$seeds" | cut -f1) bytes"
done
