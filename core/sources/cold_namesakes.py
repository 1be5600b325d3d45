"""Namesakes found cold: on a new memo nothing is declared, so they are read off the results.

Two kinds of candidate, each kept only when the subject's own pages never use it:

- a longer proper name the subject's name is part of ("Kestra Medical", "Toyota Cresta",
  "Apollo.io"), or a name whose initials spell the subject's short name ("National
  Association of Teachers of Singing"), on a page that does not name the subject
  distinctly — or on which every mention of the name is inside that longer name;
- a look-alike site: a registrable domain whose first label starts or ends with the
  subject's name and is not the subject's (kestramedical.com, nats.aero). It is a
  namesake's when it calls itself by a candidate's name and none of its pages names the
  subject by one of its names — or, with no name of its own, when none of its pages names
  the subject distinctly. Such a site is called "NATS (air traffic)": the name and the two
  words its pages repeat.

Each namesake then learns its own words from its pages (their proper names, and the words
two of them share, minus the subject's and every word of the batch's subject pages): how
"Kestra shares fall after wearable defibrillator maker trims outlook" is read as Kestra
Medical's without the long name. Pure: the caller stores what it wants to keep.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sourcedesk.core.net.urls import host_of
from sourcedesk.core.sources.about import AboutJudge, NamesakeRef, Reading, SourceText, web_site
from sourcedesk.core.sources.name_uses import NOT_A_NAME_WORD, PageWords, spelled_out
from sourcedesk.core.sources.namesakes import names_in_title
from sourcedesk.core.sources.subject_profile import COMMON_PROPER
from sourcedesk.core.sources.vocabulary import GENERIC, is_evidence, stem
from sourcedesk.core.text.phrases import normalise_phrase

MAX_TERMS = 60


@dataclass
class _Candidate:
    name: str  # as shown: the fullest form seen ("Kestra Medical Technologies")
    key: str  # the core phrase, normalised ("kestra medical"); "" for a site with no name
    site: str | None = None
    pages: list[int] = field(default_factory=list)  # indexes into the batch
    aka: list[str] = field(default_factory=list)  # other names of it seen beside it
    spells: bool = False  # its initials spell the subject's name
    known: bool = False  # the site of a namesake the judge already knows

    @property
    def seen(self) -> set[int]:
        return set(self.pages)


@dataclass(frozen=True)
class FoundNamesake:
    """A namesake the results show: its name, where it was seen, and its own words."""

    name: str
    site: str | None  # registrable domain of its own site
    host: str | None  # a host of that site (what the store keeps)
    urls: tuple[str, ...]  # the pages it was seen on
    terms: tuple[str, ...] = ()
    aka: tuple[str, ...] = ()
    spells: bool = False
    known: bool = False  # a namesake the judge knew (declared, learned): only its site is new

    def ref(self) -> NamesakeRef:
        return NamesakeRef(
            self.name,
            learned=True,
            host=self.host if self.site else None,
            terms=self.terms,
            spells=self.spells,
            aka=self.aka,
        )


def _squash(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def look_alike(site: str, subject_name: str) -> bool:
    """A registrable domain whose first label starts or ends with the subject's name (``kestramedical.com``)."""
    key = _squash(subject_name)
    label = _squash(site.split(".")[0])
    return bool(key) and (label.startswith(key) or label.endswith(key))


def _site_words(pages: list[PageWords], theirs: set[str], subject_words: set[str]) -> str:
    """What a site is about in two words ("air traffic"): the pair of adjacent words its pages
    repeat most (a title's count twice), none of them the subject's."""
    counts: dict[tuple[str, str], int] = {}
    shown: dict[tuple[str, str], str] = {}
    for page in pages:
        words = page.text.words
        seen: set[tuple[str, str]] = set()
        for i in range(len(words) - 1):
            pair = (words[i], words[i + 1])
            if pair in seen or page.gap(i, i + 1) != " ":
                continue
            if any(w in GENERIC or w in subject_words or stem(w) in theirs or len(w) < 3 or w.isdigit() for w in pair):
                continue
            seen.add(pair)
            counts[pair] = counts.get(pair, 0) + (2 if i + 1 < page.title_words else 1)
            shown.setdefault(pair, page.text.written(i, i + 2))
    if not counts:
        return ""
    best = max(counts, key=lambda p: counts[p])
    return shown[best].lower() if counts[best] >= 2 else ""


