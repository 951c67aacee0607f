"""A device action heard as a bare name, with no verb, is asked about, never acted on at
once.

Home Assistant's own sentences make a bare entity name a HassTurnOn ("[the] {name}")
and an area with a colour a HassLightSet ("[the] {area} [to] {color}"), and the
commands' grammar holds them, so a short noise the search forces into a name switched a
device at once: Festival's "hmm" after the wake word turned the bedroom lamp on (heard
as "bedroom lamp"), and eSpeak's "I can't move my arm", a call for help, was heard as
"i'd like to my hall blue". The templates now say when the words heard are only the
slots' words and words that name no action (``IntentResult.bare``), and such a device
action is doubtful (nlu/trust.doubtful): the dialogue asks ("Sorry, say that again")
and acts only on the request heard again. A command with a verb is as before.
bench/false_help.py counts it per voice family.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from satellite.actions import AnswerDue, HaIntentRequested, ListenAgain, ReplyRequested
from satellite.config import Config, validate
from satellite.nlu import trust
from satellite.nlu.events import IntentRecognized
from satellite.nlu.help_answers import HelpQuestion
from satellite.nlu.intents import DEVICE_ACTION_INTENTS
from satellite.nlu.recognizer import IntentResult, TemplateRecognizer, is_bare
from satellite.pipeline import build_pipeline
from satellite.stt.factory import configured_intent_set
from satellite.understanding import Understanding
from satellite.understanding.answers import Answers
from satellite.understanding.dialogue import REPLIES, Dialogue
from tests import corpus, robustness, synth
from tests.app_harness import dialogue_app
from tests.test_help_requests import ESPEAK_VOICES
from tests.understand import FLOOR_RMS, lines

#: Festival's diphone voice, which said "hmm" as "bedroom lamp" (bench/false_help.py,
#: after the wake word, clean: this seed).
FESTIVAL = "festival/kal_diphone@1"
HMM_SEED = 11


@pytest.fixture(scope="module")
def templates() -> TemplateRecognizer:
    config = Config()
    return TemplateRecognizer(configured_intent_set(config.nlu, "en", None))


@pytest.mark.parametrize(
    ("text", "intent", "bare"),
    [
        ("bedroom lamp", "HassTurnOn", True),
        ("the bedroom lamp", "HassTurnOn", True),
        ("please the bedroom lamp", "HassTurnOn", True),
        ("i'd like to my kitchen blue", "HassLightSet", True),
        ("kitchen blue", "HassLightSet", True),
        ("turn on the bedroom lamp", "HassTurnOn", False),
        ("activate the bedroom lamp", "HassTurnOn", False),
        ("kitchen light on", "HassTurnOn", False),
        ("turn off the kitchen light", "HassTurnOff", False),
        ("quiet", "Stop", False),
    ],
)
def test_the_templates_say_when_a_sentence_is_only_names(
    templates: TemplateRecognizer, text: str, intent: str, bare: bool
) -> None:
    result = templates.recognize(text)
    assert (result.intent, result.bare) == (intent, bare)


def test_bare_means_nothing_beyond_the_slots_and_words_that_name_no_action() -> None:
    no_action = frozenset({"the", "to"})
    assert is_bare("the bedroom lamp", ["bedroom lamp"], no_action)
    assert not is_bare("bedroom lamp on", ["bedroom lamp"], no_action)
    # each slot's words are taken once: a name said twice is not only its name
    assert not is_bare("lamp lamp", ["lamp"], no_action)


def test_a_bare_device_action_is_doubtful_and_nothing_else_is_for_it(
    templates: TemplateRecognizer,
) -> None:
    """Asked about however well heard; a command with a verb, or a bare intent that is
    no device action, is doubtful only as before."""
    settings = Config().stt
    for text in ("bedroom lamp", "i'd like to my kitchen blue"):
        result = templates.recognize(text)
        assert result.intent in DEVICE_ACTION_INTENTS and result.confidence == 1.0
        assert trust.doubtful(result, False, settings), text
    for text in ("turn on the bedroom lamp", "kitchen light on", "quiet"):
        assert not trust.doubtful(templates.recognize(text), False, settings), text
    # bare, but no device action: as before
    bare_time = IntentResult("GetTime", {}, 1.0, text="what time is it", bare=True)
    assert not trust.doubtful(bare_time, False, settings)
    # the option off: as before (acted on at once)
    off = validate({"stt": {"ask_about_bare_names": False}}).stt
    assert not trust.doubtful(templates.recognize("bedroom lamp"), False, off)


def test_a_bare_name_is_asked_about_once_and_goes_out_said_again(
    templates: TemplateRecognizer,
) -> None:
    """The answer owed to "bedroom lamp" is doubtful (the dialogue asks); the same request
    said again at once is not (it goes out: the person meant it)."""
    answers = Answers(Config().stt, jobs=None, question=HelpQuestion())
    answers.conclude("u1", templates.recognize("bedroom lamp"), 2.0)
    answers.conclude("u2", templates.recognize("turn on the bedroom lamp"), 6.0)
    due = [a for a in answers.take_actions() if isinstance(a, AnswerDue)]
    assert [(a.result.intent, a.doubtful) for a in due] == [
        ("HassTurnOn", True),
        ("HassTurnOn", False),
    ]


def test_a_bare_name_said_again_bare_switches_nothing_said_with_its_verb_it_does(
    templates: TemplateRecognizer,
) -> None:
    """Asked about, the same bare name heard again is no confirmation (a call for help
    or a noise forced into a name once is forced into it again): not understood, nothing
    handed to Home Assistant. The request said again with its verb goes out."""
    bare = templates.recognize("i'd like to my kitchen blue")
    dialogue = Dialogue()
    asked = dialogue.handle(bare, "u1", 1.0, doubtful=True)
    assert [a.text for a in asked if isinstance(a, ReplyRequested)] == [REPLIES["say_again"]]
    again = dialogue.handle(bare, "u2", 4.0, doubtful=True)
    assert not [a for a in again if isinstance(a, HaIntentRequested)]
    assert [a.text for a in again if isinstance(a, ReplyRequested)] == [REPLIES["not_understood"]]
    lamp = templates.recognize("bedroom lamp")
    dialogue = Dialogue()
    dialogue.handle(lamp, "u3", 1.0, doubtful=True)
    said = templates.recognize("turn on the bedroom lamp")
    went = dialogue.handle(said, "u4", 4.0, doubtful=True)
    assert [a.intent for a in went if isinstance(a, HaIntentRequested)] == ["HassTurnOn"]


@pytest.fixture(scope="module")
def listener() -> Iterator[Understanding]:
    yield robustness.warm_listener()


def test_festival_hmm_after_the_wake_word_switches_nothing_at_once(
    listener: Understanding,
) -> None:
    """Okay nabu, "hmm" (Festival): heard as "bedroom lamp" and the lamp turned on at
    once before; now asked about."""
    voice = corpus.installed(FESTIVAL)
    intent, doubtful = robustness.first_answer(listener, voice, "hmm", HMM_SEED)
    assert intent not in DEVICE_ACTION_INTENTS or doubtful, (intent, doubtful)


def test_a_real_command_with_its_verb_still_goes_out_at_once(listener: Understanding) -> None:
    voice = corpus.installed(FESTIVAL)
    heard = robustness.first_answer(listener, voice, "turn on the bedroom lamp", HMM_SEED)
    assert heard == ("HassTurnOn", False)


def test_through_the_app_festival_hmm_asks_and_asks_home_assistant_nothing() -> None:
    """The whole way: no intent goes to Home Assistant; the satellite says "Sorry, say
    that again" and listens on without the wake word."""
    voice = corpus.installed(FESTIVAL)
    scene = robustness.scene(voice, "hmm", corpus.Room("clean"), seed=HMM_SEED)
    audio = np.concatenate([scene.audio, synth.silence(1.0)])
    config = Config()
    pipeline = build_pipeline(config, understanding=robustness.listener(config))
    app, published, done = dialogue_app(pipeline, Dialogue())
    try:
        app.run(synth.mic_chunks(audio))
    finally:
        app.close()
    assert not [a for a in done if isinstance(a, HaIntentRequested)]
    assert not [e for e in published.events if isinstance(e, IntentRecognized) and e.intent]
    assert [a.text for a in done if isinstance(a, ReplyRequested)] == [REPLIES["say_again"]]
    assert [a for a in done if isinstance(a, ListenAgain)]


