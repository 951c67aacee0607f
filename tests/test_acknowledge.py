"""The ``done`` sound: at once for an answer that waits for the person, and for a Home
Assistant command only when HA's answer is late (an answer on time is spoken straight
away, with no tone before it). One sound per utterance at most."""

from __future__ import annotations

from satellite.acknowledge import ACKNOWLEDGE_AFTER_SECONDS, Acknowledgements


def _counted() -> tuple[Acknowledgements, list[int]]:
    played: list[int] = []
    return Acknowledgements(lambda: played.append(1)), played


def test_an_answer_that_comes_in_time_gets_no_tone() -> None:
    acks, played = _counted()
    acks.later("u1", 10.0)
    acks.tick(10.0 + ACKNOWLEDGE_AFTER_SECONDS / 2, ["u1"])
    acks.answered("u1")
    acks.tick(20.0, ["u1"])
    assert played == []


def test_a_late_answer_gets_the_tone_once_when_it_is_due() -> None:
    acks, played = _counted()
    acks.later("u1", 10.0)
    acks.tick(10.0 + ACKNOWLEDGE_AFTER_SECONDS - 0.01, ["u1"])
    assert played == []
    acks.tick(10.0 + ACKNOWLEDGE_AFTER_SECONDS, ["u1"])
    acks.tick(12.0, ["u1"])
    acks.now("u1")  # the answer then waits for the person: no second tone
    assert played == [1]


def test_no_tone_for_an_utterance_no_longer_awaited() -> None:
    """The dialogue gave up on HA (it says so in words): no tone is owed any more."""
    acks, played = _counted()
    acks.later("u1", 10.0)
    acks.tick(10.1, [])
    acks.tick(20.0, ["u1"])
    assert played == []


def test_each_utterance_gets_its_own_tone_and_no_sound_means_silence() -> None:
    acks, played = _counted()
    acks.now("u1")
    acks.now("u2")
    acks.now("u1")
    assert played == [1, 1]
    quiet = Acknowledgements(None)
    quiet.now("u3")  # feedback sounds off: nothing to play, nothing fails
