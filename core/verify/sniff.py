"""Pages that answer 200 but are not the document: soft 404s and paywall stubs.

A site that serves "Page not found" with status 200 makes a fabricated URL look
alive; a paywall stub proves the address exists but not what the page says. Only
the start of the body is read (the caller caps it), so the rules look at the
``<title>`` and the visible text, and demand a *short* page before trusting a
phrase: a long article that merely mentions "404" or carries a "subscribe to
continue" banner is not a stub.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

# Every pattern here runs in time linear in the page: a hostile page full of unclosed
# ``<script>``, ``<!--`` or ``<title>`` openers must not keep the CPU busy for seconds (a
# deadline cannot interrupt a regular expression). Openers and tags stop at the next ``<``;
# closers are found with ``str.find`` from where the opener ended.
_TITLE_OPEN = re.compile(r"<title\b[^<>]*>", re.I)
_INVISIBLE_OPEN = re.compile(r"<(script|style|template|svg|head)\b[^<>]*>", re.I)
_TAG = re.compile(r"<[^<>]*>")
_MAX_TITLE = 1000

# Anywhere in a title: "not found"-ish words. Only trusted on a short page.
_NOT_FOUND_TITLE = re.compile(
    r"\b404\b|\bnot found\b|\bpage (?:does not|doesn't|cannot|can't|could not|couldn't) (?:exist|be found)\b"
    r"|\bno longer (?:available|exists)\b|\bpage (?:is )?missing\b",
    re.I,
)
# A title that can only be an error page ("404 Not Found", "Page not found | Site", "Error 404").
_ERROR_PAGE_TITLE = re.compile(
    r"^\W*(?:error\W*)?404\b|\b404\W+(?:error|not found|page not found)\b|\berror\W+404\b"
    r"|\bpage not found\b|^\W*not found\b|\bnot found\W*$|\bpage (?:does not|doesn't) exist\b",
    re.I,
)
_NOT_FOUND_BODY = re.compile(
    r"\b(?:page|article|post|content|file|document)s? (?:was |were )?not found\b"
    r"|\b404\b[^.]{0,40}\b(?:error|not found|page)\b|\b(?:error|page) 404\b"
    r"|\bthe page you (?:are|were|'re) looking for\b|\bpage (?:does not|doesn't|no longer) exists?\b"
    r"|\bcould not be found\b|\bcan(?:'|no)t be found\b",
    re.I,
)
_PAYWALL = re.compile(
    r"\bsubscribe (?:now )?to (?:continue|keep) reading\b|\bsubscribe to (?:continue|read|unlock)\b"
    r"|\bto continue reading\b|\b(?:sign|log) ?in to (?:read|continue|keep reading)\b"
    r"|\bcreate (?:a |an )?(?:free )?account to (?:continue|read)\b|\bregister to (?:continue|read)\b"
    r"|\bthis (?:article|content|story) is (?:only )?(?:available |reserved )?(?:for|to) (?:subscribers|members)\b"
    r"|\bsubscribers only\b|\balready a subscriber\b|\bbecome a (?:subscriber|member) to\b"
    r"|\byou(?:'ve| have) reached your (?:free )?(?:article|story) limit\b",
    re.I,
)

#: Visible text below this many characters is a stub page, not an article.
STUB_TEXT = 1500
PAYWALL_STUB_TEXT = 6000


@dataclass(frozen=True)
class Sniff:
    status: str  # "soft_404" | "paywall"
    reason: str


def page_title(body: str) -> str:
    m = _TITLE_OPEN.search(body)
    if not m:
        return ""
    end = body.lower().find("</title", m.end())
    raw = body[m.end() : end if end >= 0 else m.end() + _MAX_TITLE][:_MAX_TITLE]
    return " ".join(html.unescape(_TAG.sub(" ", raw)).split())


def _without_comments(body: str) -> str:
    parts: list[str] = []
    pos = 0
    while (start := body.find("<!--", pos)) >= 0:
        parts.append(body[pos:start])
        end = body.find("-->", start + 4)
        if end < 0:
            return " ".join(parts)  # an unclosed comment hides the rest of the page
        pos = end + 3
    parts.append(body[pos:])
    return " ".join(parts)


def _without_invisible(body: str) -> str:
    lower = body.lower()
    parts: list[str] = []
    pos = 0
    for m in _INVISIBLE_OPEN.finditer(body):
        if m.start() < pos:
            continue  # inside an element already skipped
        parts.append(body[pos : m.start()])
        end = lower.find(f"</{m.group(1).lower()}", m.end())
        if end < 0:
            return " ".join(parts)  # never closed: the rest is script, style…
        close = body.find(">", end)
        pos = close + 1 if close >= 0 else len(body)
    parts.append(body[pos:])
    return " ".join(parts)


def visible_text(body: str, content_type: str = "text/html") -> str:
    if "html" not in content_type.lower() and "<html" not in body[:1000].lower():
        return " ".join(body.split())
    text = _without_invisible(_without_comments(body))
    return " ".join(html.unescape(_TAG.sub(" ", text)).split())


def _quote(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def sniff_page(body: str, content_type: str = "text/html") -> Sniff | None:
    """``soft_404`` or ``paywall`` when the body is an error page or a stub, else None."""
    ctype = (content_type or "").lower()
    if ctype and not ctype.startswith("text/") and "html" not in ctype and "xml" not in ctype:
        return None  # a PDF, an image, JSON…: nothing to sniff
    title = page_title(body) if "html" in ctype or not ctype or "<title" in body[:4000].lower() else ""
    text = visible_text(body, ctype or "text/html")
    if title and (_ERROR_PAGE_TITLE.search(title) or (_NOT_FOUND_TITLE.search(title) and len(text) < STUB_TEXT)):
        return Sniff("soft_404", f"answered 200 but the page title says {_quote(title)!r}")
    if len(text) < STUB_TEXT:
        m = _NOT_FOUND_BODY.search(text)
        if m:
            return Sniff("soft_404", f"answered 200 but the page says {_quote(m.group(0))!r}")
    if len(text) < PAYWALL_STUB_TEXT:
        m = _PAYWALL.search(text)
        if m:
            return Sniff(
                "paywall", f"a paywall stub ({_quote(m.group(0))!r}): the page exists, its text is not readable"
            )
    return None


def redirected_home(original: str, final: str) -> bool:
    """A deep link that lands on the site's front page: the page is gone (a soft 404)."""
    try:
        before, after = urlsplit(original), urlsplit(final)
    except ValueError:
        return False
    deep = before.path.strip("/") != "" or bool(before.query)
    return deep and after.path.strip("/") == "" and not after.query
