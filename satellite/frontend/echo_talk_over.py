"""Someone speaking over the satellite's reply: when to pause it and listen.

While a reply plays (``frontend.echo`` on, ``hear_while_speaking`` on) the VAD runs on
the echo-cancelled audio. Alone it takes what the canceller leaves of the satellite's
own voice for speech, so a run of speech counts only when the double-talk gate of the
stop words (``stt.keywords.DoubleTalkGate``) agrees that someone else was there: over
the last ``WINDOW_FRAMES`` the cancelled audio is above what the canceller leaves of the
echo by a margin (from the start of a reply: the gate carries the echo loss it measured
on the last one, as the canceller carries its filter). The window is shorter than the
stop words' (they judge a whole word; this judges an onset, to pause the reply within
300 ms of it), so it swings more on the satellite's own voice, most in a reverberant room
(up to ~13 dB at RT60 0.6 s, where the room rings on past the canceller's 200 ms filter;
under 8 dB at RT60 <= 0.4 s). The margin therefore learns from the satellite's own voice
as the stop words' does (``stt.keywords.LearntMargin``: the larger of ``margin_db`` and a
headroom above the most the gate measured on each of its last replies; a reply someone
spoke over is not learnt from), here from every frame of a reply: a quiet room keeps the
base margin, a ringing one raises it and hears fewer people rather than itself. As for
the stop words, the measure is taken less the ringing (``DoubleTalkGate.ringing_db``:
where the reply goes quiet the room rings on past the canceller's filter), so the margin
rises less in a ringing room and a person's onset passes it sooner.

Measured on a simulated room (``python -m bench.duplex_talk_over``,
bench/results/duplex_talk_over.json).
"""

from __future__ import annotations

from ..stt.keywords import DoubleTalkGate, LearntMargin

#: Frames (10 ms) over which the gate judges an onset.
WINDOW_FRAMES = 25
#: Speech frames in a row (at the VAD's threshold) before the gate is asked.
MIN_SPEECH_FRAMES = 5
#: Below ``threshold - HYSTERESIS`` a frame breaks the run.
HYSTERESIS = 0.15


class TalkOver:
    """A run of speech over the reply that the double-talk gate lets through."""

    def __init__(
        self,
        gate: DoubleTalkGate,
        threshold: float,
        margin_db: float,
        lag_seconds: float = 0.0,
        ask_again: bool = True,
    ) -> None:
        self.gate = gate
        #: Whether what is heard over a reply is asked about once more (see
        #: ``WhileSpeaking.settle``).
        self.ask_again = ask_again
        self.threshold = threshold
        self.lag_seconds = lag_seconds
        self._run = 0
        self._run_start = 0.0
        #: The margin a run must pass (at least ``margin_db``), learnt from own replies.
        self.margin = LearntMargin(margin_db)
        #: Runs of speech the VAD found, and of them those the gate let through.
        self.runs = 0
        self.passed = 0
        #: The gate's measure at the last frame, dB.
        self.last_excess_db = float("-inf")

    @property
    def speech_since(self) -> float | None:
        """Where the run of speech under way began, s (None: no speech now)."""
        return self._run_start if self._run > 0 else None

    @property
    def margin_now_db(self) -> float:
        """The margin a run must pass now, dB."""
        return self.margin.now_db

    def hear(self, start_seconds: float, probability: float) -> float | None:
        """One 10 ms frame of a reply (starting at ``start_seconds``) and the VAD's speech
        probability on the cancelled audio: the onset of the person's speech, s, when it
        is heard over the reply."""
        # (where the reply went quiet the room rings on: see DoubleTalkGate.ringing_db)
        excess = self.gate.excess_less_ringing_db(WINDOW_FRAMES, carry=True)
        self.last_excess_db = float("-inf") if excess is None else excess
        if probability >= self.threshold:
            if self._run == 0:
                self._run_start = start_seconds - self.lag_seconds
                self.runs += 1
            self._run += 1
        elif probability < self.threshold - HYSTERESIS:
            self._run = 0
        margin = self.margin_now_db
        if self._run >= MIN_SPEECH_FRAMES and excess is not None and excess >= margin:
            self.passed += 1
            self.start_reply()  # someone spoke: not the satellite's own voice to learn
            return self._run_start
        if excess is not None:
            self.margin.measure(excess)
        return None

    def start_reply(self) -> None:
        """A reply starts (or was spoken over): nothing measured on it yet."""
        self._run = 0
        self.margin.start_reply()

    def end_reply(self) -> None:
        """The reply played to its end with nobody over it: learn what the gate measured
        on the satellite's own voice."""
        self.margin.end_reply()
        self._run = 0

    def reset(self) -> None:
        """A new room (the canceller starts again): nothing learnt."""
        self._run = 0
        self.margin.forget()
