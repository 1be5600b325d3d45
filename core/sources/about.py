"""Which company is a source about? The ``about`` verdict, offline, from stored text.

The product's promise is that a citation points at a page about *the right company*.
A domain pin cannot say that for a wide search: a trade-press story on Kestra Medical
Technologies' IPO lives on a publisher's site, not on a namesake's. So every source —
retrieved, a local file, a writer's web result — is read for the names it uses:

- ``subject``: on one of the subject's own hosts, or it names the subject together with
  something that tells it apart: its domain (``kestra.io``), an alias (``Synadia``), or
  words from its description ("orchestration");
- ``namesake``: it names a namesake ("Kestra Medical Technologies", or the subject's name
  followed by a namesake's word: "Kestra Medical") and never the subject — or it uses the
  subject's name only in a namesake's context ("Nats, the air traffic control provider");
- ``other``: it never names the subject (normal in a market map of competitors);
- ``unclear``: it names the subject but nothing says which one, or both sides equally.

Namesakes come from ``subject.namesakes`` in memo.yaml and from what was learned
(``sourcedesk.core.sources.namesakes``); a learned namesake seen on a host marks that host's pages too.
Every verdict carries a reason a person can check ("names 'Kestra Medical
Technologies', never kestra.io") and, for a namesake, the phrase found — what "reject
this name" offers. Pure and deterministic: no I/O, no model call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sourcedesk.core.net.hosts import PinRefused, host_matches_any, registrable_domain, validate_pin
from sourcedesk.core.sources.facts import MAX_FACT_DEPTH
from sourcedesk.core.text.phrases import Hit, WordText, normalise_phrase, word_list, words

Verdict = Literal["subject", "namesake", "other", "unclear"]
VERDICTS: tuple[Verdict, ...] = ("subject", "namesake", "other", "unclear")

# Words that say nothing about *which* organisation a page means.
GENERIC = frozenset(
    word_list(
        """
    a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers him his how i if in into is it its itself just me more most my no nor not now of off on
    once only or other our ours out over own same she should so some such than that the their them then there
    these they this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours one two three new based company companies firm firms business
    businesses group holding holdings inc incorporated ltd limited llc plc corp corporation co gmbh ag sa sas
    bv nv pty technologies technology tech solution solutions service services system systems product products
    platform platforms software provider providers maker makers team official site home homepage page news
    blog about welcome formerly known open source free first leading world global international largest main
    best help helps used use uses using make makes made year years today people customers customer work works
    way ways including include includes founded found founder founders raise raised raises funding funded fund
    million billion usd eur gbp series round investor investors backed ceo chief executive headquarters
    headquartered employees staff revenue said says announced announces launch launches launched report
    reports reported according
        """
    )
)
# Words that, just before a name, say the page is *not* about it ("unrelated to Kestra Financial",
# "not to be confused with …", "no connection with the NATS messaging system").
DISCLAIMERS = frozenset({"unrelated", "confused", "affiliated", "connection", "relation", "related", "nothing"})
DISCLAIMER_WINDOW = 8  # words looked at before a name
# Trailing words of a company name that a page often leaves out ("Kestra Medical Technologies, Ltd.").
LEGAL_SUFFIXES = frozenset(
    word_list(
        """
    inc incorporated ltd limited llc plc corp corporation co gmbh ag sa sas bv nv pty holdings group
        """
    )
)
WEIGHT_NAME = 3  # an alias, a domain or a namesake's name outweighs one context word
TITLE_BONUS = 3  # what the title names is what the page is about
MARGIN = 2  # one side must have twice the other's evidence to win
MIN_EVIDENCE = 2  # words learned from the subject's pages: one alone decides nothing
MAX_CONTEXT_TERMS = 80
SHOWN_TERMS = 3


def stem(word: str) -> str:
    """Plural to singular and nothing more: "messages" and "message" meet, "messaging" stays
    apart (a flight-plan message is no messaging system; a stronger stemmer said it was)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("sses"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _terms(text: str) -> dict[str, str]:
    """Distinguishing terms of ``text``: stem → the word as first seen."""
    out: dict[str, str] = {}
    for w in words(text):
        if w in GENERIC or len(w) < 2 or w.isdigit():
            continue
        out.setdefault(stem(w), w)
    return out


@dataclass(frozen=True)
class About:
    """A source's verdict, why, and (for a namesake) the phrase a name reject would use."""

    verdict: Verdict
    reason: str
    phrase: str | None = None

    def to_json(self) -> dict[str, str]:
        return {"verdict": self.verdict, "reason": self.reason}


@dataclass(frozen=True)
class NamesakeRef:
    """A name that is not the subject: declared in memo.yaml, or learned (then ``host`` says where)."""

    name: str
    note: str = ""
    learned: bool = False
    host: str | None = None
    exact: bool = False  # a rejected phrase: matched as written, never shortened


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


def _context_terms(texts: Iterable[str]) -> dict[str, str]:
    """Terms at least two of the subject's own pages use (one page alone may be off-topic)."""
    counts: dict[str, int] = {}
    first: dict[str, str] = {}
    docs = 0
    for text in texts:
        docs += 1
        for term_stem, word in _terms(text).items():
            counts[term_stem] = counts.get(term_stem, 0) + 1
            first.setdefault(term_stem, word)
    floor = 2 if docs >= 3 else 1
    ranked = sorted((s for s, n in counts.items() if n >= floor and len(s) >= 3), key=lambda s: (-counts[s], s))
    return {s: first[s] for s in ranked[:MAX_CONTEXT_TERMS]}


def _leaves(value: object, depth: int = 0) -> list[str]:
    """The facts' values; nothing deeper than ``MAX_FACT_DEPTH`` (a hostile nesting would exhaust the stack)."""
    if depth > MAX_FACT_DEPTH:
        return []
    if isinstance(value, Mapping):
        return [leaf for v in value.values() for leaf in _leaves(v, depth + 1)]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v, depth + 1)]
    return [] if value is None else [str(value)]


