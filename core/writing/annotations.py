"""The Agent API's answer text put together, with what its ``url_citation`` annotations bind.

What an annotation does for the analyst: a span the API bound to a URL but that
carries no citation marker gets one — ``[N]`` for the search result at that URL, or a
footnote with the URL when the API annotated a page it never listed — so the claim is
reconciled (verified, substituted or dropped) like any other. A span that already
ends in a marker is left alone.

The offsets are read in the unit under which the spans of the whole answer line up
with its text (``sourcedesk.core.writing.offsets``: code points, UTF-16 units or UTF-8
bytes — Perplexity documents only "character index"). When no unit fits, no span is
trusted: the citations come from the markers alone, and a warning says so.

Each ``output_text`` part is cleaned (``sourcedesk.core.text.safety.clean_mapped``)
before anything else edits it, and the spans are moved through the cleaning's offset
map, so a span still covers the same words. An annotation's URL is not repaired: one
carrying control or invisible characters, or read as two hosts, is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sourcedesk.core.net.ambiguous_urls import why_unusable
from sourcedesk.core.text.safety import Cleaned, clean_mapped, clean_text
from sourcedesk.core.writing.offsets import Span, choose_unit, possible
from sourcedesk.core.writing.results import WebResults

_MARKER_AFTER = re.compile(r"\s*\[\^?[^\[\]\s]{1,40}\]")
_MARKER_AT_END = re.compile(r"\[\^?[^\[\]\s]{1,40}\]\s*$")


@dataclass
class Assembled:
    """The answer text (cleaned, markers added), what each annotation did, warnings, and the offset unit."""

    text: str
    records: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unit: str | None = None  # "code points" | "utf-16" | "utf-8"; "none" when no unit fitted; None: no spans


@dataclass
class _Part:
    original: str
    cleaned: Cleaned
    annotations: list[Any]
    message: int  # which message item it belongs to


@dataclass
class _Insert:
    at: int  # offset in the part's cleaned text
    text: str


def _parts(output: list[Any], secrets: list[str]) -> list[_Part]:
    parts: list[_Part] = []
    for index, item in enumerate(output):
        if not isinstance(item, dict) or item.get("type") != "message" or not isinstance(item.get("content"), list):
            continue
        for part in item["content"]:
            if not isinstance(part, dict) or part.get("type") != "output_text" or not isinstance(part.get("text"), str):
                continue
            annotations = part["annotations"] if isinstance(part.get("annotations"), list) else []
            original: str = part["text"]
            parts.append(_Part(original, clean_mapped(original, multiline=True, secrets=secrets), annotations, index))
    return parts


def _offsets(ann: Any) -> tuple[int, int] | None:
    """An annotation's raw ``(start_index, end_index)``, when it is a ``url_citation`` with whole numbers."""
    if not isinstance(ann, dict) or ann.get("type") != "url_citation":
        return None
    start, end = ann.get("start_index"), ann.get("end_index")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
        return None
    assert isinstance(start, int) and isinstance(end, int)
    return start, end


def _usable_url(ann: dict[str, Any], secrets: list[str]) -> str | None:
    url = ann.get("url")
    if not isinstance(url, str) or why_unusable(url):
        return None
    url = clean_text(url.strip(), secrets=secrets)
    return url if url.lower().startswith(("http://", "https://")) else None


