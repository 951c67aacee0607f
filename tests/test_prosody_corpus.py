"""Speech with known syllable rates, for the prosody tests and bench/prosody.py.

Two disjoint sets of sentences and of voices: the *calibration* set fits the acoustic
estimator's power law (bench/prosody.py --calibrate), the *evaluation* set is what the
tests and the bench score. Truth: syllables are the vowel phonemes eSpeak NG actually
spoke (its phoneme events) or, for flite, the vowels of the phones it prints; durations
come from the clean audio (first to last sample above a level; quiet runs of 150 ms or
more are pauses). The tests at the end check the truth itself.
"""

from __future__ import annotations

import functools
import subprocess
import tempfile
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from satellite.audio.chunk import resample
from satellite.prosody.acoustic import analyse_chunk
from satellite.prosody.events import Alert, AlertCleared, Prosody
from satellite.prosody.monitor import Measurement, ProsodyMonitor, measure
from satellite.prosody.settings import ProsodySettings
from tests.synth import RATE, Float, TimedSpeech, active_rms, espeak_timed, have_espeak, to_chunk

CALIBRATION_SENTENCES = (
    "Turn on the light in the kitchen please.",
    "What time is it right now?",
    "Could you tell me what the weather will be like tomorrow morning?",
    "I would like a cup of tea with a little milk.",
    "Remind me to call my daughter at six o'clock this evening.",
    "The garden looks lovely after all that rain we had last week.",
    "Please switch off the television in the living room.",
    "My knee has been hurting since I went for a walk yesterday.",
    "Can you play some quiet music for me?",
    "I think I left my glasses somewhere in the bedroom.",
    "When is the doctor coming to see me again?",
    "Set a timer for twenty minutes.",
    "We used to go to the seaside every summer when the children were small.",
    "Open the curtains, it is far too dark in here.",
    "I don't remember whether I took my tablets this morning.",
    "Tell my son that I am feeling much better today.",
    "The bus was late again, so I missed the start of the concert.",
    "Is there anything good on the radio this afternoon?",
    "Please help me, I cannot find the remote control anywhere.",
    "Lock the front door and turn down the heating.",
    "My sister is visiting on Sunday with her two grandchildren.",
    "I feel a bit cold, could you close the window?",
    "What did the nurse say about my blood pressure?",
    "Read me the headlines from the newspaper.",
    "Everything seems to happen so quickly these days.",
    "I would rather have soup than a sandwich for lunch.",
    "The cat has been sleeping on the chair by the fire all day.",
    "Dim the lights in the hallway to half.",
    "How many days are left until my birthday?",
    "Somebody knocked on the door but nobody was there when I opened it.",
    "Please add bread, eggs and butter to the shopping list.",
    "Wake me up at half past seven tomorrow.",
    "I am worried about the storm they mentioned on the news.",
    "Thank you very much, that was exactly what I needed.",
    "Call the reception desk and ask them to send someone up.",
    "My grandson is learning to play the violin at school.",
)
EVALUATION_SENTENCES = (
    "Switch on the lamp next to my bed.",
    "What is the date today?",
    "I feel dizzy, please get the nurse right away.",
    "Could you turn the heating up a couple of degrees?",
    "Remind me to water the plants on Thursday afternoon.",
    "My husband and I were married for fifty two years.",
    "There is someone at the door, can you see who it is?",
    "I would like to listen to the football match later on.",
    "Please tell my daughter that I need her to phone me.",
    "The soup was lovely but it was a little too salty.",
    "Help, I have fallen and I cannot get up.",
    "Is it going to snow over the weekend?",
    "Turn off all the lights downstairs.",
    "I used to work as a teacher in a village school near the river.",
    "Can you find me a recipe for apple crumble?",
    "My hands are shaking and my heart is beating very fast.",
    "Put the kettle on, I will be there in a minute.",
    "How long does it take to drive to the hospital?",
    "The neighbours have a new puppy that barks all night.",
    "I need to take my medicine before dinner.",
    "Close the blinds in the sitting room, the sun is in my eyes.",
    "Who won the tennis yesterday evening?",
    "Something is wrong, I can smell smoke in the corridor.",
    "Please play the radio station I was listening to this morning.",
    "I have been waiting for my lunch for over an hour.",
    "Tell me a story about a sailor and a lighthouse.",
    "We planted potatoes, carrots and beans in the vegetable patch.",
    "What was the name of that song you played earlier?",
    "Lower the temperature in the bathroom a little bit.",
    "Nobody has come to see me all week and I feel lonely.",
    "Set an alarm for a quarter to nine.",
    "My brother lives in a small town by the sea in the north.",
    "I can't breathe properly, get somebody quickly.",
    "Please order more of the biscuits I like.",
    "Is the post office open on Saturday morning?",
    "The film last night was much better than I expected.",
    "Turn the big light off and leave the little one on.",
    "Remember to ask the doctor about my new glasses.",
    "Could you speak a little more slowly, please?",
    "Everybody in the dining room was laughing at the joke.",
)
#: (libespeak-ng voice, pitch 0-99); the two lists share no voice.
CALIBRATION_VOICES = (("en+m3", 40), ("en-gb-x-rp+f2", 70), ("en-029", 45), ("en-us+klatt2", 55))
EVALUATION_VOICES = (
    ("en-us", 50),
    ("en-gb-scotland+f4", 65),
    ("en-us-nyc+m1", 40),
    ("en-gb-x-gbclan+klatt", 50),
)
CALIBRATION_FLITE_VOICES = ("kal16", "rms")
EVALUATION_FLITE_VOICES = ("slt", "awb")
#: Words per minute asked of eSpeak NG (its syllable rate is measured, not assumed).
RATES_WPM = tuple(range(100, 321, 20))
#: Silence before (like the recorder's pre-roll) and after each utterance, s.
LEAD_SECONDS = 0.5
TAIL_SECONDS = 0.3
#: White noise under every utterance, dB below the speech.
SNR_DB = 30.0
#: Quiet runs at least this long are pauses (the articulation-rate definition), s.
MIN_PAUSE_SECONDS = 0.15
_FLITE_VOWELS = frozenset(
    {
        "aa",
        "ae",
        "ah",
        "ao",
        "aw",
        "ax",
        "axr",
        "ay",
        "eh",
        "er",
        "ey",
        "ih",
        "ix",
        "iy",
        "ow",
        "oy",
        "uh",
        "uw",
    }
)


