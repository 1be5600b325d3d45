"""``check-urls``: every cited URL checked for liveness, every quotation and statistic grounded.

One report for a PATH (see ``targets``): a row per cited URL per note and key,
a row per grounded item. Each distinct URL is fetched once, however many notes
cite it, with bounded concurrency (and at most ``PER_HOST`` at a time per host,
to stay polite); the per-citation status then depends on where it is cited:

* 401/403 prove the page exists only when the URL is in the retrieved set — the
  note's frozen source set in the store, or, when the store has no set for the
  note, its ``## Sources (retrieved)`` group — ``forbidden``; anywhere else it
  is ``unverified_403`` (a 403 on a fabricated bloomberg.com path once passed as
  "probably valid");
* a name that does not resolve is ``dead`` only when some other URL in the
  same check got an HTTP answer from a public address; otherwise the network
  itself is in doubt and it is ``unreachable``.

Grounding alone (``liveness=False``, or ``ground_notes``) needs no network at all:
no DNS, no request, no URL rows — the workbench runs it after every run, and
liveness only when the analyst asks for it.

Problems (exit code 1): ``dead``, ``soft_404``, ``placeholder`` URLs and
``not_found`` grounding. Everything that could not be decided — ``unreachable``,
``error``, ``unverified_403``, ``paywall``, ``blocked_private``, ``unverifiable``
— is reported but is not a problem: an offline machine must not fail a memo.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from sourcedesk.core.citations.figures import figures, matches
from sourcedesk.core.domain.storage import EvidenceOpener, EvidenceStore
from sourcedesk.core.net.deadline import INNER_MARGIN_S, Deadline, DeadlineExceeded, within
from sourcedesk.core.net.urls import host_of
from sourcedesk.core.verify import addresses
from sourcedesk.core.verify.addresses import Resolver
from sourcedesk.core.verify.evidence import Evidence
from sourcedesk.core.verify.grounding import NOT_FOUND, SUPPORTED, UNVERIFIABLE, ground
from sourcedesk.core.verify.liveness import (
    AUTH,
    CHECK_RETRY,
    DNS_FAILED,
    ERROR,
    MAX_BODY_BYTES,
    Fetch,
    FetchOptions,
    fetch_url,
)
from sourcedesk.core.verify.stored import load_evidence
from sourcedesk.core.verify.targets import (
    UNCITED_STATISTIC,
    CitedUrl,
    NoteCitations,
    display_name,
    read_note,
    resolve_target,
)

URL_STATUSES = (
    "ok",
    "redirected",
    "dead",
    "soft_404",
    "paywall",
    "forbidden",
    "unverified_403",
    "error",
    "unreachable",
    "placeholder",
    "blocked_private",
    "skipped",
)
GROUNDING_STATUSES = (SUPPORTED, NOT_FOUND, UNVERIFIABLE)
PROBLEM_URL_STATUSES = frozenset({"dead", "soft_404", "placeholder"})
PROBLEM_GROUNDING_STATUSES = frozenset({NOT_FOUND})
PER_HOST = 2


@dataclass(frozen=True)
class CheckOptions:
    timeout_s: float = 10.0  # one request, headers and body together
    concurrency: int = 8
    max_retries: int = CHECK_RETRY.max_retries
    allow_private: bool = False
    url_deadline_s: float = 30.0  # one URL: every hop, retry and pause
    deadline_s: float = 300.0  # the whole check
    max_page_bytes: int = MAX_BODY_BYTES

    @classmethod
    def from_settings(cls, settings: Any, *, allow_private: bool = False) -> CheckOptions:
        """The check settings; ``allow_private`` (the CLI flag) can only widen the setting."""
        return cls(
            timeout_s=float(settings.check_timeout_s),
            concurrency=max(1, int(settings.check_concurrency)),
            max_retries=max(0, int(settings.check_max_retries)),
            allow_private=bool(allow_private or settings.allow_private_urls),
            url_deadline_s=float(settings.check_url_deadline_s),
            deadline_s=float(settings.check_deadline_s),
            max_page_bytes=int(settings.check_max_page_bytes),
        )

    def fetch_options(self) -> FetchOptions:
        retry = dataclasses.replace(CHECK_RETRY, max_retries=self.max_retries)
        return FetchOptions(
            timeout_s=self.timeout_s, allow_private=self.allow_private, retry=retry, max_body_bytes=self.max_page_bytes
        )


@dataclass
class UrlRow:
    url: str
    note: str
    key: str | None
    status: str
    final_url: str | None = None
    http_status: int | None = None
    in_retrieved_set: bool = False
    detail: str = ""
    title: str | None = None  # what the note calls the page (human output only)

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "note": self.note,
            "key": self.key,
            "status": self.status,
            "final_url": self.final_url,
            "http_status": self.http_status,
            "in_retrieved_set": self.in_retrieved_set,
            "detail": self.detail,
        }


@dataclass
class GroundingRow:
    note: str
    key: str
    kind: str  # "quote" | "statistic"
    text: str
    status: str

    def to_json(self) -> dict[str, Any]:
        return {"note": self.note, "key": self.key, "kind": self.kind, "text": self.text, "status": self.status}


@dataclass
class CheckReport:
    urls: list[UrlRow] = field(default_factory=list)
    grounding: list[GroundingRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: int = 0
    requests: int = 0  # HTTP requests sent (0 when every URL was refused before any request)
    liveness: bool = True  # False: grounding only, the URLs were not checked (``urls`` is empty)

    def counts(self) -> dict[str, Any]:
        urls = Counter(r.status for r in self.urls)
        grounding = Counter(r.status for r in self.grounding)
        return {
            "urls": {"total": len(self.urls), **{s: urls.get(s, 0) for s in URL_STATUSES}},
            "grounding": {"total": len(self.grounding), **{s: grounding.get(s, 0) for s in GROUNDING_STATUSES}},
            "problems": self.problems,
        }

    @property
    def problems(self) -> int:
        return sum(r.status in PROBLEM_URL_STATUSES for r in self.urls) + sum(
            r.status in PROBLEM_GROUNDING_STATUSES for r in self.grounding
        )

    @property
    def exit_code(self) -> int:
        return 1 if self.problems else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "urls": [r.to_json() for r in self.urls],
            "grounding": [r.to_json() for r in self.grounding],
            "counts": self.counts(),
            "warnings": list(self.warnings),
        }


Progress = Callable[[int, int], None]  # (distinct URLs fetched so far, distinct URLs in all)


@dataclass
class Prepared:
    """What a check reads from disk before any request: the notes, their stored evidence."""

    notes: list[NoteCitations]
    evidence: dict[str, Evidence]
    warnings: list[str] = field(default_factory=list)


def _fetch_key(url: str) -> str:
    return url.strip().split("#", 1)[0]


def _default_resolver(timeout_s: float) -> Resolver:
    async def resolve(host: str) -> list[str]:
        return await addresses.system_resolve(host, timeout_s)  # looked up per call: tests replace it

    return resolve


async def fetch_all(
    urls: list[str],
    options: CheckOptions,
    *,
    resolve: Resolver | None = None,
    client: httpx.AsyncClient | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    rng: random.Random | None = None,
    progress: Progress | None = None,
) -> dict[str, Fetch]:
    """Fetch each distinct URL once, ``options.concurrency`` at a time, ``PER_HOST`` per host.

    Each URL has ``options.url_deadline_s`` for all its hops and retries, and the whole
    check ``options.deadline_s``: a URL still running then is stopped, one not yet
    started is not requested; both are ``error`` rows that say so.
    ``progress(done, total)`` is called once before the first fetch and after each one."""
    resolve = resolve or _default_resolver(options.timeout_s)
    fetch_options = options.fetch_options()
    distinct = list(dict.fromkeys(_fetch_key(u) for u in urls))
    limit = asyncio.Semaphore(options.concurrency)
    per_host: dict[str, asyncio.Semaphore] = {}
    done = 0
    whole = Deadline(options.deadline_s, "the whole check (check_deadline_s)")

    def tell() -> None:
        if progress is not None:
            progress(done, len(distinct))

    async def bounded(url: str, http: httpx.AsyncClient) -> Fetch:
        partial = Fetch(url=url, status=ERROR)
        if whole.remaining <= 2 * INNER_MARGIN_S:  # too little left to ask anything
            partial.detail = f"not checked: {whole.what} ran out ({whole.seconds:g} s) before its turn"
            return partial
        per_url = whole.remaining >= options.url_deadline_s
        seconds = options.url_deadline_s if per_url else whole.remaining
        what = "this URL's check (check_url_deadline_s)" if per_url else whole.what
        try:
            return await within(
                fetch_url(url, http, resolve, fetch_options, sleep=sleep, rng=rng, into=partial), seconds, what=what
            )
        except DeadlineExceeded:
            partial.status = ERROR
            hops = f" after {len(partial.redirects)} redirect(s)" if partial.redirects else ""
            partial.detail = f"gave up{hops}: {what} ran out ({seconds:g} s)" + (
                f"; last: {partial.detail}" if partial.detail else ""
            )
            return partial

    async def one(url: str, http: httpx.AsyncClient) -> Fetch:
        nonlocal done
        host_gate = per_host.setdefault(host_of(url) or url, asyncio.Semaphore(PER_HOST))
        async with host_gate, limit:
            result = await bounded(url, http)
        done += 1
        tell()
        return result

    tell()

    async def run(http: httpx.AsyncClient) -> list[Fetch]:
        return list(await asyncio.gather(*(one(u, http) for u in distinct)))

    if client is not None:
        results = await run(client)
    else:
        timeout = httpx.Timeout(options.timeout_s)
        limits = httpx.Limits(max_connections=options.concurrency * 2, max_keepalive_connections=options.concurrency)
        async with httpx.AsyncClient(timeout=timeout, limits=limits, follow_redirects=False) as http:
            results = await run(http)
    return dict(zip(distinct, results, strict=False))


def _url_row(cited: CitedUrl, fetch: Fetch, in_retrieved: bool, network_ok: bool) -> UrlRow:
    status, detail = fetch.status, fetch.detail
    if status == AUTH:
        if in_retrieved:
            status, detail = "forbidden", f"{detail}: refuses us, but retrieval returned this page, so it exists"
        else:
            status, detail = "unverified_403", f"{detail}: not proof the page exists (not in the retrieved set)"
    elif status == DNS_FAILED:
        if network_ok:
            status = "dead"
        else:
            status = "unreachable"
            detail = f"{detail} (and no other URL answered: offline?)"
    return UrlRow(
        url=cited.url,
        note=cited.note,
        key=cited.key,
        status=status,
        final_url=fetch.final_url,
        http_status=fetch.http_status,
        in_retrieved_set=in_retrieved,
        detail=detail,
        title=cited.title,
    )


def _grounding_rows(note: NoteCitations, evidence: Evidence | None) -> list[GroundingRow]:
    """One row per item and citation; an item a cluster's other source supports is one supported row."""
    rows: list[GroundingRow] = []
    seen: set[tuple[str, str, str]] = set()
    for item in note.items:
        if item.kind == UNCITED_STATISTIC:
            rows.append(GroundingRow(note.name, "", item.kind, item.text, _ground_uncited(item.text, evidence)))
            continue
        verdicts = []
        for key in item.keys:
            url = note.url_by_key.get(key)
            texts = evidence.texts_for(url) if evidence is not None and url else []
            titles = evidence.titles_for(url) if evidence is not None and url else []
            verdicts.append((key, ground(item.kind, item.text, texts, titles)))
        supported = [key for key, verdict in verdicts if verdict == SUPPORTED]
        chosen = [(supported[0], SUPPORTED)] if supported else verdicts
        for key, verdict in chosen:
            if (key, item.kind, item.text) not in seen:
                seen.add((key, item.kind, item.text))
                rows.append(GroundingRow(note.name, key, item.kind, item.text, verdict))
    return rows


