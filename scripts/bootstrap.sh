#!/usr/bin/env bash
# Install what Pocket Satellite needs on Debian / Raspberry Pi OS, idempotently:
# system packages (eSpeak NG, ALSA headers, Mosquitto, sox, flite) and a virtualenv
# with the package and its test tools. Prints the venv's path on the last line.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(espeak-ng libespeak-ng1 libasound2-dev alsa-utils mosquitto sox flite)
VENV="${POCKET_VENV:-$HOME/.cache/pocket-satellite/venv}"
PYTHON="${POCKET_PYTHON:-python3}"

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$pkg")
done
if ((${#missing[@]})); then
    echo ">> installing system packages: ${missing[*]}" >&2
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
fi

if [ ! -x "$VENV/bin/python" ]; then
    echo ">> creating virtualenv $VENV" >&2
    "$PYTHON" -m venv "$VENV" >&2
    "$VENV/bin/pip" install -q --upgrade pip >&2
fi
echo ">> installing pocket-satellite into $VENV" >&2
"$VENV/bin/pip" install -q --disable-pip-version-check -e ".[alsa,dev]" >&2
echo "$VENV"