@dataclass(frozen=True)
class Sample:
    """One utterance: noisy padded audio (16-bit scale) and its true counts and times."""

    text: str
    voice: str
    rate_wpm: int
    audio: Float
    syllables: int
    speech_seconds: float
    articulation_seconds: float
    #: (word, start s, end s) in ``audio``'s time (eSpeak only).
    words: tuple[tuple[str, float, float], ...] = ()

    @property
    def speaking_rate(self) -> float:
        """True syllables per second over the whole utterance."""
        return self.syllables / self.speech_seconds

    @property
    def articulation_rate(self) -> float:
        """True syllables per second without pauses of 150 ms or more."""
        return self.syllables / self.articulation_seconds


def true_durations(clean: Float) -> tuple[float, float]:
    """(speech s, articulation s) of clean audio: its extent, less quiet runs >= 150 ms."""
    level = max(200.0, 0.01 * float(np.max(np.abs(clean))))
    loud = np.nonzero(np.abs(clean) > level)[0]
    start, end = int(loud[0]), int(loud[-1]) + 1
    frames = (end - start) // 160
    peak = np.abs(clean[start : start + frames * 160]).reshape(frames, 160).max(axis=1)
    quiet = np.concatenate(([0], (peak < level).astype(np.int8), [0]))
    edges = np.diff(quiet)
    runs = np.nonzero(edges == -1)[0] - np.nonzero(edges == 1)[0]
    pauses = runs[runs * 0.01 >= MIN_PAUSE_SECONDS].sum() * 0.01
    speech = (end - start) / RATE
    return speech, speech - float(pauses)