@dataclass
class _Namesake:
    ref: NamesakeRef
    phrases: list[str]  # normalised; longest first
    site: str | None  # registrable domain where a learned namesake was seen


@dataclass
class _Side:
    """The evidence one side (subject or namesakes) has in one source."""

    names: list[str] = field(default_factory=list)  # names/aliases/domains as written
    terms: list[str] = field(default_factory=list)  # context words as written
    title: bool = False

    @property
    def score(self) -> int:
        return WEIGHT_NAME * len(self.names) + len(self.terms) + (TITLE_BONUS if self.title else 0)


def _disclaimed(text: WordText, hit: Hit) -> bool:
    """A name right after "unrelated to", "not to be confused with", "no connection with"."""
    before = text.words[max(0, hit.first - DISCLAIMER_WINDOW) : hit.first]
    return any(w in DISCLAIMERS for w in before)


def _longer_name(text: WordText, bare: list[Hit], title_end: int) -> str | None:
    """The longer name every mention of the subject's name is part of ("Kestra Financial" when the
    page says "Kestra Financial" each time): the name followed by one capitalised word that is
    not a generic one, the same each time. Read in the text after the title (a headline
    capitalises every word); None when any mention stands alone, or none is outside the title."""
    found: str | None = None
    in_body = [h for h in bare if text.spans[h.first][1] > title_end]
    for hit in in_body:
        if hit.last >= len(text.spans):
            return None
        word, start, end = text.spans[hit.last]
        gap = text.text[text.spans[hit.last - 1][2] : start]
        written = text.text[start:end]
        if gap not in (" ", "-") or not written[:1].isupper() or word in GENERIC:
            return None
        name = f"{hit.written}{gap}{written}"
        if found is not None and normalise_phrase(found) != normalise_phrase(name):
            return None
        found = found or name
    return found


def _quoted(items: Iterable[str]) -> str:
    return ", ".join(f"'{i}'" for i in dict.fromkeys(items))


