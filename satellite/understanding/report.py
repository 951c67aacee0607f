"""What is known about one understood utterance (for the CLI and benchmarks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..nlu.recognizer import IntentResult
from ..stt.base import SttResult

if TYPE_CHECKING:
    from ..stt.session import HearingSession


@dataclass(slots=True)
class UtteranceReport:
    """Everything known about one understood utterance (for the CLI and benchmarks)."""

    utterance_id: str
    start_seconds: float
    end_seconds: float
    reason: str
    stt: SttResult | None = None
    intent: IntentResult | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: In a loud room, a device action heard the other way (raw or denoised) too.
    second_hearing: SttResult | None = None
    #: The utterance searched again from its own mean (the streaming search was not
    #: trusted), whether or not that search was.
    own_mean: SttResult | None = None
    #: In a loud room, the person's own words searched again alone (the whole was not
    #: believed): what it heard, whether or not that was believed.
    person_span: SttResult | None = None
    #: Whether its room was judged loud (when it was decided).
    loud: bool = False
    #: Whether its room, not loud, had noise close under the speech
    #: (``HearingSession.noisy``).
    noisy: bool = False
    #: How reverberant its room sounded (an upper bound of RT60, s; None: not judged).
    reverb_seconds: float | None = None
    #: Whether other voices filled its room (frontend/person_span.other_voices).
    voices: bool = False

    def judged(self, hearing: HearingSession) -> None:
        """Its room as ``hearing`` judged it when the utterance was decided."""
        self.loud, self.noisy = hearing.loud, hearing.noisy
        self.reverb_seconds = hearing.reverb_seconds