def _pad_and_noise(clean: Float, seed: int) -> Float:
    lead = np.zeros(int(LEAD_SECONDS * RATE), dtype=np.float32)
    tail = np.zeros(int(TAIL_SECONDS * RATE), dtype=np.float32)
    audio = np.concatenate((lead, clean, tail))
    noise_rms = active_rms(clean) / 10.0 ** (SNR_DB / 20.0)
    noise = np.random.default_rng(seed).standard_normal(len(audio)) * noise_rms
    out: Float = (audio + noise).astype(np.float32)
    return out


def from_timed(speech: TimedSpeech, text: str, voice: str, rate_wpm: int, seed: int) -> Sample:
    """A sample from eSpeak NG output (word times moved by the lead silence)."""
    speech_s, articulation_s = true_durations(speech.audio)
    words = tuple((w, s + LEAD_SECONDS, e + LEAD_SECONDS) for w, s, e in speech.words)
    return Sample(
        text,
        voice,
        rate_wpm,
        _pad_and_noise(speech.audio, seed),
        speech.syllables,
        speech_s,
        articulation_s,
        words,
    )


def espeak_set(
    sentences: tuple[str, ...], voices: tuple[tuple[str, int], ...], passes: float = 1.5
) -> list[Sample]:
    """Every sentence in every voice, at rates stepping through 100-320 wpm."""
    requests: list[tuple[str, str, int, int]] = []
    for v, (voice, pitch) in enumerate(voices):
        for i in range(int(len(sentences) * passes)):
            rate = RATES_WPM[(5 * i + 3 * v) % len(RATES_WPM)]
            requests.append((sentences[i % len(sentences)], voice, rate, pitch))
    spoken = espeak_timed(requests)
    return [
        from_timed(s, text, voice, rate, seed)
        for seed, (s, (text, voice, rate, _)) in enumerate(zip(spoken, requests, strict=True))
    ]


def flite_sample(text: str, voice: str, stretch: float, seed: int) -> Sample:
    """One flite utterance; ``stretch`` scales every duration (0.6 = faster)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "out.wav"
        phones = subprocess.run(
            [
                "flite",
                "-voice",
                voice,
                "--setf",
                f"duration_stretch={stretch:.3f}",
                "-t",
                text,
                "-ps",
                "-o",
                str(path),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        with wave.open(str(path)) as wav:
            rate = wav.getframerate()
            raw = np.frombuffer(wav.readframes(wav.getnframes()), "<i2").astype(np.float32)
    clean = resample(raw, rate, RATE) if rate != RATE else raw
    syllables = sum(1 for p in phones.split() if p in _FLITE_VOWELS)
    speech_s, articulation_s = true_durations(clean)
    return Sample(
        text,
        voice,
        round(160 / stretch),
        _pad_and_noise(clean, seed),
        syllables,
        speech_s,
        articulation_s,
    )


def flite_set(sentences: tuple[str, ...], voices: tuple[str, ...], seed: int) -> list[Sample]:
    """Each sentence in each flite voice at a random tempo, 0.6-1.5x flite's own."""
    rng = np.random.default_rng(seed)
    return [
        flite_sample(
            text, voice, float(np.exp(rng.uniform(np.log(0.6), np.log(1.5)))), seed * 1000 + i
        )
        for i, (text, voice) in enumerate((t, v) for t in sentences for v in voices)
    ]


@functools.lru_cache(maxsize=1)
def evaluation_set() -> tuple[Sample, ...]:
    """240 eSpeak NG utterances: 40 sentences x 4 voices, 100-320 wpm (cached)."""
    return tuple(espeak_set(EVALUATION_SENTENCES, EVALUATION_VOICES))


@functools.lru_cache(maxsize=1)
def calibration_set() -> tuple[Sample, ...]:
    """eSpeak NG and flite utterances that share nothing with the evaluation set."""
    return tuple(espeak_set(CALIBRATION_SENTENCES, CALIBRATION_VOICES, passes=3.0)) + tuple(
        flite_set(CALIBRATION_SENTENCES, CALIBRATION_FLITE_VOICES, seed=11)
    )


