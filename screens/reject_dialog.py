"""What the two reject dialogs (a domain, a name) share: the field, the scope choice, the
live preview of what leaves the frozen sets, and confirming or cancelling.

A subclass says what its field holds (``_checked``: the value to reject, or None with the
reason already on screen) and what rejecting it would take out (``_preview``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, RadioButton, RadioSet, Static

from sourcedesk.core.domain.models import Source
from sourcedesk.tui.widgets.cells import plain
from sourcedesk.tui.widgets.choice_button import ChoiceButton

Preview = Callable[[str], dict[str, list[Source]]]
MAX_LISTED = 8
PREVIEW_WIDTH = 76


class RejectDialog(ModalScreen[tuple[str, str] | None]):
    """Returns ``(value, scope)`` with scope ``memo`` or ``global``, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("m", "scope('memo')", "This memo"),
        Binding("g", "scope('global')", "All memos"),
    ]
    # A short terminal (under 40 rows) gets a shorter preview, so the buttons stay on screen.
    # -tiny (24 rows): the dialog drops its help line and spare margins so its buttons stay on screen.
    VERTICAL_BREAKPOINTS = [(0, "-tiny"), (28, "-short"), (40, "-tall")]  # noqa: RUF012 - typed by Textual's Screen

    HEADING: ClassVar[str] = ""
    HELP: ClassVar[str] = ""
    FIELD_ID: ClassVar[str] = ""
    PLACEHOLDER: ClassVar[str] = ""
    FOCUS_FIELD: ClassVar[bool] = False  # else the Reject button, where m / g pick the scope at once

    def __init__(self, value: str, preview: Preview, titles: dict[str, str], subject_hosts: Sequence[str] = ()):
        super().__init__()
        self.value = value
        self.preview = preview
        self.titles = titles
        self.subject_hosts = list(subject_hosts)  # the subject's own (pinned) hosts

    def compose(self) -> ComposeResult:
        with Vertical(id="reject-dialog"):
            yield Static(Text(self.HEADING, style="bold"), id="reject-title")
            yield Static(Text(self.HELP, style="dim"), id="reject-help")
            yield Input(value=self.value, id=self.FIELD_ID, placeholder=self.PLACEHOLDER)
            with RadioSet(id="reject-scope"):
                yield ChoiceButton("This memo only (m)", value=True, id="scope-memo")
                yield ChoiceButton("All memos — global (g)", id="scope-global")
            with VerticalScroll(id="reject-preview-box"):
                yield Static(id="reject-preview", markup=False)
            with Horizontal(id="reject-buttons"):
                yield Button("Reject", variant="error", id="reject-ok")
                yield Button("Cancel", id="reject-cancel")

    def on_mount(self) -> None:
        self._show_preview()
        self.query_one(f"#{self.FIELD_ID}" if self.FOCUS_FIELD else "#reject-ok").focus()

    @property
    def scope(self) -> str:
        return "global" if self.query_one("#scope-global", RadioButton).value else "memo"

    @property
    def typed(self) -> str:
        return self.query_one(f"#{self.FIELD_ID}", Input).value

    def _say(self, text: Text) -> None:
        self.query_one("#reject-preview", Static).update(text)

    def _checked(self) -> str | None:
        raise NotImplementedError

    def _preview(self, value: str) -> Text:
        raise NotImplementedError

    def _listed(self, out: Text, lines: list[tuple[str, Source]]) -> None:
        """The kept sources that would leave the frozen sets, at most ``MAX_LISTED`` of them."""
        out.append(f"Takes {len(lines)} source(s) out of the frozen sets:\n", style="bold")
        for sid, source in lines[:MAX_LISTED]:
            line = Text(f"  {self.titles.get(sid, sid)}  ", style="dim", no_wrap=True, overflow="ellipsis")
            line.append(f"{source.marker or ''}  ", style="bold")
            line.append_text(plain(source.title or source.host))
            line.append(f"  ({source.host})", style="dim")
            line.truncate(PREVIEW_WIDTH, overflow="ellipsis")
            out.append_text(line)
            out.append("\n")
        if len(lines) > MAX_LISTED:
            out.append(f"  … and {len(lines) - MAX_LISTED} more\n", style="dim")

    def _show_preview(self) -> None:
        value = self._checked()
        if value is not None:
            self._say(self._preview(value))

    def on_input_changed(self, event: Input.Changed) -> None:
        self._show_preview()

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        self._show_preview()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._confirm()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "reject-ok":
            self._confirm()
        else:
            self.dismiss(None)

    def action_scope(self, scope: str) -> None:
        self.query_one("#scope-global" if scope == "global" else "#scope-memo", RadioButton).value = True
        self._show_preview()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def _confirm(self) -> None:
        value = self._checked()  # None: the reason is already on screen
        if value is not None:
            self.dismiss((value, self.scope))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Typing in the field must not flip the scope.
        return not (action == "scope" and isinstance(self.focused, Input))


def flattened(hits: dict[str, list[Source]]) -> list[tuple[str, Source]]:
    return [(sid, source) for sid, sources in hits.items() for source in sources]
