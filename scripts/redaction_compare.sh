#!/usr/bin/env bash
# Recall and false-positive rate of the built-in redaction rules on the corpus, side by side
# with detect-secrets scanning the same texts in the same run (docs/redaction.md, "The corpus
# and the measured figures").
#
# Makes a virtualenv under target/ with a pinned detect-secrets from PyPI, builds the example
# and runs it. Extra arguments go to the example (e.g. --failures 100).
set -euo pipefail

DETECT_SECRETS_VERSION="1.5.0"

root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/target/detect-secrets-venv"
exe="$venv/bin/detect-secrets"

if [ ! -x "$exe" ] || [ "$("$exe" --version 2>/dev/null)" != "$DETECT_SECRETS_VERSION" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "detect-secrets==$DETECT_SECRETS_VERSION"
fi

cd "$root"
cargo build --release -p safety --example redact_corpus
exec "$root/target/release/examples/redact_corpus" --detect-secrets "$exe" "$@"
