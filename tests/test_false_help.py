"""A bare "yes" or "no thanks" said after the wake word, with no help question open, is
no call for help.

The commands' grammar had no such words, and its search forced them into the nearest
command, most often "help": a false alarm to the caregivers. Things said that are no
command ("yes", "no thanks", ...: ``not_commands`` in nlu/care_en.yaml) are the other
half of a help check: a call for help heard in a quiet room is searched again with
CallForHelp's sentences beside them, and one heard there as no command is not
understood: nothing is done. A real call for help is still one. Any other intent heard
from a word or two ("thanks" as "set the study light to six") is searched again with
the sentence heard beside the not-commands and greetings (understanding/short_check.py):
"thanks" and "hello" do nothing, a short real command is still understood. Checked on the
grammars, then with the real recognizer on synthesized speech after the wake word, then
through the app.
bench/false_help.py counts both per voice family and room.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator

import numpy as np
import pytest

from satellite.actions import AnswerDue, HaIntentRequested, ListenAgain, ReplyRequested
from satellite.config import Config
from satellite.nlu.events import HelpRequested, IntentRecognized
from satellite.nlu.help_answers import HelpQuestion, help_check_intent_set
from satellite.nlu.intents import NOT_A_COMMAND
from satellite.nlu.recognizer import IntentResult, TemplateRecognizer
from satellite.pipeline import build_pipeline
from satellite.stt.answer_grammar import SHORT_CHECK_SEARCH, answer_grammar, beside
from satellite.stt.base import HearsAnswers
from satellite.stt.factory import compile_grammar, configured_intent_set
from satellite.understanding import Understanding
from satellite.understanding.answers import Answers
from satellite.understanding.dialogue import REPLIES, Dialogue
from tests import corpus, robustness, synth
from tests.app_harness import dialogue_app

#: Said to the satellite after the wake word; none asks for anything.
SAID = ("yes", "no thanks")
#: Real calls for help.
CALLS = ("help me", "i need help")
#: Short real commands and the intent each is.
SHORT_COMMANDS = (
    ("stop", "Stop"),
    ("what time is it", "GetTime"),
    ("turn on the kitchen light", "HassTurnOn"),
)


def test_the_help_check_holds_calls_and_not_commands_the_commands_grammar_neither() -> None:
    """A call for help is searched again with CallForHelp's sentences beside the
    not-commands, read as one or the other; what a real call was heard as ("nope" for
    eSpeak's "help"; "hello", "oh for me", "mm please" in a reverberant room) is not a
    not-command. The commands' grammar is as it was: no "yes"."""
    config = Config()
    answers = answer_grammar("en", config.stt.cache_dir)
    assert answers.check is not None
    reads = TemplateRecognizer(help_check_intent_set("en"))
    for said in ("yes", "no thanks", "yeah", "i'm fine", "okay", "sorry", "thank you"):
        assert answers.check.accepts(said.split()), said
        assert reads.recognize(said).intent == NOT_A_COMMAND, said
    for said in ("help me", "i need help", "call the nurse", "this is an emergency"):
        assert answers.check.accepts(said.split()), said
        assert reads.recognize(said).intent == "CallForHelp", said
    for said in ("nope", "please", "hello", "oh for me", "mm please", "yes please"):
        assert not answers.check.accepts(said.split()), said
    commands, _ = compile_grammar(config.stt, configured_intent_set(config.nlu, "en", None))
    assert not {"yes", "yeah", "thanks"} & commands.words


def test_the_short_check_hears_the_sentence_heard_or_a_not_command_and_nothing_else() -> None:
    """Any intent heard from short speech is searched again with the sentence the
    commands' search heard beside the not-commands: that sentence and each not-command
    are whole sentences of it, nothing else is (not another command, not half of it)."""
    answers = answer_grammar("en", Config().stt.cache_dir)
    assert answers.not_commands is not None
    short = beside(["set", "the", "light", "to", "red"], answers.not_commands)
    assert short.accepts(["set", "the", "light", "to", "red"])
    for said in ("yes", "no thanks", "thank you", "i'm fine", "all right", "sorry"):
        assert short.accepts(said.split()), said
    for said in ("set the light", "set the light to red please", "help me", "stop", "thanks red"):
        assert not short.accepts(said.split()), said
    assert not answers.not_commands.accepts(["help"])
    # greetings beside a sentence heard, never beside a call for help ("hello": help)
    assert short.accepts(["hello"]) and short.accepts(["hi", "there"])
    # and sounds made while thinking ("oh" was heard as "hall eight"), never beside a call
    assert short.accepts(["hmm"]) and short.accepts(["oh"]) and short.accepts(["nope"])
    assert answers.check is not None and not answers.check.accepts(["hello"])
    assert not answers.check.accepts(["oh"]) and not answers.check.accepts(["hmm"])


def test_a_not_command_is_concluded_as_not_understood_with_nothing_to_ask() -> None:
    """What the help check made of a call ("no", ``NOT_A_COMMAND``) is published and
    answered as not understood, not doubtful (nothing is asked once more), and not sure
    (the person may go on: the follow-on window stays open)."""
    answers = Answers(Config().stt, jobs=None, question=HelpQuestion())
    result = IntentResult(NOT_A_COMMAND, {}, 0.99, text="no")
    events = answers.conclude("u1", result, 2.0)
    assert [(e.intent, e.text) for e in events if isinstance(e, IntentRecognized)] == [(None, "no")]
    assert not answers.sure("u1", 0.0)
    due = [a for a in answers.take_actions() if isinstance(a, AnswerDue)]
    assert [(a.result.intent, a.result.text, a.doubtful) for a in due] == [(None, "no", False)]


@pytest.fixture(scope="module")
def listener() -> Iterator[Understanding]:
    """Understanding that has heard one command (live normalisation starts cold)."""
    yield robustness.warm_listener()


def _after_the_wake_word(
    understanding: Understanding, voice: corpus.Voice, text: str
) -> tuple[str | None, bool]:
    """The intent "okay nabu, ``text``" (a clean room, no question open) came to, and
    whether it is asked about before it is acted on."""
    if not voice.available:
        pytest.skip(f"{voice.label} is not installed")
    return robustness.first_answer(understanding, voice, text, seed=2)


def test_a_short_check_is_held_to_its_grammar_only_while_checking(
    listener: Understanding,
) -> None:
    """While the short check is searched, results are held to its grammar (the sentence
    heard beside the not-commands); once it is done, to the commands' again."""
    recognizer = listener.recognizer
    assert isinstance(recognizer, HearsAnswers)
    searches = recognizer.answer_searches
    commands = searches.grammar()
    assert commands.accepts(["be", "quiet"]) and not commands.accepts(["yes"])
    try:
        assert searches.check_short(["stop"])
        assert searches.checking == SHORT_CHECK_SEARCH
        assert searches.grammar().accepts(["stop"]) and searches.grammar().accepts(["yes"])
        assert not searches.grammar().accepts(["be", "quiet"])
    finally:
        searches.checking = None
    assert searches.grammar() is commands
    assert not searches.check_short([])


def test_a_check_searched_step_by_step_holds_its_grammar_only_within_its_steps(
    listener: Understanding,
) -> None:
    """A check begun early gives way to other work between its steps (stt/steps.py):
    there the commands' grammar is searched (a streaming result read then is held to
    it); within each step, the check's. Closed before its end, it closes its search."""
    recognizer = listener.recognizer
    assert isinstance(recognizer, HearsAnswers)
    searches = recognizer.answer_searches
    commands = searches.grammar()
    seen: list[bool] = []
    closed: list[bool] = []

    def search() -> Generator[None, None, None]:
        try:
            for _ in range(3):
                seen.append(searches.grammar().accepts(["yes"]))
                yield
        finally:
            closed.append(True)

    assert searches.check_short(["stop"])
    held = searches.held(search())
    try:
        next(held)
        assert searches.grammar() is commands and searches.checking is None
        next(held)
        assert searches.grammar() is commands
    finally:
        held.close()
    assert seen == [True, True] and closed == [True]
    assert searches.checking is None and searches.grammar() is commands


@pytest.mark.parametrize("voice", corpus.VOICES_CI, ids=lambda v: v.label)
@pytest.mark.parametrize("said", SAID)
def test_yes_or_no_after_the_wake_word_is_no_call_for_help(
    listener: Understanding, voice: corpus.Voice, said: str
) -> None:
    """A guard (these takes were no call before either): after the wake word too, no
    call for help. (eSpeak's "yes" is heard as "stop": another command, which the help
    check does not touch; bench/false_help.py counts them as "other intent".)"""
    assert _after_the_wake_word(listener, voice, said)[0] != "CallForHelp"


@pytest.mark.parametrize(
    ("voice", "said", "seed"),
    [
        (corpus.VOICES_CI[0], "no", 1),
        (corpus.VOICES_CI[1], "yes", 0),
        (corpus.VOICES_CI[1], "yeah", 2),
        (corpus.VOICES_CI[2], "yes", 0),
        (corpus.VOICES_CI[2], "no", 1),
    ],
    ids=lambda v: v.label if isinstance(v, corpus.Voice) else str(v),
)
def test_yes_or_no_with_the_satellite_listening_is_no_call_for_help(
    listener: Understanding, voice: corpus.Voice, said: str, seed: int
) -> None:
    """Said with no wake word, the satellite listening on (as after a reply), a quiet
    room: each was a call for help sent at once before (bench/false_help.py --no-wake);
    now the help check hears it as no command: not understood."""
    if not voice.available:
        pytest.skip(f"{voice.label} is not installed")
    understanding = listener
    understanding.question.open = False
    scene = robustness.scene(voice, said, corpus.Room("clean"), seed=seed, wake=False)
    heard = robustness.replay(Config(), scene.audio, True, understanding)
    assert heard.first is not None, f"{voice.label}: {said!r} not heard at all"
    assert heard.first.result.intent is None  # the help check: not understood


@pytest.mark.parametrize("voice", corpus.VOICES_CI, ids=lambda v: v.label)
@pytest.mark.parametrize("said", CALLS)
def test_a_call_for_help_is_still_one(
    listener: Understanding, voice: corpus.Voice, said: str
) -> None:
    """Sent at once or asked about, never lost to a not-command."""
    assert _after_the_wake_word(listener, voice, said)[0] == "CallForHelp"


@pytest.mark.parametrize(
    ("voice", "said", "seed"),
    [
        (corpus.VOICES_CI[0], "thanks", 4),
        (corpus.VOICES_CI[0], "thank you", 5),
        (corpus.VOICES_CI[1], "hello", 8),
        (corpus.VOICES_CI[2], "thank you", 5),
    ],
    ids=lambda v: v.label if isinstance(v, corpus.Voice) else str(v),
)
def test_thanks_or_hello_after_the_wake_word_switches_nothing(
    listener: Understanding, voice: corpus.Voice, said: str, seed: int
) -> None:
    """Okay nabu, "thanks" / "hello" in a quiet room: before the short check eSpeak's
    "thanks" and flite's "hello" set a light's brightness or colour at once (heard as
    "study six", "hall yellow"), eSpeak's and Festival's "thank you" asked about it
    (bench/false_help.py, these seeds). Now not understood: nothing is done or asked."""
    if not voice.available:
        pytest.skip(f"{voice.label} is not installed")
    assert robustness.first_answer(listener, voice, said, seed) == (None, False)


@pytest.mark.parametrize("voice", corpus.VOICES_CI, ids=lambda v: v.label)
@pytest.mark.parametrize(("said", "intent"), SHORT_COMMANDS, ids=str)
def test_a_short_real_command_is_still_understood(
    listener: Understanding, voice: corpus.Voice, said: str, intent: str
) -> None:
    """Short speech is searched again beside the not-commands: a real command comes out
    as itself there (acted on at once, or asked about), never as no command."""
    assert _after_the_wake_word(listener, voice, said)[0] == intent


def test_through_the_app_no_does_nothing() -> None:
    """Okay nabu, "no" (flite's slt, a quiet room, no question open) was a call for help
    sent at once before (bench/false_help.py, this seed). Now no call for help, no
    intent published, nothing asked of Home Assistant, no question asked; only "not
    understood" is said. (Festival's "what" is still heard as "we need doctor": the
    search again takes in the wake word's tail, "nabu", as "we need".)"""
    voice = corpus.VOICES_CI[1]
    if not voice.available:
        pytest.skip(f"{voice.label} is not installed")
    scene = robustness.scene(voice, "no", corpus.Room("clean"), seed=1)
    audio = np.concatenate([scene.audio, synth.silence(1.0)])
    config = Config()
    pipeline = build_pipeline(config, understanding=robustness.listener(config))
    app, published, done = dialogue_app(pipeline, Dialogue())
    try:
        app.run(synth.mic_chunks(audio))
    finally:
        app.close()
    assert not [e for e in published.events if isinstance(e, HelpRequested)]
    assert not [e for e in published.events if isinstance(e, IntentRecognized) and e.intent]
    assert not [a for a in done if isinstance(a, HaIntentRequested | ListenAgain)]
    assert [a.text for a in done if isinstance(a, ReplyRequested)] == [REPLIES["not_understood"]]


@pytest.fixture(scope="module")
def fresh_listener() -> Iterator[Understanding]:
    """A warm listener of its own (the outcomes below were measured from one)."""
    yield robustness.warm_listener()


@pytest.mark.parametrize(
    ("label", "said", "seed"),
    [
        # with the satellite listening on (no wake word), each had gone out at once as a
        # call for help (bench/false_help.py --all-voices --no-wake, these seeds)
        ("flite/awb@1", "yes", 0),
    ],
)
def test_a_call_its_check_does_not_hear_again_is_asked_about(
    fresh_listener: Understanding, label: str, said: str, seed: int
) -> None:
    """A call for help from short speech whose check hears neither a call nor, clearly,
    a thing that is no command goes out only once the person says yes: "Do you need
    help?" first. Never lost either way."""
    fresh_listener.question.open = False
    scene = robustness.scene(
        corpus.installed(label), said, corpus.Room("clean"), seed=seed, wake=False
    )
    heard = robustness.replay(Config(), scene.audio, True, fresh_listener)
    assert heard.first is not None, f"{label}: {said!r} not heard"
    assert (heard.first.result.intent, heard.first.doubtful) == ("CallForHelp", True)


@pytest.mark.parametrize("voice", corpus.VOICES_CI[1:], ids=lambda v: v.label)
def test_a_call_its_check_hears_again_goes_out_at_once(
    fresh_listener: Understanding, voice: corpus.Voice
) -> None:
    """A clear "help me" is heard as a call again by its check: sent at once, not asked."""
    if not voice.available:
        pytest.skip(f"{voice.label} is not installed")
    fresh_listener.question.open = False
    scene = robustness.scene(voice, "help me", corpus.Room("clean"), seed=2)
    heard = robustness.replay(Config(), scene.audio, False, fresh_listener)
    assert heard.wakes and heard.first is not None, f"{voice.label}: 'help me' not heard"
    assert (heard.first.result.intent, heard.first.doubtful) == ("CallForHelp", False)


@pytest.mark.parametrize(
    ("said", "seed", "heard_before"),
    [
        # each was acted on at once before (bench/false_help.py --all-voices, these seeds)
        ("i'm fine", 7, "timer for nine minute"),  # its words spanned 1.07 s: not checked
        ("oh", 12, "hall eight"),  # the check heard "no", 3.7 worse per frame
        ("all right", 13, "all our light on"),  # its words spanned 1.06 s
    ],
)
def test_a_filler_or_a_not_command_said_slowly_switches_nothing(
    fresh_listener: Understanding, said: str, seed: int, heard_before: str
) -> None:
    """Okay nabu, then "i'm fine", "oh" or "all right" in flite's slow rms voice, a quiet
    room: each started a timer, set a light or asked about the lights at once (heard as
    ``heard_before``). The short check now takes words spanning up to 1.25 s and
    hears fillers ("oh", "hmm", "um" ...) beside the sentence heard: not
    understood, nothing done or asked."""
    voice = corpus.installed("flite/rms@1.15")
    outcome = robustness.first_answer(fresh_listener, voice, said, seed)
    assert outcome == (None, False), f"{said!r}: {outcome} (heard as {heard_before!r} before)"


def test_a_call_its_check_hears_again_but_scores_poorly_is_asked_about(
    fresh_listener: Understanding,
) -> None:
    """Okay nabu, "never mind" in eSpeak's en-us+f3 voice (bench/false_help.py
    --all-voices, this seed) was heard as "get me my nurse" and sent at once: its check
    heard "get me my nurse" again, scored below what the check's not-commands must
    score. A call heard again so poorly is asked about ("Do you need help?"): not sent
    at once, never dropped."""
    voice = corpus.installed("espeak/en-us+f3@140")
    heard = robustness.first_answer(fresh_listener, voice, "never mind", seed=36)
    assert heard == ("CallForHelp", True)
