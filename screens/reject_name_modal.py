"""Confirm a name rejection: which phrase, which scope, and what it takes out right now.

Offered with the namesake phrase the ``about`` verdict found ("Kestra Medical"); the
analyst may edit it. The preview counts what leaves the frozen sets and this section's
web results, warns when the subject's own pages would go too, and refuses the
subject's own name (it would remove every page about the subject).
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

from core.errors import UserError
from core.hosts import host_matches_any
from core.models import Source
from core.name_rejects import canonical_name
from core.phrases import normalise_phrase
from tui.widgets.cells import plain
from tui.widgets.choice_button import ChoiceButton

Preview = Callable[[str], dict[str, list[Source]]]
MAX_LISTED = 8
PREVIEW_WIDTH = 76


class RejectNameScreen(ModalScreen[tuple[str, str] | None]):
    """Returns ``(name, scope)`` with scope ``memo`` or ``global``, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("m", "scope('memo')", "This memo"),
        Binding("g", "scope('global')", "All memos"),
    ]
    # A short terminal (under 40 rows) gets a shorter preview, so the buttons stay on screen.
    VERTICAL_BREAKPOINTS = [(0, "-short"), (40, "-tall")]  # noqa: RUF012 - typed by Textual's Screen

    def __init__(
        self,
        phrase: str,
        preview: Preview,
        titles: dict[str, str],
        *,
        web_matches: Callable[[str], int] = lambda _name: 0,
        subject_names: Sequence[str] = (),
        subject_hosts: Sequence[str] = (),
    ) -> None:
        super().__init__()
        self.phrase = phrase
        self.preview = preview
        self.titles = titles
        self.web_matches = web_matches
        self.subject_names = {normalise_phrase(n) for n in subject_names}
        self.subject_hosts = list(subject_hosts)

    def compose(self) -> ComposeResult:
        with Vertical(id="reject-dialog"):
            yield Static(Text("Reject a name", style="bold"), id="reject-title")
            yield Static(
                Text(
                    "Every source whose title or text contains this phrase — whole words, any case or "
                    "punctuation — leaves the frozen sets now; later retrievals and the writer's web "
                    "results drop it too. Edit the phrase to widen or narrow it.",
                    style="dim",
                ),
                id="reject-help",
            )
            yield Input(value=self.phrase, id="reject-name", placeholder='a phrase, e.g. "Kestra Medical"')
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
        # The phrase field has the focus even when a phrase is offered: the analyst edits it by
        # typing (the dialog says so), and Enter in the field rejects it as it stands.
        self.query_one("#reject-name", Input).focus()

    @property
    def scope(self) -> str:
        return "global" if self.query_one("#scope-global", RadioButton).value else "memo"

    def _checked(self) -> tuple[str, str] | None:
        """``(shown, key)`` of the phrase in the field, or None (the reason is put on screen)."""
        raw = self.query_one("#reject-name", Input).value
        out = Text()
        if not raw.strip():  # nothing typed yet: not an error, a prompt
            out.append("Type the name a namesake goes by; its matching sources are listed here.", style="dim")
            self.query_one("#reject-preview", Static).update(out)
            return None
        try:
            shown, key = canonical_name(raw)
        except UserError as exc:
            out.append(exc.message, style="bold red")
            self.query_one("#reject-preview", Static).update(out)
            return None
        if key in self.subject_names:
            out.append(
                f"{shown!r} is the subject's own name: rejecting it would remove every page about the subject. "
                "Add the word that tells the namesake apart (e.g. 'Medical', 'air traffic').",
                style="bold red",
            )
            self.query_one("#reject-preview", Static).update(out)
            return None
        return shown, key

    def _show_preview(self) -> None:
        checked = self._checked()
        if checked is None:
            return
        shown, _key = checked
        out = Text()
        hits = self.preview(shown)
        lines = [(sid, source) for sid, sources in hits.items() for source in sources]
        own = [s for _sid, s in lines if host_matches_any(s.url, self.subject_hosts)]
        if own:
            out.append(
                f"⚠ {len(own)} of them are on the subject's own site ({own[0].host}): they would go too.\n\n",
                style="bold red",
            )
        if not lines:
            out.append(f"No kept source names {shown!r}. ", style="bold")
            out.append("It joins the rejection list for later retrievals.")
        else:
            out.append(f"Takes {len(lines)} kept source(s) out of the frozen sets:\n", style="bold")
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
        web = self.web_matches(shown)
        if web:
            out.append(
                f"\n{web} of this section's last web results name it: a citation to one is dropped at the next run.",
            )
        if self.scope == "global":
            out.append("\nGlobal: every memo's retrievals will drop it.", style="italic")
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
        checked = self._checked()
        if checked is None:
            return
        self.dismiss((checked[0], self.scope))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Typing in the phrase field must not flip the scope.
        return not (action == "scope" and isinstance(self.focused, Input))
