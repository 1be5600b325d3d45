"""Which company is a source about? The ``about`` verdict, offline, from stored text.

The product's promise is that a citation points at a page about *the right company*.
A domain pin cannot say that for a wide search: a trade-press story on Kestra Medical
Technologies' IPO lives on a publisher's site, not on a namesake's. So every source —
retrieved, a local file, a writer's web result — is read for the names it uses:

- ``subject``: on one of the subject's own hosts, or it names the subject together with
  something that tells it apart: its domain (``kestra.io``), an alias (``Synadia``), a
  longer name its own pages use ("Kestra Enterprise"), its proper names (founders, city,
  products: ``core.sources.subject_profile``) or its words (the description's, its pages');
- ``namesake``: it names a namesake ("Kestra Medical Technologies", or the subject's name
  followed by a namesake's word: "Kestra Medical") and never the subject — or it uses the
  subject's name only in a namesake's context ("Nats, the air traffic control provider"),
  or it is on a namesake's own site;
- ``other``: it never names the subject (normal in a market map of competitors), or uses
  its name only as a word ("a ramp in the car park");
- ``unclear``: it names the subject but nothing says which one, both sides equally, or
  several organisations of that name.

Evidence has weights: the subject's names 3, its proper names 2, other words 1; everyday
words are no evidence (``core.sources.vocabulary``). Namesakes come from memo.yaml, from
what was learned (``core.sources.namesakes``) and from what a memo's results show cold
(``core.sources.cold_namesakes``). Every verdict carries a reason a person can check and,
for a namesake, its name and the phrase "reject this name" offers. Pure and deterministic.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sourcedesk.core.net.hosts import PinRefused, host_matches_any, registrable_domain, validate_pin
from sourcedesk.core.net.urls import host_of
from sourcedesk.core.sources.facts import MAX_FACT_DEPTH
from sourcedesk.core.sources.name_uses import NameUse, PageWords, name_uses
from sourcedesk.core.sources.subject_profile import SubjectProfile, learn_profile
from sourcedesk.core.sources.vocabulary import GENERIC, distinguishing_terms, name_variants, stem, written_terms
from sourcedesk.core.text.phrases import Hit, WordText, normalise_phrase

Verdict = Literal["subject", "namesake", "other", "unclear"]
VERDICTS: tuple[Verdict, ...] = ("subject", "namesake", "other", "unclear")

# Words that, just before a name, say the page is *not* about it ("unrelated to Kestra Financial",
# "not to be confused with …", "no connection with the NATS messaging system").
DISCLAIMERS = frozenset({"unrelated", "confused", "affiliated", "connection", "relation", "related", "nothing"})
DISCLAIMER_WINDOW = 8  # words looked at before a name
WEIGHT_NAME = 3  # an alias, a domain or a namesake's name outweighs one context word
WEIGHT_PROPER = 2  # a founder, the city, a product name: more than a common word
TITLE_BONUS = 3  # what the title names is what the page is about
MARGIN = 2  # one side must have twice the other's evidence to win
MIN_EVIDENCE = 2  # words learned from pages: one alone decides nothing
DISTINCT = 4  # "names the subject distinctly": a name and a word, two proper names, …
SHOWN_TERMS = 3

__all__ = [
    "GENERIC",
    "VERDICTS",
    "About",
    "AboutJudge",
    "NamesakeRef",
    "Reading",
    "SourceText",
    "Verdict",
    "stem",
]


@dataclass(frozen=True)
class About:
    """A source's verdict, why, the namesake it is about (its name) and the phrase a name
    reject would use."""

    verdict: Verdict
    reason: str
    phrase: str | None = None
    namesake: str | None = None

    def to_json(self) -> dict[str, str]:
        return {"verdict": self.verdict, "reason": self.reason}


@dataclass(frozen=True)
class NamesakeRef:
    """A name that is not the subject: declared in memo.yaml, or learned (then ``host`` says
    where; a namesake's own site marks every page on it). ``terms``: its own words, learned
    from its pages; ``spells``: its initials spell the subject's name."""

    name: str
    note: str = ""
    learned: bool = False
    host: str | None = None
    exact: bool = False  # a rejected phrase: matched as written, never shortened
    terms: tuple[str, ...] = ()
    spells: bool = False
    aka: tuple[str, ...] = ()  # other names of it seen beside it ("Kestra Investment Services")


@dataclass(frozen=True)
class SourceText:
    """What is stored about a source, as the verdict reads it."""

    url: str
    title: str = ""
    body: str = ""  # summary, highlights, snippet, facts, page text — all of it

    @classmethod
    def of(cls, item: object) -> SourceText:
        """From a ``sourcedesk.core.domain.models.Source``, a writer search result dict, or anything alike."""

        def get(name: str) -> Any:
            return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)

        parts: list[str] = []
        for name in ("summary", "snippet", "text"):
            value = get(name)
            if isinstance(value, str) and value.strip():
                parts.append(value)
        highlights = get("highlights")
        if isinstance(highlights, (list, tuple)):
            parts += [h for h in highlights if isinstance(h, str)]
        facts = get("facts")
        if isinstance(facts, Mapping) and facts:
            parts.append(" ".join(_leaves(facts)))
        url, title = get("url"), get("title")
        return cls(
            url=url if isinstance(url, str) else "",
            title=title if isinstance(title, str) else "",
            body="\n".join(parts),
        )

    def words(self) -> PageWords:
        """The page read into words, once per text (a memo's judge and a section's verdicts read
        the same pages)."""
        return _page_words(self.title, self.body)