def _arm_take() -> synth.Float:
    """Okay nabu, then "I can't move my arm" in tests/test_help_requests.py's eSpeak voice
    for it."""
    phrasings = lines("help_phrasings.txt")
    index = phrasings.index("I can't move my arm")
    voice, rate = ESPEAK_VOICES[index % len(ESPEAK_VOICES)]
    pieces = [synth.silence(0.8), synth.espeak("okay nabu", voice, rate), synth.silence(0.45)]
    pieces += [synth.espeak("I can't move my arm", voice, rate), synth.silence(1.2)]
    audio = np.concatenate([*pieces, synth.silence(0.8)])
    return audio + synth.white_noise(len(audio) / synth.RATE, FLOOR_RMS, seed=index)


@pytest.mark.usefixtures("need_espeak")
def test_espeak_i_cant_move_my_arm_is_at_worst_asked_about() -> None:
    """A guard (it passes on main too): this call for help in eSpeak
    (tests/test_help_requests.py's take) is heard as "i'd like to my hall blue", a bare
    name, and asked about (on main because it is less confident than
    ``doubt_below_confidence``, 0.51): no device action at once. Said again here it is
    heard as "all our fan on" (not understood); had it been heard the same, the
    dialogue would have set the light (the test of ``repeats`` above)."""
    heard = robustness.replay(Config(), _arm_take(), False)
    assert heard.answers, "nothing was heard"
    # (the hall holds no light: since the satellite knows that, "my hall blue" is not
    # understood at all, nlu/targets.names_no_device)
    at_once = [
        a.result
        for a in heard.answers
        if a.result.intent in DEVICE_ACTION_INTENTS and not a.doubtful
    ]
    assert not at_once, heard.answers
