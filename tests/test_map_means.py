"""MAP on top of the global MLLR (satellite/enrol/map_means.py): real sphinxtrain tools on
the shipped model, speech made at test time."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from satellite.enrol import recordings
from satellite.enrol.adapt import solve
from satellite.enrol.map_means import map_means
from satellite.stt.lexicon import pocketsphinx_model_dir
from satellite.stt.sphinx_decoders import adapted
from tests import corpus
from tests.enrol_support import record_prompts, s3_means

pytestmark = pytest.mark.skipif(
    shutil.which("sphinx_fe") is None or not Path("/usr/lib/sphinxtrain/map_adapt").exists(),
    reason="sphinxtrain / sphinxbase-utils not installed (scripts/bootstrap.sh)",
)


def test_map_moves_the_gaussians_the_speech_visits_beyond_the_mllr(tmp_path: Path) -> None:
    record_prompts(corpus.Voice("flite", "slt", 1.0), corpus.Room("clean"), tmp_path, 8)
    work = tmp_path / "work"
    work.mkdir()
    mllr, ignored = solve(recordings([tmp_path]), work)
    assert not ignored
    means = map_means(work, mllr)
    assert adapted(means) == {"mean": str(means)}  # the decoder loads it as means
    shipped = s3_means(pocketsphinx_model_dir("en") / "en-us" / "means")
    after_mllr = s3_means(work / "means_mllr")
    after_map = s3_means(means)
    assert after_map.shape == shipped.shape and np.isfinite(after_map).all()
    assert not np.allclose(after_mllr, shipped)  # the transform moved every Gaussian
    kept = np.all(np.isclose(after_map, after_mllr, atol=1e-6), axis=-1)
    # a few sentences visit only some Gaussians: those move on, the others keep the
    # MLLR's means (their prior)
    assert 0.05 < kept.mean() < 0.95
