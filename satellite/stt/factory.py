"""Build the configured speech recognizer for the active intents."""

from __future__ import annotations

import time
from pathlib import Path

from ..errors import SatelliteError
from ..nlu.intents import IntentSet, load_intent_set
from ..nlu.settings import NluSettings
from .answer_grammar import answer_grammar
from .base import SpeechRecognizer
from .built import inputs_digest, load_built, prune, save_built
from .fsg import Grammar, cached_grammar
from .grammar import build_grammar, tell_left_out
from .lexicon import (
    default_dictionary,
    dictionary_words,
    grammar_dictionary,
    number_words,
    pocketsphinx_model_dir,
)
from .settings import SttSettings
from .speakers import speaker_mllr
from .sphinx_decoders import loud_mllr


def configured_intent_set(nlu: NluSettings, language: str, area: str | None) -> IntentSet:
    """The active intents and slot lists that the ``nlu`` section names, in ``language``
    for a satellite standing in ``area``."""
    return load_intent_set(language, nlu.intents, nlu.entities, nlu.areas, area)


#: Grammars compiled in this process, by what an intent set is loaded from. The same
#: intents and names are not compiled twice (about 0.6 s on one x86 core): names that
#: come back (Home Assistant's, then the configured ones again, then Home Assistant's),
#: and the tests, which build a recognizer per recording.
_COMPILED: dict[tuple[object, ...], Grammar] = {}
_COMPILED_KEPT = 2


def compile_grammar(settings: SttSettings, intent_set: IntentSet) -> tuple[Grammar, Path]:
    """Compile (or reuse, from this process or the disk cache) the grammar for the
    active intents: built once for the same inputs, then read back at every start."""
    language = intent_set.language
    cache_dir = Path(settings.cache_dir).expanduser()
    key = (language, intent_set.names, intent_set.entities, intent_set.areas, intent_set.area)
    grammar = _COMPILED.get(key)
    if grammar is None:
        dictionary = default_dictionary(language)
        inputs = inputs_digest(intent_set, dictionary)
        grammar = load_built(cache_dir, inputs)
        if grammar is not None:
            tell_left_out(intent_set, grammar.oov)
        else:
            words = dictionary_words(dictionary)
            grammar = build_grammar(
                intent_set, words.__contains__, lambda n: number_words(n, language)
            )
            save_built(cache_dir, inputs, grammar, cached_grammar(grammar, cache_dir))
            prune(cache_dir)
        if len(_COMPILED) >= _COMPILED_KEPT:
            del _COMPILED[next(iter(_COMPILED))]
        _COMPILED[key] = grammar
    path = cached_grammar(grammar, cache_dir)
    return grammar, path


def grammar_dictionary_for(language: str, grammar: Grammar, grammar_path: Path) -> Path:
    """The pronunciations of the grammar's words, cached beside it."""
    words = {word for _, _, word in grammar.arcs if word}
    source = default_dictionary(language)
    return grammar_dictionary(words, source, grammar_path.with_suffix(".dict"))


def make_recognizer(
    settings: SttSettings, language: str, intent_set: IntentSet
) -> SpeechRecognizer:
    """The configured engine; only pocketsphinx streams a closed-domain grammar."""
    if settings.engine != "pocketsphinx":
        from .adapters import make_adapter  # noqa: PLC0415

        return make_adapter(settings, language)
    from .sphinx import PocketSphinxRecognizer  # noqa: PLC0415

    started = time.perf_counter()
    # a missing speaker fails before the grammar is built
    mllr = speaker_mllr(settings, pocketsphinx_model_dir(language) / "en-us")
    grammar, path = compile_grammar(settings, intent_set)
    if not grammar.word_arcs:
        raise SatelliteError("The speech grammar is empty. Fix: check nlu.intents")
    recognizer = PocketSphinxRecognizer(
        settings,
        grammar,
        path,
        pocketsphinx_model_dir(language),
        grammar_dictionary_for(language, grammar, path),
        mllr,
        answer_grammar(language, settings.cache_dir),
        loud_mllr() if settings.loud_adaptation else None,
    )
    recognizer.load_seconds = time.perf_counter() - started
    return recognizer
