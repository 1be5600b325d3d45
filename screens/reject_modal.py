"""Confirm a domain rejection: which domain, which scope, and what it takes out right now."""

from __future__ import annotations

from rich.text import Text

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.net.hosts import excluded_by
from sourcedesk.core.sources.reject_domains import canonical_domain
from sourcedesk.screens.reject_dialog import RejectDialog, flattened


class RejectScreen(RejectDialog):
    """Returns ``(domain, scope)`` with scope ``memo`` or ``global``, or None when cancelled."""

    HEADING = "Reject a domain"
    HELP = (
        "Its sources leave the frozen sets now, and later retrievals exclude it. "
        "Edit the domain to reject a wider or narrower one."
    )
    FIELD_ID = "reject-domain"
    PLACEHOLDER = "domain, e.g. example.com"

    def _checked(self) -> str | None:
        try:
            return canonical_domain(self.typed)
        except UserError as exc:
            self._say(Text(exc.message, style="bold red"))
            return None

    def _preview(self, value: str) -> Text:
        out = Text()
        own = [h for h in self.subject_hosts if excluded_by(h, [value])]
        if own:
            out.append(
                f"⚠ {', '.join(own)} is the subject's own domain: rejecting it takes the subject's own "
                "pages out of every section, pinned ones included.\n\n",
                style="bold red",
            )
        lines = flattened(self.preview(value))
        if not lines:
            out.append(f"No kept source is on {value}. ", style="bold")
            out.append("It joins the exclusion list for later retrievals.")
        else:
            self._listed(out, lines)
        if self.scope == "global":
            out.append("\nGlobal: every memo's retrievals will exclude it.", style="italic")
        return out
