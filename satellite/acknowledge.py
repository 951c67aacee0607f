"""The ``done`` sound: a request understood whose answer is not spoken at once.

A reply that waits for the person to finish (the follow-on window), and a Home Assistant
command whose answer has not come within ``ACKNOWLEDGE_AFTER_SECONDS``, get a short tone
so the person knows at once they were understood; the tone leaves the microphone open.
HA's answer on loopback comes within milliseconds: then it is spoken straight away, with
no tone before it. Each utterance gets the sound once at most.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection

#: Utterances remembered as acknowledged (one ``done`` sound each).
ACKNOWLEDGED_KEPT = 64
#: Home Assistant's answer not come this long after the intent: the ``done`` sound, s.
ACKNOWLEDGE_AFTER_SECONDS = 0.3


class Acknowledgements:
    """Plays the ``done`` sound (``play``) once per utterance, now or when an answer is late."""

    def __init__(self, play: Callable[[], object] | None) -> None:
        self._play = play
        self._done: deque[str] = deque(maxlen=ACKNOWLEDGED_KEPT)
        #: Utterances whose answer is awaited, and when they get the sound if it has not come.
        self._due: dict[str, float] = {}

    def now(self, utterance_id: str) -> None:
        """The sound for this utterance at once (unless it had it)."""
        self._due.pop(utterance_id, None)
        if self._play is None or utterance_id in self._done:
            return
        self._done.append(utterance_id)
        self._play()

    def later(self, utterance_id: str, at_seconds: float) -> None:
        """The sound at ``ACKNOWLEDGE_AFTER_SECONDS`` after ``at_seconds`` unless ``answered``
        comes first."""
        self._due[utterance_id] = at_seconds + ACKNOWLEDGE_AFTER_SECONDS

    def answered(self, utterance_id: str) -> None:
        """Its answer came: no sound is owed for it any more."""
        self._due.pop(utterance_id, None)

    def tick(self, now_seconds: float, awaited: Collection[str]) -> None:
        """The sound for each utterance due by now whose answer is still ``awaited``."""
        for utterance_id, due in list(self._due.items()):
            if utterance_id not in awaited:
                del self._due[utterance_id]
            elif now_seconds >= due:
                self.now(utterance_id)
