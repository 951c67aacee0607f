"""Scenes from the corpus replayed through the satellite, and what came of each:
understanding (right, wrong intent, not understood, asked again, false call for help)
and the wake word (heard or not, false wakes in ordinary speech).

Shared by tests/test_robustness.py and bench/robustness.py.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from satellite.actions import AnswerDue
from satellite.audio.chunk import FRAME_SAMPLES, AudioChunk
from satellite.config import Config
from satellite.events import Event, WakeDetected
from satellite.frontend.base import WakeHit
from satellite.frontend.expander import DownwardExpander
from satellite.frontend.noise import make_noise_suppressor
from satellite.frontend.wake import MicroWakeWordDetector
from satellite.frontend.wake_check import BandCheck
from satellite.nlu.events import IntentRecognized
from satellite.nlu.help_answers import HELP
from satellite.nlu.intents import DEVICE_ACTION_INTENTS
from satellite.nlu.recognizer import IntentResult
from satellite.nlu.settings import DEFAULT_ENTITIES
from satellite.nlu.targets import other_slots, targets_of
from satellite.pipeline import build_pipeline
from satellite.understanding import Understanding, build_understanding
from satellite.understanding.dialogue import answer_to_help, repeats
from tests import corpus, synth
from tests.understand import FLOOR_RMS

WAKE_PHRASE = "okay nabu"
#: Silence (room noise) before a scene's speech and after it, s.
LEAD_SECONDS = 0.8
TAIL_SECONDS = 1.5
#: Between the wake word and the command, s.
GAP_SECONDS = 0.4
#: The room heard while the satellite asks its question, before it listens for the
#: answer, s (the running satellite has heard the room all along; a new pipeline has not).
QUESTION_SECONDS = 1.2
#: The most takes of a command the dialogue hears: a request not made out, asked for
#: again, heard doubtful and asked about once more.
MAX_TAKES = 3
#: The longest a scene waits for the LLM fallback's answer after its input ended, s.
FALLBACK_WAIT_SECONDS = 60.0
#: What a person who did not call for help answers "Do you need help?" with (``judge``
#: with ``declines``), in turn by the scene's seed.
DECLINES = ("no", "no thanks", "i'm fine")

#: Outcomes of a command.
RIGHT = "right"
WRONG = "wrong_intent"
NOT_UNDERSTOOD = "not_understood"
FALSE_HELP = "false_help"
NO_WAKE = "no_wake"
#: Right, after the satellite asked once more (a doubtful first hearing).
RIGHT_AFTER_ASKING = "right_after_asking"
OUTCOMES = (RIGHT, RIGHT_AFTER_ASKING, WRONG, NOT_UNDERSTOOD, FALSE_HELP, NO_WAKE)


@dataclass(frozen=True)
class Scene:
    """Audio of a scene and where its command lies in it (samples)."""

    audio: synth.Float
    command_start: int
    command_end: int


def scene(
    voice: corpus.Voice,
    command: str,
    room: corpus.Room,
    seed: int = 0,
    wake: bool = True,
    lead_seconds: float = LEAD_SECONDS,
) -> Scene:
    """[okay nabu, gap,] command between stretches of room, in ``room`` (the noise's
    level set by the command's speech), over a quiet room's floor."""
    said = corpus.speak(voice, command)
    parts = [synth.silence(lead_seconds)]
    if wake:
        parts += [corpus.speak(voice, WAKE_PHRASE), synth.silence(GAP_SECONDS)]
    start = sum(len(p) for p in parts)
    audio = np.concatenate([*parts, said, synth.silence(TAIL_SECONDS)])
    return Scene(on_floor(audio, room, seed, said), start, start + len(said))


def on_floor(audio: synth.Float, room: corpus.Room, seed: int, said: synth.Float) -> synth.Float:
    """``audio`` in ``room`` (its noise's level set by ``said``), over a quiet room's
    floor: how every scene is heard."""
    floor = synth.white_noise(len(audio) / synth.RATE, FLOOR_RMS, seed=seed + 7)
    heard = corpus.in_room(audio, room, seed, reference=said) + floor
    return heard.astype(np.float32)


@dataclass
class Heard:
    """What the satellite made of a scene."""

    wakes: list[float] = field(default_factory=list)
    intents: list[IntentRecognized] = field(default_factory=list)
    answers: list[AnswerDue] = field(default_factory=list)
    #: The answers owed to the command said again, each time the satellite asked
    #: (``judge``; None: nothing heard).
    again: list[AnswerDue | None] = field(default_factory=list)
    #: What the dialogue made of the answer to "Do you need help?", if it asked
    #: (``answer_to_help``: yes, no or unclear; "silence": nothing heard).
    help_answer: str | None = None

    @property
    def first(self) -> AnswerDue | None:
        """The answer owed to the first utterance, if any."""
        return self.answers[0] if self.answers else None


def listener(config: Config, llm: bool = False) -> Understanding:
    """Understanding without speech rate (and without an LLM unless ``llm``), to replay
    many scenes with (its decoders take a while to start)."""
    understanding = build_understanding(config, use_llm=llm)
    understanding.prosody = None
    return understanding


def warm_listener() -> Understanding:
    """A ``listener`` that has heard one command in a clean room (live normalisation
    starts cold)."""
    understanding = listener(Config())
    warm = scene(corpus.VOICES_CI[1], "what time is it", corpus.Room("clean"))
    replay(Config(), warm.audio, False, understanding)
    return understanding


def replay(
    config: Config,
    audio: synth.Float,
    continuous: bool,
    understanding: Understanding | None = None,
    asked_at: float | None = None,
) -> Heard:
    """``audio`` frame by frame through a pipeline with ``understanding`` (default: a new
    ``listener``; no dialogue): its wake words and intents. ``asked_at``: the satellite
    has asked a question, said by then (s), and listens for the answer with no wake word
    (``Pipeline.listen_again``, as the running satellite does after it)."""
    if understanding is None:
        understanding = listener(config)
    understanding.reset()
    pipeline = build_pipeline(config, continuous=continuous, understanding=understanding)
    samples = np.clip(np.round(audio), -32768, 32767).astype(np.int16)
    heard = Heard()
    for offset in range(0, len(samples) - FRAME_SAMPLES + 1, FRAME_SAMPLES):
        if asked_at is not None and offset / synth.RATE >= asked_at:
            pipeline.listen_again(asked_at)
            asked_at = None
        chunk = AudioChunk.from_int16(
            samples[offset : offset + FRAME_SAMPLES], timestamp_seconds=offset / synth.RATE
        )
        events: list[Event] = pipeline.process(chunk)
        heard.wakes += [e.timestamp_seconds for e in events if isinstance(e, WakeDetected)]
        heard.intents += [e for e in events if isinstance(e, IntentRecognized)]
        heard.answers += [a for a in pipeline.take_actions() if isinstance(a, AnswerDue)]
    events = pipeline.end_of_input()  # what is still being decided is decided now
    if understanding.fallback is not None:  # and what the LLM makes of the rest
        events += pipeline.poll(len(samples) / synth.RATE, wait_seconds=FALLBACK_WAIT_SECONDS)
    heard.intents += [e for e in events if isinstance(e, IntentRecognized)]
    heard.answers += [a for a in pipeline.take_actions() if isinstance(a, AnswerDue)]
    return heard


def first_answer(
    understanding: Understanding, voice: corpus.Voice, said: str, seed: int, wake: bool = True
) -> tuple[str | None, bool]:
    """The intent "okay nabu, ``said``" (``wake`` False: ``said`` alone, the satellite
    listening on) in ``voice`` in a clean room, no question open, first came to, and
    whether it is asked about before it is acted on (asserts it was heard)."""
    understanding.question.open = False
    said_in = scene(voice, said, corpus.Room("clean"), seed=seed, wake=wake)
    heard = replay(Config(), said_in.audio, not wake, understanding)
    assert heard.wakes or not wake, f"{voice.label}: the wake word was not heard"
    assert heard.first is not None, f"{voice.label}: {said!r} not heard at all"
    return heard.first.result.intent, heard.first.doubtful


def outcome(got: IntentResult | None, expected: str | None, slots: dict[str, Any]) -> str:
    """What came of one command acted on as ``got`` (None or no intent: not acted on;
    ``expected`` None: out-of-domain speech, where any intent is wrong)."""
    if got is None or got.intent is None:
        return NOT_UNDERSTOOD
    if got.intent == "CallForHelp" and expected != "CallForHelp":
        return FALSE_HELP
    if got.intent == expected and same_effect(got.slots, slots):
        return RIGHT
    return WRONG


def same_effect(got: dict[str, Any], said: dict[str, Any]) -> bool:
    """Whether slots ``got`` do what the slots ``said`` ask in the default home: every
    slot said, or the same devices (nlu/targets.py: "the kitchen lights" for "the
    kitchen light", its only one) with the other slots said."""
    if all(got.get(k) == v for k, v in said.items()):
        return True
    aimed = targets_of(said, DEFAULT_ENTITIES)
    return (
        aimed is not None
        and aimed == targets_of(got, DEFAULT_ENTITIES)
        and all(got.get(k) == v for k, v in other_slots(said).items())
    )


def answer_to(
    asked: IntentResult | None, take: AnswerDue | None
) -> tuple[IntentResult | None, IntentResult | None]:
    """What the dialogue makes of ``take``, having asked about ``asked`` (None: nothing;
    no intent: a request not made out, see understanding/dialogue.py): (what it acts on,
    what it asks about next), both None when it gives up (not understood). A request
    heard again is acted on, a sure answer too; a doubtful one is asked about once, and
    a request first not made out is asked about when heard. A call for help asked about
    ("Do you need help?") goes out unless the answer is a clear "no": unconfirmed when
    nothing, or anything else, is heard (``answer_to_help``)."""
    if asked is not None and asked.intent == HELP:
        declined = take is not None and answer_to_help(take.result, take.doubtful) == "no"
        return (None if declined else asked), None
    if take is None:
        return None, None
    result = take.result
    if (
        asked is not None
        and asked.intent is not None
        and result.intent is not None
        and repeats(asked, result)
    ):
        return result, None
    if not take.doubtful:
        return (result if result.intent is not None else None), None
    once = asked is not None and (asked.intent is not None or result.intent is None)
    if once and result.intent != HELP:  # (a call for help is asked about all the same)
        return None, None  # asked about once already
    return None, result


def acted_on(*takes: AnswerDue | None) -> IntentResult | None:
    """What the dialogue acts on, given the hearing of each take of a command (the first,
    then each said again when the satellite asked once more): see ``answer_to``."""
    asked: IntentResult | None = None
    for take in takes:
        acted, asked = answer_to(asked, take)
        if asked is None:
            return acted
    return None


def judge(
    config: Config,
    understanding: Understanding,
    voice: corpus.Voice,
    command: str,
    room: corpus.Room,
    expected: str | None,
    slots: dict[str, Any],
    seed: int,
    wake: bool = True,
    declines: bool = False,
) -> tuple[str, Heard]:
    """A command after the wake word in ``room`` (``wake`` False: said with listening on,
    no wake word), said again (another take of the noise, no wake word: the satellite
    listens for it after asking) each time the satellite asks once more: its outcome
    and the first hearing (``Heard.again``: the later ones, in turn). Asked "Do you need
    help?", the person says the command again (the pessimist's person), or with
    ``declines``, unless ``expected`` is a call for help, says no (``DECLINES``)."""
    heard = replay(config, scene(voice, command, room, seed, wake).audio, not wake, understanding)
    if wake and not heard.wakes:
        return NO_WAKE, heard
    acted, asked = answer_to(None, heard.first)
    while asked is not None and (len(heard.again) < MAX_TAKES - 1 or asked.intent == HELP):
        lead = LEAD_SECONDS + QUESTION_SECONDS
        said = command
        if asked.intent == HELP and declines and expected != HELP:
            said = DECLINES[seed % len(DECLINES)]
        take = scene(voice, said, room, seed + 1000 * (len(heard.again) + 1), False, lead)
        # what the dialogue asked about, as it tells understanding (dialogue.Dialogue._ask):
        # the help question is open (its answer heard with the answers' grammar)
        understanding.question.open = asked.intent == HELP
        understanding.question.asked = None if asked.intent in (None, HELP) else asked
        try:
            again = replay(config, take.audio, False, understanding, QUESTION_SECONDS).first
        finally:
            understanding.question.asked, understanding.question.open = None, False
        heard.again.append(again)
        if asked.intent == HELP:
            heard.help_answer = (
                "silence" if again is None else answer_to_help(again.result, again.doubtful)
            )
        acted, asked = answer_to(asked, again)
    result = outcome(acted, expected, slots)
    return (RIGHT_AFTER_ASKING if result == RIGHT and heard.again else result), heard


@dataclass
class Tally:
    """Outcomes of many commands in one voice family and room."""

    counts: Counter[str] = field(default_factory=Counter)

    def add(self, what: str) -> None:
        self.counts[what] += 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def share(self, what: str) -> float:
        return self.counts[what] / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n": self.total}
        for what in OUTCOMES:
            out[what] = round(self.share(what), 4)
        return out


# --- the wake word ----------------------------------------------------------------------

#: What the wake word may hear: the microphone as it is, or denoised one way or another
#: (name -> noise engine, speex attenuation dB, webrtc level).
WAKE_INPUTS: dict[str, tuple[str, int, int]] = {
    "raw": ("off", 0, 0),
    "speex30": ("speex", 30, 0),
    "speex12": ("speex", 12, 0),
    "webrtc2": ("webrtc", 0, 2),
}


def wake_hits(
    audio: synth.Float,
    hears: str,
    cutoff: float | None = None,
    refractory_seconds: float = 2.0,
    band: BandCheck | None = None,
    expand_db: float = 0.0,
) -> list[WakeHit]:
    """The detections of ``okay_nabu`` in ``audio`` heard through ``WAKE_INPUTS[hears]``
    (``refractory_seconds`` 0: every frame above ``cutoff``, to find the peaks; ``band``:
    detections below the cutoff checked by it, see frontend.wake.checked_above;
    ``expand_db``: what it hears turned down between syllables after that, see
    frontend.wake.expand_db)."""
    engine, suppression_db, level = WAKE_INPUTS[hears]
    noise = make_noise_suppressor(engine, suppression_db, level)
    expander = DownwardExpander(expand_db) if expand_db else None
    detector = MicroWakeWordDetector(("okay_nabu",), cutoff, refractory_seconds, band, expander)
    samples = np.clip(np.round(audio), -32768, 32767).astype(np.int16)
    hits = []
    for offset in range(0, len(samples) - FRAME_SAMPLES + 1, FRAME_SAMPLES):
        frame = AudioChunk.from_int16(
            samples[offset : offset + FRAME_SAMPLES], timestamp_seconds=offset / synth.RATE
        )
        hit = detector.process(noise.process(frame))
        if hit is not None:
            hits.append(hit)
    return hits


def talk(voice: corpus.Voice, seconds: float, seed: int) -> synth.Float:
    """``voice`` reading out-of-domain sentences for ``seconds`` (no wake word in it)."""
    return corpus.reading(voice, round(seconds * synth.RATE), np.random.default_rng(seed))


def device_switched_by(acted: IntentResult | None) -> bool:
    """Whether acting on ``acted`` would switch a device."""
    return acted is not None and acted.intent in DEVICE_ACTION_INTENTS


def default_wake_input(config: Config) -> str:
    """The ``WAKE_INPUTS`` entry that is what the wake word hears with ``config``."""
    fe = config.frontend
    if fe.wake.hears == "webrtc":
        return "webrtc2"
    if fe.wake.hears == "raw" or fe.noise.engine == "off":
        return "raw"
    name = f"speex{fe.noise.suppression_db}" if fe.noise.engine == "speex" else "webrtc"
    if fe.noise.engine == "webrtc":
        name += str(fe.noise.webrtc_level)
    WAKE_INPUTS.setdefault(name, (fe.noise.engine, fe.noise.suppression_db, fe.noise.webrtc_level))
    return name
