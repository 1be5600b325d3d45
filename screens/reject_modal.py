"""Confirm a domain rejection: which domain, which scope, and what it takes out right now."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, RadioButton, RadioSet, Static

from core.errors import UserError
from core.hosts import excluded_by
from core.models import Source
from core.reject_domains import canonical_domain
from tui.widgets.cells import plain
from tui.widgets.choice_button import ChoiceButton

Preview = Callable[[str], dict[str, list[Source]]]
MAX_LISTED = 8
PREVIEW_WIDTH = 76


class RejectScreen(ModalScreen[tuple[str, str] | None]):
    """Returns ``(domain, scope)`` with scope ``memo`` or ``global``, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("m", "scope('memo')", "This memo"),
        Binding("g", "scope('global')", "All memos"),
    ]
    # A short terminal (under 40 rows) gets a shorter preview, so the buttons stay on screen.
    VERTICAL_BREAKPOINTS = [(0, "-short"), (40, "-tall")]  # noqa: RUF012 - typed by Textual's Screen

    def __init__(
        self, domain: str, preview: Preview, titles: dict[str, str], subject_hosts: Sequence[str] = ()
    ) -> None:
        super().__init__()
        self.domain = domain
        self.preview = preview
        self.titles = titles
        self.subject_hosts = list(subject_hosts)  # the subject's own (pinned) hosts

    def compose(self) -> ComposeResult:
        with Vertical(id="reject-dialog"):
            yield Static(Text("Reject a domain", style="bold"), id="reject-title")
            yield Static(
                Text(
                    "Its sources leave the frozen sets now, and later retrievals exclude it. "
                    "Edit the domain to reject a wider or narrower one.",
                    style="dim",
                ),
                id="reject-help",
            )
            yield Input(value=self.domain, id="reject-domain", placeholder="domain, e.g. example.com")
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
        self.query_one("#reject-ok", Button).focus()

    @property
    def scope(self) -> str:
        return "global" if self.query_one("#scope-global", RadioButton).value else "memo"

    def _show_preview(self) -> None:
        out = Text()
        raw = self.query_one("#reject-domain", Input).value
        try:
            domain = canonical_domain(raw)
        except UserError as exc:
            out.append(exc.message, style="bold red")
            self.query_one("#reject-preview", Static).update(out)
            return
        own = [h for h in self.subject_hosts if excluded_by(h, [domain])]
        if own:
            out.append(
                f"⚠ {', '.join(own)} is the subject's own domain: rejecting it takes the subject's own "
                "pages out of every section, pinned ones included.\n\n",
                style="bold red",
            )
        hits = self.preview(domain)
        if not hits:
            out.append(f"No kept source is on {domain}. ", style="bold")
            out.append("It joins the exclusion list for later retrievals.")
        else:
            count = sum(len(v) for v in hits.values())
            out.append(f"Takes {count} kept source(s) out of the frozen sets:\n", style="bold")
            lines = [(sid, source) for sid, sources in hits.items() for source in sources]
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
        if self.scope == "global":
            out.append("\nGlobal: every memo's retrievals will exclude it.", style="italic")
        self.query_one("#reject-preview", Static).update(out)

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
        raw = self.query_one("#reject-domain", Input).value
        try:
            domain = canonical_domain(raw)
        except UserError:
            self._show_preview()  # the reason is already on screen
            return
        self.dismiss((domain, self.scope))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Typing in the domain field must not flip the scope.
        return not (action == "scope" and isinstance(self.focused, Input))
