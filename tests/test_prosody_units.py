"""The prosody parts one by one: syllables, estimates, fusion, baseline, policy, events."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import voluptuous as vol

from satellite.config import ConfigError
from satellite.events import UtteranceEnded, event_from_dict
from satellite.prosody.baseline import SATELLITE_KEY, BaselineStore
from satellite.prosody.events import INSUFFICIENT_SPEECH, Alert, AlertCleared, Prosody
from satellite.prosody.monitor import Measurement, ProsodyMonitor
from satellite.prosody.policy import HIGH, MODERATE, AlertPolicy
from satellite.prosody.rate import (
    ACOUSTIC,
    LEXICAL,
    RateEstimate,
    WordTiming,
    fuse,
    lexical_estimate,
)
from satellite.prosody.settings import ProsodySettings
from satellite.prosody.syllables import (
    SyllableDictionary,
    cmudict_path,
    default_dictionary,
    orthographic_syllables,
)

BOOK = SyllableDictionary({"hello": 2, "world": 1, "please": 1, "everybody": 4, "the": 1})


# --- syllables ----------------------------------------------------------------------------


def test_dictionary_counts_and_spelling_fallback() -> None:
    assert BOOK.count("Hello,") == (2, True)
    assert BOOK.count("EVERYBODY") == (4, True)
    assert BOOK.count("hello-world") == (3, True)
    assert BOOK.count("banana") == (3, False)
    assert BOOK.count("<sil>") == (0, True)
    assert BOOK.count("+breath+") == (0, True)


@pytest.mark.parametrize(
    ("word", "count"),
    [
        ("cat", 1),
        ("make", 1),
        ("table", 2),
        ("piano", 3),
        ("named", 1),
        ("wanted", 2),
        ("yesterday", 3),
        ("7", 2),
        ("television", 4),
        ("radio", 3),
        ("actual", 3),
        ("special", 2),
        ("quality", 3),
    ],
)
def test_orthographic_syllables(word: str, count: int) -> None:
    assert orthographic_syllables(word) == count


@pytest.mark.skipif(cmudict_path() is None, reason="pocketsphinx is not installed")
def test_cmudict_from_pocketsphinx() -> None:
    book = default_dictionary()
    assert len(book) > 100_000
    assert book.count("nurse") == (1, True)
    assert book.count("dizzy") == (2, True)
    assert book.count("temperature")[0] in (3, 4)


# --- estimates and fusion -----------------------------------------------------------------


def test_lexical_estimate_leaves_out_pauses_of_150_ms_or_more() -> None:
    words: list[WordTiming | tuple[str, float, float]] = [
        ("hello", 0.5, 0.9),
        ("<sil>", 0.9, 1.3),
        ("world", 1.3, 1.6),
        WordTiming("please", 1.7, 2.0),
    ]
    e = lexical_estimate(words, BOOK)
    assert e is not None
    assert e.source == LEXICAL
    assert e.syllables == 4
    assert e.speech_seconds == pytest.approx(1.5)
    assert e.articulation_seconds == pytest.approx(1.1)  # the 0.4 s gap; not the 0.1 s
    assert e.articulation_rate == pytest.approx(4 / 1.1)
    assert e.known_fraction == 1.0


def test_lexical_estimate_needs_real_words() -> None:
    assert lexical_estimate([("<sil>", 0.0, 1.0)], BOOK) is None
    assert lexical_estimate([], BOOK) is None
    with pytest.raises(ValueError, match="ends"):
        lexical_estimate([("hello", 1.0, 0.5)], BOOK)


def test_fusion_trusts_words_that_agree_with_the_sound() -> None:
    acoustic = RateEstimate(ACOUSTIC, 10.0, 2.0, 2.0)
    close = RateEstimate(LEXICAL, 12.0, 2.1, 2.0)
    far = RateEstimate(LEXICAL, 3.0, 2.0, 2.0)
    assert fuse(acoustic, close) is close
    assert fuse(acoustic, far) is acoustic
    assert fuse(acoustic, far, max_disagreement=4.0) is far
    assert fuse(acoustic, None) is acoustic
    assert fuse(None, close) is close


# --- baseline -----------------------------------------------------------------------------


def test_baseline_starts_at_the_prior_and_moves_to_the_speaker() -> None:
    store = BaselineStore(size=10, prior_rate=4.3, prior_weight=3)
    assert store.get("anna").median == 4.3
    assert store.get("anna").count == 0
    for rate in (6.0, 6.2, 5.8, 6.1):
        store.add(rate, "anna")
    assert store.get("anna").median == pytest.approx(5.8)  # 3 priors + 4 rates
    for _ in range(10):
        store.add(6.0, "anna")
    baseline = store.get("anna")
    assert baseline.median == 6.0
    assert baseline.count == 10  # the window keeps the last 10
    assert baseline.mad == 0.0
    assert store.get("bob").median == 4.3


def test_baseline_is_robust_to_outliers() -> None:
    store = BaselineStore(size=20, prior_rate=4.3, prior_weight=0)
    rates = [4.0, 4.2, 4.4, 4.1, 4.3] * 3 + [12.0, 0.5]
    for rate in rates:
        store.add(rate, "x")
    baseline = store.get("x")
    assert 4.1 <= baseline.median <= 4.3
    assert 0.1 < baseline.mad < 0.4


def test_baseline_persists_and_survives_a_damaged_file(tmp_path: Path) -> None:
    path = tmp_path / "state" / "prosody.json"
    store = BaselineStore(50, 4.3, 3, path)
    for rate in (5.0, 5.2, 5.1):
        store.add(rate, "anna", SATELLITE_KEY)
    again = BaselineStore(50, 4.3, 3, path)
    assert again.keys() == [SATELLITE_KEY, "anna"]
    assert again.get("anna") == store.get("anna")
    path.write_text("{not json", encoding="utf-8")
    fresh = BaselineStore(50, 4.3, 3, path)
    assert fresh.keys() == []
    assert (tmp_path / "state" / "prosody.json.bad").exists()
    with pytest.raises(ValueError, match="positive"):
        fresh.add(0.0, "anna")


# --- policy -------------------------------------------------------------------------------


def _feed(
    policy: AlertPolicy, ratios: list[float], start: float = 0.0, step: float = 60.0
) -> list[tuple[str | None, bool]]:
    out = []
    for i, ratio in enumerate(ratios):
        d = policy.update("k", ratio, start + i * step)
        out.append((d.raised, d.cleared))
    return out


def test_two_of_three_rushed_raise_a_moderate_alert() -> None:
    policy = AlertPolicy(ProsodySettings())
    out = _feed(policy, [1.0, 1.4, 1.1, 1.4])
    assert [r for r, _ in out] == [None, None, None, MODERATE]
    assert policy.active("k") == MODERATE


def test_one_rushed_utterance_is_not_enough() -> None:
    policy = AlertPolicy(ProsodySettings())
    out = _feed(policy, [1.4, 1.0, 1.1, 1.45, 1.0, 1.0, 1.5])
    assert all(r is None for r, _ in out)


def test_a_very_fast_utterance_alerts_at_once_and_escalates() -> None:
    policy = AlertPolicy(ProsodySettings())
    assert _feed(policy, [1.0, 1.7])[1] == (HIGH, False)
    policy = AlertPolicy(ProsodySettings())
    out = _feed(policy, [1.4, 1.4, 1.65, 1.65])
    assert [r for r, _ in out] == [None, MODERATE, HIGH, None]


def test_clearing_needs_calm_in_a_row_then_a_cooldown() -> None:
    policy = AlertPolicy(ProsodySettings(clear_count=3, cooldown_seconds=600))
    out = _feed(policy, [1.4, 1.4, 1.1, 1.3, 1.1, 1.1, 1.1], step=60)
    assert [c for _, c in out] == [False] * 6 + [True]  # 1.3 broke the calm run
    later = _feed(policy, [1.7, 1.7], start=6 * 60 + 300)  # 5 min after clearing
    assert all(r is None for r, _ in later)
    after = _feed(policy, [1.7], start=6 * 60 + 700)
    assert after == [(HIGH, False)]


def test_no_alert_while_warming_up() -> None:
    policy = AlertPolicy(ProsodySettings())
    assert policy.update("k", 2.0, 0.0, ready=False).raised is None
    assert policy.update("k", 2.0, 1.0, ready=True).raised == HIGH


# --- settings and events -------------------------------------------------------------------


def test_settings_validate_with_fixes_in_the_messages() -> None:
    schema = vol.Schema(ProsodySettings.schema())
    settings = ProsodySettings.from_validated(schema({"rushed_ratio": 1.4}))
    assert settings.rushed_ratio == 1.4
    assert settings.min_syllables == 6
    with pytest.raises(vol.MultipleInvalid, match="Fix"):
        schema({"rushed_ratio": 0.5})
    with pytest.raises(ConfigError, match="rushed_count"):
        ProsodySettings(rushed_count=4, rushed_window=3)
    with pytest.raises(ConfigError, match="clear_ratio"):
        ProsodySettings(clear_ratio=1.5)


def test_events_round_trip_through_json() -> None:
    events = [
        Prosody(
            1.5,
            "u1",
            True,
            ACOUSTIC,
            12.0,
            5.1,
            4.8,
            5.1,
            2.5,
            2.35,
            4.3,
            0.2,
            12,
            1.19,
            0.5,
            3.0,
            "anna",
        ),
        Prosody(
            2.0,
            "u2",
            False,
            "none",
            0.0,
            None,
            None,
            None,
            0.0,
            0.0,
            4.3,
            None,
            0,
            None,
            reason=INSUFFICIENT_SPEECH,
            detail="no voiced speech",
        ),
        Alert(3.0, "u3", "rushed_speech", HIGH, 1.7, 7.3, 4.3, None, "Are you all right?"),
        AlertCleared(9.0, "u9", "rushed_speech", 1.0, 300.0),
    ]
    for event in events:
        assert event_from_dict(json.loads(json.dumps(event.to_dict()))) == event


# --- the monitor ---------------------------------------------------------------------------


def _measurement(rate: float, syllables: float = 12.0) -> Measurement:
    from satellite.prosody.acoustic import AcousticAnalysis  # noqa: PLC0415

    seconds = syllables / rate
    analysis = AcousticAnalysis(
        tuple(np.linspace(0.1, seconds, int(syllables))), 0.0, seconds, 0.0, 0.0, 0.5, 25.0
    )
    return Measurement(RateEstimate(ACOUSTIC, syllables, seconds, seconds), analysis, None)


def test_speaker_baseline_takes_over_once_ready(tmp_path: Path) -> None:
    settings = ProsodySettings(min_baseline=5, state_path=str(tmp_path / "p.json"))
    monitor = ProsodyMonitor(settings)
    for i in range(6):
        monitor.judge(_measurement(4.0), f"a{i}", float(i))
    events = monitor.judge(_measurement(6.0), "b0", 10.0, speaker="bob")
    assert isinstance(events[0], Prosody)
    assert events[0].baseline == pytest.approx(4.0)  # bob is new: the satellite's
    for i in range(6):
        monitor.judge(_measurement(6.0), f"b{i + 1}", 11.0 + i, speaker="bob")
    events = monitor.judge(_measurement(6.0), "b9", 20.0, speaker="bob")
    assert isinstance(events[0], Prosody)
    assert events[0].baseline == pytest.approx(6.0)
    assert events[0].ratio == pytest.approx(1.0)
    assert json.loads((tmp_path / "p.json").read_text())["baselines"]["bob"]


def test_alert_carries_the_question_when_asked_to(tmp_path: Path) -> None:
    settings = ProsodySettings(min_baseline=3, ask_aloud=True)
    monitor = ProsodyMonitor(settings)
    for i in range(5):
        monitor.judge(_measurement(4.3), f"u{i}", i * 60.0)
    events = monitor.judge(_measurement(8.0), "fast", 400.0)
    alerts = [e for e in events if isinstance(e, Alert)]
    assert len(alerts) == 1
    assert alerts[0].severity == HIGH
    assert alerts[0].kind == "rushed_speech"
    assert alerts[0].say == settings.question
    assert alerts[0].ratio == pytest.approx(8.0 / 4.3, rel=1e-3)
    quiet = dataclasses.replace(settings, ask_aloud=False)
    assert quiet.question == settings.question
    cleared = []
    for i in range(3):
        cleared += monitor.judge(_measurement(4.3), f"c{i}", 500.0 + i * 60)
    assert [type(e) for e in cleared].count(AlertCleared) == 1


def test_process_uses_the_utterance_times(tmp_path: Path) -> None:
    from tests.synth import espeak, have_espeak, silence, to_chunk  # noqa: PLC0415

    if not have_espeak():
        pytest.skip("espeak-ng is not installed")
    speech = espeak("Please turn on the light in the kitchen.", "en-us", 160)
    audio = to_chunk(np.concatenate([silence(0.5), speech, silence(0.3)]))
    audio = dataclasses.replace(audio, timestamp_seconds=100.0)
    end = 100.5 + len(speech) / 16000
    utterance = UtteranceEnded(end + 0.7, "u1", 100.5, end, 100.0, "silence", audio)
    words = [
        WordTiming(*w)
        for w in (
            ("please", 100.5, 100.8),
            ("turn", 100.8, 101.0),
            ("on", 101.0, 101.1),
            ("the", 101.1, 101.2),
            ("light", 101.2, 101.5),
            ("in", 101.5, 101.6),
            ("the", 101.6, 101.7),
            ("kitchen", 101.7, end),
        )
    ]
    monitor = ProsodyMonitor(ProsodySettings())
    (event,) = monitor.process(utterance, words=words)
    assert isinstance(event, Prosody)
    assert event.judged
    assert event.source == LEXICAL
    assert event.syllables == 9
    assert event.start_seconds == pytest.approx(100.5, abs=0.05)
    assert event.end_seconds == pytest.approx(end, abs=0.05)
