"""A radio button whose state reads without colour.

Textual draws a radio button's inside as ● in both states and tells them apart by colour
alone; in a monochrome terminal, a screen reader's text or a pasted capture, the two
choices of a dialog then look the same. This one draws ● when chosen and ○ when not, and
keeps the unchosen ring visible against the panel.
"""

from __future__ import annotations

from typing import ClassVar

from textual.widgets import RadioButton

CHOSEN = "●"
NOT_CHOSEN = "○"


class ChoiceButton(RadioButton):
    DEFAULT_CSS: ClassVar[str] = """
    ChoiceButton > .toggle--button {
        color: $text-muted;
    }
    ChoiceButton.-on > .toggle--button {
        color: $text-success;
    }
    """

    def __init__(self, label: str, value: bool = False, *, id: str | None = None) -> None:
        super().__init__(label, value, id=id)
        self.BUTTON_INNER = CHOSEN if value else NOT_CHOSEN

    def watch_value(self) -> None:
        self.BUTTON_INNER = CHOSEN if self.value else NOT_CHOSEN
        super().watch_value()  # the -on class and the Changed message the RadioSet relies on