def _ground_uncited(text: str, evidence: Evidence | None) -> str:
    """An uncited money amount or percentage against every source of the frozen set: ``supported``
    when some retrieved source states that value (``$125M`` = ``USD 125 million``), ``not_found`` when
    none does, ``unverifiable`` when the frozen set or its text is unknown."""
    if evidence is None or not evidence.sets:
        return UNVERIFIABLE
    wanted = [f for f in figures(text) if f.kind in ("money", "percent")]
    texts = [t for url in evidence.retrieved for t in evidence.texts.get(url, []) + evidence.titles.get(url, [])]
    if not wanted or not texts:
        return UNVERIFIABLE
    stated = [f for t in texts for f in figures(t)]
    return SUPPORTED if all(any(matches(w, f) for f in stated) for w in wanted) else NOT_FOUND


def in_retrieved_set(cited: CitedUrl, evidence: Evidence | None) -> bool:
    """The URL is in the note's frozen set; without a stored set, the note's retrieved group decides."""
    if evidence is not None and evidence.sets:
        return evidence.in_retrieved_set(cited.url)
    return cited.group == "retrieved"


def ground_notes(notes: list[NoteCitations], evidence: dict[str, Evidence]) -> CheckReport:
    """The grounding half alone: offline and cheap (no DNS, no request, no URL rows)."""
    report = CheckReport(notes=len(notes), liveness=False)
    for note in notes:
        report.warnings += note.warnings
        report.grounding += _grounding_rows(note, evidence.get(note.name))
    return report


