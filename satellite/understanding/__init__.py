"""Understanding what is said, and answering it.

``core``: ``Understanding`` drives the hearing session (stt/session.py), the belief in a
result (``belief``), the templates and the LLM fallback from the recorder's events;
``build``: all of it from the configuration.
``dialogue``: what the satellite says and does about an understood utterance (the app
owns it). ``slot_grammar``: Home Assistant's names and areas -> a new grammar.
"""

from .answers import REPORTS_KEPT
from .build import build_understanding
from .core import EARLY_ENDPOINT_REASON, Understanding
from .report import UtteranceReport

__all__ = [
    "EARLY_ENDPOINT_REASON",
    "REPORTS_KEPT",
    "Understanding",
    "UtteranceReport",
    "build_understanding",
]
