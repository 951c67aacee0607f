#!/usr/bin/env bash
# Install what is needed, speak the demo's scenario once (okay nabu + a home command, the
# time, another command, a question the templates miss, a rushed sentence, a call for
# help), then run the satellite on it in real time and print what happens.
#
#   bash scripts/demo.sh                    MQTT off: a stand-in answers for Home Assistant
#   bash scripts/demo.sh --config my.yaml   your configuration (with your broker)
#   bash scripts/demo.sh --fast             as fast as the machine goes
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="$(bash scripts/bootstrap.sh | tail -n 1)"
DEMO="${POCKET_DEMO_DIR:-$HOME/.cache/pocket-satellite/demo}"
# (named after the scenario's code, so a changed scenario is spoken anew)
SCENARIO="$DEMO/scenario-$(sha256sum satellite/scenario.py | cut -c1-12).wav"
REPLIES="$DEMO/replies.wav"
[ -f "$SCENARIO" ] || "$VENV/bin/pocket-satellite" scenario "$SCENARIO"

config=(--config config/demo.yaml --stand-in-ha)
pace=(--realtime)
rest=()
while (($#)); do
    case "$1" in
        --config) config=(--config "$2"); shift 2 ;;
        --fast) pace=(); shift ;;
        *) rest+=("$1"); shift ;;
    esac
done
echo ">> the satellite hears $SCENARIO (${pace[*]:-fast}); what it says goes to $REPLIES" >&2
"$VENV/bin/pocket-satellite" run "${config[@]}" --input "$SCENARIO" --output "$REPLIES" \
    "${pace[@]}" --timeline ${rest[@]+"${rest[@]}"}
echo ">> replies written to $REPLIES" >&2
