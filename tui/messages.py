"""What happened, as typed messages: a worker posts one, the screens that care handle it with ``@on``.

One class per thing that happened to a section, its check or the memo — never a method
looked up by name. The app posts them to itself and forwards each to the screens on the
stack (``SourcedeskApp.tell_screens``); a screen that does not handle a message never hears
of it. Progress messages say that a newer one replaces an older one still in the queue
(``can_replace``), so a burst of ticks costs one repaint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.core.pipeline.run import RunOutcome
    from sourcedesk.tui.checks import SectionCheck


class SectionRunStarted(Message):
    """A run of the section was started (it may still wait for a free slot)."""

    def __init__(self, section_id: str) -> None:
        super().__init__()
        self.section_id = section_id


class SectionRunProgress(Message):
    """The run reached a new stage (retrieving, writing, reconciling, grounding…)."""

    def __init__(self, section_id: str, stage: str) -> None:
        super().__init__()
        self.section_id = section_id
        self.stage = stage

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SectionRunProgress) and message.section_id == self.section_id


class SectionRunFinished(Message):
    """The run ended — ok, degraded, failed or cancelled (``outcome`` None: it never got going)."""

    def __init__(self, section_id: str, outcome: RunOutcome | None) -> None:
        super().__init__()
        self.section_id = section_id
        self.outcome = outcome


class CheckStarted(Message):
    def __init__(self, section_id: str) -> None:
        super().__init__()
        self.section_id = section_id


class CheckProgress(Message):
    """URLs checked so far (``total`` None: still reading the note)."""

    def __init__(self, section_id: str, done: int, total: int | None) -> None:
        super().__init__()
        self.section_id = section_id
        self.done = done
        self.total = total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, CheckProgress) and message.section_id == self.section_id


class CheckFinished(Message):
    """A check ended (``check`` None: stopped or failed; the previous result stands)."""

    def __init__(self, section_id: str, check: SectionCheck | None) -> None:
        super().__init__()
        self.section_id = section_id
        self.check = check


@dataclass(frozen=True)
class Changed:
    """Which sections a change touched (``sections`` None: every one of them)."""

    sections: frozenset[str] | None = None

    def touches(self, section_id: str) -> bool:
        return self.sections is None or section_id in self.sections


class StoreChanged(Message):
    """A curation, a rejection, a pin edit or a namesake change was written."""

    def __init__(self, sections: frozenset[str] | None = None) -> None:
        super().__init__()
        self.changed = Changed(sections)


class MemoReloaded(Message):
    """memo.yaml was read again (an outside edit, or the pin toggle) and loads."""


class ThemeChanged(Message):
    """The light/dark theme was switched: cells coloured from the palette are drawn again."""


__all__ = [
    "Changed",
    "CheckFinished",
    "CheckProgress",
    "CheckStarted",
    "MemoReloaded",
    "SectionRunFinished",
    "SectionRunProgress",
    "SectionRunStarted",
    "StoreChanged",
    "ThemeChanged",
]
