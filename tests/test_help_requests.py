"""A request for help, phrased freely, must not be taken for another command.

The grammar makes some command out of any speech; the score against the phone loop is
what keeps speech from outside the domain out. Requests for help are the speech that
matters most: heard as a state question, a person asking for a nurse gets an answer
about a lamp and no alert. Two rules guard them, checked here with a recognizer whose
score is chosen, then on requests spoken by eSpeak NG and flite, whole and with a pause
mid-way, by the grammar path; in flite's voices also the whole way, through free
transcription and the LLM (its reading of the texts is in tests/test_llm.py). Paused,
the rest of the sentence is heard as a follow-on utterance (tests/test_follow_on.py),
whose audio is the whole sentence: what calls for help when the first half was taken
for a command.

- Home Assistant's other intents (state questions, timers, never mind) need
  ``stt.home_margin`` more score than our care intents;
- a pause ends the utterance early only for a command with ``stt.early_endpoint_margin``
  more score than it needs: "I feel dizzy, ... please get the nurse" ended after "dizzy"
  as a light command.
"""

from __future__ import annotations

import numpy as np
import pytest

from satellite.config import Config
from satellite.events import UtteranceEnded
from satellite.nlu.events import IntentRecognized
from satellite.nlu.intents import DEVICE_ACTION_INTENTS
from satellite.pipeline import build_pipeline
from satellite.understanding import EARLY_ENDPOINT_REASON, build_understanding
from tests import synth
from tests.fake_recognizer import Heard, HeardInSpeech, decide, stage, understanding_with
from tests.understand import FLOOR_RMS, lines, need_llm, replay

pytestmark = pytest.mark.usefixtures("need_espeak")

ESPEAK_VOICES = [("en-us", 150), ("en-gb-x-rp", 180), ("en-us+m3", 150)]
FLITE_VOICES = ("kal16", "slt", "rms", "awb")
#: Requests for help (22) spoken by flite that come out as CallForHelp end to end (the
#: grammar, else free transcription and the LLM), at least. Measured whole: 20, and 1
#: became a device action; in eSpeak voices 7: free transcription of them is mostly
#: wrong words. Paused mid-way: 20 (10 in eSpeak voices), 14 (8) with no follow-on.
HELP_RECALL_FROM_SPEECH = {"whole": 18, "paused": 18}
#: Requests for help (22) taken for another command, at most, per synthesiser. Measured
#: whole: 0 in eSpeak voices and 1 in flite's ("please hurry, I need a carer" as "please
#: turn on the heater"), 5 and 4 before the two margins. With a pause mid-way: 5 and 8
#: (12 and 15 before the margins); the first half of a sentence fits some short command
#: well. Follow-ons add none: with no ``stt.follow_on_margin`` flite's "I'm ... choking",
#: heard whole, became a light command.
#: eSpeak whole 0 -> 1 when the wake word's tail was left out of the command's audio
#: ("I can't move my arm" -> "i'd like to my hall blue"), which lost fewer calls for help
#: (bench/false_help.py --all-voices: 6 -> 2 of 170 after the wake word): see README.
WHOLE_TAKEN_FOR_OTHERS = {"espeak": 1, "flite": 1}
PAUSED_TAKEN_FOR_OTHERS = {"espeak": 5, "flite": 8}
#: Device actions among those taken for others, end to end in flite's voices, at most:
#: measured 1 whole; 5 paused, all first halves.
ACTIONS_END_TO_END = {"whole": 1, "paused": 5}


def _believed(text: str, score: float) -> bool:
    """Whether ``text``, heard at ``score`` and ended by silence, is taken as its intent."""
    understanding = understanding_with(Heard(text, score))
    stage(understanding)
    transcript, intent = decide(understanding, 1.2, 1.5)
    assert transcript.in_grammar is (intent.intent is not None)
    return intent.intent is not None


@pytest.mark.parametrize(
    ("text", "care"),
    [
        ("is the kitchen light on", False),
        ("start a timer for ten minutes", False),
        ("call the nurse", True),
        ("what time is it", True),
    ],
)
def test_home_assistant_intents_need_more_score_than_care_intents(text: str, care: bool) -> None:
    settings = Config().stt
    below = settings.rejection_threshold + settings.home_margin - 0.5
    assert _believed(text, below) is care
    assert _believed(text, below + 1.0)


