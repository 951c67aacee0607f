"""Enrolment: the satellite learns its resident's voice (speaker adaptation).

``pocket-satellite enrol --speaker NAME --input DIR`` adapts the acoustic model to the
speaker in the recordings (``adapt.py``) and stores the adaptation under
``stt.speakers_dir/NAME`` (``satellite.stt.speakers``); ``stt.speaker: NAME`` loads it.
"""

from .adapt import Enrolment, enrol
from .inputs import EnrolError, Recording, prompts, recordings

__all__ = ["EnrolError", "Enrolment", "Recording", "enrol", "prompts", "recordings"]
