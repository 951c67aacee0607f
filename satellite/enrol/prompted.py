"""Enrolment by voice: the satellite says each sentence, the person says it back.

Started from Home Assistant (MQTT ``enrol``, the component's ``enrol_speaker`` action)
for a resident who cannot record WAV files. The satellite says "Please say: ..." for
each prompt (``pocket-satellite enrol --prompts``, minus those holding a word of a call
for help: read back, they could be heard as one), listens with no wake word once it has
said it, and keeps the utterance it hears as that prompt's take (16 kHz WAV under
``<speakers_dir>/.recordings/<speaker>/``, with ``transcripts.tsv``). A prompt met with
silence, or with too short a take, is asked once more and then left out. Once every
prompt is asked, the takes are adapted to (``adapt.enrol``, the same MLLR as the CLI,
about a second of CPU) off the frame loop, and the speaker's adaptation is stored: select
it with ``stt.speaker`` and restart, as after the CLI.

This module holds the session's state and what is said; the app (satellite/app_enrol.py)
says it, hears the takes and publishes each step as an ``enrolment`` event.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..audio.chunk import AudioChunk
from ..audio.wav import write_wav
from ..events import EnrolmentChanged
from ..stt.speakers import speaker_dir
from .inputs import RATE_HZ, TRANSCRIPTS_FILE, Recording, prompts, words_of

#: How many prompts an enrolment asks for when the request does not say.
DEFAULT_PROMPTS = 20
#: A take with less speech than this is no reading of a prompt (a cough, a "yes"), s.
MIN_TAKE_SECONDS = 0.6
#: Times a prompt is asked before it is left out.
TRIES = 2
#: Fewer takes kept than this, and nothing is adapted (too little speech).
MIN_KEPT = 5
#: Words of a call for help (CallForHelp's sentences, nlu/care_en.yaml): a prompt holding
#: one is not said (its reading could be heard as a call).
HELP_WORDS = frozenset({"help", "nurse", "doctor", "caregiver", "carer", "ambulance", "emergency"})
#: Where takes are kept, under ``stt.speakers_dir`` (no speaker is named with a dot).
RECORDINGS_DIR = ".recordings"

INTRO = "Let's learn your voice. After each sentence I say, say it back to me."
ASK = "Please say: {sentence}."
ASK_AGAIN = "I didn't hear that. Please say: {sentence}."
ALL_SAID = "Thank you. I'm learning your voice now."
LEARNT = "I have learnt your voice."
NOT_LEARNT = "Sorry, I could not learn your voice."
CANCELLED = "Okay, I've stopped learning your voice."


def spoken_prompts(count: int = DEFAULT_PROMPTS) -> list[str]:
    """The first ``count`` enrolment prompts that hold no word of a call for help."""
    safe = [s for s in prompts() if not HELP_WORDS & set(words_of(s).split())]
    return safe[:count]


def takes_dir(speakers_dir: str | Path, speaker: str) -> Path:
    """Where the takes of ``speaker``'s enrolment by voice are kept."""
    return speaker_dir(speakers_dir, speaker).parent / RECORDINGS_DIR / speaker


@dataclass
class PromptedEnrolment:
    """One enrolment by voice under way: which prompt, how often asked, what was kept."""

    speaker: str
    sentences: list[str]
    folder: Path
    #: The prompt being asked (0-based).
    index: int = 0
    #: Times it has been asked.
    tries: int = 0
    kept: list[Recording] = field(default_factory=list)

    @classmethod
    def start(
        cls, speaker: str, speakers_dir: str | Path, count: int = DEFAULT_PROMPTS
    ) -> PromptedEnrolment:
        """A new enrolment of ``speaker`` (an earlier one's takes are dropped)."""
        folder = takes_dir(speakers_dir, speaker)
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        return cls(speaker, spoken_prompts(count), folder)

    @property
    def finished(self) -> bool:
        """Every prompt has been asked."""
        return self.index >= len(self.sentences)

    def ask(self) -> str:
        """What to say to ask for the current prompt (again, after a miss)."""
        template = ASK if self.tries == 0 else ASK_AGAIN
        self.tries += 1
        return template.format(sentence=self.sentences[self.index])

    def heard(self, audio: AudioChunk | None, speech_seconds: float) -> bool:
        """A take of the current prompt (None: nothing heard in time). Kept when it holds
        enough speech, and the next prompt comes; else it is asked once more. Returns
        whether it was kept."""
        kept = audio is not None and speech_seconds >= MIN_TAKE_SECONDS
        if audio is not None and kept:
            path = self.folder / f"prompt{self.index + 1:02d}.wav"
            if not audio.is_pipeline_format:  # (the frame loop's audio always is)
                raise ValueError(f"an enrolment take must be {RATE_HZ} Hz mono 16-bit")
            write_wav(path, audio)
            text = words_of(self.sentences[self.index])
            self.kept.append(Recording(path, text, audio.seconds))
            self._write_transcripts()
        if kept or self.tries >= TRIES:
            self.index += 1
            self.tries = 0
        return kept

    def event(self, state: str, at: float, error: str = "") -> EnrolmentChanged:
        """The ``enrolment`` event of this session in ``state``."""
        prompting = state == "prompting" and not self.finished
        return EnrolmentChanged(
            round(at, 3),
            speaker=self.speaker,
            state=state,
            prompt=self.index + 1 if prompting else 0,
            prompts=len(self.sentences),
            kept=len(self.kept),
            sentence=self.sentences[self.index] if prompting else "",
            again=prompting and self.tries > 1,
            error=error,
        )

    def _write_transcripts(self) -> None:
        lines = [f"{r.path.name}\t{r.text}" for r in self.kept]
        (self.folder / TRANSCRIPTS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")


def raw_take(
    heard: AudioChunk | None, raw: list[AudioChunk]
) -> tuple[AudioChunk | None, list[AudioChunk]]:
    """The microphone's audio (``raw``, pipeline-format chunks in order) over the span of
    the take ``heard`` (after the front end), and the chunks after it, kept for the next
    take. ``heard`` itself when ``raw`` does not cover its span (no raw audio kept)."""
    if heard is None or not raw:
        return heard, raw
    start, end = heard.timestamp_seconds, heard.end_seconds
    parts: list[bytes] = []
    for chunk in raw:
        begin, stop = max(start, chunk.timestamp_seconds), min(end, chunk.end_seconds)
        if stop > begin:
            first = round((begin - chunk.timestamp_seconds) * RATE_HZ) * 2
            last = round((stop - chunk.timestamp_seconds) * RATE_HZ) * 2
            parts.append(chunk.samples[first:last])
    later = [chunk for chunk in raw if chunk.end_seconds > end]
    samples = b"".join(parts)
    if abs(len(samples) // 2 - heard.num_frames) > RATE_HZ // 100:  # (not all of it kept)
        return heard, later
    return AudioChunk.from_int16(np.frombuffer(samples, "<i2"), timestamp_seconds=start), later
