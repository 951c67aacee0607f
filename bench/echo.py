"""Echo cancellation on a simulated room (tests/room.py): how much of the satellite's own
voice each engine takes out, how fast, what it leaves of a person talking over it, and
its cost per 10 ms frame (wall and CPU time).

How fast a new filter learns the room, counted from the echo's first sample (the output
latency, ``delay_ms``, later than the reply): the echo taken out in the second after 1 s
of echo (``erle_echo_1_2s_db``; the issue's target is >= 25 dB after <= 1 s).
``cpu_young_ms_per_frame`` is the cost over the first 2 s, while a new filter is still
learning.

    taskset -c 1 ~/.cache/pocket-satellite/venv/bin/python -m bench.echo [--engines speex,mdf]

``mdf`` learns with its default adaptation (NLMS); ``mdf-kalman`` names it with the
Kalman gain (``frontend.echo.mdf_adaptation: kalman``), ``mdf-gate`` with the residual
echo gate after it (``frontend.echo.residual_gate``). ``--rt60`` / ``--delays``: only those
rooms.

Writes bench/results/echo.json and prints a table per engine x room.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from bench.common import print_table, write_results
from satellite.frontend.echo import echo_return_loss_enhancement
from satellite.frontend.echo_engines import (
    DEFAULT_TAIL_MS,
    ECHO_ENGINES,
    OUTPUT_DELAY_SAMPLES,
    EchoCanceller,
    make_echo_canceller,
)
from satellite.frontend.echo_mdf import MdfEchoCanceller
from tests import synth
from tests.room import Float, Room, level_db, scale_to

RATE = 16000
DELAYS_MS = (20, 100, 200)
RT60S = (0.2, 0.4, 0.6)
#: A reply before it in the same room (its filter carried over).
EARLIER = "Turned off the bedroom lamp. The timer for ten minutes has started."
REPLY = "The kitchen light is on. It is twenty past four, and the weather is fine today."


#: Not a config engine: our mdf learning with the Kalman gain (``mdf_adaptation: kalman``).
MDF_KALMAN = "mdf-kalman"
#: Not a config engine: our mdf (NLMS) with the residual echo gate (``residual_gate``).
MDF_GATE = "mdf-gate"


def with_tail(engine: str) -> tuple[str, int | None]:
    """A bench's engine name and the echo tail it names (``mdf:700``: mdf learning a
    700 ms tail, ``frontend.echo.tail_ms``; None: the engine's own)."""
    name, _, tail = engine.partition(":")
    return name, int(tail) if tail else None


def echo_section(engine: str) -> dict[str, Any]:
    """``frontend.echo`` on with the engine a bench names (``mdf-kalman``: mdf with the
    Kalman gain; ``mdf-gate``: mdf with the residual echo gate; ``mdf:700``: learning a
    700 ms tail)."""
    name, tail = with_tail(engine)
    echo: dict[str, Any] = {"enabled": True, "engine": name.split("-", maxsplit=1)[0]}
    if tail is not None:
        echo["tail_ms"] = tail
    if name.endswith("-kalman"):
        echo["mdf_adaptation"] = "kalman"
    if name.endswith("-gate"):
        echo["residual_gate"] = True
    return echo


def canceller_for(engine: str) -> tuple[EchoCanceller, int]:
    """The canceller a bench's ``--engines`` names (a config engine, ``mdf-kalman`` or
    ``mdf-gate``, each maybe with its tail: ``mdf:700``) and how late its output comes,
    samples."""
    name, tail = with_tail(engine)
    mdf_tail = DEFAULT_TAIL_MS["mdf"] if tail is None else tail
    if name == MDF_KALMAN:
        return MdfEchoCanceller(tail_ms=mdf_tail, adaptation="kalman"), 0
    if name == MDF_GATE:
        return MdfEchoCanceller(tail_ms=mdf_tail, residual_gate=True), 0
    return make_echo_canceller(name, tail), OUTPUT_DELAY_SAMPLES[name]


def _int16(x: Float) -> np.ndarray:
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


def _run(
    engine: str, mic: np.ndarray, far: np.ndarray, canceller: EchoCanceller | None = None
) -> tuple[np.ndarray, float, float, float]:
    """``mic`` through a new canceller of ``engine`` (closed after), or through
    ``canceller`` (left open: it keeps what it learnt); wall and CPU ms per frame, and
    CPU ms per frame over the first 2 s."""
    own = canceller is None
    canceller = canceller or canceller_for(engine)[0]
    out = np.zeros_like(mic)
    started = time.perf_counter()
    cpu_started = time.process_time()
    young_ms = 0.0
    frames = 0
    for start in range(0, len(mic) - 159, 160):
        out[start : start + 160] = canceller.process(
            mic[start : start + 160], far[start : start + 160]
        )
        frames += 1
        if start + 160 == 2 * RATE:
            young_ms = (time.process_time() - cpu_started) / frames * 1000
    cost_ms = (time.perf_counter() - started) / frames * 1000
    cpu_ms = (time.process_time() - cpu_started) / frames * 1000
    if own:
        canceller.close()
    return out, cost_ms, cpu_ms, young_ms