@functools.lru_cache(maxsize=2048)
def _page_words(title: str, body: str) -> PageWords:
    return PageWords(title, body)


def _leaves(value: object, depth: int = 0) -> list[str]:
    """The facts' values; nothing deeper than ``MAX_FACT_DEPTH`` (a hostile nesting would exhaust the stack)."""
    if depth > MAX_FACT_DEPTH:
        return []
    if isinstance(value, Mapping):
        return [leaf for v in value.values() for leaf in _leaves(v, depth + 1)]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v, depth + 1)]
    return [] if value is None else [str(value)]


@functools.lru_cache(maxsize=8192)
def _own_host(url: str, hosts: tuple[str, ...]) -> str | None:
    return host_matches_any(url, hosts)


def web_site(url: str) -> str | None:
    """The registrable domain of a web URL (None for a local file)."""
    return registrable_domain(url) if url.lower().startswith(("http://", "https://")) else None


@dataclass
class _Namesake:
    ref: NamesakeRef
    phrases: list[str]  # normalised; longest first ([] for a site known only by its domain)
    site: str | None  # registrable domain of its own site
    terms: dict[str, str]  # stem → word: its note's words and its pages'
    note_terms: frozenset[str]  # stems the analyst wrote: one of them decides

    @property
    def name(self) -> str:
        return self.ref.name


@dataclass
class Evidence:
    """What one side (the subject, or the namesakes) has on one page."""

    names: list[str] = field(default_factory=list)  # names/aliases/domains as written
    terms: list[str] = field(default_factory=list)  # context words as written
    title: bool = False
    proper: int = 0  # how many of ``terms`` are proper names of the subject's pages

    @property
    def score(self) -> int:
        return WEIGHT_NAME * len(self.names) + len(self.terms) + (TITLE_BONUS if self.title else 0)

    @property
    def strength(self) -> int:
        """How distinctly a page names the subject: names 3, proper names 2, other words 1."""
        return WEIGHT_NAME * len(self.names) + WEIGHT_PROPER * self.proper + (len(self.terms) - self.proper)


@dataclass
class Reading:
    """One page read against the subject and its namesakes."""

    page: PageWords
    uses: list[NameUse]  # the subject's name, outside names and disclaimers
    subject: Evidence
    namesake: Evidence
    hits: list[tuple[_Namesake, Hit]]  # namesake names found
    s: int
    n: int
    need_s: int
    need_n: int
    by_namesake: dict[str, int]  # namesake name → its words found
    shortest: dict[str, Hit] = field(default_factory=dict)  # namesake name → its shortest form written

    @property
    def strong_uses(self) -> list[NameUse]:
        return [u for u in self.uses if u.strong]

    @property
    def read_uses(self) -> list[NameUse]:
        """The strong uses whose form can be read: in the body, or in a sentence-case title."""
        return [u for u in self.uses if u.strong and (not u.in_title or u.longer)]

    @property
    def distinct(self) -> bool:
        """It names the subject distinctly (one of its names, two proper names, a proper name and
        two words, four words), with a 2:1 margin: enough to learn nothing else from the page."""
        return self.subject.strength >= DISTINCT and self.s >= MARGIN * self.n


