"""A Piper voice on a Rockchip NPU (RK3566/RK3568/RK3588) through ``rknn-toolkit-lite2``.

The voice's VITS network, converted to ``.rknn`` with rknn-toolkit2 on a PC, has fixed
input shapes: phoneme ids padded to ``input_length``. ``RknnSession`` stands where Piper's
onnxruntime session stands (``run(None, inputs)``): it pads the ids with Piper's pad id,
feeds the inputs in the model's order, and cuts the padding's trailing silence from the
audio. Everything else (phonemes, chunks, rate) stays in ``piper.py``.

Elsewhere (no NPU, no runtime) it fails at start with an error naming the board and
the ``npu`` extra; the CPU path (onnxruntime) is the default.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import MissingDependencyError, SatelliteError
from .base import TtsError

#: Where the kernel names the board; Rockchip SoCs say "rockchip,rk3588" and so on.
DEVICE_TREE = Path("/proc/device-tree/compatible")
#: Output samples below this (float) at the end of the audio are the padding's silence.
SILENCE = 1e-4
#: Piper's pad phoneme id.
PAD_ID = 0


class NpuUnavailableError(SatelliteError):
    """The NPU path was configured on a machine that cannot run it."""


def rockchip_soc(device_tree: Path | None = None) -> str | None:
    """The Rockchip SoC this runs on ("rk3588", ...), or None on any other machine."""
    try:
        names = (device_tree or DEVICE_TREE).read_bytes().split(b"\0")
    except OSError:
        return None
    for name in names:  # the board first, then the SoC: "radxa,rock-5b", "rockchip,rk3588"
        vendor, _, soc = name.decode(errors="replace").partition(",")
        if vendor == "rockchip" and re.fullmatch(r"rk\d{4}", soc):
            return soc
    return None


def pad_ids(ids: list[int], length: int) -> npt.NDArray[np.int64]:
    """Phoneme ids padded to the model's fixed ``length`` (shape [1, length])."""
    if len(ids) > length:
        raise TtsError(
            f"This sentence has {len(ids)} phoneme ids; the NPU voice was built for at most "
            f"{length}. Fix: set tts.npu_input_length to the length the .rknn model was "
            "converted with, or convert it with a longer input"
        )
    padded = np.full((1, length), PAD_ID, dtype=np.int64)
    padded[0, : len(ids)] = ids
    return padded


def trim_padding(audio: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The audio without the silent tail that padded phonemes leave."""
    loud = np.flatnonzero(np.abs(audio) > SILENCE)
    return audio[: int(loud[-1]) + 1] if len(loud) else audio[:0]


class RknnSession:
    """Runs a ``.rknn`` Piper voice on the NPU with onnxruntime's ``run`` call shape."""

    def __init__(
        self, model_path: Path, input_length: int, device_tree: Path | None = None
    ) -> None:
        try:
            from rknnlite.api import RKNNLite  # noqa: PLC0415
        except ImportError as err:
            raise MissingDependencyError(
                "rknn-toolkit-lite2", "npu", "the Piper voice on a Rockchip NPU"
            ) from err
        soc = rockchip_soc(device_tree)
        if soc is None:
            raise NpuUnavailableError(
                "tts.npu_model: this machine has no Rockchip NPU (RK3566, RK3568, RK3588). "
                "Fix: set tts.npu_model: null to run the voice on the CPU"
            )
        if not model_path.is_file():
            raise NpuUnavailableError(
                f"tts.npu_model: {model_path} not found. Fix: convert the voice's .onnx "
                "with rknn-toolkit2 for this board and point tts.npu_model at the .rknn"
            )
        self.input_length = input_length
        self.soc = soc
        self._rknn: Any = RKNNLite()
        if self._rknn.load_rknn(str(model_path)) != 0:
            raise NpuUnavailableError(
                f"tts.npu_model: {model_path} is not an RKNN model this runtime loads. "
                f"Fix: convert it with rknn-toolkit2 for {soc}"
            )
        core = getattr(RKNNLite, "NPU_CORE_AUTO", None)
        status = (
            self._rknn.init_runtime() if core is None else self._rknn.init_runtime(core_mask=core)
        )
        if status != 0:
            raise NpuUnavailableError(
                f"The NPU runtime did not start on {soc} (status {status}). Fix: check the "
                "rknpu driver (dmesg | grep -i rknpu) and librknnrt.so's version"
            )

    def run(self, _outputs: object, inputs: dict[str, Any]) -> list[npt.NDArray[np.float32]]:
        """Piper's inputs in, its audio out: ids padded, lengths as given, padding cut."""
        ids = [int(i) for i in np.asarray(inputs["input"]).reshape(-1)]
        feeds = [
            pad_ids(ids, self.input_length),
            np.asarray(inputs["input_lengths"], dtype=np.int64),
            np.asarray(inputs["scales"], dtype=np.float32),
        ]
        if "sid" in inputs:
            feeds.append(np.asarray(inputs["sid"], dtype=np.int64))
        outputs = self._rknn.inference(inputs=feeds)
        if not outputs:
            raise TtsError("The NPU returned no audio. Fix: check the .rknn conversion")
        audio = np.asarray(outputs[0], dtype=np.float32).reshape(-1)
        return [trim_padding(audio)]

    def close(self) -> None:
        self._rknn.release()
