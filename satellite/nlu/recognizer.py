"""Text -> intent with hassil and the active templates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .intents import DEVICE_ACTION_INTENTS, IntentSet, no_action_words
from .targets import names_no_device, targets_of

#: Source of an intent result.
SOURCE_TEMPLATE = "template"
SOURCE_LLM = "llm"


@dataclass(frozen=True, slots=True)
class IntentResult:
    """What was understood: an intent with its slots, or nothing (``intent`` None)."""

    intent: str | None
    slots: dict[str, Any] = field(default_factory=dict)
    confidence: float = 0.0
    source: str = SOURCE_TEMPLATE
    text: str = ""
    #: Its words are only its slots' words (the names of what it acts on, a colour, a
    #: level) and words that name no action (``no_action_words``): no verb was heard.
    bare: bool = False
    #: The devices it acts on, where its slots pick them among the known ones
    #: (targets.py); None: not known here.
    targets: frozenset[str] | None = None
    #: A call for help read from words that leave no doubt (the templates' own, or the
    #: LLM's from words with one of its prompt's ``unmistakable`` in them).
    unmistakable: bool = True


class TemplateRecognizer:
    """hassil's best match over the active intents; slot values as plain JSON values."""

    def __init__(self, intent_set: IntentSet) -> None:
        self.intent_set = intent_set
        self._no_action = no_action_words(intent_set.language)
        # hassil parses an intent's sentence templates when they are first matched:
        # about 0.1 s on one x86 core for the default intents, which the first command
        # would pay in the frame that decides it. Parse them now.
        for intent in intent_set.intents.intents.values():
            for data in intent.data:
                _ = data.sentences

    def recognize(self, text: str) -> IntentResult:
        """Match ``text``; an unmatched text gives ``intent=None``."""
        from hassil import recognize_best  # noqa: PLC0415

        if not text.strip():
            return IntentResult(None, text=text)
        result = recognize_best(
            text,
            self.intent_set.intents,
            slot_lists=self.intent_set.slot_lists,
            intent_context={"area": self.intent_set.area} if self.intent_set.area else None,
            best_slot_name="name",
        )
        if result is None:
            return IntentResult(None, text=text)
        slots = {name: _plain(entity.value) for name, entity in result.entities.items()}
        if result.intent.name in DEVICE_ACTION_INTENTS and names_no_device(
            slots, self.intent_set.entities
        ):
            return IntentResult(None, text=text)  # a device where it is not: misheard
        said = [str(entity.text) for entity in result.entities_list]
        bare = is_bare(text, said, self._no_action)
        targets = targets_of(slots, self.intent_set.entities)
        return IntentResult(result.intent.name, slots, 1.0, SOURCE_TEMPLATE, text, bare, targets)


def is_bare(text: str, slot_texts: list[str], no_action: frozenset[str]) -> bool:
    """Whether ``text`` holds nothing but the words of its slots (``slot_texts``, each
    taken once) and words in ``no_action``: "the bedroom lamp", not "bedroom lamp on"."""
    left = text.lower().split()
    for slot_text in slot_texts:
        for word in slot_text.lower().split():
            if word in left:
                left.remove(word)
    return all(word in no_action for word in left)


def _plain(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)
