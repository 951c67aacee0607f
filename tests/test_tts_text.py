"""The push-style text splitter: sentences, a long first sentence's clauses, bounds."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from satellite.tts.base import clean_text
from satellite.tts.text import SplitterSettings, TextSplitter, split_text, split_text_async


def _split(text: str) -> list[str]:
    return list(split_text([text]))


def test_sentences_are_cut_at_their_ends() -> None:
    assert _split("The light is on. Is that all? Yes! Good night.") == [
        "The light is on.",
        "Is that all?",
        "Yes!",
        "Good night.",
    ]


def test_abbreviations_and_decimals_do_not_end_a_sentence() -> None:
    text = "Dr. Smith comes at 3.5 p.m. tomorrow, e.g. after lunch. Then rest."
    assert _split(text) == [
        "Dr. Smith comes at 3.5 p.m.",
        "tomorrow, e.g. after lunch.",
        "Then rest.",
    ]


def test_quotes_stay_with_their_sentence() -> None:
    assert _split('She said "hello." Then she left.') == ['She said "hello."', "Then she left."]


def test_a_long_first_sentence_is_cut_at_a_clause_later_ones_are_not() -> None:
    first = (
        "The weather in the kitchen garden today, as far as the forecast can tell, "
        "will be sunny and warm."
    )
    second = "After that, it will rain for most of the evening and into the night, sadly."
    assert _split(f"{first} {second}") == [
        "The weather in the kitchen garden today,",
        "as far as the forecast can tell, will be sunny and warm.",
        second,
    ]


def test_a_short_first_sentence_is_not_cut() -> None:
    assert _split("Sure, the light is on now. Bye.") == ["Sure, the light is on now.", "Bye."]


STREAMED = (
    "Your appointment with the doctor on Monday morning, which was moved, "
    "is now at ten. Please bring your glasses."
)


def test_streamed_tokens_give_the_first_piece_before_the_text_ends() -> None:
    splitter = TextSplitter()
    tokens = STREAMED.split(" ")
    out: list[tuple[int, str]] = []
    for index, token in enumerate(tokens):
        out += [(index, piece) for piece in splitter.add_chunk(token + " ")]
    out += [(len(tokens), piece) for piece in splitter.finish()]
    pieces = [piece for _, piece in out]
    assert pieces == [
        "Your appointment with the doctor on Monday morning,",
        "which was moved, is now at ten.",
        "Please bring your glasses.",
    ]
    first_at = out[0][0]
    assert first_at < tokens.index("ten.")  # out long before the first sentence ended


def test_the_splitter_can_be_reused_after_finish() -> None:
    splitter = TextSplitter()
    assert splitter.add_chunk("One. Two") == ["One."]
    assert splitter.finish() == ["Two"]
    assert splitter.add_chunk("Three. ") == ["Three."]
    assert splitter.finish() == []


def test_newlines_end_pieces_and_blank_text_gives_none() -> None:
    assert _split("Shopping list\n- milk\n\n- bread") == ["Shopping list", "- milk", "- bread"]
    assert _split("") == []
    assert _split("   \n\t  ") == []


def test_control_characters_become_spaces() -> None:
    assert clean_text("bell\x07and\x00nul\x1b[0m\u2028x") == "bell and nul [0m x"
    assert _split("Hello\x00 world.\x7f Bye") == ["Hello world.", "Bye"]


def test_ten_thousand_characters_without_punctuation_are_cut_into_bounded_pieces() -> None:
    settings = SplitterSettings(max_chars=300)
    text = " ".join(["word"] * 2000)  # 9,999 characters
    pieces = list(split_text([text], settings))
    assert all(len(p) <= 300 for p in pieces)
    assert len(pieces) >= 10_000 // 300
    assert " ".join(pieces) == text


def test_an_unbroken_run_of_characters_is_cut_hard() -> None:
    pieces = _split("x" * 1000)
    assert [len(p) for p in pieces] == [300, 300, 300, 100]


@pytest.mark.parametrize("size", [1, 3, 17])
def test_any_chunking_gives_the_same_pieces(size: int) -> None:
    text = (
        "Good morning. The time is seven o'clock, and the sun is up over the hills "
        "behind the house, so it is a fine day. Breakfast is at eight."
    )
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    assert list(split_text(chunks)) == _split(text)


def test_async_wrapper() -> None:
    async def tokens() -> AsyncIterator[str]:
        for word in ["It", "is", "late.", "Go", "to", "bed."]:
            yield word + " "

    async def collect() -> list[str]:
        return [piece async for piece in split_text_async(tokens())]

    assert asyncio.run(collect()) == ["It is late.", "Go to bed."]