def have_flite() -> bool:
    """True when Debian's flite program is installed."""
    import shutil  # noqa: PLC0415

    return shutil.which("flite") is not None


# --- checks of the truth itself ----------------------------------------------------------

needs_espeak = pytest.mark.skipif(not have_espeak(), reason="espeak-ng is not installed")


def test_sets_share_no_sentence_and_no_voice() -> None:
    assert not set(CALIBRATION_SENTENCES) & set(EVALUATION_SENTENCES)
    assert not {v for v, _ in CALIBRATION_VOICES} & {v for v, _ in EVALUATION_VOICES}
    assert not set(CALIBRATION_FLITE_VOICES) & set(EVALUATION_FLITE_VOICES)


@needs_espeak
def test_truth_counts_the_syllables_espeak_spoke() -> None:
    spoken = espeak_timed(
        [
            ("I feel dizzy, please get the nurse.", "en-us", 175, 50),
            ("Everybody was laughing.", "en-us", 175, 50),
        ]
    )
    assert [s.syllables for s in spoken] == [8, 7]
    words = [w for w, _, _ in spoken[0].words]
    assert words == ["I", "feel", "dizzy", "please", "get", "the", "nurse"]
    starts = [s for _, s, _ in spoken[0].words]
    assert starts == sorted(starts)
    assert all(e > s for _, s, e in spoken[0].words)


@needs_espeak
def test_true_durations_leave_out_pauses_only() -> None:
    (speech,) = espeak_timed([("Help me. I have fallen, and I cannot get up.", "en-us", 150, 50)])
    speech_s, articulation_s = true_durations(speech.audio)
    pauses = [e - s for name, s, e in speech.phonemes[1:-1] if name.startswith("_")]
    assert 0.9 * len(speech.audio) / RATE < speech_s <= len(speech.audio) / RATE
    assert articulation_s < speech_s - 0.15  # the full stop's pause at least
    assert articulation_s > speech_s - sum(pauses) - 0.1


# --- scoring helpers (tests and bench) ----------------------------------------------------


def measure_sample(
    sample: Sample, settings: ProsodySettings | None = None, use_words: bool = False
) -> Measurement:
    """Run the estimator on a sample, with its eSpeak word times when ``use_words``."""
    return measure(
        to_chunk(sample.audio),
        settings or ProsodySettings(),
        words=sample.words if use_words else None,
    )


def raw_acoustic_rates(samples: tuple[Sample, ...] | list[Sample]) -> Float:
    """Uncalibrated nuclei per articulation second (what the calibration is fitted on)."""
    out = []
    for s in samples:
        a = analyse_chunk(to_chunk(s.audio))
        out.append(a.nuclei / a.articulation_seconds if a.articulation_seconds else 0.0)
    return np.asarray(out, dtype=np.float32)


# --- a simulated day of one speaker -------------------------------------------------------

#: Speech rate eSpeak NG is asked for when measuring a sentence's own tempo, wpm.
REFERENCE_WPM = 175
#: Normal utterances are this much faster than the speaker's own rate (the worst case
#: of everyday variation); warm-up utterances vary around it.
NORMAL_RATIO = (1.0, 1.15)
WARMUP_RATIO = (0.9, 1.1)
#: Rushed episodes, as a multiple of the speaker's normal rate.
EPISODE_RATIO = (1.5, 2.0)
#: Seconds between utterances: normal talk, and within an episode.
NORMAL_GAP_SECONDS = 180.0
EPISODE_GAP_SECONDS = 20.0


@dataclass(frozen=True)
class DayUtterance:
    """One utterance of a simulated day."""

    sample: Sample
    timestamp_seconds: float
    #: True articulation rate / the speaker's normal rate.
    true_ratio: float
    #: Index of the rushed episode it belongs to, or None for normal speech.
    episode: int | None
    warmup: bool = False


