"""A person's command said over the satellite's reply, heard by the satellite's own
recognizer: what words and intent came out. Shared by tests/test_echo_words.py and
bench/echo_words.py."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from satellite.config import Config
from satellite.nlu.recognizer import IntentResult
from satellite.understanding import Understanding
from tests import robustness, synth
from tests.room import Float, OverReply

#: Cut out around the person's speech: before and after it, s.
BEFORE_SECONDS = 0.3
AFTER_SECONDS = 0.4
#: The cut-out's own quiet before and after (the continuous pipeline's VAD needs it), s.
LEAD_SECONDS = 0.5
TAIL_SECONDS = 1.0


def words(text: str) -> list[str]:
    """Lower-case words; the grammar's one-word "nevermind" counted as "never mind"."""
    return re.findall(r"[a-z']+", text.lower().replace("nevermind", "never mind"))


def word_errors(reference: list[str], hypothesis: list[str]) -> int:
    """Substitutions + deletions + insertions (Levenshtein over words)."""
    row = list(range(len(hypothesis) + 1))
    for i, ref in enumerate(reference, 1):
        prev, row[0] = row[0], i
        for j, hyp in enumerate(hypothesis, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ref != hyp))
    return row[-1]


@dataclass(frozen=True)
class Hearing:
    """What the satellite heard of one command."""

    transcript: str
    errors: int  # word errors against the command
    reference_words: int
    intent_right: bool
    asked_again: bool  # the first hearing was doubtful (the dialogue asks once more)

    @property
    def accuracy(self) -> float:
        """Word accuracy, 1 - WER (can go below 0 with insertions)."""
        return 1.0 - self.errors / self.reference_words


def cut(audio: Float, said: OverReply, floor: Float) -> Float:
    """The person's stretch of ``audio`` (with a margin) between stretches of ``floor``
    (the room's noise alone)."""
    lo = max(0, said.start - int(BEFORE_SECONDS * synth.RATE))
    hi = min(len(audio), said.end + int(AFTER_SECONDS * synth.RATE))
    lead, tail = int(LEAD_SECONDS * synth.RATE), int(TAIL_SECONDS * synth.RATE)
    return np.concatenate([floor[:lead], audio[lo:hi], floor[lead : lead + tail]])


def hear(
    config: Config,
    understanding: Understanding,
    audio: Float,
    command: str,
    intent: str,
    slots: dict[str, Any],
) -> Hearing:
    """``audio`` through a continuous pipeline (no wake word) with ``understanding``."""
    heard = robustness.replay(config, audio.astype(np.float32), True, understanding)
    transcript = " ".join(event.text for event in heard.intents if event.text)
    first = heard.first
    if first is None:
        return graded(transcript, None, False, command, intent, slots)
    return graded(transcript, first.result, first.doubtful, command, intent, slots)


def graded(
    transcript: str,
    result: IntentResult | None,
    doubtful: bool,
    command: str,
    intent: str,
    slots: dict[str, Any],
) -> Hearing:
    """What was heard of ``command`` (said for ``intent`` with ``slots``): the words
    ``transcript`` and the first answer's ``result`` (asked about: ``doubtful``)."""
    right = robustness.outcome(result, intent, slots) == robustness.RIGHT
    reference = words(command)
    return Hearing(
        transcript, word_errors(reference, words(transcript)), len(reference), right, doubtful
    )