async def check_notes(
    notes: list[NoteCitations],
    evidence: dict[str, Evidence],
    options: CheckOptions,
    *,
    liveness: bool = True,
    resolve: Resolver | None = None,
    client: httpx.AsyncClient | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    rng: random.Random | None = None,
    announce: Callable[[str], None] | None = None,
    progress: Progress | None = None,
) -> CheckReport:
    """Liveness of every cited URL and grounding of every item; ``liveness=False``: grounding only."""
    if not liveness:
        return ground_notes(notes, evidence)
    report = CheckReport(notes=len(notes))
    cited = [c for note in notes for c in note.urls]
    distinct = len({_fetch_key(c.url) for c in cited})
    if announce is not None and distinct:
        announce(f"checking {distinct} distinct URL(s) from {len(notes)} note(s), {options.concurrency} at a time…")
    fetches = await fetch_all(
        [c.url for c in cited], options, resolve=resolve, client=client, sleep=sleep, rng=rng, progress=progress
    )
    network_ok = any(f.answered for f in fetches.values())
    report.requests = sum(f.requests for f in fetches.values())
    for note in notes:
        found = evidence.get(note.name)
        report.warnings += note.warnings
        for c in note.urls:
            report.urls.append(_url_row(c, fetches[_fetch_key(c.url)], in_retrieved_set(c, found), network_ok))
        report.grounding += _grounding_rows(note, found)
    if fetches and not network_ok and any(r.status == "unreachable" for r in report.urls):
        report.warnings.append("no URL answered: this machine looks offline, so liveness is unknown (not dead)")
    stopped = [f for f in fetches.values() if "check_deadline_s" in f.detail or "check_url_deadline_s" in f.detail]
    if stopped:
        report.warnings.append(
            f"{len(stopped)} URL(s) were not fully checked within their deadline "
            f"(check_url_deadline_s {options.url_deadline_s:g} s, check_deadline_s {options.deadline_s:g} s): "
            "listed as error"
        )
    return report


