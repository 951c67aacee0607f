"""Settings of speech to text (config section ``stt``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..config_base import (
    Section,
    check_boolean,
    check_choice,
    check_integer,
    check_number,
    check_optional,
    check_path,
    check_pattern,
    option,
)

STT_ENGINES = ("pocketsphinx", "faster_whisper", "whisper_cpp", "vosk")
STT_INPUTS = ("auto", "raw", "denoised")
#: What a loud room's command is heard as the other way (``agree_when_loud``): the
#: microphone as it was, or denoised again by WebRTC at this level (1-4).
OTHER_WAYS = ("raw", "webrtc1", "webrtc2", "webrtc3", "webrtc4")
#: What a speaker may be called: it names a folder.
SPEAKER_NAME = r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}"


@dataclass(frozen=True)
class SttSettings(Section):
    """Speech to text."""

    engine: str = option(
        "pocketsphinx",
        check_choice(STT_ENGINES),
        "pocketsphinx, faster_whisper, whisper_cpp or vosk",
    )
    model_path: str | None = option(
        None,
        check_optional(check_pattern(r".+", "a path")),
        "Model for faster_whisper, whisper_cpp or vosk",
    )
    rejection_threshold: float = option(
        -34.0,
        check_number(-100.0, 50.0),
        "Per-frame grammar vs phone-loop score below which speech is out of domain (-100 to 50)",
    )
    word_weight: float = option(
        0.25,
        check_number(0.0, 5.0),
        "Weight of the second-worst word's score in the utterance score (0-5; 0 = off)",
    )
    device_margin: float = option(
        8.0,
        check_number(0.0, 50.0),
        "How much more score a device action needs than other intents (0-50)",
    )
    home_margin: float = option(
        5.0,
        check_number(0.0, 50.0),
        "How much more score Home Assistant's other intents need than care intents (0-50)",
    )
    loud_shift: float = option(
        8.0,
        check_number(0.0, 50.0),
        "How much more score every intent needs in a loud room (0-50)",
    )
    agree_when_loud: bool = option(
        True,
        check_boolean,
        "In a loud room a device action needs the raw and the denoised hearing to agree",
    )
    agree_home_intents: bool = option(
        True,
        check_boolean,
        "In a loud room Home Assistant's other intents (questions, timers, never mind) "
        "need the two hearings to agree as well (care intents never: they are asked about)",
    )
    other_way: str = option(
        "webrtc2",
        check_choice(OTHER_WAYS),
        "What a command heard denoised in a loud room is heard again as, to agree "
        "(agree_when_loud): raw, or the microphone denoised by WebRTC (webrtc1-webrtc4)",
    )
    ask_again_when_loud: bool = option(
        True,
        check_boolean,
        "In a loud room ask once more (or confirm a call for help) instead of acting",
    )
    ask_again_among_voices: bool = option(
        True,
        check_boolean,
        "Among other voices (people talking, a television) ask once more instead of "
        "acting, even where the room is not loud",
    )
    confirm_help_among_voices: bool = option(
        True,
        check_boolean,
        "Confirm a call for help heard among other voices before sending it (with "
        "ask_again_among_voices off too)",
    )
    confirm_free_help: bool = option(
        True,
        check_boolean,
        "Confirm a call for help the LLM read from free speech with no word of help or "
        'distress in it (nlu/llm_en.yaml: unmistakable) before sending it: "Do you need '
        'help?"; unanswered it still goes out, marked unconfirmed',
    )
    believe_repeats: bool = option(
        False,
        check_boolean,
        'Among other voices, after "Sorry, say that again", act on the request heard again '
        "the same (the same devices, the same settings) even when that hearing alone is "
        "scored too low (off: a voice that mishears a command the same way twice is then "
        "acted on)",
    )
    ask_again_not_understood: bool = option(
        True,
        check_boolean,
        "In a noisy room (loud, noise close under the speech, or other voices) answer a "
        'request not made out with "Sorry, say that again" and listen for it without the '
        'wake word (off: "Sorry, I didn\'t understand that"; the wake word is needed again)',
    )
    ask_about_bare_names: bool = option(
        True,
        check_boolean,
        "Ask once more about a device action heard as a bare name, with no verb "
        '("bedroom lamp"), instead of acting',
    )
    doubt_below_confidence: float = option(
        0.86,
        check_number(0.0, 1.0),
        "In any room, ask once more about a result less confident than this (0-1; 0 = off)",
    )
    reverberant_above_seconds: float = option(
        0.1,
        check_number(0.0, 2.0, " s"),
        "A room whose speech falls off no faster than this reverberation time (RT60, s) is "
        "reverberant (0-2; 0 = never)",
    )
    ask_again_when_reverberant: bool = option(
        True,
        check_boolean,
        "In a reverberant room ask once more (or confirm a call for help) instead of acting",
    )
    reverb_shift: float = option(
        14.0,
        check_number(0.0, 50.0),
        "How much more score every intent but a call for help needs in a reverberant room "
        "(0-50; a call for help there is asked about, never refused)",
    )
    own_mean_retry: bool = option(
        True,
        check_boolean,
        "Search an utterance the streaming search did not trust again, from its own mean",
    )
    own_mean_shift: float = option(
        6.0,
        check_number(0.0, 50.0),
        "How much more score a result of that search needs (0-50)",
    )
    person_span_retry: bool = option(
        True,
        check_boolean,
        "In a loud room, search an utterance not believed again over the person's own "
        "words alone (where the level stands well above the room's)",
    )
    person_span_shift: float = option(
        0.0,
        check_number(0.0, 50.0),
        "How much more score a result of that search needs (0-50)",
    )
    steps_per_frame: int = option(
        3,
        check_integer(1, 1000),
        "Recognition steps (a 10 ms frame searched) done per frame at most (1-1000)",
    )
    early_endpoint_ms: int = option(
        250,
        check_integer(0, 2000, " ms"),
        "Trailing silence that ends a complete command, ms; 0 = off",
    )
    early_endpoint_margin: float = option(
        6.0,
        check_number(0.0, 50.0),
        "How much more score a command needs to end the utterance early (0-50)",
    )
    answer_at_once_confidence: float = option(
        0.99,
        check_number(0.0, 1.0),
        "A command ended early at a pause and this confident is answered at once; others "
        "wait for the follow-on window (0-1; 1 = every answer waits)",
    )
    follow_on_margin: float = option(
        6.0,
        check_number(0.0, 50.0),
        "How much more score a follow-on (the sentence heard again after a pause) needs (0-50)",
    )
    hearing: str = option(
        "auto",
        check_choice(STT_INPUTS),
        "What the recognizer hears: auto (denoised only in a loud room), raw or denoised",
    )
    denoise_below_db: float = option(
        18.0,
        check_number(0.0, 60.0, " dB"),
        "auto: speech-to-noise ratio below which the recognizer hears denoised audio, dB (0-60)",
    )
    agree_below_db: float = option(
        30.0,
        check_number(0.0, 60.0, " dB"),
        "In a room not loud whose speech-to-noise ratio is below this, what is heard must "
        "come out the same heard denoised too, as in a loud room; a call for help that "
        "does not, or of a word or two, is confirmed first, dB (0-60; 0: never)",
    )
    open_transcripts: bool = option(
        True,
        check_boolean,
        "Transcribe out-of-domain speech with the full language model (for the LLM)",
    )
    cache_dir: str = option(
        "~/.cache/pocket-satellite/grammars",
        check_pattern(r".+", "a path"),
        "Where compiled grammars are kept",
    )
    loud_adaptation: bool = option(
        True,
        check_boolean,
        "Hear a loud room with the acoustic model adapted to speech in noise "
        "(about 28 MB more; see the README)",
    )
    speaker: str | None = option(
        None,
        check_optional(check_pattern(SPEAKER_NAME, "a name of letters, digits, - and _")),
        "Whose voice the acoustic model is adapted to (pocket-satellite enrol); "
        "null = the model as shipped",
    )
    speakers_dir: str = option(
        "~/.local/share/pocket-satellite/speakers",
        check_path("the folder of enrolled speakers"),
        "Where enrolled speakers' adaptations are kept (one folder per speaker)",
    )