def own_terms(pages: Sequence[PageWords], subject_terms: set[str], subject_words: set[str]) -> tuple[str, ...]:
    """A namesake's words: the proper names on its pages, and the words two of them share (all
    of one page's, when it has one), minus the subject's."""
    counts: dict[str, int] = {}
    first: dict[str, str] = {}
    out: dict[str, str] = {}
    for page in pages:
        for term_stem, word in page.stems().items():
            if is_evidence(word, term_stem):
                counts[term_stem] = counts.get(term_stem, 0) + 1
                first.setdefault(term_stem, word)
        for i, word in enumerate(page.text.words):
            if len(word) < 3 or word.isdigit() or word in GENERIC or word in NOT_A_NAME_WORD or word in COMMON_PROPER:
                continue
            if i >= page.title_words and page.capitalised(i) and not page.sentence_start(i):
                out.setdefault(stem(word), word)
    floor = 2 if len(pages) >= 2 else 1
    for term_stem, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        if n >= floor:
            out.setdefault(term_stem, first[term_stem])
    kept = [w for s, w in out.items() if s not in subject_terms and w not in subject_words]
    return tuple(kept[:MAX_TERMS])


def _merge(candidates: dict[str, _Candidate]) -> None:
    """A name seen only on pages where a better-attested one is seen too is that one's
    ("Kestra Investment Services" on Kestra Financial's home page): one namesake, not two."""
    for key, cand in sorted(candidates.items(), key=lambda kv: len(kv[1].seen)):
        bigger = [c for k, c in candidates.items() if k != key and cand.seen <= c.seen and len(c.seen) > len(cand.seen)]
        if bigger:
            main = max(bigger, key=lambda c: len(c.seen))
            main.aka += [cand.key, *cand.aka]
            del candidates[key]


def _name_candidates(judge: AboutJudge, readings: Sequence[Reading | None], known: set[str]) -> dict[str, _Candidate]:
    """Longer and spelled-out names on pages that do not name the subject distinctly."""
    profile = judge.profile
    subject_words = set(judge.subject_phrase.split())
    candidates: dict[str, _Candidate] = {}
    for index, reading in enumerate(readings):
        if reading is None:
            continue
        body = reading.read_uses
        only_longer = bool(body) and all(u.longer_key for u in body) and not reading.subject.names
        if reading.distinct and not only_longer:
            continue
        for use in body:
            key = use.longer_key
            if not key or profile.uses(key) or key in known:
                continue
            if any(w in profile.heads for w in key.split() if w not in subject_words):
                continue  # "Ramp Bill Pay": a name of the subject's own ("Bill Pay")
            cand = candidates.setdefault(key, _Candidate(use.longer_full or use.longer or "", key))
            if len((use.longer_full or "").split()) > len(cand.name.split()):
                cand.name = use.longer_full or cand.name
            cand.pages.append(index)
        if reading.uses:
            for written, key in spelled_out(reading.page, judge.name):
                if not profile.uses(key) and key not in known:
                    cand = candidates.setdefault(key, _Candidate(written, key, spells=True))
                    cand.pages.append(index)
    _merge(candidates)
    for key, cand in list(candidates.items()):
        if all(readings[i] is not None and readings[i].hits for i in cand.seen):  # type: ignore[union-attr]
            del candidates[key]  # only ever beside a known namesake ("Apollo HealthCo" by "Apollo Hospitals")
    return candidates


def _sites(
    judge: AboutJudge,
    sources: Sequence[SourceText],
    second: Sequence[Reading | None],
    blocked: tuple[set[int], set[int]],
    candidates: dict[str, _Candidate],
    known: set[str],
) -> list[_Candidate]:
    """Look-alike sites that are a namesake's; a name found on one is the site's name."""
    distinct_pages, named_pages = blocked
    readings = second
    by_site: dict[str, list[int]] = {}
    for index, src in enumerate(sources):
        site = web_site(src.url)
        if not site or judge.own_site(src.url) or not look_alike(site, judge.name):
            continue
        if not any(ns.site == site for ns in judge.namesakes):
            by_site.setdefault(site, []).append(index)
    found: list[_Candidate] = []
    for site, indexes in by_site.items():
        attached = next((c for c in candidates.values() if c.seen & set(indexes)), None)
        if attached is None:  # a known namesake named on the site: the site is that namesake's
            hits = [hit for i in indexes for hit in (readings[i].hits if readings[i] is not None else [])]  # type: ignore[union-attr]
            named = hits[0][0].name if hits else None
            if named is not None:
                attached = _Candidate(named, "", known=True)
        if attached is None:
            titled = next((n for i in indexes for n in names_in_title(sources[i].title, [judge.name])), None)
            key = normalise_phrase(titled or "")
            if titled and key not in known and not judge.profile.uses(key):
                attached = candidates.get(key) or _Candidate(titled, key)
        if (named_pages if attached is not None else distinct_pages) & set(indexes):
            continue
        cand = attached or _Candidate("", "")
        cand.site = site
        cand.pages = sorted(cand.seen | set(indexes))
        if cand.key not in candidates:
            found.append(cand)
    return found