def carried(engine: str, reply: Float, delay_ms: int, rt60: float) -> tuple[float, float]:
    """ERLE (dB) in the first second and the next of ``reply`` when the canceller has
    heard an earlier reply in the same room and its 0.5 s tail (what the stage feeds
    it; it keeps the filter between replies): the first second and the next."""
    room = Room(delay_ms=delay_ms, rt60_seconds=rt60)
    earlier = scale_to(synth.espeak(EARLIER, "en-us", 160).astype(np.float64), level_db(reply))
    canceller = canceller_for(engine)[0]
    erle = []
    for played in (np.concatenate([earlier, np.zeros(RATE // 2)]), reply):
        echo = room.echo(played)
        out, _, _, _ = _run(engine, _int16(echo), _aligned(played, delay_ms), canceller)
        erle.append(echo_return_loss_enhancement(echo[:RATE], out[:RATE]))
        erle.append(echo_return_loss_enhancement(echo[RATE : 2 * RATE], out[RATE : 2 * RATE]))
    canceller.close()
    return round(erle[2], 1), round(erle[3], 1)


def _aligned(played: Float, delay_ms: int) -> np.ndarray:
    """The reference as the echo tap gives it: 2.5 ms before the echo's direct path."""
    shift = int(delay_ms * RATE / 1000) - 40
    return _int16(np.concatenate([np.zeros(shift), played])[: len(played)])


def measure(engine: str, reply: Float, person: Float, delay_ms: int, rt60: float) -> dict[str, Any]:
    room = Room(delay_ms=delay_ms, rt60_seconds=rt60)
    echo = room.echo(reply)
    far = _aligned(reply, delay_ms)
    out, cost_ms, cpu_ms, young_ms = _run(engine, _int16(echo), far)
    onset = int(delay_ms * RATE / 1000)
    learnt = slice(onset + RATE, onset + 2 * RATE)
    start = int(2.5 * RATE)
    near = np.zeros(len(reply))
    near[start : start + len(person)] = person
    both, _, _, _ = _run(engine, _int16(echo + near), far)
    span = slice(start, start + len(person))
    late = canceller_for(engine)[1]
    # what is left of the echo while the person talks: the output minus the person
    left = both[late:].astype(np.float64) - near[: len(both) - late]
    kept = both[span.start + late : span.stop + late].astype(np.float64)
    return {
        "engine": engine,
        "delay_ms": delay_ms,
        "rt60_s": rt60,
        "erle_0_1s_db": round(echo_return_loss_enhancement(echo[:RATE], out[:RATE]), 1),
        "erle_1_2s_db": round(
            echo_return_loss_enhancement(echo[RATE : 2 * RATE], out[RATE : 2 * RATE]), 1
        ),
        "erle_after_2s_db": round(
            echo_return_loss_enhancement(echo[2 * RATE : len(out)], out[2 * RATE :]), 1
        ),
        "erle_echo_1_2s_db": round(echo_return_loss_enhancement(echo[learnt], out[learnt]), 1),
        **dict(
            zip(
                ("erle_carried_0_1s_db", "erle_carried_1_2s_db"),
                carried(engine, reply, delay_ms, rt60),
                strict=True,
            )
        ),
        "erle_double_talk_db": round(echo_return_loss_enhancement(echo[span], left[span]), 1),
        "person_correlation": round(float(np.corrcoef(kept, near[span])[0, 1]), 3),
        "person_level_change_db": round(level_db(kept) - level_db(near[span]), 1),
        "cost_ms_per_frame": round(cost_ms, 3),
        "cpu_ms_per_frame": round(cpu_ms, 3),
        "cpu_young_ms_per_frame": round(young_ms, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--engines",
        default=",".join(ECHO_ENGINES),
        help=f"comma-separated; also {MDF_KALMAN}, {MDF_GATE}",
    )
    parser.add_argument("--rt60", type=float, nargs="+", default=RT60S, help="only these")
    parser.add_argument("--delays", type=int, nargs="+", default=DELAYS_MS, help="only these, ms")
    parser.add_argument("--name", default="echo", help="bench/results/<name>.json")
    args = parser.parse_args()
    engines = args.engines.split(",")
    reply = scale_to(synth.espeak(REPLY, "en-us", 160).astype(np.float64), 20 * np.log10(3000))
    person = synth.espeak("stop", "en-us+f3", 150).astype(np.float64)
    person = scale_to(person, level_db(reply) - 6)  # the echo 6 dB louder than the person
    rows = [
        measure(engine, reply, person, delay, rt60)
        for engine in engines
        for rt60 in args.rt60
        for delay in args.delays
    ]
    write_results(
        args.name,
        {"reply_seconds": round(len(reply) / RATE, 2), "shared_machine": True, "rooms": rows},
    )
    keys = list(rows[0])
    print_table(keys, [[row[k] for k in keys] for row in rows])


if __name__ == "__main__":
    main()
