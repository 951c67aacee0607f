"""Audio sources and sinks: WAV, raw stdin, and the real ALSA path via file/null plugins."""

from __future__ import annotations

import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from satellite.audio.alsa import AlsaCaptureSource, AlsaPlaybackSink, list_devices
from satellite.audio.chunk import AudioChunk, resample, to_pipeline_format
from satellite.audio.io import NullSink, open_sink, open_source
from satellite.audio.raw import RawStreamSource
from satellite.audio.wav import WavFileSink, WavFileSource, read_wav, write_wav
from satellite.errors import AudioDeviceError, AudioFormatError
from tests.conftest import AlsaFiles


def _tone(seconds: float, rate: int, hz: float = 440.0) -> np.ndarray[Any, np.dtype[np.int16]]:
    t = np.arange(int(seconds * rate)) / rate
    return (np.sin(2 * np.pi * hz * t) * 12000).astype(np.int16)


def _write(path: Path, samples: np.ndarray[Any, Any], rate: int, channels: int, width: int) -> None:
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(width)
        wav.setframerate(rate)
        wav.writeframes(samples.tobytes())


def test_wav_44k_stereo_is_converted_to_16k_mono(tmp_path: Path) -> None:
    mono = _tone(2.0, 44100)
    stereo = np.stack([mono, mono], axis=1)
    path = tmp_path / "stereo.wav"
    _write(path, stereo, 44100, 2, 2)
    chunks = list(WavFileSource(path))
    assert all(c.is_pipeline_format for c in chunks)
    assert [c.timestamp_seconds for c in chunks] == sorted(c.timestamp_seconds for c in chunks)
    audio = read_wav(path).to_int16().astype(np.float32)
    assert abs(len(audio) - 32000) <= 2
    expected = _tone(2.0, 16000).astype(np.float32)
    spectrum = np.abs(np.fft.rfft(audio[1000:17000]))
    assert abs(np.argmax(spectrum) * 16000 / 16000 - 440) <= 2
    assert np.corrcoef(audio[1000:30000], expected[1000:30000])[0, 1] > 0.99


def test_wav_8_bit(tmp_path: Path) -> None:
    samples = ((_tone(0.5, 16000).astype(np.int32) >> 8) + 128).astype(np.uint8)
    path = tmp_path / "u8.wav"
    _write(path, samples, 16000, 1, 1)
    audio = read_wav(path).to_int16()
    assert len(audio) == 8000
    assert np.corrcoef(audio, _tone(0.5, 16000))[0, 1] > 0.99


def test_bad_wav_files_say_what_to_do(tmp_path: Path) -> None:
    junk = tmp_path / "junk.wav"
    junk.write_bytes(b"this is not audio at all")
    with pytest.raises(AudioFormatError, match="sox"):
        WavFileSource(junk)
    with pytest.raises(AudioFormatError, match="no such WAV file"):
        WavFileSource(tmp_path / "missing.wav")
    empty = tmp_path / "empty.wav"
    _write(empty, np.zeros(0, dtype=np.int16), 16000, 1, 2)
    assert read_wav(empty).num_frames == 0


def test_wav_sink_round_trip(tmp_path: Path) -> None:
    audio = AudioChunk.from_int16(_tone(0.3, 22050), rate_hz=22050)
    write_wav(tmp_path / "out.wav", audio)
    with wave.open(str(tmp_path / "out.wav")) as wav:
        assert wav.getframerate() == 22050
        assert wav.readframes(wav.getnframes()) == audio.samples
    sink = WavFileSink(tmp_path / "mixed.wav")
    sink.write(audio)
    with pytest.raises(AudioFormatError):
        sink.write(AudioChunk.from_int16(_tone(0.1, 16000)))
    sink.close()


def test_raw_stream_source_keeps_odd_bytes(tmp_path: Path) -> None:
    data = _tone(1.0, 16000).tobytes() + b"\x01"
    path = tmp_path / "in.raw"
    path.write_bytes(data)
    with path.open("rb") as stream:
        chunks = list(RawStreamSource(stream))
    assert b"".join(c.samples for c in chunks) == data[:-1]
    assert chunks[1].timestamp_seconds == pytest.approx(chunks[0].seconds)


