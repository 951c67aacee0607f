# ruff: noqa: RUF001 - IPA phonemes look like Latin letters
"""The Piper engine on a tiny ONNX voice built at test time with Piper's inputs and outputs.

The voice maps each phoneme id to 64 samples of its own tone, scaled by the length scale
(and by 1 + speaker id when it has speakers), so the expected audio can be computed from
the phoneme ids: the test checks phonemisation with punctuation, the id layout (BOS,
pads, EOS), the ONNX inputs and the conversion, against golden audio with a tolerance.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from satellite.errors import MissingDependencyError
from satellite.tts.base import UnknownVoiceError
from satellite.tts.engines import make_engine, resolve_piper_model
from satellite.tts.piper import PiperEngine
from satellite.tts.settings import TtsSettings

onnx = pytest.importorskip("onnx", reason="onnx is not installed (dev)")
pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (extra 'piper')")

RATE = 16000
SAMPLES_PER_ID = 64
PHONEMES = "_^$ ,.!?abdefhijklmnoprstuvwzæçðŋɐɑɔəɚɛɜɡɪɹɾʃʊʌʒʔˈˌːθᵻ"
ID_MAP = {p: [i] for i, p in enumerate(PHONEMES)}


def _table() -> npt.NDArray[np.float32]:
    t = np.arange(SAMPLES_PER_ID) / RATE
    return np.stack(
        [0.2 * np.sin(2 * np.pi * 100.0 * (i + 1) * t) for i in range(len(PHONEMES))]
    ).astype(np.float32)


def build_voice(folder: Path, speakers: int = 1) -> Path:
    """Write ``tiny.onnx`` and ``tiny.onnx.json`` in ``folder``; return the model path."""
    helper, tensor = onnx.helper, onnx.TensorProto
    inputs = [
        helper.make_tensor_value_info("input", tensor.INT64, [1, "phonemes"]),
        helper.make_tensor_value_info("input_lengths", tensor.INT64, [1]),
        helper.make_tensor_value_info("scales", tensor.FLOAT, [3]),
    ]
    nodes = [
        helper.make_node("Gather", ["table", "input"], ["sounds"], axis=0),
        helper.make_node("Gather", ["scales", "one"], ["length_scale"], axis=0),
        helper.make_node("Mul", ["sounds", "length_scale"], ["scaled"]),
        helper.make_node("Reshape", ["scaled", "shape"], ["flat"]),
    ]
    last = "flat"
    if speakers > 1:
        inputs.append(helper.make_tensor_value_info("sid", tensor.INT64, [1]))
        nodes += [
            helper.make_node("Cast", ["sid"], ["sid_float"], to=tensor.FLOAT),
            helper.make_node("Add", ["sid_float", "unit"], ["gain"]),
            helper.make_node("Mul", ["flat", "gain"], ["voiced"]),
        ]
        last = "voiced"
    nodes.append(helper.make_node("Identity", [last], ["output"]))
    initializers = [
        onnx.numpy_helper.from_array(_table(), "table"),
        onnx.numpy_helper.from_array(np.array(1, dtype=np.int64), "one"),
        onnx.numpy_helper.from_array(np.array([1, 1, -1], dtype=np.int64), "shape"),
        onnx.numpy_helper.from_array(np.array([1.0], dtype=np.float32), "unit"),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_piper",
        inputs,
        [helper.make_tensor_value_info("output", tensor.FLOAT, [1, 1, "samples"])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = folder / "tiny.onnx"
    onnx.save(model, str(path))
    config = {
        "audio": {"sample_rate": RATE},
        "espeak": {"voice": "en-us"},
        "inference": {"noise_scale": 0.667, "length_scale": 1.0, "noise_w": 0.8},
        "phoneme_type": "espeak",
        "phoneme_id_map": ID_MAP,
        "num_speakers": speakers,
    }
    Path(f"{path}.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    return path


def expected_audio(phonemes: str, gain: float = 1.0) -> npt.NDArray[np.int16]:
    """Golden audio for one sentence's phonemes, computed without the engine."""
    ids = [1, 0]
    for phoneme in unicodedata.normalize("NFD", phonemes):
        if phoneme in ID_MAP:
            ids += [ID_MAP[phoneme][0], 0]
    ids.append(2)
    audio = _table()[ids].reshape(-1) * gain
    return np.clip(np.round(audio * 32768.0), -32768, 32767).astype(np.int16)


@pytest.fixture(scope="module")
def voice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_voice(tmp_path_factory.mktemp("piper"))