def prepare_path(
    path: Path,
    *,
    store: EvidenceStore | None = None,
    open_store: EvidenceOpener | None = None,
    name: str | None = None,
) -> Prepared:
    """Read the notes PATH means and their stored evidence (``UserError`` for bad PATH).

    ``store``: the memo's already open store; ``open_store``: how to open it otherwise
    (see ``stored.load_evidence``); ``name``: how to call the note when PATH is one note
    (default: PATH as given)."""
    target = resolve_target(Path(path))
    single = len(target.notes) == 1 and target.notes[0] == target.path
    notes = [read_note(p, name if single and name else display_name(target, p)) for p in target.notes]
    evidence, warnings = load_evidence(target.memo_dir, notes, store=store, open_store=open_store)
    return Prepared(notes, evidence, warnings)


async def check_path(
    path: Path,
    options: CheckOptions = CheckOptions(),
    *,
    liveness: bool = True,
    store: EvidenceStore | None = None,
    open_store: EvidenceOpener | None = None,
    resolve: Resolver | None = None,
    client: httpx.AsyncClient | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    rng: random.Random | None = None,
    announce: Callable[[str], None] | None = None,
    progress: Progress | None = None,
) -> CheckReport:
    """Check a note, a memo folder or an exported memo (``UserError`` for bad PATH)."""
    prepared = prepare_path(Path(path), store=store, open_store=open_store)
    report = await check_notes(
        prepared.notes,
        prepared.evidence,
        options,
        liveness=liveness,
        resolve=resolve,
        client=client,
        sleep=sleep,
        rng=rng,
        announce=announce,
        progress=progress,
    )
    report.warnings = prepared.warnings + report.warnings
    return report
