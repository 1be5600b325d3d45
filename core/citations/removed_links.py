"""What link screening took out of a section, one record each, and the words the report uses for it.

A removed unretrieved URL is named (the analyst should see what the writer tried to cite);
a refused link or raw HTML attribute is named by its kind — a javascript address, an
``onerror`` attribute — never quoted: its payload has no business in the note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sourcedesk.core.citations.rewrite import Edit

_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]{0,31}:")


@dataclass(frozen=True)
class RemovedLink:
    """One URL taken out of the text (the analyst sees each one in the report's warnings)."""

    url: str
    text: str = ""  # the link text kept as prose (links, images) or the reference label
    kind: str = "bare"  # link | image | autolink | bare | html | reference
    definition: str | None = None  # the protected footnote whose definition held it
    position: int = 0  # source offset, for document order

    def message(self) -> str:
        where = f" from the protected definition [^{self.definition}]" if self.definition else ""
        # A refused link or attribute is named by its kind, never quoted: its payload stays out of the note.
        if self.kind in ("handler", "scheme"):
            count = int(self.text) if self.text.isdigit() else 1
            what = f"a raw HTML {self.url} attribute" if count == 1 else f"{count:,} raw HTML attributes ({self.url})"
            why = (
                "raw HTML never runs script"
                if self.kind == "handler"
                else "only http(s) links to retrieved sources are kept"
            )
            return f"removed {what}{where}: {why}"
        if self.kind == "nonweb":
            kept = f'; kept its text "{self.text}"' if self.text else ""
            return (
                f"removed a link to {_address_kind(self.url)}{where}: only http(s) links to retrieved sources "
                f"are kept{kept}"
            )
        if self.kind in ("link", "image") and self.text:
            return f'removed the {self.kind} to {self.url}{where} (never retrieved); kept its text "{self.text}"'
        if self.kind == "reference":
            return (
                f"removed the link reference definition [{self.text}]: {self.url}{where} (never retrieved); "
                "links through it became their text"
            )
        return f"removed {self.url}{where} (never retrieved)"


def _address_kind(url: str) -> str:
    """``a javascript address``, ``a mailto address``, ``a relative path`` — what a refused link pointed at."""
    scheme = _SCHEME.match(url.strip())
    return f"a {scheme.group()[:-1].lower()} address" if scheme else "a relative path"


@dataclass
class LinkScreen:
    edits: list[Edit] = field(default_factory=list)
    lines: set[int] = field(default_factory=set)  # whole source lines to delete
    removed: list[RemovedLink] = field(default_factory=list)
