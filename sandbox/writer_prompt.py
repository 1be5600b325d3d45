"""Reading a section prompt the way the sandbox writer needs it.

The sandbox writer has no language model, so it recovers from the prompt text
the few things a real writer would use: the subject, the section title, the
guiding questions and the retrieved-sources block. The product's prompt
builder and this parser are written by different people, so the parser is
deliberately tolerant. What it recognises:

- a source starts at a heading (or list item, or bare line) that begins with a
  marker: ``### [^E1] Title — https://url``, ``## [E2] Title (https://url)``,
  ``- [^V1] Title | https://url``, ``### E3: Title``. The URL may instead be on
  its own line in the body (``URL: https://…``); a marker line that is neither
  a heading with a body nor carries a URL is instruction text ("- [^E1] style
  markers only"), not a source; so a local-file source (``[^V1]``) may carry a
  ``file://`` URL or none at all;
- a source's body runs to the next heading or marker line (fences respected):
  a fenced block (yaml or not) holds facts, ``Published:``/``Date:``/``URL:``…
  lines hold metadata, everything else is the summary;
- ``Subject: NATS (https://nats.io)`` / ``Company:`` / ``Entity:`` name the
  subject; ``Aliases:`` / ``Also known as:`` add names;
- ``Section: Company overview`` / ``Section title:`` / ``## Section: …`` name the
  section (fallback: the first heading that is not a block heading);
- list items ending in ``?`` are guiding questions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

MARKER_LINE = re.compile(
    r"^\s{0,3}(?:#{1,6}\s*|[-*+•]\s+|\d+[.)]\s+)?(?:source\s+)?"
    r"\[?\^?(?P<marker>[EVW]\d{1,3})\b\]?\s*[:.)\-—–|·]?\s*(?P<rest>.*)$",
    re.IGNORECASE,
)
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<text>.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)\s*(?P<lang>[\w-]*)")
URL = re.compile(r"(?:https?|file)://[^\s<>()\[\]\"'`]+", re.IGNORECASE)
LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(?P<text>.+?)\s*$")
KEY_VALUE = re.compile(r"^\s*\**(?P<key>[A-Za-z][A-Za-z _-]{0,30}?)\**\s*:\s*(?P<value>.+?)\s*$")

META_KEYS = {
    "url",
    "link",
    "date",
    "published",
    "published date",
    "published_date",
    "publisheddate",
    "title",
    "author",
    "host",
    "provider",
    "source",
    "marker",
    "last updated",
    "last_updated",
    "score",
    "domain",
}
SUBJECT_KEYS = ("subject", "subject name", "research subject", "company", "entity", "subject company")
SUBJECT_URL_KEYS = ("subject url", "website", "homepage", "subject website")
ALIAS_KEYS = ("aliases", "also known as", "aka", "alias")
SECTION_KEYS = ("section", "section title", "section to write", "section name")
BLOCK_HEADINGS = re.compile(
    r"^(retrieved|sources?|instructions?|context|subject|questions?|guiding|firm|citations?|"
    r"task|rules|format|output|research|background|notes?|skeleton|target)\b",
    re.IGNORECASE,
)
WRITE_SECTION = re.compile(r"\bwrite (?:the |a |one )?(?:section\s+)?[\"“']([^\"”']{2,80})[\"”']", re.I)
_TRAILING_URL_PUNCT = ".,;:!?'\"»”’>"


@dataclass
class RetrievedSource:
    marker: str  # "E1", "V2", "W1" — as written, upper-case prefix
    url: str
    title: str = ""
    date: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    summary: str = ""

    @property
    def prefix(self) -> str:
        return self.marker[0]

    @property
    def number(self) -> int:
        return int(self.marker[1:])


@dataclass
class ParsedPrompt:
    subject: str = ""
    subject_url: str | None = None
    aliases: list[str] = field(default_factory=list)
    section_title: str = ""
    questions: list[str] = field(default_factory=list)
    sources: list[RetrievedSource] = field(default_factory=list)

    @property
    def subject_name(self) -> str:
        return self.subject or "the company"


def clean_url(raw: str) -> str:
    url = raw.strip()
    while url and url[-1] in _TRAILING_URL_PUNCT:
        url = url[:-1]
    return url


def _first_url(text: str) -> str | None:
    m = URL.search(text)
    return clean_url(m.group(0)) if m else None


def _strip_title(rest: str, url: str | None) -> str:
    title = rest.replace(url, " ") if url else rest
    title = title.replace("\\[", "\x00").replace("\\]", "\x01")  # escaped brackets are part of the title
    title = re.sub(r"[<>()\[\]]", " ", title)
    title = re.sub(r"\s+[—–|·-]\s*$", "", title.strip())
    title = re.sub(r"^\s*[—–|·:-]\s+", "", title)
    title = re.sub(r"\s+", " ", title).strip(" —–|·-")
    return title.replace("\x00", "[").replace("\x01", "]")


def _flatten(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _flatten(v) for k, v in value.items() if v not in (None, "", [], {})}
    if isinstance(value, list):
        return [_flatten(v) for v in value if v not in (None, "", [], {})]
    return value


def _parse_facts(block: list[str]) -> dict[str, Any]:
    text = "\n".join(block)
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError:
        loaded = None
    if isinstance(loaded, dict):
        return _flatten(loaded)
    facts: dict[str, Any] = {}
    for line in block:
        m = KEY_VALUE.match(line.lstrip("-* "))
        if m:
            facts[m.group("key").strip()] = m.group("value").strip().strip("\"'")
    return facts


def _parse_body(source: RetrievedSource, lines: list[str]) -> None:
    summary: list[str] = []
    fence: list[str] | None = None
    for line in lines:
        if FENCE.match(line):
            if fence is None:
                fence = []
            else:
                source.facts.update(_parse_facts(fence))
                fence = None
            continue
        if fence is not None:
            fence.append(line)
            continue
        m = KEY_VALUE.match(line)
        key = m.group("key").strip().lower().replace("-", " ") if m else ""
        if m and key in META_KEYS:
            value = m.group("value").strip()
            if key in ("url", "link") and not source.url:
                source.url = _first_url(value) or ""
            elif key in ("date", "published", "published date", "published_date", "publisheddate"):
                source.date = source.date or value.strip("*_ ")
            elif key == "title" and not source.title:
                source.title = value
            continue
        if not source.url and URL.fullmatch(line.strip().strip("<>")):
            source.url = clean_url(line.strip().strip("<>"))
            continue
        summary.append(line.strip())
    if fence is not None:  # unterminated fence: keep what it had as facts, never as prose
        source.facts.update(_parse_facts(fence))
    text = "\n".join(summary).strip()
    source.summary = re.sub(r"[ \t]*\n(?!\n)[ \t]*", " ", text)  # unwrap lines, keep paragraphs


def _key_values(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in lines:
        m = KEY_VALUE.match(re.sub(r"^\s*#{1,6}\s*", "", line))
        if m:
            found.setdefault(m.group("key").strip().lower().replace("_", " "), m.group("value").strip())
    return found


def _subject(kv: dict[str, str], text: str) -> tuple[str, str | None, list[str]]:
    raw = next((kv[k] for k in SUBJECT_KEYS if k in kv), "")
    url = _first_url(raw) if raw else None
    name = raw
    if name:
        name = URL.sub(" ", name)
        name = re.split(r"\s[(—–|]|\(|,|;|\s-\s", name)[0]
        name = name.strip(" *_\"'`").strip()
    else:
        m = re.search(
            r"\b(?:profile|memo|section|research|report)\s+(?:on|about|of|for)\s+"
            r"([A-Z][\w.&'-]*(?:\s+[A-Z][\w.&'-]*){0,3})",
            text,
        )
        name = m.group(1).rstrip(".") if m else ""
    if not url:
        url = next((_first_url(kv[k]) for k in SUBJECT_URL_KEYS if k in kv and _first_url(kv[k])), None)
    aliases: list[str] = []
    for k in ALIAS_KEYS:
        if k in kv:
            aliases += [a.strip(" []\"'") for a in re.split(r"[,;/]| and ", kv[k]) if a.strip(" []\"'")]
    m = re.search(r"(?:also known as|aka|formerly)\s+([A-Z][\w.&'-]*(?:\s+[A-Z][\w.&'-]*){0,2})", raw)
    if m and m.group(1) not in aliases:
        aliases.append(m.group(1))
    return name, url, aliases


def _section_title(kv: dict[str, str], outside: list[str]) -> str:
    for k in SECTION_KEYS:
        if k in kv:
            return kv[k].strip(" *_\"'“”")
    for line in outside:
        m = WRITE_SECTION.search(line)
        if m:
            return m.group(1).strip()
    for line in outside:
        h = HEADING.match(line)
        if h and not BLOCK_HEADINGS.match(h.group("text")):
            return h.group("text").strip(" *_")
    return ""


def _questions(outside: list[str]) -> list[str]:
    found: list[str] = []
    for line in outside:
        m = LIST_ITEM.match(line)
        candidates = [m.group("text")] if m else []
        if not m and re.match(r"^\s*\**(?:guiding )?questions?\**\s*:", line, re.I):
            candidates = re.findall(r"[^?:]+\?", line.split(":", 1)[1])
        for c in candidates:
            c = c.strip(" *_\"'")
            if c.endswith("?") and c not in found:
                found.append(c)
    return found


def parse_prompt(text: str) -> ParsedPrompt:
    """Everything the writer can recover from the prompt; never raises."""
    lines = text.splitlines()
    sources: list[RetrievedSource] = []
    outside: list[str] = []
    current: RetrievedSource | None = None
    header = ""
    body: list[str] = []
    in_fence = False

    def close() -> None:
        if current is None:
            return
        _parse_body(current, body)
        # A source needs a URL — or, for a heading with a body (a local file), some content.
        # Anything else is instruction text that merely mentions a marker.
        real = current.url or (HEADING.match(header) and (current.summary or current.facts))
        if real and not any(s.marker == current.marker for s in sources):
            sources.append(current)
        elif not real:
            outside.extend([header, *body])

    for line in lines:
        if FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            m = MARKER_LINE.match(line)
            is_heading = bool(HEADING.match(line))
            if m and (is_heading or line.lstrip().startswith(("[", "-", "*", "+", "•")) or line[:1].isdigit()):
                close()
                header = line
                rest = m.group("rest")
                url = _first_url(rest)
                current = RetrievedSource(
                    marker=m.group("marker").upper(), url=url or "", title=_strip_title(rest, url)
                )
                body = []
                continue
            if is_heading and current is not None:
                close()
                current, body = None, []
        if current is not None:
            body.append(line)
        else:
            outside.append(line)
    close()

    kv = _key_values(outside)
    subject, subject_url, aliases = _subject(kv, "\n".join(outside))
    return ParsedPrompt(
        subject=subject,
        subject_url=subject_url,
        aliases=aliases,
        section_title=_section_title(kv, outside),
        questions=_questions(outside),
        sources=sorted(sources, key=lambda s: (s.prefix, s.number)),
    )
