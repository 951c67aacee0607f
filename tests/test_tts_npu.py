"""The Piper voice on a Rockchip NPU (``tts.npu_model``, extra ``npu``).

There is no NPU here, and ``rknn-toolkit-lite2`` ships only for aarch64 boards: the real
runtime test skips with that reason. What runs here: the error a user gets without the
runtime or without the board, the board detection from a device tree, the padding to the
model's fixed input length, and the adapter's wiring into Piper with a stand-in for
``RKNNLite`` (the one piece of hardware that cannot be had here) that runs the same test
voice with a fixed-shape output, as a converted model would.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from satellite.errors import MissingDependencyError
from satellite.tts.base import TtsError
from satellite.tts.engines import make_engine
from satellite.tts.piper import PiperEngine
from satellite.tts.rknn import NpuUnavailableError, pad_ids, rockchip_soc, trim_padding
from satellite.tts.settings import TtsSettings

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (extra 'piper')")
pytest.importorskip("onnx", reason="onnx is not installed (extra 'dev')")

from tests.test_tts_piper import build_voice  # noqa: E402  (needs onnx)

#: The fixed output length of the stand-in's "converted" model, samples.
FIXED_SAMPLES = 400_000


@pytest.fixture(scope="module")
def voice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_voice(tmp_path_factory.mktemp("piper"))


def _device_tree(folder: Path, *names: str) -> Path:
    path = folder / "compatible"
    path.write_bytes(b"\0".join(n.encode() for n in names) + b"\0")
    return path


def test_the_board_is_read_from_the_device_tree(tmp_path: Path) -> None:
    assert rockchip_soc(_device_tree(tmp_path, "radxa,rock-5b", "rockchip,rk3588")) == "rk3588"
    assert rockchip_soc(_device_tree(tmp_path, "rockchip,rk3566-evb", "rockchip,rk3566")) == (
        "rk3566"
    )
    assert rockchip_soc(_device_tree(tmp_path, "raspberrypi,4-model-b", "brcm,bcm2711")) is None
    assert rockchip_soc(tmp_path / "missing") is None


def test_ids_are_padded_to_the_fixed_length_and_too_long_is_a_clear_error() -> None:
    padded = pad_ids([1, 5, 0, 7, 2], 8)
    assert padded.shape == (1, 8) and padded.dtype == np.int64
    assert padded.tolist() == [[1, 5, 0, 7, 2, 0, 0, 0]]
    with pytest.raises(TtsError, match="npu_input_length"):
        pad_ids(list(range(9)), 8)


def test_the_silent_tail_of_the_padding_is_cut() -> None:
    audio = np.concatenate([np.linspace(-0.5, 0.5, 100, dtype=np.float32), np.zeros(50)])
    assert len(trim_padding(audio.astype(np.float32))) == 100
    assert len(trim_padding(np.zeros(10, dtype=np.float32))) == 0


def test_without_the_runtime_the_error_names_the_extra(
    voice: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "rknnlite", None)
    monkeypatch.setitem(sys.modules, "rknnlite.api", None)
    settings = TtsSettings(engine="piper", voice=str(voice), npu_model=str(tmp_path / "tiny.rknn"))
    with pytest.raises(MissingDependencyError, match=r"pocket-satellite\[npu\]"):
        make_engine(settings)


class _StandInRknnLite:
    """RKNNLite's API over onnxruntime: a fixed-shape output, as a converted model has."""

    NPU_CORE_AUTO = 0
    onnx_path: Path

    def load_rknn(self, path: str) -> int:
        self.session = ort.InferenceSession(str(self.onnx_path))
        return 0

    def init_runtime(self, core_mask: int = 0) -> int:
        return 0

    def inference(self, inputs: list[Any]) -> list[Any]:
        ids, lengths, scales = inputs[:3]
        assert ids.shape == (1, 64), "the adapter feeds the fixed input length"
        used = ids[:, : int(lengths[0])]
        audio = self.session.run(None, {"input": used, "input_lengths": lengths, "scales": scales})
        flat = np.asarray(audio[0], dtype=np.float32).reshape(-1)
        out = np.zeros(FIXED_SAMPLES, dtype=np.float32)
        out[: len(flat)] = flat
        return [out.reshape(1, 1, -1)]

    def release(self) -> None:
        self.session = None


def _install_stand_in(monkeypatch: pytest.MonkeyPatch, onnx_path: Path) -> None:
    api = types.ModuleType("rknnlite.api")
    _StandInRknnLite.onnx_path = onnx_path
    api.RKNNLite = _StandInRknnLite  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "rknnlite", types.ModuleType("rknnlite"))
    monkeypatch.setitem(sys.modules, "rknnlite.api", api)


def test_on_another_board_the_error_says_to_use_the_cpu(
    voice: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install_stand_in(monkeypatch, voice)
    monkeypatch.setattr("satellite.tts.rknn.DEVICE_TREE", tmp_path / "missing")
    rknn = tmp_path / "tiny.rknn"
    rknn.write_bytes(b"RKNN")
    with pytest.raises(NpuUnavailableError, match="npu_model: null"):
        PiperEngine(voice, npu_model=rknn, npu_input_length=64)


def test_the_npu_path_speaks_as_the_cpu_path(
    voice: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install_stand_in(monkeypatch, voice)
    tree = _device_tree(tmp_path, "radxa,rock-5b", "rockchip,rk3588")
    monkeypatch.setattr("satellite.tts.rknn.DEVICE_TREE", tree)
    rknn = tmp_path / "tiny.rknn"
    rknn.write_bytes(b"RKNN")
    npu = PiperEngine(voice, npu_model=rknn, npu_input_length=64)
    cpu = PiperEngine(voice)
    text = "Hello there. The kitchen light is on."
    from_npu = b"".join(c.samples for c in npu.synthesize(text))
    from_cpu = b"".join(c.samples for c in cpu.synthesize(text))
    npu_audio = np.frombuffer(from_npu, dtype="<i2")
    cpu_audio = np.frombuffer(from_cpu, dtype="<i2")
    # the fixed-shape output's padding (400 000 samples per sentence) is cut: at most the
    # CPU's length (a sentence's own trailing zeros may go too), the same sounds
    assert len(cpu_audio) * 0.95 <= len(npu_audio) <= len(cpu_audio)
    assert np.array_equal(npu_audio[npu_audio != 0], cpu_audio[cpu_audio != 0])
    npu.close()


@pytest.mark.skipif(
    rockchip_soc() is None or not os.environ.get("POCKET_RKNN_VOICE"),
    reason="needs a Rockchip NPU board with rknn-toolkit-lite2 (extra 'npu') and a Piper "
    "voice converted to .rknn in POCKET_RKNN_VOICE (with its .onnx and .onnx.json beside)",
)
def test_a_real_rknn_voice_speaks_on_the_npu() -> None:  # pragma: no cover - needs the board
    rknn = Path(os.environ["POCKET_RKNN_VOICE"])
    engine = PiperEngine(rknn.with_suffix(".onnx"), npu_model=rknn)
    audio = np.frombuffer(b"".join(c.samples for c in engine.synthesize("Hello.")), "<i2")
    assert len(audio) > engine.rate_hz * 0.2 and np.abs(audio).max() > 1000
