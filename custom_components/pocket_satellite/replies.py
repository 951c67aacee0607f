"""What the component itself says, in the satellite's language.

HA's intent handlers run without the conversation agent's response templates, so an
intent that succeeds without speech, one that fails, and a timer that ends are worded
here. Languages not listed fall back to English.
"""

from __future__ import annotations

from typing import Final

#: language (its primary subtag) -> phrase key -> phrase; ``{names}``, ``{name}`` filled in.
PHRASES: Final[dict[str, dict[str, str]]] = {
    "en": {
        "done": "Done.",
        "done_names": "Done: {names}.",
        "sorry": "Sorry, I couldn't do that.",
        "timer_done": "Your timer is done.",
        "timer_done_name": "Your {name} timer is done.",
    },
    "de": {
        "done": "Erledigt.",
        "done_names": "Erledigt: {names}.",
        "sorry": "Das konnte ich leider nicht tun.",
        "timer_done": "Dein Timer ist abgelaufen.",
        "timer_done_name": "Dein Timer {name} ist abgelaufen.",
    },
    "fr": {
        "done": "C'est fait.",
        "done_names": "C'est fait : {names}.",
        "sorry": "Désolé, je n'ai pas pu le faire.",
        "timer_done": "Votre minuteur est terminé.",
        "timer_done_name": "Votre minuteur {name} est terminé.",
    },
    "es": {
        "done": "Hecho.",
        "done_names": "Hecho: {names}.",
        "sorry": "Lo siento, no he podido hacerlo.",
        "timer_done": "Tu temporizador ha terminado.",
        "timer_done_name": "Tu temporizador {name} ha terminado.",
    },
    "nl": {
        "done": "Klaar.",
        "done_names": "Klaar: {names}.",
        "sorry": "Sorry, dat lukte niet.",
        "timer_done": "Je timer is afgelopen.",
        "timer_done_name": "Je timer {name} is afgelopen.",
    },
}


def phrase(language: str, key: str, **values: str) -> str:
    """``key`` in ``language`` (``en-GB`` -> ``en``; unknown languages: English)."""
    table = PHRASES.get(language.replace("_", "-").split("-")[0].lower(), PHRASES["en"])
    return table[key].format(**values)
