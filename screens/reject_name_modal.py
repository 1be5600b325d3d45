"""Confirm a name rejection: which phrase, which scope, and what it takes out right now.

Offered with the namesake phrase the ``about`` verdict found ("Kestra Medical"); the
analyst may edit it. The preview counts what leaves the frozen sets and this section's
web results, warns when the subject's own pages would go too, and refuses the
subject's own name (it would remove every page about the subject).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.text import Text

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.net.hosts import host_matches_any
from sourcedesk.core.sources.name_rejects import canonical_name
from sourcedesk.core.text.phrases import normalise_phrase
from sourcedesk.screens.reject_dialog import Preview, RejectDialog, flattened


class RejectNameScreen(RejectDialog):
    """Returns ``(name, scope)`` with scope ``memo`` or ``global``, or None when cancelled."""

    HEADING = "Reject a name"
    HELP = (
        "Every source whose title or text contains this phrase — whole words, any case or "
        "punctuation — leaves the frozen sets now; later retrievals and the writer's web "
        "results drop it too. Edit the phrase to widen or narrow it; Tab then m or g chooses the scope."
    )
    FIELD_ID = "reject-name"
    PLACEHOLDER = 'a phrase, e.g. "Kestra Medical"'
    # The phrase field has the focus even when a phrase is offered: the analyst edits it by
    # typing (the dialog says so), and Enter in the field rejects it as it stands.
    FOCUS_FIELD = True

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
        super().__init__(phrase, preview, titles, subject_hosts)
        self.web_matches = web_matches
        self.subject_names = {normalise_phrase(n) for n in subject_names}

    def _checked(self) -> str | None:
        """The phrase as it will be stored, or None (the reason is put on screen)."""
        raw = self.typed
        if not raw.strip():  # nothing typed yet: not an error, a prompt
            self._say(Text("Type the name a namesake goes by; its matching sources are listed here.", style="dim"))
            return None
        try:
            shown, key = canonical_name(raw)
        except UserError as exc:
            self._say(Text(exc.message, style="bold red"))
            return None
        if key in self.subject_names:
            self._say(
                Text(
                    f"{shown!r} is the subject's own name: rejecting it would remove every page about the subject. "
                    "Add the word that tells the namesake apart (e.g. 'Medical', 'air traffic').",
                    style="bold red",
                )
            )
            return None
        return shown

    def _preview(self, value: str) -> Text:
        out = Text()
        lines = flattened(self.preview(value))
        own = [s for _sid, s in lines if host_matches_any(s.url, self.subject_hosts)]
        if own:
            out.append(
                f"⚠ {len(own)} of them are on the subject's own site ({own[0].host}): they would go too.\n\n",
                style="bold red",
            )
        if not lines:
            out.append(f"No kept source names {value!r}. ", style="bold")
            out.append("It joins the rejection list for later retrievals.")
        else:
            self._listed(out, lines)
        web = self.web_matches(value)
        if web:
            out.append(
                f"\n{web} of this section's last web results name it: a citation to one is dropped at the next run.",
            )
        if self.scope == "global":
            out.append("\nGlobal: every memo's retrievals will drop it.", style="italic")
        return out
