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

That was not enough at RT60 0.6 s, where the learnt margin stayed above what a person's
onset reaches in its first 300 ms. So a second measure runs alongside, and a run passes
when either reaches its margin: the cancelled audio over the window against what the
canceller leaves of the satellite's own voice as predicted from what it played
(``echo_ringing.ResidualModel``: the room's ringing included, learnt from the replies
played alone). Its margin is ``RINGING_MARGIN_DB`` (learnt upwards as the other's, from
the same replies, with the same headroom); until a reply has been learnt it has no
measure and only the first check is made.

Measured on a simulated room (``python -m bench.duplex_talk_over``,
bench/results/duplex_talk_over.json).
"""

from __future__ import annotations

from ..audio.chunk import AudioChunk
from ..stt.keywords import DoubleTalkGate, LearntMargin, power
from .echo_ringing import ResidualModel

#: Frames (10 ms) over which the gate judges an onset.
WINDOW_FRAMES = 25
#: Speech frames in a row (at the VAD's threshold) before the gate is asked.
MIN_SPEECH_FRAMES = 5
#: Below ``threshold - HYSTERESIS`` a frame breaks the run.
HYSTERESIS = 0.15
#: The least margin over the predicted residual (``ResidualModel``), dB.
RINGING_MARGIN_DB = 9.0


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
        #: What the canceller leaves of the satellite's voice, from what it played.
        self.residual = ResidualModel(WINDOW_FRAMES)
        #: The margin over that prediction a run must pass, learnt from own replies.
        self.ringing_margin = LearntMargin(RINGING_MARGIN_DB)
        #: Runs of speech the VAD found, and of them those the gate let through.
        self.runs = 0
        self.passed = 0
        #: The gate's measure at the last frame, dB.
        self.last_excess_db = float("-inf")
        #: The measure over the predicted residual at the last frame, dB.
        self.last_over_residual_db = float("-inf")
        #: Whether the last frame (``played``) held only what the canceller leaves of the
        #: satellite's own voice: heard while it speaks and not above the predicted
        #: residual by the margin (nothing learnt yet: every frame while it speaks).
        self.own_voice = False

    @property
    def speech_since(self) -> float | None:
        """Where the run of speech under way began, s (None: no speech now)."""
        return self._run_start if self._run > 0 else None

    @property
    def margin_now_db(self) -> float:
        """The margin a run must pass now, dB."""
        return self.margin.now_db

    def played(self, reference_power: float, cancelled: AudioChunk, learn: bool) -> None:
        """Every 10 ms frame: the power of the reference played into it and the
        canceller's output (``learn``: while the satellite speaks)."""
        self.residual.add(reference_power, power(cancelled.samples), learn)
        over = self.residual.frame_over_db()
        self.own_voice = learn and (over is None or over < self.ringing_margin.now_db)

    def hear(self, start_seconds: float, probability: float) -> float | None:
        """One 10 ms frame of a reply (starting at ``start_seconds``) and the VAD's speech
        probability on the cancelled audio: the onset of the person's speech, s, when it
        is heard over the reply."""
        # (where the reply went quiet the room rings on: see DoubleTalkGate.ringing_db)
        excess = self.gate.excess_less_ringing_db(WINDOW_FRAMES, carry=True)
        self.last_excess_db = float("-inf") if excess is None else excess
        over = self.residual.excess_db()
        self.last_over_residual_db = float("-inf") if over is None else over
        if probability >= self.threshold:
            if self._run == 0:
                self._run_start = start_seconds - self.lag_seconds
                self.runs += 1
            self._run += 1
        elif probability < self.threshold - HYSTERESIS:
            self._run = 0
        passes = (excess is not None and excess >= self.margin_now_db) or (
            over is not None and over >= self.ringing_margin.now_db
        )
        if self._run >= MIN_SPEECH_FRAMES and passes:
            self.passed += 1
            self.start_reply()  # someone spoke: not the satellite's own voice to learn
            return self._run_start
        if excess is not None:
            self.margin.measure(excess)
        if over is not None:
            self.ringing_margin.measure(over)
        return None

    def start_reply(self) -> None:
        """A reply starts (or was spoken over): nothing measured on it yet."""
        self._run = 0
        self.margin.start_reply()
        self.ringing_margin.start_reply()
        self.residual.start_reply()

    def end_reply(self) -> None:
        """The reply played to its end with nobody over it: learn what the gate measured
        on the satellite's own voice."""
        self.margin.end_reply()
        self.ringing_margin.end_reply()
        self.residual.end_reply()
        self._run = 0

    def reset(self) -> None:
        """A new room (the canceller starts again): nothing learnt."""
        self._run = 0
        self.own_voice = False
        self.margin.forget()
        self.ringing_margin.forget()
        self.residual.forget()
