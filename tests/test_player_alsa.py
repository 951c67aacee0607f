"""The player on the ALSA output: real ALSA through its file plugin, flush, xruns, stop."""

from __future__ import annotations

import threading
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from satellite.audio.alsa import ALSA_PERIODS, AlsaPlaybackSink
from satellite.audio.chunk import AudioChunk
from satellite.audio.player import Player
from satellite.audio.settings import PlayerSettings
from satellite.audio.wav import WavFileSource
from satellite.cli import main
from tests.conftest import AlsaFiles

RATE = 16000
PERIOD_BYTES = RATE // 100 * 2  # the ALSA sink writes 10 ms periods
WAIT_SECONDS = 10.0
EPIPE = -32


class FakePcm:
    """Stands in for an ALSA PCM: records writes, can block, can report an underrun."""

    def __init__(self, block_after_bytes: int | None = None, underrun_at_write: int = -1) -> None:
        self.written = bytearray()
        self.block_after_bytes = block_after_bytes
        self.underrun_at_write = underrun_at_write
        self.calls = 0
        self.blocked = threading.Event()
        self.gate = threading.Event()

    def write(self, data: bytes) -> int:
        self.calls += 1
        if self.calls - 1 == self.underrun_at_write:
            return EPIPE
        if self.block_after_bytes is not None and len(self.written) >= self.block_after_bytes:
            self.blocked.set()
            assert self.gate.wait(WAIT_SECONDS)
        self.written += data
        return len(data) // 2

    def close(self) -> None:
        pass


def _tone(seconds: float) -> AudioChunk:
    t = np.arange(int(seconds * RATE)) / RATE
    return AudioChunk.from_int16((np.sin(2 * np.pi * 300 * t) * 6000).astype(np.int16))


def test_the_player_plays_exactly_the_reply_on_an_alsa_device(alsa_files: AlsaFiles) -> None:
    settings = PlayerSettings(rate_hz=RATE, lead_in_ms=100)
    player = Player(AlsaPlaybackSink("default", rate_hz=RATE, queue_ms=40), settings)
    tone = _tone(0.5)
    assert player.play([tone])
    assert player.wait(WAIT_SECONDS)
    player.close()
    assert alsa_files.playback_out.read_bytes() == bytes(int(0.1 * RATE) * 2) + tone.samples


def test_say_speaks_on_an_alsa_device(alsa_files: AlsaFiles, tmp_path: Path) -> None:
    text = "The front door is locked."
    assert main(["say", text, "--output", "alsa:default"]) == 0
    played = np.frombuffer(alsa_files.playback_out.read_bytes(), dtype="<i2")
    wav = tmp_path / "same.wav"
    assert main(["say", text, "--output", str(wav)]) == 0
    source = WavFileSource(wav)
    assert source.rate_hz == PlayerSettings().rate_hz  # the device ran at the same rate
    with wave.open(str(wav)) as handle:
        expected_frames = handle.getnframes()
    lead_in = PlayerSettings().rate_hz * PlayerSettings().lead_in_ms // 1000
    assert not played[:lead_in].any()
    assert np.abs(played[lead_in:]).max() > 5000
    # eSpeak NG's output varies by a few milliseconds from one call to the next
    assert abs(len(played) - expected_frames) < 0.02 * expected_frames


def test_flush_drops_what_the_device_has_not_taken() -> None:
    pcm = FakePcm(block_after_bytes=0)
    sink = AlsaPlaybackSink(pcm=pcm, rate_hz=RATE, queue_ms=2000)
    sink.write(_tone(1.0))
    assert pcm.blocked.wait(WAIT_SECONDS)
    dropped = sink.flush()
    assert dropped == int(1.0 * RATE) * 2 - PERIOD_BYTES  # one period is in the device
    pcm.gate.set()
    sink.close()
    assert len(pcm.written) == PERIOD_BYTES


def test_an_underrun_is_recovered_and_counted() -> None:
    pcm = FakePcm(underrun_at_write=3)
    sink = AlsaPlaybackSink(pcm=pcm, rate_hz=RATE)
    chunk = _tone(0.1)
    sink.write(chunk)
    sink.close()
    assert sink.xruns == 1
    assert bytes(pcm.written) == chunk.samples


def test_stop_leaves_under_100_ms_to_play_on_alsa() -> None:
    pcm = FakePcm(block_after_bytes=int(1.0 * RATE) * 2)
    settings = PlayerSettings(rate_hz=RATE, period_ms=20, device_queue_ms=40, max_buffer_ms=3000)
    sink = AlsaPlaybackSink(pcm=pcm, rate_hz=RATE, queue_ms=settings.device_queue_ms)
    player = Player(sink, settings)
    producer = threading.Thread(target=player.play, args=([_tone(5.0)],))
    producer.start()
    assert pcm.blocked.wait(WAIT_SECONDS)
    at_stop = len(pcm.written)
    stopper = threading.Thread(target=player.stop)
    stopper.start()
    stopper.join(WAIT_SECONDS)
    assert not stopper.is_alive()  # stop() returned while the device was still busy
    pcm.gate.set()
    producer.join(WAIT_SECONDS)
    assert player.wait(WAIT_SECONDS)
    player.close()
    after_stop_seconds = (len(pcm.written) - at_stop) / 2 / RATE
    ring_seconds = ALSA_PERIODS * 0.01  # already in ALSA's buffer when stop() was called
    assert after_stop_seconds + ring_seconds <= 0.1
    assert player.xruns == 0


def test_the_player_reports_the_devices_xruns() -> None:
    pcm: Any = FakePcm(underrun_at_write=0)
    player = Player(AlsaPlaybackSink(pcm=pcm, rate_hz=RATE), PlayerSettings(rate_hz=RATE))
    assert player.play([_tone(0.2)])
    assert player.wait(WAIT_SECONDS)
    player.close()
    assert player.xruns == 1


@pytest.mark.parametrize("settings", [PlayerSettings(rate_hz=RATE)])
def test_settings_size_the_device_queue(settings: PlayerSettings) -> None:
    assert settings.device_queue_ms + ALSA_PERIODS * 10 + settings.period_ms <= 100
