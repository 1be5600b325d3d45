"""The Note tab: the section's note as written, literal, with its citation markers highlighted."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static, TabPane

from sourcedesk.tui.widgets.cells import Palette, highlight_markers
from sourcedesk.tui.widgets.section_tab import NO_ROW

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.tui.loading import SectionData


def note_text(data: SectionData, palette: Palette) -> Text:
    view = data.view
    if view.note_path is None:
        return Text("No note yet — r writes it from the frozen sources.", style="dim")
    if view.note_error:
        return Text(view.note_error, style="bold")
    text = Text(f"{view.note_path.name}\n\n", style="dim")
    text.append_text(highlight_markers(view.body.strip("\n"), palette))
    return text


class NoteTab(TabPane):
    TITLE: ClassVar[str] = "Note"
    TAB_ID: ClassVar[str] = "tab-note"
    FOCUS: ClassVar[str] = "#note-scroll"

    def __init__(self) -> None:
        super().__init__(self.TITLE, id=self.TAB_ID)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="note-scroll"):
            yield Static(id="note", markup=False)

    def show(self, data: SectionData, palette: Palette) -> None:
        self.query_one("#note", Static).update(note_text(data, palette))

    def detail(self, palette: Palette) -> Text | None:
        return NO_ROW