def simulate_day(
    voice: str,
    pitch: int,
    normal_rate: float,
    seed: int,
    warmup: int = 20,
    episodes: int = 6,
    sentences: tuple[str, ...] = EVALUATION_SENTENCES,
) -> list[DayUtterance]:
    """Warm-up at the normal rate, then blocks of normal speech (1.0-1.15x) each followed
    by a rushed episode of 3-5 utterances at 1.5-2.0x (true articulation-rate ratios:
    eSpeak's wpm is set per sentence from its measured tempo, then corrected once)."""
    rng = np.random.default_rng(seed)
    reference = espeak_timed([(s, voice, REFERENCE_WPM, pitch) for s in sentences])
    own_rate = {
        s: t.syllables / true_durations(t.audio)[1]
        for s, t in zip(sentences, reference, strict=True)
    }
    plan: list[tuple[str, float, int | None, bool]] = []
    for _ in range(warmup):
        plan.append(
            (sentences[rng.integers(len(sentences))], rng.uniform(*WARMUP_RATIO), None, True)
        )
    for e in range(episodes + 1):
        for _ in range(int(rng.integers(12, 19))):
            plan.append(
                (sentences[rng.integers(len(sentences))], rng.uniform(*NORMAL_RATIO), None, False)
            )
        if e < episodes:
            for _ in range(int(rng.integers(3, 6))):
                plan.append(
                    (sentences[rng.integers(len(sentences))], rng.uniform(*EPISODE_RATIO), e, False)
                )
    wpm = [REFERENCE_WPM * normal_rate * ratio / own_rate[text] for text, ratio, _, _ in plan]
    spoken = espeak_timed([(p[0], voice, round(w), pitch) for p, w in zip(plan, wpm, strict=True)])
    realised = [t.syllables / true_durations(t.audio)[1] / normal_rate for t in spoken]
    wpm = [w * p[1] / r for w, p, r in zip(wpm, plan, realised, strict=True)]
    spoken = espeak_timed([(p[0], voice, round(w), pitch) for p, w in zip(plan, wpm, strict=True)])
    day: list[DayUtterance] = []
    clock = 0.0
    for i, (t, (text, _, episode, warm), w) in enumerate(zip(spoken, plan, wpm, strict=True)):
        sample = from_timed(t, text, voice, round(w), seed * 10000 + i)
        clock += EPISODE_GAP_SECONDS if episode is not None else NORMAL_GAP_SECONDS
        day.append(
            DayUtterance(sample, clock, sample.articulation_rate / normal_rate, episode, warm)
        )
    return day


@dataclass(frozen=True)
class DayResult:
    """Alerts over a simulated day."""

    episodes: int
    detected: int
    #: New alerts raised on normal (not rushed) utterances.
    false_alerts: int
    normal_utterances: int
    #: Per utterance: (true ratio, estimated ratio or None, rushed?, alert raised here?)
    rows: tuple[tuple[float, float | None, bool, bool], ...]


def run_day(
    day: list[DayUtterance], settings: ProsodySettings | None = None, use_words: bool = False
) -> DayResult:
    """Feed a day to a fresh monitor (baselines in memory) and score its alerts."""
    settings = settings or ProsodySettings()
    monitor = ProsodyMonitor(settings)
    hit: set[int] = set()
    false_alerts = 0
    rows = []
    active = False
    for i, u in enumerate(day):
        events = monitor.judge(
            measure_sample(u.sample, settings, use_words), f"u{i}", u.timestamp_seconds
        )
        prosody = next(e for e in events if isinstance(e, Prosody))
        raised = any(isinstance(e, Alert) for e in events) and not active
        if any(isinstance(e, Alert) for e in events):
            active = True
            if u.episode is not None:
                hit.add(u.episode)
        if any(isinstance(e, AlertCleared) for e in events):
            active = False
        false_alerts += raised and u.episode is None
        rows.append((u.true_ratio, prosody.ratio, u.episode is not None, raised))
    episodes = {u.episode for u in day if u.episode is not None}
    return DayResult(
        len(episodes),
        len(hit),
        false_alerts,
        sum(1 for u in day if u.episode is None and not u.warmup),
        tuple(rows),
    )
