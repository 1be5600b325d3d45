"""The sandbox writer's section prose and its deliberately imperfect citations.

There is no language model here: the prose is assembled from real sentences of
the retrieved sources (the prompt's ``[^E1]`` block) and of the writer's own
search results, so that token-overlap substitution has something to find. The
citations reproduce what sonar-pro did in the field (129 web citations in one memo:
37% fabricated URLs, 34% real pages with the wrong title or date, 29% correct):

- ``field`` mode (default) — per web citation, a response-level fabrication rate
  is drawn from Beta(0.95, 1.55) (mean ≈ 0.38, and wildly different between two
  prompts, as observed: 0% one run, 90% the next); a non-fabricated citation
  carries a wrong title or date with probability 0.57 (≈ 34% of the total), the
  rest are correct (≈ 29%). Invented URLs are ``example.com`` placeholders or
  plausible paths on real domains (bloomberg.com, techcrunch.com, the subject's
  own blog …), some on sentences a retrieved source supports (the reconciler
  should substitute them), some on unsupported filler (it should drop them).
  Also: retrieved markers past the end of the block (``[^E9]`` of 6), numbers
  past the end of ``search_results`` (``[12]`` of 8), markers before the full
  stop (``$41M[^2].``), chains (``[^2][^3]``), one key cited three times in a
  paragraph, a definition nobody cites, ``[needs source]`` after some unsupported
  sentences. With no retrieved block there are no ``[^E…]`` markers except, in
  ~12% of answers, one out-of-range ``[^E1…3]`` (a model echoing a convention it
  was never given).
- ``clean`` mode — every citation correct and in house style: markers after the
  full stop, one space apart, one marker per source per paragraph.

In both modes footnote numbers skip the bare ``[N]`` numbers of the same answer,
so every key names one citation (the reconcile report's ``key`` does not say
which namespace a number came from).

With the writer's own search disabled there are no search results and no bare
``[N]``; in field mode ~35% of answers still carry one or two footnotes whose URLs
the model typed from memory (a model asked to type URLs recalls them, whether
or not it searched) — all ``invented``, for the reconciler to substitute or drop.
Every choice comes from the ``random.Random`` the caller seeds (from
``writer_api.digest``: the server's seed and what the request asks, never the date), so
the same seed, section and sources give the same text on any day. ``Composition.truth`` records the class of
every citation so a bench can score raw writer output.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from sourcedesk.core.net.urls import host_of, normalise_url, strip_www
from sourcedesk.sandbox.writer_prompt import ParsedPrompt
from sourcedesk.sandbox.writer_text import (
    FILLERS,
    STOPWORDS,
    fact_sentences,
    sentences,
    slug,
    snippet_sentences,
    supports,
    tokens,
    upper_first,
)
from sourcedesk.sandbox.writer_truth import truth_entries

NEEDS_SOURCE = "[needs source]"  # what the product's prompt asks for after an unsupported claim
INVENTED_HOSTS = ("example", "example", "bloomberg", "techcrunch", "subject", "reuters", "forbes", "venturebeat")


MEMORY_CITATION_RATE = 0.35  # strict-mode answers that still invent a footnote URL

# --------------------------------------------------------------------------- plan records


@dataclass
class Unit:
    text: str
    kind: str  # lead, fact, summary, web, filler
    origin: str | None = None  # URL of the source the sentence came from
    marker: str | None = None  # retrieved marker of that source
    web_index: int | None = None  # its index in search_results
    cites: list[Cite] = field(default_factory=list)
    needs_source: bool = False  # the product's "[needs source]" flag after the sentence


@dataclass
class Cite:
    kind: str  # footnote, numeric, retrieved
    cls: str
    url: str | None
    supported_by: str | None = None
    label: str = ""  # "3" / "E2" / "12" (footnotes are numbered at render time)
    title: str | None = None  # footnote definition
    date: str | None = None
    title_ok: bool | None = None
    date_ok: bool | None = None

    def marker(self) -> str:
        return f"[{self.label}]" if self.kind == "numeric" else f"[^{self.label}]"


@dataclass
class Composition:
    content: str
    truth: dict[str, Any]


# --------------------------------------------------------------------------- composer


class _Composer:
    def __init__(
        self,
        parsed: ParsedPrompt,
        results: Sequence[dict[str, Any]],
        corpus_urls: dict[str, str],
        corpus_titles: dict[str, list[str]],
        mode: str,
        search_enabled: bool,
        rng: random.Random,
    ):
        self.p = parsed
        self.results = list(results)
        self.corpus_urls = corpus_urls  # normalised url -> title
        self.corpus_titles = corpus_titles  # host -> titles
        self.field = mode == "field"
        self.search = search_enabled
        self.rng = rng
        self.S = parsed.subject_name
        self.units: list[Unit] = []
        self.orphans: list[Cite] = []
        # (url, what describes it): retrieved sources first, then search results — both kept even
        # when one page is in both lists (their texts differ: summary vs snippet).
        self.ground: list[tuple[str, str]] = [(s.url, f"{s.title} {s.summary}") for s in parsed.sources]
        self.ground += [(r["url"], f"{r['title']} {r['snippet']}") for r in self.results]
        self.known = {normalise_url(s.url) for s in parsed.sources if s.url}
        self.known |= {normalise_url(r["url"]) for r in self.results}

    # ---- sentence units
    def build_units(self) -> None:
        rng = self.rng
        used_facts: set[str] = set()
        sources = list(self.p.sources)
        if self.field and len(sources) > 1:
            sources = [sources[0]] + [s for s in sources[1:] if rng.random() < 0.75]
        for src in sources[:6]:
            summary = src.summary
            if summary.strip().startswith("{"):  # an Exa schema summary passed on as a JSON string
                try:
                    loaded = json.loads(summary)
                except ValueError:
                    loaded = None
                if isinstance(loaded, dict):
                    src.facts = {**loaded, **src.facts}
                    summary = ""
            facts = [f for f in fact_sentences(self.S, src.facts) if f[0] not in used_facts][:2]
            for tid, text in facts:
                if len(used_facts) < 4:
                    used_facts.add(tid)
                    self.units.append(Unit(text, "fact", src.url or None, src.marker))
            for text in sentences(summary)[: rng.randint(1, 2)]:
                self.units.append(Unit(text, "summary", src.url or None, src.marker))
        if self.results:
            thin = not self.units  # nothing retrieved: the answer leans on the writer's own search
            count = min(len(self.results), rng.randint(4, 6) if thin else rng.randint(2, 5) if self.field else 4)
            picks = sorted(rng.sample(range(len(self.results)), count))
            for j in picks:
                options = snippet_sentences(self.results[j]["snippet"])
                for text in options[: 2 if thin else 1]:
                    self.units.append(Unit(text, "web", self.results[j]["url"], web_index=j))
        by_text: dict[str, Unit] = {}
        for unit in self.units:  # a search result may repeat a retrieved source's sentence
            first = by_text.setdefault(unit.text, unit)
            if first is not unit and first.web_index is None:
                first.web_index = unit.web_index
        self.units = list(by_text.values())
        self._lead()

    def _lead(self) -> None:
        """Open with a sentence that names the subject, preferably one that starts with it."""
        names = [n.lower() for n in [self.S, *self.p.aliases] if n]

        def score(unit: Unit) -> int:
            text = unit.text.lower()
            if not any(re.search(rf"\b{re.escape(n)}\b", text) for n in names):
                return 0
            starts = any(text.startswith(n) for n in names[:1]) * 4 + any(text.startswith(n) for n in names) * 2
            return 1 + starts + (unit.kind in ("summary", "web"))

        best = max(range(len(self.units)), key=lambda i: (score(self.units[i]), -i), default=None)
        if best is not None and score(self.units[best]) > 0:
            self.units.insert(0, self.units.pop(best))
            return
        self.units.insert(0, Unit(f"Publicly available information on {self.S} is summarised below.", "lead"))

    def filler(self) -> Unit:
        options = [upper_first(f.format(S=self.S)) for f in FILLERS]
        self.rng.shuffle(options)
        taken = {u.text for u in self.units}
        for text in options:
            if text not in taken and self.max_shared(text) <= 1:  # far below the support floor
                unit = Unit(text, "filler")
                self.units.insert(self.rng.randint(1, len(self.units)), unit)
                return unit
        unit = Unit(f"Some details about {self.S} could not be confirmed independently.", "filler")
        self.units.append(unit)
        return unit

    # ---- citation plan
    def plan(self) -> None:
        rng = self.rng
        for unit in self.units:
            if unit.marker and (not self.field or rng.random() < 0.85):
                unit.cites.append(Cite("retrieved", "retrieved", unit.origin, unit.origin, unit.marker))
        if self.field:
            self._plan_field()
        elif self.search:
            for unit in self.units:
                if unit.web_index is not None:
                    style = "numeric" if rng.random() < 0.6 else "footnote"
                    unit.cites.append(self._real_cite(unit, style, wrong=False))
        if self.field and rng.random() < 0.5:
            self.filler().needs_source = rng.random() < 0.5  # uncited prose from "memory", sometimes flagged

    def _plan_field(self) -> None:
        rng = self.rng
        retrieved = [u for u in self.units if u.marker]
        if len(retrieved) > 1 and rng.random() < 0.3:  # a chain: second retrieved marker on one sentence
            a, b = rng.sample(retrieved, 2)
            if a.marker != b.marker and b.marker:
                a.cites.append(Cite("retrieved", "retrieved", b.origin, a.origin, b.marker))
        if self.search:
            p_invented = rng.betavariate(0.95, 1.55)
            web_units = [u for u in self.units if u.web_index is not None]
            rng.shuffle(web_units)
            for _ in range(rng.randint(3, 7)):
                unit = None if rng.random() < p_invented else self._web_unit(web_units)
                if unit is None:  # fabricated — or nothing real was found to cite
                    self._invented()
                    continue
                wrong = rng.random() < 0.57
                style = "footnote" if wrong or rng.random() < 0.5 else "numeric"
                unit.cites.append(self._real_cite(unit, style, wrong))
            if rng.random() < 0.3:
                self._orphan_definition()
            if self.results and rng.random() < 0.4:
                n = len(self.results) + rng.randint(1, 5)
                self._body_unit().cites.append(Cite("numeric", "out_of_range", None, label=str(n)))
        elif rng.random() < MEMORY_CITATION_RATE:  # no search, but asked to cite: URLs typed from memory
            for _ in range(rng.randint(1, 2)):
                self._invented()
        prefix, top = self._retrieved_range()
        if (self.p.sources and rng.random() < 0.45) or (not self.p.sources and rng.random() < 0.12):
            label = f"{prefix}{top + rng.randint(1, 4)}" if self.p.sources else f"E{rng.randint(1, 3)}"
            self._body_unit().cites.append(Cite("retrieved", "out_of_range", None, label=label))

    def _web_unit(self, fresh: list[Unit]) -> Unit | None:
        """A sentence from a search result for one more real citation: an uncited one, else a
        new sentence from a result not yet used, else (all used) a sentence cited already."""
        if fresh:
            return fresh.pop()
        used = {u.web_index for u in self.units if u.web_index is not None}
        for j in range(len(self.results)):
            options = snippet_sentences(self.results[j]["snippet"]) if j not in used else []
            if options:
                same = next((u for u in self.units if u.text == options[0]), None)
                if same is None:
                    same = Unit(options[0], "web", self.results[j]["url"], web_index=j)
                    self.units.insert(self.rng.randint(1, len(self.units)), same)
                same.web_index = j
                return same
        cited = [u for u in self.units if u.web_index is not None]
        return self.rng.choice(cited) if cited else None

    def _retrieved_range(self) -> tuple[str, int]:
        by_prefix: dict[str, int] = {}
        for s in self.p.sources:
            by_prefix[s.prefix] = max(by_prefix.get(s.prefix, 0), s.number)
        if not by_prefix:
            return "E", 0
        prefix = "E" if "E" in by_prefix else max(by_prefix, key=lambda p: by_prefix[p])
        return prefix, by_prefix[prefix]

    def _body_unit(self) -> Unit:
        return self.units[self.rng.randint(1, len(self.units) - 1)] if len(self.units) > 1 else self.units[0]

    def _real_cite(self, unit: Unit, style: str, wrong: bool) -> Cite:
        j = unit.web_index
        assert j is not None  # only units drawn from a web result are cited this way
        result = self.results[j]
        if style == "numeric":
            return Cite("numeric", "correct", result["url"], unit.origin, label=str(j + 1))
        title, date_, title_ok, date_ok = result["title"], result.get("date"), True, True
        if wrong:
            what = self.rng.choices(("title", "date", "both"), (0.45, 0.30, 0.25))[0]
            if what in ("title", "both"):
                title, title_ok = self._wrong_title(result, unit.text), False
            if what in ("date", "both"):
                date_, date_ok = self._wrong_date(date_), False
        return Cite(
            "footnote",
            "wrong_metadata" if wrong else "correct",
            result["url"],
            unit.origin,
            title=title,
            date=date_,
            title_ok=title_ok,
            date_ok=date_ok,
        )

    def _wrong_title(self, result: dict[str, Any], claim: str) -> str:
        real = result["title"]
        host = strip_www(host_of(result["url"]) or "")
        options = [t for t in self.corpus_titles.get(host, []) if t != real]
        options += [r["title"] for r in self.results if r["title"] != real]
        year = re.search(r"\b(20\d\d)\b", real)
        if year:
            options.append(real.replace(year.group(1), str(int(year.group(1)) - self.rng.randint(1, 2))))
        words = [w for w in re.findall(r"[A-Za-z0-9$]+", claim) if w.lower() not in STOPWORDS][:6]
        options.append(f"{self.S}: {' '.join(w.capitalize() for w in words)}")
        return self.rng.choice(options)

    def _wrong_date(self, real: str | None) -> str:
        try:
            base = date.fromisoformat((real or "")[:10])
        except ValueError:
            base = date(2024, 1, 1) + timedelta(days=self.rng.randint(0, 500))
            return base.isoformat()
        shift = self.rng.randint(120, 800) * self.rng.choice((-1, 1))
        return (base + timedelta(days=shift)).isoformat()

    def max_shared(self, claim: str) -> int:
        claim_tokens = tokens(claim)
        return max((len(claim_tokens & tokens(text)) for _url, text in self.ground), default=0)

    def support_of(self, claim: str) -> str | None:
        """The ground-truth source that best supports ``claim`` by the design's rule (ties: the earlier)."""
        best, best_score = None, 0.0
        claim_tokens = tokens(claim)
        for url, text in self.ground:
            if url and supports(claim, text):
                score = len(claim_tokens & tokens(text)) / max(len(claim_tokens), 1)
                if score > best_score:
                    best, best_score = url, score
        return best

    def _invented(self) -> None:
        """A fabricated URL: 60% on a sentence some retrieved source supports (substitutable),
        otherwise on an unsupported filler sentence (to be dropped)."""
        rng = self.rng
        supported = [
            u
            for u in self.units
            if u.origin and not any(c.cls == "invented" for c in u.cites) and self.support_of(u.text)
        ]
        unit = rng.choice(supported) if supported and rng.random() < 0.6 else self.filler()
        url, title = self._invented_url(unit.text)
        unit.cites.append(
            Cite(
                "footnote",
                "invented",
                url,
                self.support_of(unit.text),
                title=title,
                date=self._wrong_date(None) if rng.random() < 0.5 else None,
            )
        )

    def _invented_url(self, claim: str) -> tuple[str, str]:
        rng = self.rng
        subject_slug = slug(re.findall(r"[a-z0-9]+", self.S.lower()), 3)
        words = [
            w
            for w in re.findall(r"[a-z0-9]+", claim.lower())
            if w not in STOPWORDS and w not in subject_slug.split("-") and len(w) > 1
        ]
        words = words[: rng.randint(3, 6)]
        claim_slug = slug(words)
        y, m, d = rng.randint(2022, 2025), rng.randint(1, 12), rng.randint(1, 28)
        subject_host = strip_www(host_of(self.p.subject_url or "") or "")
        kind = rng.choice(INVENTED_HOSTS)
        if kind == "subject" and not subject_host:
            kind = "techcrunch"
        url = {
            "example": rng.choice(
                (
                    f"https://example.com/{subject_slug}/{claim_slug}",
                    f"https://www.example.com/news/{subject_slug}-{claim_slug}",
                )
            ),
            "bloomberg": f"https://www.bloomberg.com/news/articles/{y}-{m:02d}-{d:02d}/{subject_slug}-{claim_slug}",
            "techcrunch": f"https://techcrunch.com/{y}/{m:02d}/{d:02d}/{subject_slug}-{claim_slug}/",
            "subject": f"https://{subject_host}/blog/{claim_slug}/",
            "reuters": f"https://www.reuters.com/technology/{subject_slug}-{claim_slug}-{y}-{m:02d}-{d:02d}/",
            "forbes": f"https://www.forbes.com/sites/{rng.choice(('alexkonrad', 'davidjeans', 'iainmartin'))}"
            f"/{y}/{m:02d}/{d:02d}/{subject_slug}-{claim_slug}/",
            "venturebeat": f"https://venturebeat.com/data-infrastructure/{subject_slug}-{claim_slug}/",
        }[kind]
        base, n = url, 2
        while normalise_url(url) in self.corpus_urls or normalise_url(url) in self.known:
            url = base.rstrip("/") + f"-{n}" + ("/" if base.endswith("/") else "")
            n += 1
        title = f"{self.S} {' '.join(w.capitalize() for w in words)}".strip()
        return url, title

    def _orphan_definition(self) -> None:
        unused = [
            j
            for j in range(len(self.results))
            if not any(c.url == self.results[j]["url"] for u in self.units for c in u.cites)
        ]
        if unused:
            r = self.results[self.rng.choice(unused)]
            cite = Cite(
                "footnote", "correct", r["url"], None, title=r["title"], date=r.get("date"), title_ok=True, date_ok=True
            )
        else:
            url, title = self._invented_url(self.rng.choice(self.units).text)
            cite = Cite("footnote", "invented", url, None, title=title)
        self.orphans.append(cite)

    # ---- paragraphs and rendering
    def paragraphs(self) -> list[list[Unit]]:
        lead, rest = self.units[0], self.units[1:]
        groups: dict[int, list[Unit]] = {}
        questions = [tokens(q) for q in self.p.questions[:5]]
        for unit in rest:
            scores = [len(tokens(unit.text) & q) for q in questions]
            best = max(range(len(scores)), key=scores.__getitem__) if scores and max(scores) > 0 else -1
            groups.setdefault(best, []).append(unit)
        ordered = [groups[k] for k in sorted(groups, key=lambda k: (k < 0, k))]
        ordered = [g[i : i + 5] for g in ordered for i in range(0, len(g), 5)]  # no wall of text
        flat = [u for g in ordered for u in g]
        if len(ordered) < 2 or len(ordered) > 5 or min(map(len, ordered)) < 2:
            target = max(2, min(5, round(len(flat) / 3.5))) if len(flat) >= 3 else 1
            size = -(-len(flat) // target) if flat else 1
            ordered = [flat[i : i + size] for i in range(0, len(flat), size)] or [[]]
        ordered[0].insert(0, lead)
        return [g for g in ordered if g]

    def render(self) -> Composition:
        paras = self.paragraphs()
        if self.field and self.rng.random() < 0.35:
            self._triple(paras)
        if not self.field:
            for para in paras:
                _one_marker_per_source(para)
        footnotes: dict[int, int] = {}  # id(cite) -> number
        order: list[Cite] = []
        # Footnote numbers skip the bare [N] numbers of this answer (see the module docstring).
        bare = {c.label for para in paras for u in para for c in u.cites if c.kind == "numeric"}

        def label(cite: Cite) -> str:
            if cite.kind == "footnote":
                if id(cite) not in footnotes:
                    n = max(footnotes.values(), default=0) + 1
                    while str(n) in bare:
                        n += 1
                    footnotes[id(cite)] = n
                    order.append(cite)
                cite.label = str(footnotes[id(cite)])
            return cite.marker()

        out_paras = []
        for para in paras:
            rendered = []
            for unit in para:
                markers = [label(c) for c in unit.cites]
                text = self._attach(unit.text, markers)
                rendered.append(f"{text} {NEEDS_SOURCE}" if unit.needs_source else text)
            out_paras.append(" ".join(rendered))
        for cite in self.orphans:
            label(cite)
        content = "\n\n".join(out_paras)
        definitions = [self._definition(c) for c in order]
        if definitions:
            content += "\n\n" + "\n".join(definitions)
        return Composition(
            content,
            {
                "mode": "field" if self.field else "clean",
                "citations": truth_entries(paras, order, self.orphans, content),
            },
        )

    def _triple(self, paras: list[list[Unit]]) -> None:
        for para in self.rng.sample(paras, len(paras)):
            cited = [c for u in para for c in u.cites if c.cls in ("retrieved", "correct", "wrong_metadata")]
            others = [u for u in para if u.origin]
            if len(others) >= 3 and cited:
                cite = self.rng.choice(cited)
                for unit in [u for u in others if cite not in u.cites][:2]:
                    unit.cites.append(cite)
                return

    def _attach(self, text: str, markers: list[str]) -> str:
        if not markers:
            return text
        if not self.field:
            return f"{text} {' '.join(markers)}"
        chain = "".join(markers)
        r = self.rng.random()
        if r < 0.6 and text[-1] in ".!?":
            return f"{text[:-1]}{chain}{text[-1]}"
        return f"{text} {chain}" if r < 0.85 else f"{text}{chain}"

    @staticmethod
    def _definition(cite: Cite) -> str:
        title = re.sub(r"[\[\]]", "", cite.title or cite.url or "")
        line = f"[^{cite.label}]: [{title}]({cite.url})"
        return f"{line} ({cite.date})" if cite.date else line


def _one_marker_per_source(para: list[Unit]) -> None:
    """The analysts' house style the sandbox imitates: a source is cited once per paragraph,
    at its last use (so the reconciler meets the clusters real drafts have)."""
    seen: set[str] = set()
    for unit in reversed(para):
        kept = []
        for cite in reversed(unit.cites):
            key = f"{cite.kind}:{cite.url or cite.label}"
            if key not in seen:
                seen.add(key)
                kept.append(cite)
        unit.cites = kept[::-1]


def compose(
    parsed: ParsedPrompt,
    results: Sequence[dict[str, Any]],
    *,
    corpus: Sequence[Any] = (),
    mode: str = "field",
    search_enabled: bool = True,
    rng: random.Random,
) -> Composition:
    """Section prose and its citation truth for one request."""
    corpus_urls = {normalise_url(p.url): p.title for p in corpus}
    corpus_titles: dict[str, list[str]] = {}
    for page in corpus:
        corpus_titles.setdefault(strip_www(host_of(page.url) or ""), []).append(page.title)
    composer = _Composer(
        parsed, results if search_enabled else (), corpus_urls, corpus_titles, mode, search_enabled, rng
    )
    composer.build_units()
    composer.plan()
    return composer.render()