def _synth(engine: PiperEngine, text: str) -> npt.NDArray[np.int16]:
    chunks = list(engine.synthesize(text))
    assert {c.rate_hz for c in chunks} == {RATE}
    return np.concatenate([c.to_int16() for c in chunks])


def test_phonemes_keep_the_punctuation(voice: Path) -> None:
    engine = PiperEngine(voice)
    assert engine.phonemes("Hello world, how are you? Fine.") == [
        unicodedata.normalize("NFD", "həlˈoʊ wˈɜːld, hˈaʊ ɑːɹ juː?"),
        unicodedata.normalize("NFD", "fˈaɪn."),
    ]


def test_audio_matches_the_golden_audio(voice: Path) -> None:
    engine = PiperEngine(voice)
    audio = _synth(engine, "Hello world.")
    golden = expected_audio("həlˈoʊ wˈɜːld.")
    assert len(audio) == len(golden)
    assert np.abs(audio.astype(np.int32) - golden).max() <= 1


def test_each_sentence_is_synthesised_and_streamed_in_order(voice: Path) -> None:
    engine = PiperEngine(voice)
    chunks = list(engine.synthesize("Hello world. Fine."))
    assert len(chunks) > 2
    assert all(c.seconds <= 0.1 + 1e-9 for c in chunks)
    audio = np.concatenate([c.to_int16() for c in chunks])
    golden = np.concatenate([expected_audio("həlˈoʊ wˈɜːld."), expected_audio("fˈaɪn.")])
    assert np.abs(audio.astype(np.int32) - golden).max() <= 1


def test_rate_sets_the_length_scale_and_volume_the_gain(voice: Path) -> None:
    slow = _synth(PiperEngine(voice, rate_wpm=80), "Fine.")  # length scale 2
    soft = _synth(PiperEngine(voice, volume=50), "Fine.")
    golden = expected_audio("fˈaɪn.")
    assert np.abs(slow.astype(np.int32) - expected_audio("fˈaɪn.", 2.0)).max() <= 1
    assert np.abs(soft.astype(np.int32) - expected_audio("fˈaɪn.", 0.5)).max() <= 1
    assert len(slow) == len(soft) == len(golden)


def test_a_multi_speaker_voice_gets_its_speaker_id(tmp_path: Path) -> None:
    engine = PiperEngine(build_voice(tmp_path, speakers=3), speaker_id=1)
    audio = _synth(engine, "Fine.")
    assert np.abs(audio.astype(np.int32) - expected_audio("fˈaɪn.", 2.0)).max() <= 1


def test_empty_text_and_control_characters(voice: Path) -> None:
    engine = PiperEngine(voice)
    assert list(engine.synthesize("")) == []
    assert list(engine.synthesize("\x00\x07 \n")) == []
    assert len(_synth(engine, "Hello\x00 world.")) == len(expected_audio("həlˈoʊ wˈɜːld."))


def test_make_engine_finds_a_voice_by_name_in_the_models_folder(voice: Path) -> None:
    settings = TtsSettings(engine="piper", voice="tiny", models_dir=str(voice.parent))
    engine = make_engine(settings)
    assert isinstance(engine, PiperEngine)
    assert engine.voices() == ["tiny"]
    assert len(_synth(engine, "Fine.")) > 0


def test_missing_voice_files_are_a_clear_error(tmp_path: Path, voice: Path) -> None:
    with pytest.raises(UnknownVoiceError, match=r"missing\.onnx.*Fix"):
        PiperEngine(tmp_path / "missing.onnx")
    with pytest.raises(UnknownVoiceError, match="not 'other'"):
        list(PiperEngine(voice).synthesize("Hi.", "other"))


def test_without_onnxruntime_the_error_names_the_extra(
    voice: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(MissingDependencyError, match=r"pocket-satellite\[piper\]"):
        PiperEngine(voice)


def test_a_voice_can_come_from_the_models_manifest(voice: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "models.yaml"
    manifest.write_text(
        "models:\n"
        "  - id: piper/tiny\n"
        "    kind: piper_voice\n"
        "    source: file\n"
        f"    path: {voice}\n"
        "    sha256: unchecked-here\n"
        "    size_bytes: 0\n"
        "    licence: CC0-1.0\n",
        encoding="utf-8",
    )
    assert resolve_piper_model("piper/tiny", "/nowhere", manifest) == voice
    assert resolve_piper_model("other", "/models", manifest) == Path("/models/other.onnx")
    assert resolve_piper_model(str(voice), "/nowhere", manifest) == voice