def assemble(output: list[Any], web: WebResults, secrets: list[str]) -> Assembled:
    """The answer text, cleaned, with annotation markers applied; the annotation records; warnings.

    A record's ``start``/``end`` index the joined cleaned text (without the inserted markers)."""
    parts = _parts(output, secrets)
    spans: list[Span] = []
    bound: list[tuple[int, dict[str, Any], str]] = []  # (part, annotation, url) of every usable url_citation
    ignored = 0
    for i, part in enumerate(parts):
        for ann in part.annotations:
            offsets = _offsets(ann)
            url = _usable_url(ann, secrets) if offsets is not None else None
            if offsets is None or url is None or not possible(part.original, *offsets):
                ignored += isinstance(ann, dict) and ann.get("type") == "url_citation"
                continue
            spans.append(Span(i, *offsets))
            bound.append((i, ann, url))

    def cleaned_view(i: int, start: int, end: int) -> tuple[str, int, int]:
        return (parts[i].cleaned.text, *parts[i].cleaned.span(start, end))

    unit, converted = choose_unit([p.original for p in parts], spans, cleaned_view)
    out = Assembled("", unit=(unit or "none") if spans else None)
    if spans and unit is None:
        noun = "annotation" if len(spans) == 1 else "annotations"
        out.notes.append(
            f"writer: the offsets of its {len(spans)} url_citation {noun} line up with the answer neither as "
            "characters, nor as UTF-16 units, nor as UTF-8 bytes; they were ignored and the citations read from "
            "the markers alone"
        )
    footnotes: list[str] = []
    inserts: dict[int, list[_Insert]] = {}
    starts = _part_starts(parts)
    for (i, ann, url), span in zip(bound, converted, strict=True):
        if span is None:
            continue
        record = _resolve(
            ann, url, span, parts[i].cleaned, web, footnotes, starts[i], inserts.setdefault(i, []), secrets
        )
        out.records.append(record)
    out.text = _joined(parts, inserts, footnotes)
    if ignored:
        noun = "annotation" if ignored == 1 else "annotations"
        out.notes.append(f"writer: ignored {ignored} url_citation {noun} whose offsets or URL were unusable")
    return out


def _part_starts(parts: list[_Part]) -> list[int]:
    """Where each part's cleaned text starts in the joined text (messages joined by a blank line)."""
    starts: list[int] = []
    offset = 0
    for i, part in enumerate(parts):
        if i and part.message != parts[i - 1].message:
            offset += 2
        starts.append(offset)
        offset += len(part.cleaned.text)
    return starts


def _joined(parts: list[_Part], inserts: dict[int, list[_Insert]], footnotes: list[str]) -> str:
    messages: list[list[str]] = []
    for i, part in enumerate(parts):
        text = part.cleaned.text
        for ins in sorted(inserts.get(i, []), key=lambda x: x.at, reverse=True):
            text = text[: ins.at] + ins.text + text[ins.at :]
        if not messages or part.message != parts[i - 1].message:
            messages.append([])
        messages[-1].append(text)
    body = "\n\n".join("".join(pieces) for pieces in messages)
    if footnotes:
        body = body.rstrip() + "\n\n" + "\n".join(footnotes)
    return body


def _word_end(text: str, at: int) -> int:
    """An insertion point inside a word moves to the word's end (the marker never splits a word)."""
    while 0 < at < len(text) and text[at - 1].isalnum() and text[at].isalnum():
        at += 1
    return at


def _resolve(
    ann: dict[str, Any],
    url: str,
    span: tuple[int, int],
    cleaned: Cleaned,
    web: WebResults,
    footnotes: list[str],
    offset: int,
    inserts: list[_Insert],
    secrets: list[str],
) -> dict[str, Any]:
    start, end = cleaned.span(*span)
    text = cleaned.text
    title = clean_text(ann["title"], secrets=secrets) if isinstance(ann.get("title"), str) else ""
    record: dict[str, Any] = {"url": url, "title": title, "start": offset + start, "end": offset + end}
    if _MARKER_AT_END.search(text[start:end]) or _MARKER_AFTER.match(text, end):
        record["action"] = "already_cited"
        return record
    at = _word_end(text, end)
    if any(i.at == at for i in inserts):  # two annotations ending at one place: one marker is enough
        record["action"] = "already_cited"
        return record
    number = web.number_for(url)
    if number is not None:
        inserts.append(_Insert(at, f" [{number}]"))
        record.update(action="marker_added", marker=f"[{number}]")
        return record
    key = f"a{len(footnotes) + 1}"
    while f"[^{key}]" in text:
        key += "x"
    label = " ".join((title or url).split()).replace("[", "(").replace("]", ")")
    footnotes.append(f"[^{key}]: [{label}]({url})")
    inserts.append(_Insert(at, f" [^{key}]"))
    record.update(action="footnote_added", marker=f"[^{key}]")
    return record