def _disclaimed(text: WordText, hit: Hit) -> bool:
    """A name right after "unrelated to", "not to be confused with", "no connection with"."""
    before = text.words[max(0, hit.first - DISCLAIMER_WINDOW) : hit.first]
    return any(w in DISCLAIMERS for w in before)


def _quoted(items: Iterable[str]) -> str:
    return ", ".join(f"'{i}'" for i in dict.fromkeys(items))


class AboutJudge:
    """The subject and its namesakes, prepared once; ``judge`` gives one source's verdict,
    ``judge_section`` a section's (with sites judged as sites)."""

    def __init__(
        self,
        name: str,
        *,
        url: str | None = None,
        domains: Sequence[str] = (),
        aliases: Sequence[str] = (),
        description: str = "",
        namesakes: Sequence[NamesakeRef] = (),
        context: Iterable[str] = (),
        profile: SubjectProfile | None = None,
    ) -> None:
        """``context``: what the subject's own pages say (each a page's text), read into a
        ``SubjectProfile`` unless ``profile`` is given."""
        self.name = " ".join(name.split())
        self.description = description
        self.hosts: list[str] = []
        for raw in ([url] if url else []) + list(domains):
            try:
                host = validate_pin(raw)
            except PinRefused:
                continue
            if host not in self.hosts:
                self.hosts.append(host)
        self.subject_phrase = normalise_phrase(name)
        own = {self.subject_phrase}
        self.aliases = [a for a in dict.fromkeys(normalise_phrase(a) for a in aliases) if a and a not in own]
        alias_words = {w for a in self.aliases for w in a.split()}
        if profile is None:
            profile = learn_profile(self.name, [(text, "") for text in context], alias_words)
        self.profile = profile
        own |= set(self.aliases)
        self.domain_phrases = [normalise_phrase(h) for h in self.hosts]
        self.own_names = sorted((k for k in profile.own_names if k not in own), key=lambda k: -len(k.split()))
        self.shown_host = self.hosts[0] if self.hosts else self.name
        self.namesakes = self._prepare(namesakes, own)
        self._weigh(description)

    def _prepare(self, refs: Sequence[NamesakeRef], own: set[str]) -> list[_Namesake]:
        subject_words = set(self.subject_phrase.split())
        out: list[_Namesake] = []
        seen: set[str] = set()
        for ref in refs:
            full = normalise_phrase(ref.name)
            if not full or full in own or full in seen:
                continue
            seen.add(full)
            phrases = [full] if ref.exact else [v for v in name_variants(full, self.subject_phrase) if v not in own]
            if ref.learned and ref.host and "(" in ref.name:
                phrases = []  # "NATS (air traffic)": a site's name, not a phrase pages write
            for other in ref.aka:
                key = normalise_phrase(other)
                if key and key not in own and key not in phrases:
                    phrases.append(key)
            # A note's words, not the name's own ("Medical" is matched as part of "Kestra Medical").
            name_words = set(full.split()) | subject_words
            note = {s: w for s, w in written_terms(ref.note).items() if w not in name_words}
            terms = dict(note)
            for word in ref.terms:
                if word not in name_words:
                    terms.setdefault(stem(word), word)
            site = registrable_domain(ref.host) if ref.host else None
            out.append(_Namesake(ref, phrases, site, terms, frozenset(note)))
        return out

    def _weigh(self, description: str) -> None:
        """The subject's words (its description's, its pages', its proper names) and the
        namesakes', each side without the words both have."""
        subject_words = set(self.subject_phrase.split())
        described = {s: w for s, w in distinguishing_terms(description).items() if w not in subject_words}
        name_stems = {stem(w) for ns in self.namesakes for p in ns.phrases for w in p.split()}
        subject_terms = dict(described)
        for s, w in self.profile.context.items():
            if w not in subject_words and s not in name_stems:
                subject_terms.setdefault(s, w)
        proper: set[str] = set()
        for w in self.profile.proper:
            if stem(w) not in name_stems:
                subject_terms.setdefault(stem(w), w)
                proper.add(stem(w))
        theirs = {s for ns in self.namesakes for s in ns.terms}
        shared = set(subject_terms) & theirs
        self.subject_terms = {s: w for s, w in subject_terms.items() if s not in shared}
        for ns in self.namesakes:
            ns.terms = {s: w for s, w in ns.terms.items() if s not in shared or s in ns.note_terms}
        # What the analyst wrote decides on one word; words learned from pages need a second.
        self.described = {s for s in described if s in self.subject_terms}
        self.proper = {s for s in proper if s in self.subject_terms and s not in described}

    @classmethod
    def for_memo(
        cls,
        subject: Any,
        learned: Iterable[NamesakeRef] = (),
        context: Iterable[str] = (),
        *,
        profile: SubjectProfile | None = None,
    ) -> AboutJudge:
        """From a ``sourcedesk.core.memo.spec.Subject`` plus learned namesakes (declared ones first)."""
        declared = [NamesakeRef(n.name, n.note) for n in subject.namesakes]
        return cls(
            subject.name,
            url=subject.url,
            domains=subject.domains,
            aliases=subject.aliases,
            description=subject.description,
            namesakes=[*declared, *learned],
            context=context,
            profile=profile,
        )

    def extended(self, refs: Sequence[NamesakeRef]) -> AboutJudge:
        """The same subject (and profile) with ``refs`` added to its namesakes."""
        return AboutJudge(
            self.name,
            domains=self.hosts,
            aliases=self.aliases,
            description=self.description,
            namesakes=[*self.namesake_refs, *refs],
            profile=self.profile,
        )

    @property
    def namesake_refs(self) -> list[NamesakeRef]:
        """Every namesake this judge knows, declared first (what the writer is told to avoid)."""
        return [ns.ref for ns in self.namesakes]

    def own_site(self, url: str) -> str | None:
        """The subject's host ``url`` is on, if any."""
        return _own_host(url, tuple(self.hosts)) if url else None

    def site_namesake(self, url: str) -> _Namesake | None:
        site = web_site(url)
        return next((ns for ns in self.namesakes if site and ns.site == site), None)

    # ------------------------------------------------------------------ reading

    def read(self, source: SourceText | object, page: PageWords | None = None) -> Reading:
        """The evidence on one page for the subject and for its namesakes."""
        src = source if isinstance(source, SourceText) else SourceText.of(source)
        page = page or src.words()
        text, title_words = page.text, page.title_words
        taken: set[int] = set()
        disclaimed: set[int] = set()
        hits: list[tuple[_Namesake, Hit]] = []
        shortest: dict[str, Hit] = {}  # namesake name -> its shortest form the page writes
        for ns in self.namesakes:
            for phrase in ns.phrases:
                for hit in text.find(phrase):
                    span = set(range(hit.first, hit.last))
                    if not _disclaimed(text, hit):
                        shortest[ns.name] = hit  # phrases go longest first: the last one is the shortest
                    if span & taken:
                        continue
                    taken |= span
                    if _disclaimed(text, hit):
                        disclaimed |= span
                    else:
                        hits.append((ns, hit))
        subject = Evidence()
        namesake = Evidence(names=[h.written for _, h in hits], title=any(h.first < title_words for _, h in hits))
        for phrase in [*self.aliases, *self.domain_phrases, *self.own_names]:
            for hit in text.find(phrase):
                span = set(range(hit.first, hit.last))
                if span & taken or _disclaimed(text, hit):
                    continue
                taken |= span
                subject.names.append(hit.written)
                subject.title = subject.title or hit.first < title_words
        uses = [u for u in name_uses(page, self.subject_phrase, self.name, taken) if not _disclaimed(text, u.hit)]
        if not hits and not subject.names and not uses:  # names no one: nothing to weigh
            return Reading(page, uses, subject, namesake, hits, 0, 0, MIN_EVIDENCE, MIN_EVIDENCE, {}, shortest)
        stems = (
            page.stems() if not disclaimed else {stem(w): w for i, w in enumerate(text.words) if i not in disclaimed}
        )
        subject.terms = [stems[s] for s in self.subject_terms if s in stems]
        subject.proper = sum(1 for s in self.proper if s in stems)
        by_namesake: dict[str, int] = {}
        theirs: dict[str, str] = {}
        noted = False
        for ns in self.namesakes:
            found = [stems[s] for s in ns.terms if s in stems]
            if found:
                by_namesake[ns.name] = len(found)
                theirs.update(dict.fromkeys(found, ""))
                noted = noted or any(s in stems for s in ns.note_terms)
        namesake.terms = list(theirs)
        title_stems = page.title_stems()
        s = subject.score + sum(1 for t in self.subject_terms if t in title_stems)
        n = namesake.score + sum(1 for ns in self.namesakes for t in ns.terms if t in title_stems)
        need_s = 1 if any(t in stems for t in self.described) else MIN_EVIDENCE
        need_n = 1 if noted else MIN_EVIDENCE
        return Reading(page, uses, subject, namesake, hits, s, n, need_s, need_n, by_namesake, shortest)

    # ------------------------------------------------------------------ judging

    def judge(self, source: SourceText | object, page: PageWords | None = None) -> About:
        src = source if isinstance(source, SourceText) else SourceText.of(source)
        host = self.own_site(src.url)
        if host:
            return About("subject", f"on {host}, the subject's own site")
        reading = self.read(src, page)
        site_ns = self.site_namesake(src.url)
        if site_ns is not None and not reading.subject.names:
            return About(
                "namesake", f"on {site_ns.site}, a site about {site_ns.name}", self.offer(site_ns), site_ns.name
            )
        return self.decide(reading)

    def judge_all(self, sources: Iterable[SourceText | object]) -> list[About]:
        return [self.judge(s) for s in sources]

    def judge_section(self, sources: Sequence[SourceText | object]) -> list[About]:
        """Every source's verdict, then sites judged as sites: a host with a page about a namesake
        and none about the subject passes the namesake to its pages that name nothing distinctly."""
        texts = [s if isinstance(s, SourceText) else SourceText.of(s) for s in sources]
        verdicts = [self.judge(t) for t in texts]
        return inherit_sites(texts, verdicts)

    def decide(self, r: Reading) -> About:
        strong = r.strong_uses
        carrying = [(ns, h) for ns, h in r.hits if ns.ref.spells or f" {self.subject_phrase} " in f" {h.phrase} "]
        if not carrying and not r.subject.names and not r.uses:
            return About("other", f"never names {self.name}")
        top = self._top(r)
        named = top.name if top is not None else None
        several = list(dict.fromkeys(ns.name for ns, _ in carrying))
        if len(several) >= 2 and (strong or r.subject.names):
            return About("unclear", f"names several organisations called {self.name}: {_quoted(several[:SHOWN_TERMS])}")
        if r.hits and not r.subject.names and not strong:
            reason = f"names {_quoted(r.namesake.names[:SHOWN_TERMS])}, never {self.shown_host}"
            return About("namesake", reason, self._offered(r, top), named)
        if not r.hits and not r.subject.names and not strong:
            # Only as a word ("a ramp", "the notion that"): the subject only when much says so.
            if r.s >= MIN_EVIDENCE and r.s >= MARGIN * r.n:
                return About("subject", self._subject_reason(r))
            return About("other", f"uses '{r.uses[0].hit.written}' only as a word, never as {self.name}'s name")
        if r.s >= r.need_s and r.s >= MARGIN * r.n:
            return About("subject", self._subject_reason(r))
        if r.n >= r.need_n and r.n >= MARGIN * r.s and top is not None:
            return About("namesake", self._namesake_reason(r, top), self._offered(r, top), named)
        if r.namesake.score == 0 and r.s < r.need_s:
            body = r.read_uses
            longer = next((u.longer for u in body if u.longer), None)
            if longer and all(normalise_phrase(u.longer or "") == normalise_phrase(longer) for u in body):
                # Every mention is part of one longer name ("Kestra Financial"): probably another
                # organisation, that nothing known names. Offered for "reject this name".
                word = strong[0].hit.written
                return About("unclear", f"names '{word}' only as '{longer}', never {self.shown_host}", longer)
            word = strong[0].hit.written
            return About("unclear", f"names '{word}' but nothing tells which {self.name} it means")
        return About("unclear", f"names both {self._theirs(r)} and {self.name} ({self._ours(r)})")

    def _top(self, r: Reading) -> _Namesake | None:
        """The namesake a page is most about: by its names found, else by its words."""
        counts: dict[str, int] = {}
        for ns, _ in r.hits:
            counts[ns.name] = counts.get(ns.name, 0) + 1
        if not counts:
            counts = r.by_namesake
        if not counts:
            return None
        best = max(counts, key=lambda k: counts[k])
        return next(ns for ns in self.namesakes if ns.name == best)

    def _theirs(self, r: Reading) -> str:
        if r.namesake.names:
            return _quoted(r.namesake.names[:SHOWN_TERMS])
        return "a namesake's " + ", ".join(r.namesake.terms[:SHOWN_TERMS])

    def _ours(self, r: Reading) -> str:
        if r.subject.names:
            return "names " + _quoted(r.subject.names[:SHOWN_TERMS])
        return "with " + (", ".join(r.subject.terms[:SHOWN_TERMS]) or "nothing of its own")

    def _subject_reason(self, r: Reading) -> str:
        if r.subject.names:
            return f"names {_quoted(r.subject.names[:SHOWN_TERMS])}"
        word = r.uses[0].hit.written if r.uses else self.name
        return f"names '{word}' with {', '.join(r.subject.terms[:SHOWN_TERMS])}"

    def _namesake_reason(self, r: Reading, top: _Namesake) -> str:
        if r.namesake.names and not r.strong_uses:
            return f"names {_quoted(r.namesake.names[:SHOWN_TERMS])}, never {self.shown_host}"
        if r.namesake.names:
            return f"mostly about {_quoted(r.namesake.names[:SHOWN_TERMS])}; its '{r.uses[0].hit.written}' reads as the namesake"
        word = r.uses[0].hit.written if r.uses else self.name
        like = f"{top.name}: {top.ref.note}" if top.ref.note else top.name
        return f"names '{word}' only with {', '.join(r.namesake.terms[:SHOWN_TERMS])} ({like})"

    def _offered(self, r: Reading, top: _Namesake | None) -> str | None:
        """What "reject this name" offers: the shortest form of a namesake's name the page
        writes ("Kestra Medical"), else the subject's name with the namesake's words after it
        ("Nats air traffic control"), else the namesake's own name."""
        if r.shortest:
            hit = r.shortest.get(top.name) if top is not None else None
            return (hit or next(iter(r.shortest.values()))).written
        text = r.page.text
        words = top.terms if top is not None else {}
        for use in r.uses:
            last = use.hit.last
            while last < len(text.words) and last - use.hit.first < 5 and stem(text.words[last]) in words:
                last += 1
            if last > use.hit.last:
                return text.written(use.hit.first, last)
        return self.offer(top)

    def offer(self, ns: _Namesake | None) -> str | None:
        """A namesake's name as "reject this name" offers it: its shortest form ("Kestra Medical"), or a
        site's name without brackets ("NATS (air traffic)" → "NATS air traffic")."""
        if ns is None:
            return None
        shown = " ".join(ns.name.replace("(", " ").replace(")", " ").split())
        if not ns.phrases or ns.ref.exact:
            return shown
        by_word = {w.lower(): w for w in shown.split()}  # its shortest form, written as its name is
        return " ".join(by_word.get(w, w) for w in ns.phrases[-1].split())


def inherit_sites(texts: Sequence[SourceText], verdicts: Sequence[About]) -> list[About]:
    """A host with a page about a namesake and none about the subject: its pages that name the
    subject but nothing distinct (``unclear``) are about that namesake too ("site about NATS
    (air traffic)")."""
    hosts: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        host = host_of(text.url) if text.url.lower().startswith(("http://", "https://")) else None
        if host:
            hosts.setdefault(host, []).append(i)
    out = list(verdicts)
    for indexes in hosts.values():
        kinds = [verdicts[i].verdict for i in indexes]
        if "subject" in kinds or "namesake" not in kinds:
            continue
        names = [verdicts[i].namesake for i in indexes if verdicts[i].verdict == "namesake" and verdicts[i].namesake]
        if not names:
            continue
        name = max(dict.fromkeys(names), key=names.count)
        offered = next(verdicts[i].phrase for i in indexes if verdicts[i].namesake == name)
        for i in indexes:
            if verdicts[i].verdict == "unclear":
                out[i] = About("namesake", f"site about {name}", offered, name)
    return out