def _spoken_command(margin: float) -> tuple[str | None, str]:
    """'okay nabu, turn on the kitchen light' through the pipeline, heard with ``margin``
    more score than a device action needs: (its intent, how the utterance ended)."""
    config = Config()
    scene = synth.wake_scene("turn on the kitchen light", "en-us", 160, lead_seconds=0.8)
    audio = scene.audio + synth.white_noise(len(scene.audio) / synth.RATE, FLOOR_RMS, seed=3)
    need = config.stt.rejection_threshold + config.stt.device_margin
    recognizer = HeardInSpeech(
        "turn on the kitchen light", need + margin, scene.command_span[0] + 0.1
    )
    pipeline = build_pipeline(config, understanding=understanding_with(recognizer))
    events = pipeline.process(synth.to_chunk(audio))
    (ended,) = [e for e in events if isinstance(e, UtteranceEnded)]
    (intent,) = [e for e in events if isinstance(e, IntentRecognized)]
    return intent.intent, ended.reason


def test_a_pause_ends_the_utterance_early_only_for_a_command_well_above_its_need() -> None:
    margin = Config().stt.early_endpoint_margin
    assert _spoken_command(margin + 0.5) == ("HassTurnOn", EARLY_ENDPOINT_REASON)
    # believed all the same, after the full silence (the person might have gone on)
    assert _spoken_command(margin - 0.5) == ("HassTurnOn", "silence")
    assert _spoken_command(-0.5) == (None, "silence")


def _request(text: str, index: int, flite: bool, pause: bool) -> synth.Float:
    """After an eSpeak wake word, ``text`` in eSpeak or flite, whole or with a pause of
    0.4 s after its first half (longer than the early endpoint, shorter than the
    silence that ends an utterance)."""
    voice, rate = ESPEAK_VOICES[index % len(ESPEAK_VOICES)]
    words = text.replace(",", "").split()
    parts = [" ".join(words[: len(words) // 2]), " ".join(words[len(words) // 2 :])]
    if not pause:
        parts = [text]
    if flite:
        spoken = [synth.flite(p, FLITE_VOICES[index % len(FLITE_VOICES)]) for p in parts]
    else:
        spoken = [synth.espeak(p, voice, rate) for p in parts]
    pieces = [synth.silence(0.8), synth.espeak("okay nabu", voice, rate), synth.silence(0.45)]
    for piece in spoken:
        pieces += [piece, synth.silence(0.4)]
    audio = np.concatenate([*pieces, synth.silence(0.8)])
    return audio + synth.white_noise(len(audio) / synth.RATE, FLOOR_RMS, seed=index)


def _taken_for_others(flite: bool, pause: bool) -> list[str]:
    taken = []
    for index, text in enumerate(lines("help_phrasings.txt")):
        events, _ = replay(_request(text, index, flite, pause), Config(), continuous=False)
        for event in events:
            if isinstance(event, IntentRecognized) and event.intent not in (None, "CallForHelp"):
                taken.append(f"{text!r} -> {event.intent} ({event.text!r})")
    return taken


@pytest.mark.parametrize("pause", [False, True], ids=["whole", "paused"])
@pytest.mark.parametrize("voice", ["espeak", "flite"])
def test_requests_for_help_are_rarely_taken_for_other_commands(
    voice: str, pause: bool, request: pytest.FixtureRequest
) -> None:
    if voice == "flite":
        request.getfixturevalue("need_flite")
    taken = _taken_for_others(voice == "flite", pause)
    limits = PAUSED_TAKEN_FOR_OTHERS if pause else WHOLE_TAKEN_FOR_OTHERS
    assert len(taken) <= limits[voice], taken


@pytest.mark.usefixtures("need_flite")
@pytest.mark.parametrize("pause", [False, True], ids=["whole", "paused"])
def test_spoken_requests_for_help_call_for_help_end_to_end(pause: bool) -> None:
    """The whole way a request for help goes: the grammar path rejects it, free
    transcription and the LLM read it as CallForHelp. Paused mid-way, the first half
    may be taken for a command; the follow-on, the whole sentence, calls for help."""
    need_llm()
    config = Config()
    understanding = build_understanding(config, use_llm=True)
    assert understanding.fallback is not None and understanding.fallback.available
    called, actions = [], []
    try:
        for index, text in enumerate(lines("help_phrasings.txt")):
            understanding.reset()
            pipeline = build_pipeline(config, understanding=understanding)
            events = pipeline.process(synth.to_chunk(_request(text, index, True, pause)))
            found = [e for e in events if isinstance(e, IntentRecognized)]
            found += [
                e
                for e in understanding.poll(100.0, wait_seconds=60.0)
                if isinstance(e, IntentRecognized)
            ]
            called += [text for e in found if e.intent == "CallForHelp"]
            actions += [(text, e.intent) for e in found if e.intent in DEVICE_ACTION_INTENTS]
    finally:
        assert understanding.fallback is not None
        understanding.fallback.close(wait=True)
    kind = "paused" if pause else "whole"
    assert len(set(called)) >= HELP_RECALL_FROM_SPEECH[kind], called
    assert len(actions) <= ACTIONS_END_TO_END[kind], actions
