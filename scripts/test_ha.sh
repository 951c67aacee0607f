#!/usr/bin/env bash
# The Home Assistant component's checks, in their own Python 3.13 venv: ruff, mypy --strict
# and pytest (pytest-homeassistant-custom-component) with coverage of
# custom_components/pocket_satellite (fails under 95%).
#
# The venv lives at ~/.cache/pocket-satellite/venv-ha (override with POCKET_HA_VENV) and is
# reused while tests/ha/requirements.txt is unchanged. A fresh one takes ~6 minutes.
# Python 3.13: POCKET_HA_PYTHON, else pyenv's 3.13.x, else python3.13 on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${POCKET_HA_VENV:-$HOME/.cache/pocket-satellite/venv-ha}"
REQUIREMENTS=tests/ha/requirements.txt
# Coverage data stays out of the work tree, one file per checkout (two checkouts testing
# at once must not mix their data).
export COVERAGE_FILE="${TMPDIR:-/tmp}/pocket-satellite-ha-$(pwd | sha256sum | cut -c1-12).coverage"

find_python() {
    local candidate
    for candidate in "${POCKET_HA_PYTHON:-}" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3 \
        "$(command -v python3.13 || true)"; do
        # (a pyenv shim can exist and still fail, so each candidate is tried)
        if [ -n "$candidate" ] && "$candidate" -c \
            'import sys; sys.exit(sys.version_info[:2] != (3, 13))' >/dev/null 2>&1; then
            echo "$candidate"
            return
        fi
    done
    echo "error: Python 3.13 not found. Fix: install it (e.g. 'pyenv install 3.13.0') or set" \
        "POCKET_HA_PYTHON to a python3.13 binary" >&2
    exit 2
}

wanted="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.requirements.sha256" 2>/dev/null)" != "$wanted" ]; then
    PYTHON="$(find_python)"
    echo ">> building the Home Assistant test venv $VENV with $("$PYTHON" --version)" >&2
    [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV" >&2
    "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQUIREMENTS" >&2
    echo "$wanted" > "$VENV/.requirements.sha256"
fi

echo ">> ruff (component and its tests)" >&2
"$VENV/bin/ruff" check --target-version py313 custom_components tests/ha
echo ">> mypy --strict (component)" >&2
"$VENV/bin/mypy" --config-file tests/ha/mypy.ini
echo ">> pytest tests/ha" >&2
"$VENV/bin/python" -m pytest -c tests/ha/pytest.ini --rootdir . tests/ha \
    --cov=custom_components/pocket_satellite --cov-report=term-missing:skip-covered \
    --cov-fail-under=95 -p no:sugar "$@"