class AboutJudge:
    """The subject and its namesakes, prepared once; ``judge`` gives one source's verdict."""

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
    ) -> None:
        """``context``: what the subject's own pages say (titles and summaries of sources on
        its hosts); words two of them share tell the subject apart like its description."""
        self.name = " ".join(name.split())
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
        own |= set(self.aliases)
        self.domain_phrases = [normalise_phrase(h) for h in self.hosts]
        self.shown_host = self.hosts[0] if self.hosts else self.name
        subject_words = set(self.subject_phrase.split())

        self.namesakes: list[_Namesake] = []
        namesake_terms: dict[str, str] = {}
        namesake_name_words: set[str] = set()
        seen: set[str] = set()
        for ref in namesakes:
            full = normalise_phrase(ref.name)
            if not full or full in own or full in seen:
                continue
            seen.add(full)
            site = registrable_domain(ref.host) if ref.host else None
            variants = [full] if ref.exact else [v for v in self._variants(full) if v not in own]
            self.namesakes.append(_Namesake(ref, variants, site))
            namesake_name_words |= {stem(w) for w in full.split()}
            # Context words come from the note only: a name's own words ("Communications",
            # "Medical") are matched as part of the name, and alone they prove little.
            for term_stem, word in _terms(ref.note).items():
                if word not in subject_words:
                    namesake_terms.setdefault(term_stem, word)
        described = {s: w for s, w in _terms(description).items() if w not in subject_words}
        subject_terms = dict(described)
        for term_stem, word in _context_terms(context).items():
            # A word of a namesake's name ("Communications" in a customer list) is not the subject's.
            if word not in subject_words and term_stem not in namesake_name_words:
                subject_terms.setdefault(term_stem, word)
        shared = set(subject_terms) & set(namesake_terms)
        self.subject_terms = {s: w for s, w in subject_terms.items() if s not in shared}
        self.namesake_terms = {s: w for s, w in namesake_terms.items() if s not in shared}
        # What the analyst wrote (description, notes) is strong enough to decide on one word;
        # words learned from context are not.
        self.described = {s for s in described if s in self.subject_terms}

    @classmethod
    def for_memo(cls, subject: Any, learned: Iterable[NamesakeRef] = (), context: Iterable[str] = ()) -> AboutJudge:
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
        )

    def _variants(self, full: str) -> list[str]:
        """The ways a page names a namesake: its full name, without a legal suffix, and —
        when it contains the subject's name — that name with the namesake's next word
        ("kestra medical"), which is how pages shorten it."""
        variants = [full]
        parts = full.split()
        while len(parts) > 1 and parts[-1] in LEGAL_SUFFIXES:
            parts = parts[:-1]
            variants.append(" ".join(parts))
        name = self.subject_phrase.split()
        for i in range(len(parts) - len(name) + 1):
            if parts[i : i + len(name)] != name:
                continue
            after = [w for w in parts[i + len(name) :] if w not in GENERIC]
            before = [w for w in parts[:i] if w not in GENERIC]
            if before:
                variants.append(" ".join([before[-1], *name]))
            elif after:
                variants.append(" ".join([*name, after[0]]))
            break
        return sorted(dict.fromkeys(variants), key=lambda v: (-len(v.split()), v))

    # ------------------------------------------------------------------ judging

    def judge(self, source: SourceText | object) -> About:
        src = source if isinstance(source, SourceText) else SourceText.of(source)
        if src.url and host_matches_any(src.url, self.hosts):
            host = next(h for h in self.hosts if host_matches_any(src.url, [h]))
            return About("subject", f"on {host}, the subject's own site")
        site = registrable_domain(src.url) if src.url.lower().startswith(("http://", "https://")) else None
        for ns in self.namesakes:
            if site and ns.site == site:
                return About("namesake", f"on {site}, where the namesake '{ns.ref.name}' was seen", phrase=ns.ref.name)
        title = WordText(src.title)
        text = WordText(f"{src.title}\n{src.body}" if src.body else src.title)
        return self._judge_text(text, title)

    def _judge_text(self, text: WordText, title: WordText) -> About:
        # Namesake names first: the subject's name inside "Kestra Medical" is the namesake's.
        namesake_hits: list[Hit] = []
        shortest: dict[str, Hit] = {}  # namesake name -> its shortest variant found
        taken: set[int] = set()
        disclaimed: set[int] = set()  # words of names a page disclaims: no evidence either way
        for ns in self.namesakes:
            for phrase in ns.phrases:
                for hit in text.find(phrase):
                    span = set(range(hit.first, hit.last))
                    if not _disclaimed(text, hit):
                        shortest[ns.ref.name] = hit  # phrases go longest first: the last one is shortest
                    if span & taken:
                        continue
                    taken |= span
                    if _disclaimed(text, hit):
                        disclaimed |= span
                    else:
                        namesake_hits.append(hit)
        subject = _Side()
        namesake = _Side(names=[h.written for h in namesake_hits])
        namesake.title = any(h.phrase in title for h in namesake_hits)
        for phrase in [*self.aliases, *self.domain_phrases]:
            for hit in text.find(phrase):
                if not set(range(hit.first, hit.last)) & taken and not _disclaimed(text, hit):
                    subject.names.append(hit.written)
                    subject.title = subject.title or phrase in title
        bare = [
            h
            for h in text.find(self.subject_phrase)
            if not set(range(h.first, h.last)) & taken and not _disclaimed(text, h)
        ]

        if not namesake_hits and not subject.names and not bare:
            return About("other", f"never names {self.name}")
        offered = next(iter(shortest.values())).written if shortest else None
        if namesake_hits and not subject.names and not bare:
            return About("namesake", f"names {_quoted(namesake.names)}, never {self.shown_host}", phrase=offered)

        stems = {stem(w): w for i, w in enumerate(text.words) if i not in disclaimed}
        title_stems = {stem(w) for w in title.words}
        subject.terms = [stems[s] for s in self.subject_terms if s in stems]
        namesake.terms = [stems[s] for s in self.namesake_terms if s in stems]
        s = subject.score + sum(1 for t in self.subject_terms if t in title_stems)
        n = namesake.score + sum(1 for t in self.namesake_terms if t in title_stems)
        # One word the analyst wrote (a description keyword, a namesake's note) is enough to tell
        # which NATS a page means; words learned from the subject's pages need a second.
        need_s = 1 if any(t in stems for t in self.described) else MIN_EVIDENCE
        need_n = 1 if namesake.terms else MIN_EVIDENCE
        if bare and not subject.names and not namesake_hits and s < need_s and n < need_n:
            longer = _longer_name(text, bare, len(title.text))
            if longer is not None:
                # Every mention is part of one longer name ("Kestra Financial"): probably another
                # organisation, but no namesake is known to say so. Offered for "reject this name".
                return About(
                    "unclear", f"names '{bare[0].written}' only as '{longer}', never {self.shown_host}", longer
                )
            return About("unclear", f"names '{bare[0].written}' but nothing tells which {self.name} it means")
        if s >= need_s and s >= MARGIN * n:
            return About("subject", self._subject_reason(subject, bare))
        if n >= need_n and n >= MARGIN * s:
            return About("namesake", self._namesake_reason(namesake, bare), phrase=offered or self._phrase(bare, text))
        return About(
            "unclear",
            f"names both {self._namesake_words(namesake)} and {self.name} ({self._subject_words(subject)})",
        )

    def _subject_words(self, side: _Side) -> str:
        if side.names:
            return "names " + _quoted(side.names[:SHOWN_TERMS])
        return "with " + ", ".join(side.terms[:SHOWN_TERMS])

    def _namesake_words(self, side: _Side) -> str:
        if side.names:
            return _quoted(side.names[:SHOWN_TERMS])
        return "a namesake's " + ", ".join(side.terms[:SHOWN_TERMS])

    def _subject_reason(self, side: _Side, bare: list[Hit]) -> str:
        if side.names:
            return f"names {_quoted(side.names[:SHOWN_TERMS])}"
        return f"names '{bare[0].written}' with {', '.join(side.terms[:SHOWN_TERMS])}"

    def _namesake_reason(self, side: _Side, bare: list[Hit]) -> str:
        if side.names and not bare:
            return f"names {_quoted(side.names[:SHOWN_TERMS])}, never {self.shown_host}"
        if side.names:
            return f"mostly about {_quoted(side.names[:SHOWN_TERMS])}; its '{bare[0].written}' reads as the namesake"
        which = next((ns.ref for ns in self.namesakes if ns.ref.note), None)
        like = f" ({which.name}: {which.note})" if which is not None else ""
        return f"names '{bare[0].written}' only with {', '.join(side.terms[:SHOWN_TERMS])}{like}"

    def _phrase(self, bare: list[Hit], text: WordText) -> str | None:
        """With no namesake name on the page: the subject's name followed by the namesake
        words right after it ("Nats air traffic control"), what "reject this name" offers."""
        for hit in bare:
            last = hit.last
            while last < len(text.words) and last - hit.first < 5 and stem(text.words[last]) in self.namesake_terms:
                last += 1
            if last > hit.last:
                return text.written(hit.first, last)
        # Else the longest run of namesake words on the page ("UK air traffic control").
        best_run: tuple[int, int] = (0, 0)
        start = None
        for i, word in enumerate([*text.words, ""]):
            if word and stem(word) in self.namesake_terms:
                start = i if start is None else start
                continue
            if start is not None and i - start > best_run[1] - best_run[0]:
                best_run = (start, i)
            start = None
        if best_run[1] - best_run[0] >= 2:
            return text.written(*best_run)
        # Else the name of the namesake whose note the page echoes (the analyst can edit it).
        found = {stem(w) for w in text.words}
        best = max(
            self.namesakes,
            key=lambda ns: sum(1 for t in _terms(ns.ref.note) if t in found),
            default=None,
        )
        return best.ref.name if best is not None else None

    @property
    def namesake_refs(self) -> list[NamesakeRef]:
        """Every namesake this judge knows, declared first (what the writer is told to avoid)."""
        return [ns.ref for ns in self.namesakes]

    def judge_all(self, sources: Iterable[SourceText | object]) -> list[About]:
        return [self.judge(s) for s in sources]
