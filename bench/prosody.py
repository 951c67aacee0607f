"""Speech-rate accuracy, rushed-speech detection and cost of the prosody stage.

Run on one core:  taskset -c 0 python bench/prosody.py [--quick]
Refit the acoustic calibration:  python bench/prosody.py --calibrate

Accuracy: mean absolute percentage error of the articulation and speaking rates per
true-rate bin, on the evaluation set (240 eSpeak NG utterances, 4 voices, 100-320 wpm;
acoustic alone and fused with eSpeak's word times) and on flite voices (slt, awb: unit
selection from recorded speech, neither seen by the calibration). Detection: simulated
days per speaker (tests/test_prosody_corpus.py), episodes caught and false alerts, plus
the per-utterance confusion at ``rushed_ratio``. Cost: estimator time per second of
audio. Writes bench/results/prosody.json.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, write_results
from satellite.prosody import rate as rate_module
from satellite.prosody.acoustic import analyse_chunk
from satellite.prosody.settings import ProsodySettings
from tests.synth import to_chunk
from tests.test_prosody_corpus import (
    EVALUATION_FLITE_VOICES,
    EVALUATION_SENTENCES,
    EVALUATION_VOICES,
    DayResult,
    Sample,
    calibration_set,
    evaluation_set,
    flite_set,
    measure_sample,
    raw_acoustic_rates,
    run_day,
    simulate_day,
)

BINS = ((0.0, 3.5), (3.5, 4.5), (4.5, 5.5), (5.5, 6.5), (6.5, 8.0), (8.0, 99.0))
NORMAL_RATES = (4.2, 4.6, 5.0, 4.4)


def calibrate() -> dict[str, float]:
    """Fit log(true articulation rate) = log(scale) + exponent * log(raw nuclei rate)."""
    samples = calibration_set()
    raw = raw_acoustic_rates(samples)
    truth = np.array([s.articulation_rate for s in samples])
    ok = raw > 0
    exponent, log_scale = np.polyfit(np.log(raw[ok]), np.log(truth[ok]), 1)
    fitted = np.exp(log_scale) * raw[ok] ** exponent
    return {
        "utterances": int(ok.sum()),
        "scale": round(float(np.exp(log_scale)), 4),
        "exponent": round(float(exponent), 4),
        "calibration_mape": round(float(np.mean(np.abs(fitted / truth[ok] - 1))), 4),
    }


def accuracy(
    name: str, samples: list[Sample] | tuple[Sample, ...], use_words: bool
) -> dict[str, Any]:
    """MAPE per true-rate bin and overall, for both rates."""
    est_art, est_speak, judged = [], [], 0
    for s in samples:
        m = measure_sample(s, use_words=use_words)
        judged += m.judged
        e = m.estimate
        est_art.append(e.articulation_rate or 0.0 if e else 0.0)
        est_speak.append(e.speaking_rate or 0.0 if e else 0.0)
    art = np.array([s.articulation_rate for s in samples])
    speak = np.array([s.speaking_rate for s in samples])
    err_art = np.abs(np.array(est_art) / art - 1)
    err_speak = np.abs(np.array(est_speak) / speak - 1)
    bins = []
    for low, high in BINS:
        chosen = (art >= low) & (art < high)
        if chosen.any():
            bins.append(
                {
                    "bin": f"{low:g}-{high:g}" if high < 99 else f">{low:g}",
                    "n": int(chosen.sum()),
                    "mape_articulation": round(float(err_art[chosen].mean()), 4),
                    "mape_speaking": round(float(err_speak[chosen].mean()), 4),
                }
            )
    return {
        "set": name,
        "utterances": len(samples),
        "judged": judged,
        "mape_articulation": round(float(err_art.mean()), 4),
        "mape_speaking": round(float(err_speak.mean()), 4),
        "bins": bins,
    }


def detection(results: list[DayResult], rushed_ratio: float) -> dict[str, Any]:
    """Episode recall, false alerts, and the per-utterance confusion."""
    tp = fp = fn = tn = unjudged = 0
    for r in results:
        for _, estimated, rushed, _ in r.rows:
            if estimated is None:
                unjudged += 1
                continue
            flagged = estimated >= rushed_ratio
            tp += rushed and flagged
            fn += rushed and not flagged
            fp += flagged and not rushed
            tn += not flagged and not rushed
    episodes = sum(r.episodes for r in results)
    detected = sum(r.detected for r in results)
    normal = sum(r.normal_utterances for r in results)
    false_alerts = sum(r.false_alerts for r in results)
    return {
        "episodes": episodes,
        "detected": detected,
        "recall": round(detected / episodes, 4) if episodes else None,
        "false_alerts": false_alerts,
        "normal_utterances": normal,
        "false_alerts_per_200": round(200 * false_alerts / normal, 3) if normal else None,
        "utterance_confusion": {
            "rushed_flagged": tp,
            "rushed_missed": fn,
            "normal_flagged": fp,
            "normal_passed": tn,
            "unjudged": unjudged,
        },
    }


def cost(samples: tuple[Sample, ...]) -> dict[str, float]:
    """Estimator time per second of audio (analysis of the whole padded utterance)."""
    chunks = [to_chunk(s.audio) for s in samples]
    seconds = sum(c.seconds for c in chunks)
    analyse_chunk(chunks[0])  # warm caches (filters, windows)
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        for c in chunks:
            analyse_chunk(c)
        timings.append(time.perf_counter() - start)
    best = min(timings)
    return {
        "audio_seconds": round(seconds, 1),
        "ms_per_audio_second": round(1000 * best / seconds, 3),
        "real_time_factor": round(best / seconds, 5),
    }


def main() -> int:
    """Run the benchmark (or the calibration fit)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="fit the acoustic calibration on the calibration set and exit",
    )
    parser.add_argument("--quick", action="store_true", help="two simulated days, not six")
    args = parser.parse_args()
    if args.calibrate:
        fit = calibrate()
        print(
            f"CALIBRATION_SCALE = {fit['scale']}\nCALIBRATION_EXPONENT = {fit['exponent']}"
            f"\n({fit['utterances']} utterances, MAPE after the fit "
            f"{100 * fit['calibration_mape']:.1f}%)"
        )
        return 0
    print("synthesising the evaluation sets ...", file=sys.stderr)
    evaluation = evaluation_set()
    flite = flite_set(EVALUATION_SENTENCES, EVALUATION_FLITE_VOICES, seed=23)
    sets = [
        accuracy("espeak acoustic", evaluation, False),
        accuracy("espeak fused", evaluation, True),
        accuracy("flite acoustic", flite, False),
    ]
    rows = []
    for low, high in BINS:
        label = f"{low:g}-{high:g}" if high < 99 else f">{low:g}"
        row: list[Any] = [label]
        for result in sets:
            cell = next((b for b in result["bins"] if b["bin"] == label), None)
            row.append(f"{100 * cell['mape_articulation']:.1f}% (n={cell['n']})" if cell else "-")
        rows.append(row)
    rows.append(
        [
            "all",
            *(
                f"{100 * r['mape_articulation']:.1f}% / {100 * r['mape_speaking']:.1f}%"
                for r in sets
            ),
        ]
    )
    print("\nArticulation-rate MAPE by true rate (syllables/s); last row: articulation / speaking")
    print_table(["true rate", *(r["set"] for r in sets)], rows)

    print("\nsimulating days ...", file=sys.stderr)
    settings = ProsodySettings()
    voices = EVALUATION_VOICES[:2] if args.quick else EVALUATION_VOICES
    days = [
        simulate_day(v, p, r, seed=100 + k)
        for k, ((v, p), r) in enumerate(zip(voices, NORMAL_RATES, strict=False))
    ]
    detect = {
        "acoustic": detection([run_day(d, settings) for d in days], settings.rushed_ratio),
        "fused": detection([run_day(d, settings, True) for d in days], settings.rushed_ratio),
    }
    print("\nDetection over simulated days (default settings)")
    print_table(
        [
            "source",
            "episodes caught",
            "false alerts / normal utts",
            "per 200",
            "rushed flagged/missed",
            "normal flagged/passed",
        ],
        [
            [
                name,
                f"{d['detected']}/{d['episodes']}",
                f"{d['false_alerts']}/{d['normal_utterances']}",
                d["false_alerts_per_200"],
                f"{d['utterance_confusion']['rushed_flagged']}/"
                f"{d['utterance_confusion']['rushed_missed']}",
                f"{d['utterance_confusion']['normal_flagged']}/"
                f"{d['utterance_confusion']['normal_passed']}",
            ]
            for name, d in detect.items()
        ],
    )

    spent = cost(evaluation)
    print(
        f"\nCost: {spent['ms_per_audio_second']:.2f} ms per second of audio "
        f"(real-time factor {spent['real_time_factor']:.4f}) over "
        f"{spent['audio_seconds']:.0f} s of audio"
    )
    path = write_results(
        "prosody",
        {
            "calibration": {
                "scale": rate_module.CALIBRATION_SCALE,
                "exponent": rate_module.CALIBRATION_EXPONENT,
            },
            "accuracy": sets,
            "detection": detect,
            "cost": spent,
            "settings": {
                "rushed_ratio": settings.rushed_ratio,
                "rushed": f"{settings.rushed_count} of {settings.rushed_window}",
                "high_ratio": settings.high_ratio,
                "measure": settings.measure,
            },
        },
    )
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
