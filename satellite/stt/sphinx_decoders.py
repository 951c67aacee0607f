"""The PocketSphinx decoders a closed-domain recognizer searches with, loaded as a set.

The streaming pair (the grammar and a phone loop) hears a quiet room with the acoustic
model as shipped (or adapted to the enrolled speaker). With ``stt.loud_adaptation`` a
second pair, the model adapted to speech heard in noise through the front end
(``satellite/data/loud_mllr_matrix``, see bench/loud_adaptation.py), hears a loud room
(``PocketSphinxRecognizer.hear_room``): about 26 MB more. The searches aside (again,
the other way, a check) keep the first model: in a loud room the second opinion is
then another model's, and errs less often the same way as the first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import MissingDependencyError, SatelliteError
from .cepstral_mean import MeanMeter
from .fsg import Grammar

#: Beams wide enough for noisy input to reach the grammar's final state.
WIDE_BEAMS = {"beam": 1e-80, "wbeam": 1e-60, "pbeam": 1e-80}
#: The shipped adaptation of the acoustic model to speech in noise (package data).
LOUD_MLLR = "data/loud_mllr_matrix"


def decoder(model_dir: Path, dictionary: Path | None = None, **options: Any) -> Any:
    """A PocketSphinx decoder of the model in ``model_dir`` (its ``en-us`` folder)."""
    try:
        from pocketsphinx import Config, Decoder  # noqa: PLC0415
    except ImportError as err:
        raise MissingDependencyError("pocketsphinx", None, "Speech recognition") from err
    config = Config(
        hmm=os.fspath(model_dir / "en-us"),
        dict=os.fspath(dictionary or model_dir / "cmudict-en-us.dict"),
        loglevel="FATAL",
        **options,
    )
    return Decoder(config)


def phone_loop(found: Any) -> Any:
    """``found`` (a decoder) searching a free loop of phones."""
    found.add_allphone_file("free", None)
    found.activate_search("free")
    return found


def loud_mllr() -> Path:
    """The shipped adaptation to speech in noise (``SatelliteError`` if it is missing)."""
    path = Path(str(resources.files("satellite").joinpath(LOUD_MLLR)))
    if not path.is_file():
        raise SatelliteError(
            f"The loud room's adaptation {path} is missing. Fix: reinstall pocket-satellite, "
            "or set stt.loud_adaptation: false"
        )
    return path


def grammar_decoder(
    model_dir: Path, dictionary: Path | None, grammar_path: Path, mllr: Path | None
) -> Any:
    """The grammar compiled at ``grammar_path`` with default beams, the model adapted by
    ``mllr`` (None: as shipped): what searches again."""
    return decoder(model_dir, dictionary, fsg=os.fspath(grammar_path), **_common(mllr))


def _common(mllr: Path | None) -> dict[str, Any]:
    common: dict[str, Any] = {"lm": None, "bestpath": False, "compallsen": True}
    common.update({"mllr": os.fspath(mllr)} if mllr is not None else {})
    return common


@dataclass(frozen=True, slots=True)
class Streaming:
    """The grammar with wide beams, searched while the person speaks, the phone loop
    paired with it, and the meter that takes a context's cepstral mean on the loop."""

    grammar: Any
    phones: Any
    meter: MeanMeter

    @classmethod
    def load(
        cls,
        model_dir: Path,
        dictionary: Path | None,
        grammar: Grammar,
        grammar_path: Path,
        mllr: Path | None,
    ) -> Streaming:
        """The pair for ``grammar`` (compiled at ``grammar_path``), the model adapted by
        ``mllr`` (None: as shipped)."""
        common = _common(mllr)
        fsg = os.fspath(grammar_path)
        phones = phone_loop(decoder(model_dir, dictionary, **common))
        return cls(
            grammar=decoder(model_dir, dictionary, fsg=fsg, **common, **WIDE_BEAMS),
            phones=phones,
            meter=MeanMeter(phones, grammar),
        )


@dataclass(frozen=True, slots=True)
class Aside:
    """The grammar with default beams, which searches again: paired with a quiet room's
    streaming phone loop (``search_own_mean``), or with a phone loop of its own while
    the streaming search goes on (``search_beside``), or alone (``search_whole``); with
    the meters that take a context's cepstral mean on each."""

    again: Any
    beside_phones: Any
    again_meter: MeanMeter
    beside_meter: MeanMeter

    @classmethod
    def load(
        cls,
        model_dir: Path,
        dictionary: Path | None,
        grammar: Grammar,
        grammar_path: Path,
        mllr: Path | None,
    ) -> Aside:
        """The searches aside for ``grammar``, the model adapted by ``mllr``."""
        again = grammar_decoder(model_dir, dictionary, grammar_path, mllr)
        beside_phones = phone_loop(decoder(model_dir, dictionary, **_common(mllr)))
        return cls(
            again=again,
            beside_phones=beside_phones,
            again_meter=MeanMeter(again, grammar),
            beside_meter=MeanMeter(beside_phones, grammar),
        )
