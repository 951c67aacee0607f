"""When what was heard is believed: pure rules over a grammar result, what the templates
made of it, the room and the speech-to-text settings.

The score is the grammar search's score per frame against a free phone loop; engines
that give none are believed as they say.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from .help_answers import ANSWER_INTENTS, ANSWER_NO, HELP
from .intents import CARE_INTENTS, DEVICE_ACTION_INTENTS, NOT_A_COMMAND
from .recognizer import SOURCE_LLM, SOURCE_TEMPLATE, IntentResult
from .targets import other_slots

if TYPE_CHECKING:
    from ..stt.settings import SttSettings


class Scored(Protocol):
    """What the rules need of a speech-to-text result (``stt.base.SttResult``)."""

    @property
    def in_grammar(self) -> bool:
        """Whether it is a whole sentence of the grammar."""

    @property
    def score_per_frame(self) -> float | None:
        """Its score per frame against the phone loop (None: the engine gives none)."""


def needed_score(
    result: IntentResult, loud: bool, settings: SttSettings, shift: float = 0.0
) -> float:
    """The grammar-vs-phone-loop score an intent needs to be believed (``shift`` more).

    Noise raises the score of every utterance, in domain or not, so a ``loud`` room asks
    more; a device action heard wrongly does something in the home, so it asks more than
    anything else. Home Assistant's questions, timers and never mind ask more than our
    care intents: speech from outside the domain fits their many loose sentences more
    easily, and a call for help heard wrongly costs a false alarm, missed a nurse.
    Answers to the help question (heard only while it is open, in a grammar of their
    own) and things said that are no command ("yes" with no question open: nothing is
    done) ask what care intents ask.
    """
    need = settings.rejection_threshold + shift
    if loud:
        need += settings.loud_shift
    if result.intent in DEVICE_ACTION_INTENTS:
        need += settings.device_margin
    elif result.intent not in (*CARE_INTENTS, *ANSWER_INTENTS, NOT_A_COMMAND):
        need += settings.home_margin
    return need


def scored_enough(
    heard: Scored, result: IntentResult, loud: bool, settings: SttSettings, shift: float = 0.0
) -> bool:
    """In the domain: a whole sentence of the grammar, understood by the templates and
    scored well enough against the phone loop (engines without a score: as they say)."""
    if not heard.in_grammar or result.intent is None:
        return False
    score = heard.score_per_frame
    return score is None or not score < needed_score(result, loud, settings, shift)


def score_margin(
    heard: Scored, result: IntentResult, loud: bool, settings: SttSettings, shift: float = 0.0
) -> float | None:
    """How far the score lies above the score needed (None: the engine gives no score)."""
    if heard.score_per_frame is None:
        return None
    return heard.score_per_frame - needed_score(result, loud, settings, shift)


def must_agree(
    result: IntentResult, loud: bool, settings: SttSettings, noisy: bool = False
) -> bool:
    """Whether the utterance must also come out the same heard the other way (raw if it
    was heard denoised, and the other way round): a device action in a loud room, and
    (``agree_home_intents``) Home Assistant's other intents there: flite's "never mind"
    was heard as "what fan are on" twice, asked about and then answered.

    In loud noise a grammar search makes some command out of almost anything, with
    scores as good as a right one's; the two hearings err differently, so a wrong action
    rarely comes out of both.

    A ``noisy`` room (not loud, but the speech less than ``agree_below_db`` over the
    noise) asks the same of them: white or pink noise 20 dB below made "thirty"
    "thirteen" and "bedroom" "bathroom" there, 0.89-0.99 sure.
    """
    if not ((loud and settings.agree_when_loud) or noisy) or result.intent is None:
        return False
    if result.intent in DEVICE_ACTION_INTENTS:
        return True
    home = result.intent not in (*CARE_INTENTS, *ANSWER_INTENTS, NOT_A_COMMAND)
    return home and settings.agree_home_intents


def same_request(one: IntentResult, other: IntentResult) -> bool:
    """Whether two results ask for the same: the same intent with the same slots, or
    with the same other slots on the same devices ("the kitchen light", "the kitchen
    lights" where the kitchen holds one: targets.py)."""
    if (one.intent, one.slots) == (other.intent, other.slots):
        return True
    if one.intent != other.intent or one.targets is None or one.targets != other.targets:
        return False
    return other_slots(one.slots) == other_slots(other.slots)


def let_pass(result: IntentResult, previous: IntentResult | None) -> bool:
    """Whether a follow-on is let pass without a word: not understood, or understood as
    the utterance it went on from (``previous``: what that one was understood as, if
    anything), which was already answered."""
    if result.intent is None:
        return True
    return previous is not None and same_request(previous, result)


def reverberant(reverb_seconds: float | None, loud: bool, settings: SttSettings) -> bool:
    """Whether a quiet room that sounded ``reverb_seconds`` reverberant (an upper bound of
    its RT60, see stt/reverberation.py; None: not judged) is reverberant enough to doubt
    what is heard in it (``stt.reverberant_above_seconds``; 0: never). Not a ``loud``
    one: noise hides how the speech dies away (and a loud room is doubted anyway)."""
    above = settings.reverberant_above_seconds
    return bool(above) and not loud and reverb_seconds is not None and reverb_seconds > above


def doubtful(
    result: IntentResult,
    loud: bool,
    settings: SttSettings,
    reverberant: bool = False,
    voices: bool = False,
) -> bool:
    """Whether an understood result is to be asked about once more before it is acted
    on: heard in a ``loud`` room (noise makes a command out of almost anything, with
    scores as good as a right one's; unless ``ask_again_when_loud`` is off), in a
    ``reverberant`` one (reverberation leads the search to wrong commands as confident
    as right ones; unless ``ask_again_when_reverberant`` is off), among other ``voices``
    (people talking, a television: their words go into the command, "speak louder" as
    "switch each light out", "stop" as a call for help "fetch doctor", 0.91-0.99 sure;
    unless ``ask_again_among_voices`` is off, and then still a call for help unless
    ``confirm_help_among_voices`` is off too), or a template result
    less confident than ``doubt_below_confidence`` (the LLM's confidence is on another
    scale), or a device action heard as a bare name, with no verb (``IntentResult.bare``:
    a short noise the grammar search forced into "bedroom lamp" turned the lamp on;
    unless ``ask_about_bare_names`` is off)."""
    if result.intent is None:
        return False
    bare_action = result.bare and result.intent in DEVICE_ACTION_INTENTS
    if result.source == SOURCE_TEMPLATE and bare_action and settings.ask_about_bare_names:
        return True
    unsure = result.confidence < settings.doubt_below_confidence
    if result.source == SOURCE_TEMPLATE and unsure:
        return True
    if reverberant and settings.ask_again_when_reverberant:
        return True
    if voices and settings.ask_again_among_voices:
        return True
    if voices and result.intent == HELP and settings.confirm_help_among_voices:
        return True
    return loud and settings.ask_again_when_loud


def free_help(result: IntentResult, settings: SttSettings) -> bool:
    """Whether ``result`` is a call for help the LLM read from free transcription of words
    with none of its prompt's unmistakable ones in them ("help", "pain", "fallen", ...:
    ``IntentResult.unmistakable``), to be confirmed ("Do you need help?") before it goes
    out (``confirm_free_help``; no answer: it goes out marked unconfirmed, never lost).

    The LLM is biased towards help and reads it into what is no call: with it, of 40
    out-of-domain sentences said after the wake word in a quiet room, 3-9 per voice
    family went out as high alerts ("I could not sleep well last night", "the doctor
    said my blood pressure is fine", "I knitted a scarf" heard as "i knew that the
    scar"); a command said over a reply and transcribed "carry on its own life", and a
    bare "stop" or "cancel", too. A call in the templates' words is held to the room's
    rules only."""
    return (
        settings.confirm_free_help
        and result.source == SOURCE_LLM
        and result.intent == HELP
        and not result.unmistakable
    )


def doubted_no(result: IntentResult, noisy: bool) -> bool:
    """Whether a "no" to the help question, which would drop the call, is not taken
    (the call goes out unconfirmed): heard in a ``noisy`` room, not only a loud one.
    Noise 20 dB below the speech made flite's "yeah" a clear "no", sure enough to drop
    the call, and "help" a "no" 6 times in 20 (bench/help_answers.py, every voice)."""
    return noisy and result.intent == ANSWER_NO


def ask_again_unheard(result: IntentResult, noisy: bool, settings: SttSettings) -> bool:
    """Whether a request not made out (``result`` with no intent) is asked for once more
    instead of answered "Sorry, I didn't understand that": in a ``noisy`` room (loud, or
    noise close under the speech, or other voices in it), where the hearing is what
    failed and a second take, with no wake word to say first, is the person's best
    chance (``ask_again_not_understood``). Not in a quiet room, where not understood is
    mostly speech the satellite has no command for."""
    return result.intent is None and noisy and settings.ask_again_not_understood
