"""MAP on top of the global MLLR: each Gaussian's mean moved on its own, where there is
enough speech for it (the loud room's adaptation, bench/loud_adaptation.py).

After ``adapt.solve`` (the recordings' features, the alignment and one global MLLR
transform in its work folder): ``mllr_transform`` writes the model's means moved by
the transform, ``bw`` aligns the recordings again with those means, and ``map_adapt``
moves each Gaussian's mean from there towards what its frames say, weighted by how
many frames it has (Bayesian interpolation: a Gaussian the speech hardly visits keeps
the MLLR's mean). The result is a whole means file in the model's own format, which the
decoder loads with ``mean`` in place of the model's (no ``mllr`` then: it is in it).
The tools are sphinxtrain's, Debian packages on x86 and on the Pi.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..stt.lexicon import pocketsphinx_model_dir
from .adapt import bw_args, feat_params
from .tools import run_tool

#: The means file ``map_means`` writes in its work folder.
MAP_MEANS_FILE = "means_map"


def map_means(work: Path, mllr: Path, language: str = "en") -> Path:
    """The model's means adapted by MLLR (``mllr``) and then MAP, from the recordings
    ``adapt.solve`` prepared in ``work``: the path of the means file written there."""
    model = pocketsphinx_model_dir(language) / "en-us"
    moved = work / "means_mllr"
    transform = ["-inmeanfn", os.fspath(model / "means"), "-outmeanfn", os.fspath(moved)]
    run_tool("mllr_transform", [*transform, "-mllrmat", os.fspath(mllr)], work / "mllr.log")
    accum = work / "accum_map"
    accum.mkdir(exist_ok=True)
    run_tool("bw", bw_args(work, model, moved, accum), work / "bw_map.log")
    tying = f".{feat_params(model).get('model', 'ptm')}."
    out = work / MAP_MEANS_FILE
    args = ["-moddeffn", os.fspath(work / "mdef.txt"), "-ts2cbfn", tying]
    args += ["-meanfn", os.fspath(moved), "-varfn", os.fspath(model / "variances")]
    args += ["-mixwfn", os.fspath(work / "mixture_weights")]
    args += ["-tmatfn", os.fspath(model / "transition_matrices")]
    args += ["-accumdir", os.fspath(accum), "-mapmeanfn", os.fspath(out)]
    run_tool("map_adapt", args, work / "map_adapt.log")
    return out
