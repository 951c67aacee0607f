#!/usr/bin/env bash
# Install what Pocket Satellite needs on Debian / Raspberry Pi OS, idempotently:
# system packages (eSpeak NG, ALSA headers, Mosquitto, sox, flite) and a virtualenv
# with the package and its test tools. Prints the venv's path on the last line.
set -euo pipefail
cd "$(dirname "$0")/.."

# festival + festvox-*: recorded-speech voices for the test corpus (tests/corpus.py);
# libspeexdsp1: the echo canceller (frontend.echo); sphinxbase-utils (sphinx_fe),
# sphinxtrain (bw, mllr_solve) and pocketsphinx (pocketsphinx_mdef_convert): speaker
# enrolment (pocket-satellite enrol).
APT_PACKAGES=(espeak-ng libespeak-ng1 libasound2-dev alsa-utils mosquitto sox flite systemd
    festival festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts libspeexdsp1
    sphinxbase-utils sphinxtrain pocketsphinx)
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
# llama-cpp-python (extra "llm") compiles from source: several minutes on 2 cores. Build
# its wheel once into a wheelhouse and reuse it. On x86 build for AVX2 without
# AVX-512/AMX (a native build here used AMX and crashed in this sandbox); on the Pi
# (aarch64) the native build is the right one.
WHEELS="${POCKET_WHEELS:-$HOME/.cache/pocket-satellite/wheels}"
LLAMA_VERSION="0.3.36"
mkdir -p "$WHEELS"
if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
    echo ">> building llama-cpp-python $LLAMA_VERSION once (several minutes)" >&2
    ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"
    if [ "$(uname -m)" = "x86_64" ]; then
        ARGS="$ARGS -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
        ARGS="$ARGS -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
    fi
    CMAKE_ARGS="$ARGS" "$VENV/bin/pip" wheel -q --no-deps --no-cache-dir -w "$WHEELS" \
        "llama-cpp-python==$LLAMA_VERSION" >&2
fi

echo ">> installing pocket-satellite into $VENV" >&2
"$VENV/bin/pip" install -q --disable-pip-version-check --find-links "$WHEELS" \
    "llama-cpp-python==$LLAMA_VERSION" >&2
"$VENV/bin/pip" install -q --disable-pip-version-check --find-links "$WHEELS" \
    -e ".[alsa,dev,llm,echo]" >&2
echo "$VENV"
