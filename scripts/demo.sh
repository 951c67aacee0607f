#!/usr/bin/env bash
# Install what is needed, then replay the bundled sample through the front end and
# print one JSON event per line.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="$(bash scripts/bootstrap.sh | tail -n 1)"
exec "$VENV/bin/pocket-satellite" listen --input satellite/data/sample.wav "$@"
