"""Wake word detection with ``pymicro-wakeword`` and the models it ships."""

from __future__ import annotations

from typing import Any

from ..audio.chunk import AudioChunk
from ..errors import MissingDependencyError
from .base import WakeHit
from .expander import DownwardExpander
from .wake_check import BandCheck


class MicroWakeWordDetector:
    """One feature stream feeding one or more microWakeWord models.

    A detection fires when a model's sliding-window probability passes its cutoff
    (the model's own, or ``probability_cutoff`` when set); after a detection every
    model is quiet for ``refractory_seconds``. With ``band`` (frontend.wake.checked_above)
    a peak below the cutoff but above the band's floor fires too, a few frames later,
    when the band's second check confirms the phrase in the audio before it. With
    ``expander`` (frontend.wake.expand_db) the models and the check hear the audio turned
    down between the person's syllables, and while it turns a room down the band's floor
    is ``EXPANDED_CHECKED_ABOVE`` (wake_check.py).
    """

    name = "wake"

    def __init__(
        self,
        models: tuple[str, ...],
        probability_cutoff: float | None,
        refractory_seconds: float,
        band: BandCheck | None = None,
        expander: DownwardExpander | None = None,
    ) -> None:
        try:
            from pymicro_wakeword import (  # noqa: PLC0415
                MicroWakeWord,
                MicroWakeWordFeatures,
                Model,
            )
        except ImportError as err:
            raise MissingDependencyError("pymicro-wakeword", None, "Wake word detection") from err
        self._features_factory = MicroWakeWordFeatures
        self._features: Any = MicroWakeWordFeatures()
        self._models: list[Any] = [MicroWakeWord.from_builtin(Model(m)) for m in models]
        self._cutoffs = [
            probability_cutoff if probability_cutoff is not None else m.probability_cutoff
            for m in self._models
        ]
        self.refractory_seconds = refractory_seconds
        self._quiet_until = float("-inf")
        self._active = set(self.model_names)
        #: Features handed to every model since the last reset (a model decides on every
        #: ``stride``-th one).
        self._features_seen = 0
        self.band = band
        self.expander = expander

    @property
    def model_names(self) -> list[str]:
        """Ids of the loaded models."""
        return [str(m.id) for m in self._models]

    @property
    def active(self) -> list[str]:
        """Ids of the models listened for (all loaded ones until set_active)."""
        return [name for name in self.model_names if name in self._active]

    def set_active(self, models: tuple[str, ...]) -> None:
        """Listen only for ``models`` (loaded ones; Home Assistant's wake word choice)."""
        unknown = [m for m in models if m not in self.model_names]
        if unknown or not models:
            raise ValueError(
                f"wake words {', '.join(unknown) or '(none)'} are not loaded; choose among "
                f"{', '.join(self.model_names)} (frontend.wake.models in the config)"
            )
        self._active = set(models)

    def frames_to_decision(self) -> int:
        """Frames until the next feature that completes a model's stride (one feature per
        frame once the feature window is full; before that, earlier than the decision,
        which only makes a wake-up early)."""
        if self.band is not None and self.band.busy:
            return 1  # the band's check runs a step a frame
        strides = [int(m.stride) for m in self._models if str(m.id) in self._active]
        return max(1, min(s - self._features_seen % s for s in strides or [1]))

    def process(self, frame: AudioChunk) -> WakeHit | None:
        hit: WakeHit | None = None
        now = frame.end_seconds
        band = self.band
        if self.expander is not None:
            frame = self.expander.process(frame)
            if band is not None:
                band.raised = self.expander.turning_down
        if band is not None:
            band.hear(frame.samples)
        for features in self._features.process_streaming(frame.samples):
            self._features_seen += 1
            for model, cutoff in zip(self._models, self._cutoffs, strict=True):
                probability = model.process_streaming_prob(features)
                if str(model.id) not in self._active:
                    continue  # its features still stream, so it is ready when chosen again
                if probability is None or now < self._quiet_until:
                    continue
                heard = WakeHit(
                    model=str(model.id),
                    wake_word=str(model.wake_word),
                    probability=float(probability),
                    timestamp_seconds=now,
                )
                if probability <= cutoff:
                    # between its decisions (every stride-th feature) a model gives 0.0
                    if band is not None and self._features_seen % int(model.stride) == 0:
                        band.observe(heard)
                elif hit is None or probability > hit.probability:
                    hit = heard
        if band is not None:
            if hit is None:
                hit = band.advance()
            else:
                band.clear()  # sure enough without the check
        if hit is not None:
            self._quiet_until = now + self.refractory_seconds
        return hit

    def reset(self) -> None:
        self._features = self._features_factory()
        for model in self._models:
            model.reset()
        self._quiet_until = float("-inf")
        self._features_seen = 0
        if self.band is not None:
            self.band.reset()
        if self.expander is not None:
            self.expander.reset()