def test_chunk_format_checks_and_conversion() -> None:
    with pytest.raises(AudioFormatError):
        AudioChunk(16000, 2, 1, b"\x00")
    with pytest.raises(AudioFormatError):
        AudioChunk(0, 2, 1, b"")
    stereo = AudioChunk(48000, 2, 2, np.zeros(960, dtype="<i2").tobytes(), 1.5)
    converted = to_pipeline_format(stereo)
    assert converted.is_pipeline_format
    assert converted.seconds == pytest.approx(0.01, abs=1e-3)
    assert converted.timestamp_seconds == 1.5
    assert len(resample(np.zeros(480, dtype=np.float32), 48000, 16000)) == 160


def test_null_sink_counts() -> None:
    sink = open_sink("null")
    assert isinstance(sink, NullSink)
    sink.write(AudioChunk.from_int16(_tone(0.25, 16000)))
    assert sink.seconds_written == pytest.approx(0.25)


# --- ALSA through the file/null plugins --------------------------------------------------


def test_alsa_capture_reads_the_device(alsa_files: AlsaFiles) -> None:
    data = _tone(1.0, 16000).tobytes()
    alsa_files.capture_in.write_bytes(data)
    source = open_source("alsa:filecap", max_seconds=1.5)
    assert isinstance(source, AlsaCaptureSource)
    try:
        chunks = list(source)
    finally:
        source.close()
    captured = b"".join(c.samples for c in chunks)
    assert captured[: len(data)] == data
    # (past the end of its input file the plugin returns unspecified data)
    assert len(captured) == 24000 * 2
    assert all(c.num_frames == 160 for c in chunks)
    assert chunks[-1].timestamp_seconds == pytest.approx(1.49)
    assert source.xruns == 0


def test_alsa_playback_writes_the_device(alsa_files: AlsaFiles) -> None:
    audio = AudioChunk.from_int16(_tone(0.8, 16000))
    sink = open_sink("alsa:fileplay")
    assert isinstance(sink, AlsaPlaybackSink)
    sink.write(audio)
    sink.close()
    assert alsa_files.playback_out.read_bytes() == audio.samples
    assert sink.xruns == 0


def test_alsa_playback_rejects_other_formats(alsa_files: AlsaFiles) -> None:
    sink = AlsaPlaybackSink("fileplay", rate_hz=16000)
    try:
        with pytest.raises(AudioDeviceError, match="22050 Hz"):
            sink.write(AudioChunk.from_int16(_tone(0.1, 22050), rate_hz=22050))
    finally:
        sink.close()


def test_missing_alsa_device_lists_the_devices(alsa_files: AlsaFiles) -> None:
    assert "filecap" in list_devices(capture=True)
    with pytest.raises(AudioDeviceError) as info:
        open_source("alsa:no_such_mic")
    message = str(info.value)
    assert "no_such_mic" in message and "filecap" in message and "arecord -L" in message
    with pytest.raises(AudioDeviceError, match="fileplay"):
        open_sink("alsa:no_such_speaker")


class _OverrunningPcm:
    """Returns -EPIPE (an overrun) on chosen reads; the real plugin cannot overrun."""

    def __init__(self, periods: int, overrun_at: set[int]) -> None:
        self.reads = 0
        self.periods = periods
        self.overrun_at = overrun_at
        self.closed = False

    def read(self) -> tuple[int, bytes]:
        self.reads += 1
        if self.reads in self.overrun_at:
            return -32, b""
        return 160, bytes([self.reads % 256]) * 320

    def close(self) -> None:
        self.closed = True


def test_capture_recovers_from_overruns_and_counts_them() -> None:
    pcm = _OverrunningPcm(periods=50, overrun_at={5, 6, 20})
    source = AlsaCaptureSource("fake", max_seconds=0.5, pcm=pcm)
    chunks = list(source)
    source.close()
    assert source.xruns == 3
    assert len(chunks) == 50
    assert [c.timestamp_seconds for c in chunks[:5]] == pytest.approx([0, 0.01, 0.02, 0.03, 0.04])
    assert pcm.closed


def test_capture_drops_oldest_when_the_loop_falls_behind(caplog: pytest.LogCaptureFixture) -> None:
    pcm = _OverrunningPcm(periods=100, overrun_at=set())
    source = AlsaCaptureSource("fake", queue_ms=200, max_seconds=1.0, pcm=pcm)
    source._thread.join(timeout=5)  # the consumer is late: capture has finished
    chunks = list(source)
    source.close()
    assert source.dropped_chunks == 81  # 100 chunks + end marker into 20 places
    assert len(chunks) == 19
    assert chunks[-1].timestamp_seconds == pytest.approx(0.99)
    assert "Raise audio.queue_ms" in caplog.text
