"""A source's support evidence read once, stored with its frozen set, and read back by every run.

The support check (``sourcedesk.core.citations.support``) needs, for every passage of a source,
its terms (tokenised, stemmed, the lexicon applied) and its figures, and for the source the
plain numbers it writes, the names it capitalises and the words it writes in lower case. Reading
them from the text is most of what a reconcile costs; they change only when the text does. So
when a set is frozen (``sourcedesk.core.sources.extraction.with_facts``) each source's are read
once into an **index**, stored on ``Source.evidence_index``, and ``evidence_of`` rebuilds the
``Evidence`` from it without reading the text again.

An index is used only when it is the index of exactly these fields, read by exactly this code:

* ``digest`` — a hash of the fields (names and texts): a source whose text changed, or a
  ground-truth item carrying someone else's index, is read from its text;
* ``version`` — a hash of the files the reading depends on (the tokeniser, the figure reader,
  the lexicon, …): an index made by another version of sourcedesk is not trusted, so a
  change to how text is read never meets terms read the old way.

Anything else — a missing, damaged or foreign index — is read from the text, as before; the
verdict is the same either way (tests/test_evidence_index.py holds them to that).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from sourcedesk.core.citations.figures import Figure
from sourcedesk.core.citations.relations import lower_terms
from sourcedesk.core.citations.support_evidence import Evidence, passage_texts
from sourcedesk.core.citations.support_names import proper_terms

# What reading a passage depends on: a change to any of these files makes older indexes unused.
_READERS = (
    "tokens.py",
    "lexicon.py",
    "lexicon.yaml",
    "figures.py",
    "fraction_words.py",
    "units.py",
    "support_evidence.py",
    "support_names.py",
    "relation_words.py",
    "relations.py",
    "evidence_index.py",
)
FORMAT = 1


@lru_cache(maxsize=1)
def index_version() -> str:
    """This code's version of the index: the format and a hash of the files that read text."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    try:
        for name in _READERS:
            digest.update(name.encode())
            digest.update((here / name).read_bytes())
    except OSError:  # not installed as files: an index of this process is trusted by no other
        return f"{FORMAT}:unread-{uuid.uuid4().hex}"
    return f"{FORMAT}:{digest.hexdigest()[:16]}"


def fields_digest(fields: Sequence[tuple[str, str]]) -> str:
    digest = hashlib.sha256()
    for name, text in fields:
        digest.update(name.encode("utf-8", "surrogatepass"))
        digest.update(b"\x1e")
        digest.update(text.encode("utf-8", "surrogatepass"))
        digest.update(b"\x1f")
    return digest.hexdigest()[:32]


def index_of(fields: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The stored form of a source's evidence (plain JSON)."""
    fields = list(fields)
    ev = Evidence.build(fields)
    proper = proper_terms(p.text for p in ev.passages)
    lower = frozenset().union(*(lower_terms(p.text) for p in ev.passages))
    vocabulary = sorted(ev.terms | proper | lower)
    number = {t: i for i, t in enumerate(vocabulary)}
    return {
        "version": index_version(),
        "digest": fields_digest(fields),
        "vocabulary": vocabulary,  # every term once; the lists below give positions in it
        "terms": [sorted(number[t] for t in p.terms) for p in ev.passages],
        "figures": [[_figure_json(f) for f in p.figures] for p in ev.passages],
        "numbers": sorted(ev.numbers),
        "proper": sorted(number[t] for t in proper),
        "lower": sorted(number[t] for t in lower),
    }


def evidence_of(fields: Sequence[tuple[str, str]], index: object = None) -> Evidence:
    """The source's evidence: from its stored ``index`` when it is this text's and this code's,
    else read from the text."""
    if isinstance(index, Mapping) and index.get("version") == index_version():
        found = _from_index(fields, index)
        if found is not None:
            return found
    return Evidence.build(fields)


def _from_index(fields: Sequence[tuple[str, str]], index: Mapping[str, Any]) -> Evidence | None:
    if index.get("digest") != fields_digest(fields):
        return None
    chunks, has_text = passage_texts(fields)
    vocabulary, terms, figs = index.get("vocabulary"), index.get("terms"), index.get("figures")
    if not isinstance(vocabulary, list) or not isinstance(terms, list) or not isinstance(figs, list):
        return None
    if not len(chunks) == len(terms) == len(figs):
        return None
    try:
        words = [str(t) for t in vocabulary]
        read = [
            (name, text, frozenset([words[i] for i in held]), tuple(_figure(f) for f in found))
            for (name, text), held, found in zip(chunks, terms, figs, strict=True)
        ]
        numbers = frozenset(float(n) for n in index.get("numbers") or ())
        proper = frozenset([words[i] for i in index.get("proper") or ()])
        lower = frozenset([words[i] for i in index.get("lower") or ()])
    except (TypeError, ValueError, IndexError):
        return None  # damaged: read from the text
    return Evidence.assemble(read, numbers, has_text, proper, lower)


def _figure_json(f: Figure) -> list[Any]:
    value = list(f.value) if isinstance(f.value, tuple) else f.value
    return [f.kind, value, f.unit, f.text, f.start, f.end]


def _figure(data: object) -> Figure:
    if not isinstance(data, list) or len(data) != 6:
        raise ValueError("not a figure")
    kind, value, unit, text, start, end = data
    if isinstance(value, list):
        value = (int(value[0]), int(value[1]), int(value[2]))
    elif not isinstance(value, (int, float, str)) or isinstance(value, bool):
        raise ValueError("not a figure value")
    return Figure(str(kind), value, str(unit), str(text), int(start), int(end))