def find_namesakes(
    judge: AboutJudge,
    sources: Sequence[SourceText],
    *,
    known: Iterable[str] = (),
    known_sites: Iterable[str] = (),
    pages: Sequence[PageWords] | None = None,
) -> list[FoundNamesake]:
    """The namesakes ``sources`` show that ``judge`` does not know, none of them in ``known``
    (names the analyst removed or rejected) or on ``known_sites`` (sites of removed ones)."""
    known_keys = {normalise_phrase(k) for k in known} | {p for ns in judge.namesakes for p in ns.phrases}
    prepared = list(pages) if pages is not None else [s.words() for s in sources]
    readings = [None if judge.own_site(s.url) else judge.read(s, p) for s, p in zip(sources, prepared, strict=True)]
    candidates = _name_candidates(judge, readings, known_keys)
    subject_words = set(judge.subject_phrase.split())
    subject_terms = set(judge.subject_terms)
    second: list[Reading | None] = readings
    if candidates:
        # Read again with the names just found: "Cresta Communications" on cresta.com.au turns
        # the contact-centre words of its pages from the subject's into a namesake's.
        interim = judge.extended([_ref(c, prepared, subject_terms, subject_words) for c in candidates.values()])
        second = [
            None if r is None else interim.read(s, p) for r, s, p in zip(readings, sources, prepared, strict=True)
        ]
    distinct = {i for i, r in enumerate(second) if r is not None and r.distinct}
    named = {i for i, r in enumerate(second) if r is not None and r.subject.names}
    gone = set(known_sites)
    sites = [c for c in _sites(judge, sources, second, (distinct, named), candidates, known_keys) if c.site not in gone]
    for cand in [*candidates.values(), *sites]:
        if cand.site:
            distinct -= cand.seen
    # The words the subject's coverage in this batch uses tell no namesake apart.
    for i in distinct:
        subject_terms |= set(prepared[i].stems())
    found: list[FoundNamesake] = []
    for cand in [*candidates.values(), *sites]:
        mine = [prepared[i] for i in sorted(cand.seen)]
        name = cand.name
        if not name:
            words = _site_words(mine, subject_terms, subject_words)
            name = f"{judge.name} ({words or cand.site})"
        host = next((sources[i].url for i in sorted(cand.seen) if web_site(sources[i].url) == cand.site), None)
        found.append(
            FoundNamesake(
                name=name,
                site=cand.site,
                host=_host(host),
                urls=tuple(sources[i].url for i in sorted(cand.seen)),
                terms=own_terms(mine, subject_terms, subject_words),
                aka=tuple(dict.fromkeys(cand.aka)),
                spells=cand.spells,
                known=cand.known,
            )
        )
    return found


def _host(url: str | None) -> str | None:
    return host_of(url) if url else None


def _ref(cand: _Candidate, pages: Sequence[PageWords], subject_terms: set[str], subject_words: set[str]) -> NamesakeRef:
    mine = [pages[i] for i in sorted(cand.seen)]
    return NamesakeRef(
        cand.name,
        learned=True,
        terms=own_terms(mine, subject_terms, subject_words),
        spells=cand.spells,
        aka=(cand.key, *cand.aka),
    )


def with_terms(
    judge: AboutJudge, refs: Sequence[NamesakeRef], sources: Sequence[SourceText], pages: Sequence[PageWords]
) -> list[NamesakeRef]:
    """``refs`` with the words of the pages that name them or are on their site (a note, or a
    name alone, says little): what the judge reads "Kestra shares fall …" with."""
    subject_terms = set(judge.subject_terms)
    subject_words = set(judge.subject_phrase.split())
    by_name = {ns.name: ns for ns in judge.namesakes}
    out: list[NamesakeRef] = []
    for ref in refs:
        ns = by_name.get(ref.name)
        if ns is None or ref.exact:
            out.append(ref)
            continue
        mine = [
            p
            for s, p in zip(sources, pages, strict=True)
            if (ns.site and web_site(s.url) == ns.site) or any(phrase in p.text for phrase in ns.phrases)
        ]
        if not mine:
            out.append(ref)
            continue
        terms = tuple(dict.fromkeys([*ref.terms, *own_terms(mine, subject_terms, subject_words)]))
        out.append(NamesakeRef(ref.name, ref.note, ref.learned, ref.host, ref.exact, terms, ref.spells, ref.aka))
    return out


__all__ = ["FoundNamesake", "find_namesakes", "look_alike", "own_terms", "with_terms"]
