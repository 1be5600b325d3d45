"""``sourcedesk check-urls``: liveness of every cited URL and grounding of quotes and figures.

HTTP is served by respx (the real httpx client code runs; an unexpected request
fails the test), DNS by a resolver table (nothing here touches the network).
Notes are rendered by the product's own writer (``sourcedesk.core.notes.note.render_note`` with
house-format definitions) and their sources saved in a real memo store.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from sourcedesk.core.citations.house import format_definition
from sourcedesk.core.domain.models import Source, SourceSet
from sourcedesk.core.notes.note import NoteRecord, render_note
from sourcedesk.core.verify import addresses
from sourcedesk.core.verify.check import CheckOptions, CheckReport, UrlRow, check_path
from sourcedesk.store.memo_store import MemoStore, open_existing
from sourcedesk.tui.cli import main

WHEN = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)

# A public-looking address for every test host (TEST-NET would be refused as reserved).
PUBLIC = "93.184.216.34"


class Resolver:
    """A DNS table: host → addresses; unknown hosts do not exist. Records every lookup."""

    def __init__(self, table: dict[str, list[str]] | None = None, *, down: bool = False):
        self.table = table or {}
        self.down = down
        self.calls: list[str] = []

    async def __call__(self, host: str) -> list[str]:
        self.calls.append(host)
        if self.down:
            raise addresses.ResolutionFailed(f"DNS lookup of {host} failed (no resolver)")
        if host not in self.table:
            raise addresses.HostNotFound(f"DNS: no such host {host}")
        return list(self.table[host])


def public(*hosts: str) -> Resolver:
    return Resolver({h: [PUBLIC] for h in hosts})


async def _no_sleep(_seconds: float) -> None:
    return None


def check(path: Path, resolver: Resolver, **options: Any) -> CheckReport:
    """Run the core check (respx must be active around it)."""
    opts = CheckOptions(**{"timeout_s": 2.0, **options})
    return asyncio.run(
        check_path(path, opts, open_store=open_existing, resolve=resolver, sleep=_no_sleep, rng=random.Random(0))
    )


# ---------------------------------------------------------------- building memos


@dataclass
class Cite:
    key: str
    url: str
    title: str = "A page"
    snippet: str = ""  # web results: what the writer's search said about the page
    text: str = ""  # retrieved sources: stored page text


def make_memo(
    tmp_path: Path,
    body: str,
    cites: list[Cite],
    *,
    store: bool = True,
    name: str = "memo",
    extra_retrieved: Sequence[str] = (),
) -> Path:
    """A memo folder with one note (01-overview.md) in the house format, and (optionally)
    its frozen source set and run record in the memo store."""
    memo = tmp_path / name
    (memo / "sections").mkdir(parents=True)
    (memo / "memo.yaml").write_text(
        "title: NATS — profile\nsubject: {name: NATS, url: https://nats.io}\n"
        "sections:\n  - {id: overview, title: Company overview}\n",
        encoding="utf-8",
    )
    retrieved = [c for c in cites if not c.key.isdigit()]
    web = [c for c in cites if c.key.isdigit()]
    set_id = run_id = None
    if store:
        sources = [Source(provider="exa", url=c.url, title=c.title, text=c.text, marker=c.key) for c in retrieved]
        sources += [
            Source(provider="exa", url=u, title="other", marker=f"E{90 + i}") for i, u in enumerate(extra_retrieved)
        ]
        with MemoStore(memo) as s:
            set_id = s.save_source_set(SourceSet(section="overview", fingerprint="f" * 16, sources=sources)).id
            results = [{"url": c.url, "title": c.title, "snippet": c.snippet} for c in web]
            run_id = s.save_run({"section": "overview", "raw_response": {"search_results": results}})
    record = NoteRecord(
        section="overview",
        title="Company overview",
        run_id=run_id or "run-none",
        model="sonar-pro",
        generated_at=WHEN,
        source_set_id=set_id,
        source_set_version=1 if set_id else None,
    )
    note = render_note(
        record,
        body,
        web_definitions=[format_definition(c.key, {"url": c.url, "title": c.title}) for c in web],
        retrieved_definitions=[format_definition(c.key, {"url": c.url, "title": c.title}) for c in retrieved],
    )
    (memo / "sections" / "01-overview.md").write_text(note, encoding="utf-8")
    return memo


def rows(report: CheckReport) -> dict[str, UrlRow]:
    return {r.url: r for r in report.urls}


# ---------------------------------------------------------------- liveness


def test_placeholder_urls_are_rejected_without_any_request_or_dns(tmp_path):
    memo = make_memo(
        tmp_path,
        "Claim one. [^1] Claim two. [^2] Claim three. [^3]",
        [
            Cite("1", "https://example.com/fake"),
            Cite("2", "https://www.bloomberg.com/news/XXXX-2024"),
            Cite("3", "https://synadia.com/path/to/page"),
        ],
    )
    resolver = public("www.bloomberg.com", "synadia.com")
    with respx.mock() as mock:  # no routes: any request would fail the test
        report = check(memo, resolver)
        assert mock.calls.call_count == 0
    assert resolver.calls == [] and report.requests == 0
    assert {r.status for r in report.urls} == {"placeholder"}
    assert report.exit_code == 1


def test_a_live_page_is_ok(tmp_path):
    memo = make_memo(tmp_path, "NATS is a messaging system. [^E1]", [Cite("E1", "https://nats.io/about")])
    with respx.mock() as mock:
        mock.get("https://nats.io/about").respond(200, html="<title>About NATS</title><p>" + "NATS " * 400)
        report = check(memo, public("nats.io"))
    [row] = report.urls
    assert (row.status, row.http_status, row.final_url) == ("ok", 200, "https://nats.io/about")
    assert row.key == "E1" and row.in_retrieved_set and report.exit_code == 0


def test_a_redirect_chain_is_followed_and_the_final_url_recorded(tmp_path):
    memo = make_memo(tmp_path, "NATS moved its docs. [^1]", [Cite("1", "http://nats.io/docs/old")])
    with respx.mock() as mock:
        mock.get("http://nats.io/docs/old").respond(301, headers={"Location": "https://nats.io/docs/old"})
        mock.get("https://nats.io/docs/old").respond(302, headers={"Location": "/documentation/new"})
        mock.get("https://nats.io/documentation/new").respond(200, html="<title>Docs</title>" + "text " * 500)
        report = check(memo, public("nats.io"))
        assert mock.calls.call_count == 3
    [row] = report.urls
    assert row.status == "redirected"
    assert row.final_url == "https://nats.io/documentation/new" and row.http_status == 200


def test_a_404_is_dead(tmp_path):
    memo = make_memo(tmp_path, "A fabricated page. [^1]", [Cite("1", "https://synadia.com/news/invented")])
    with respx.mock() as mock:
        mock.get("https://synadia.com/news/invented").respond(404)
        report = check(memo, public("synadia.com"))
    assert report.urls[0].status == "dead" and report.urls[0].http_status == 404
    assert report.exit_code == 1


def test_a_200_not_found_page_is_a_soft_404(tmp_path):
    memo = make_memo(
        tmp_path,
        "A page. [^1] Another. [^2]",
        [
            Cite("1", "https://news.site/a/invented"),
            Cite("2", "https://news.site/b/real"),
        ],
    )
    with respx.mock() as mock:
        mock.get("https://news.site/a/invented").respond(
            200, html="<html><head><title>Page Not Found | News</title></head><body>Sorry.</body></html>"
        )
        mock.get("https://news.site/b/real").respond(
            200, html="<title>Why HTTP 404 pages matter</title><article>" + "A long real article. " * 200
        )
        report = check(memo, public("news.site"))
    by_url = rows(report)
    assert by_url["https://news.site/a/invented"].status == "soft_404"
    assert "Page Not Found" in by_url["https://news.site/a/invented"].detail
    assert by_url["https://news.site/b/real"].status == "ok"  # a real article about 404s is not one
    assert report.exit_code == 1


def test_a_deep_link_redirected_to_the_home_page_is_a_soft_404(tmp_path):
    memo = make_memo(tmp_path, "Gone. [^1]", [Cite("1", "https://news.site/2024/story")])
    with respx.mock() as mock:
        mock.get("https://news.site/2024/story").respond(302, headers={"Location": "https://news.site/"})
        mock.get("https://news.site/").respond(200, html="<title>News</title>" + "home " * 500)
        report = check(memo, public("news.site"))
    assert report.urls[0].status == "soft_404" and report.urls[0].final_url == "https://news.site/"


def test_a_paywall_stub_is_reported_as_paywall_not_ok(tmp_path):
    memo = make_memo(tmp_path, "Paywalled. [^1]", [Cite("1", "https://www.ft.com/content/abc")])
    stub = "<title>Synadia raises $25M</title><p>Subscribe to continue reading. Already a subscriber? Sign in.</p>"
    with respx.mock() as mock:
        mock.get("https://www.ft.com/content/abc").respond(200, html=stub)
        report = check(memo, public("www.ft.com"))
    assert report.urls[0].status == "paywall"
    assert report.exit_code == 0  # it exists: not a problem, but not "ok" either


def test_403_proves_existence_only_for_urls_in_the_retrieved_set(tmp_path):
    body = "Retrieved claim. [^E1] Writer claim. [^1]"
    memo = make_memo(
        tmp_path,
        body,
        [
            Cite("E1", "https://www.bloomberg.com/news/real-story"),
            Cite("1", "https://www.bloomberg.com/news/fabricated-story"),
        ],
    )
    with respx.mock() as mock:
        mock.get(url__startswith="https://www.bloomberg.com/").respond(403)
        report = check(memo, public("www.bloomberg.com"))
    by_url = rows(report)
    real, fabricated = (
        by_url["https://www.bloomberg.com/news/real-story"],
        by_url["https://www.bloomberg.com/news/fabricated-story"],
    )
    assert (real.status, real.in_retrieved_set) == ("forbidden", True)
    assert (fabricated.status, fabricated.in_retrieved_set) == ("unverified_403", False)
    assert "not proof" in fabricated.detail


def test_without_a_store_the_retrieved_group_decides_the_403_rule(tmp_path):
    memo = make_memo(
        tmp_path,
        "Retrieved claim. [^E1] Writer claim. [^1]",
        [
            Cite("E1", "https://www.wsj.com/a"),
            Cite("1", "https://www.wsj.com/b"),
        ],
        store=False,
    )
    with respx.mock() as mock:
        mock.get(url__startswith="https://www.wsj.com/").respond(401)
        report = check(memo, public("www.wsj.com"))
    by_url = rows(report)
    assert by_url["https://www.wsj.com/a"].status == "forbidden"
    assert by_url["https://www.wsj.com/b"].status == "unverified_403"
    assert any("no memo store" in w for w in report.warnings)


def test_a_url_under_the_retrieved_heading_but_not_in_the_stored_set_gets_no_403_pass(tmp_path):
    memo = make_memo(tmp_path, "Claim. [^E1]", [Cite("E1", "https://www.wsj.com/real")])
    note = memo / "sections" / "01-overview.md"
    note.write_text(note.read_text().replace("https://www.wsj.com/real", "https://www.wsj.com/edited-in"))
    with respx.mock() as mock:
        mock.get("https://www.wsj.com/edited-in").respond(403)
        report = check(memo, public("www.wsj.com"))
    assert report.urls[0].status == "unverified_403" and not report.urls[0].in_retrieved_set


def test_5xx_is_retried_then_reported_as_error(tmp_path):
    memo = make_memo(tmp_path, "Flaky. [^1]", [Cite("1", "https://flaky.site/page")])
    with respx.mock() as mock:
        route = mock.get("https://flaky.site/page").respond(503)
        report = check(memo, public("flaky.site"), max_retries=2)
        assert route.call_count == 3  # one try + two retries
    row = report.urls[0]
    assert (row.status, row.http_status) == ("error", 503) and "3 tries" in row.detail
    assert report.exit_code == 0  # an error is not proof of death


def test_a_timeout_after_retries_is_an_error_not_dead(tmp_path):
    memo = make_memo(tmp_path, "Slow. [^1]", [Cite("1", "https://slow.site/page")])
    with respx.mock() as mock:
        route = mock.get("https://slow.site/page").mock(side_effect=httpx.ReadTimeout("read timed out"))
        report = check(memo, public("slow.site"), max_retries=2)
        assert route.call_count == 3
    assert report.urls[0].status == "error" and "timed out after 3 tries" in report.urls[0].detail


def test_a_url_without_a_usable_host_is_dead_without_a_request(tmp_path):
    memo = make_memo(tmp_path, "Broken. [^1]", [Cite("1", "https://exa mple..com/x")])
    with respx.mock() as mock:
        report = check(memo, Resolver({}))
        assert mock.calls.call_count == 0
    assert report.urls[0].status == "dead" and "no valid host" in report.urls[0].detail


def test_a_5xx_that_recovers_is_ok(tmp_path):
    memo = make_memo(tmp_path, "Flaky. [^1]", [Cite("1", "https://flaky.site/page")])
    with respx.mock() as mock:
        mock.get("https://flaky.site/page").mock(
            side_effect=[httpx.Response(502), httpx.Response(200, text="x" * 3000)]
        )
        report = check(memo, public("flaky.site"))
    assert report.urls[0].status == "ok"


def test_a_connection_error_is_unreachable_not_dead(tmp_path):
    memo = make_memo(tmp_path, "Claim. [^1]", [Cite("1", "https://down.site/page")])
    with respx.mock() as mock:
        route = mock.get("https://down.site/page").mock(side_effect=httpx.ConnectError("connection refused"))
        report = check(memo, public("down.site"), max_retries=1)
        assert route.call_count == 2
    assert report.urls[0].status == "unreachable" and report.exit_code == 0


def test_an_unknown_host_is_dead_only_when_the_network_answers_otherwise(tmp_path):
    cites = [Cite("1", "https://no-such-host.site/x"), Cite("2", "https://nats.io/")]
    online = make_memo(tmp_path, "Fake. [^1] Real. [^2]", cites, name="online")
    with respx.mock() as mock:
        mock.get("https://nats.io/").respond(200, text="x" * 3000)
        report = check(online, public("nats.io"))
    assert rows(report)["https://no-such-host.site/x"].status == "dead"
    assert "no such host" in rows(report)["https://no-such-host.site/x"].detail

    offline = make_memo(tmp_path, "Fake. [^1] Real. [^2]", cites, name="offline")
    with respx.mock() as mock:
        report = check(offline, Resolver({}))  # nothing resolves: the machine is offline
        assert mock.calls.call_count == 0
    assert {r.status for r in report.urls} == {"unreachable"} and report.exit_code == 0
    assert any("offline" in w for w in report.warnings)

    with respx.mock():
        report = check(offline, Resolver(down=True))
    assert {r.status for r in report.urls} == {"unreachable"}


def test_a_private_server_answering_does_not_prove_public_names_dead(tmp_path):
    memo = make_memo(
        tmp_path,
        "Fake. [^1] Local. [^2]",
        [
            Cite("1", "https://no-such-host.site/x"),
            Cite("2", "http://127.0.0.1:8765/status"),
        ],
    )
    with respx.mock() as mock:
        mock.get("http://127.0.0.1:8765/status").respond(200, text="x" * 3000)
        report = check(memo, Resolver({}), allow_private=True)
    assert rows(report)["http://127.0.0.1:8765/status"].status == "ok"
    assert rows(report)["https://no-such-host.site/x"].status == "unreachable"


# ---------------------------------------------------------------- private addresses


@pytest.mark.parametrize(
    "url",
    [
        "http://10.1.2.3/admin",
        "http://127.0.0.1:8080/x",
        "http://0x7f.1/x",  # 127.0.0.1 spelled the way browsers accept
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/x",
        "http://[::ffff:192.168.0.1]/x",
        "http://printer.local/status",
    ],
)
def test_private_loopback_and_link_local_addresses_are_never_requested(tmp_path, url):
    memo = make_memo(tmp_path, "Internal. [^1]", [Cite("1", url)])
    resolver = Resolver({})
    with respx.mock() as mock:
        report = check(memo, resolver)
        assert mock.calls.call_count == 0
    assert resolver.calls == []
    assert report.urls[0].status == "blocked_private" and "--allow-private" in report.urls[0].detail


def test_a_public_name_resolving_to_a_private_address_is_refused(tmp_path):
    memo = make_memo(tmp_path, "Sneaky. [^1]", [Cite("1", "https://intranet.corp.site/wiki")])
    with respx.mock() as mock:
        report = check(memo, Resolver({"intranet.corp.site": [PUBLIC, "10.0.0.5"]}))
        assert mock.calls.call_count == 0
    assert report.urls[0].status == "blocked_private" and "10.0.0.5" in report.urls[0].detail


def test_a_redirect_to_loopback_is_refused_at_that_hop(tmp_path):
    memo = make_memo(tmp_path, "Redirects inward. [^1]", [Cite("1", "https://evil.site/go")])
    with respx.mock(assert_all_called=False) as mock:
        first = mock.get("https://evil.site/go").respond(302, headers={"Location": "http://127.0.0.1:9200/_cat"})
        inner = mock.get("http://127.0.0.1:9200/_cat").respond(200, text="secret")
        report = check(memo, public("evil.site"))
        assert first.call_count == 1 and inner.call_count == 0
    row = report.urls[0]
    assert row.status == "blocked_private" and "redirect 1" in row.detail and "127.0.0.1" in row.detail


def test_private_addresses_are_fetched_when_the_analyst_allows_it(tmp_path):
    memo = make_memo(
        tmp_path,
        "Internal. [^1] Wiki. [^2]",
        [
            Cite("1", "http://10.1.2.3/status"),
            Cite("2", "https://wiki.corp.site/page"),
        ],
    )
    with respx.mock() as mock:
        mock.get("http://10.1.2.3/status").respond(200, text="x" * 3000)
        mock.get("https://wiki.corp.site/page").respond(200, text="x" * 3000)
        report = check(memo, Resolver({"wiki.corp.site": ["192.168.1.20"]}), allow_private=True)
    assert {r.status for r in report.urls} == {"ok"}


# ---------------------------------------------------------------- grounding


GROUNDED_BODY = (
    "Synadia raised $1.5B in its latest round. [^E1] "
    "Another outlet put it at $15B. [^E1]\n\n"
    "Derek said “NATS is the connective tissue of the edge”. [^E1] "
    'The CEO added "we remain committed to open source". [^E1]\n\n'
    "Revenue grew 40% in 2024–2025 per the deck. [^E1]\n\n"
    "The writer says the market grew 12% per year. [^1] "
    "Usage reached 9,100 clusters. [^E2]"
)
GROUNDED_CITES = [
    Cite(
        "E1",
        "https://synadia.com/news",
        text=(
            'Synadia raised $1.5B in its latest round. Derek said "NATS is the connective tissue of the edge". '
            "The CEO added “we remain committed to open source”. Revenue grew 40% in 2024-2025."
        ),
    ),
    Cite("E2", "https://nats.io/usage"),  # retrieved, but no text stored
    Cite("1", "https://market.site/report", snippet="The market grew 21% per year."),
]


def _grounding(report) -> dict[tuple[str, str], str]:
    return {(g.key, g.text): g.status for g in report.grounding}


def test_quotes_and_statistics_are_checked_verbatim_in_the_cited_source(tmp_path):
    memo = make_memo(tmp_path, GROUNDED_BODY, GROUNDED_CITES)
    with respx.mock() as mock:
        mock.get(url__regex=r".*").respond(200, text="x" * 3000)
        report = check(memo, public("synadia.com", "nats.io", "market.site"))
    g = _grounding(report)
    assert g[("E1", "$1.5B")] == "supported"
    assert g[("E1", "$15B")] == "not_found"  # digits and "." are never normalised away
    assert g[("E1", "NATS is the connective tissue of the edge")] == "supported"  # curly vs straight
    assert g[("E1", "we remain committed to open source")] == "supported"  # straight vs curly
    assert g[("E1", "40%")] == "supported"
    assert g[("1", "12%")] == "not_found"  # the web snippet says 21%
    assert g[("E2", "9,100")] == "unverifiable"  # no stored text is never "supported"
    assert report.exit_code == 1
    kinds = {(g.text, g.kind) for g in report.grounding}
    assert ("$1.5B", "statistic") in kinds and ("we remain committed to open source", "quote") in kinds


def test_dash_styles_are_normalised_but_nothing_else(tmp_path):
    body = "The shift was “edge–to–cloud messaging for everyone”. [^E1] It cost $1,200 per node. [^E1]"
    memo = make_memo(
        tmp_path,
        body,
        [
            Cite(
                "E1", "https://synadia.com/x", text="A shift to edge-to-cloud messaging for everyone; $1200 per node."
            ),
        ],
    )
    with respx.mock() as mock:
        mock.get("https://synadia.com/x").respond(200, text="x" * 3000)
        report = check(memo, public("synadia.com"))
    g = _grounding(report)
    assert g[("E1", "edge–to–cloud messaging for everyone")] == "supported"
    assert g[("E1", "$1,200")] == "not_found"  # "1,200" is not "1200"


def test_each_figure_goes_to_its_own_citation_and_a_cluster_needs_one_supporting_source(tmp_path):
    body = "Kafka grew 30% [^E1] while NATS grew 50% [^E2] last year.\n\nBoth raised $25M. [^E1] [^E2]"
    memo = make_memo(
        tmp_path,
        body,
        [
            Cite("E1", "https://a.site/x", text="Kafka grew 30% last year."),
            Cite("E2", "https://b.site/y", text="NATS grew 50% and raised $25M."),
        ],
    )
    with respx.mock() as mock:
        mock.get(url__regex=r".*").respond(200, text="x" * 3000)
        report = check(memo, public("a.site", "b.site"))
    assert _grounding(report) == {("E1", "30%"): "supported", ("E2", "50%"): "supported", ("E2", "$25M"): "supported"}
    assert report.exit_code == 0


# ---------------------------------------------------------------- the command line


def _resolve_public(monkeypatch, *hosts: str, table: dict[str, list[str]] | None = None) -> Resolver:
    resolver = Resolver({**{h: [PUBLIC] for h in hosts}, **(table or {})})

    async def fake(host: str, timeout_s: float = 10.0) -> list[str]:
        return await resolver(host)

    monkeypatch.setattr(addresses, "system_resolve", fake)
    return resolver


def test_cli_json_has_the_stable_shape_and_exit_code_1_on_problems(tmp_path, monkeypatch, capsys):
    memo = make_memo(
        tmp_path, GROUNDED_BODY + "\n\nA fake. [^2]", [*GROUNDED_CITES, Cite("2", "https://example.com/x")]
    )
    _resolve_public(monkeypatch, "synadia.com", "nats.io", "market.site")
    with respx.mock() as mock:
        mock.get("https://synadia.com/news").respond(200, text="x" * 3000)
        mock.get("https://nats.io/usage").respond(404)
        mock.get("https://market.site/report").respond(200, text="x" * 3000)
        code = main(["check-urls", str(memo), "--json"])
    out, err = capsys.readouterr()
    assert code == 1 and err == ""
    payload = json.loads(out)
    assert list(payload) == ["urls", "grounding", "counts", "warnings"]
    note = str(memo / "sections" / "01-overview.md")
    for row in payload["urls"]:
        assert list(row) == ["url", "note", "key", "status", "final_url", "http_status", "in_retrieved_set", "detail"]
        assert row["note"] == note
    by_url = {r["url"]: r for r in payload["urls"]}
    assert by_url["https://nats.io/usage"]["status"] == "dead" and by_url["https://nats.io/usage"]["http_status"] == 404
    assert by_url["https://example.com/x"]["status"] == "placeholder" and by_url["https://example.com/x"]["key"] == "2"
    assert by_url["https://synadia.com/news"]["in_retrieved_set"] is True
    assert by_url["https://market.site/report"]["in_retrieved_set"] is False
    for row in payload["grounding"]:
        assert list(row) == ["note", "key", "kind", "text", "status"] and row["kind"] in ("quote", "statistic")
    counts = payload["counts"]
    assert counts["urls"]["total"] == 4 and counts["urls"]["dead"] == 1 and counts["urls"]["placeholder"] == 1
    assert counts["grounding"]["not_found"] == 2 and counts["grounding"]["unverifiable"] == 1
    assert counts["problems"] == 4 and all(isinstance(v, int) for v in counts["urls"].values())


def test_cli_exit_code_0_and_a_summary_line_when_all_is_well(tmp_path, monkeypatch, capsys):
    memo = make_memo(
        tmp_path,
        "Synadia raised $25M. [^E1]",
        [
            Cite("E1", "https://synadia.com/news", text="Synadia raised $25M in a Series B."),
        ],
    )
    _resolve_public(monkeypatch, "synadia.com")
    with respx.mock() as mock:
        mock.get("https://synadia.com/news").respond(200, text="x" * 3000)
        code = main(["check-urls", str(memo / "sections" / "01-overview.md")])
    out, err = capsys.readouterr()
    assert code == 0
    assert "check-urls: 1 URL(s): 1 ok · grounding: 1 item(s): 1 supported · 0 problem(s)" in out
    assert "checking 1 distinct URL(s)" in err


def test_cli_allow_private_flag_and_setting(tmp_path, monkeypatch, capsys):
    memo = make_memo(tmp_path, "Internal. [^1]", [Cite("1", "http://10.1.2.3/status")])
    _resolve_public(monkeypatch)
    with respx.mock() as mock:
        route = mock.get("http://10.1.2.3/status").respond(200, text="x" * 3000)
        main(["check-urls", str(memo), "--json"])
        assert route.call_count == 0
        assert json.loads(capsys.readouterr().out)["urls"][0]["status"] == "blocked_private"
        main(["check-urls", str(memo), "--json", "--allow-private"])
        assert route.call_count == 1
        assert json.loads(capsys.readouterr().out)["urls"][0]["status"] == "ok"
        monkeypatch.setenv("SOURCEDESK_ALLOW_PRIVATE_URLS", "true")
        main(["check-urls", str(memo), "--json"])
        assert route.call_count == 2


@pytest.mark.parametrize(
    "make, expect",
    [
        (lambda d: d / "missing.md", "no such file or folder"),
        (lambda d: (d / "notes.txt", (d / "notes.txt").write_text("x"))[0], "not a markdown note"),
        (lambda d: (d / "empty", (d / "empty").mkdir())[0], "no notes to check"),
        (lambda d: (d / "bin.md", (d / "bin.md").write_bytes(b"\xff\xfe\x00bad"))[0], "not UTF-8"),
    ],
)
def test_cli_bad_path_is_a_clear_message_with_exit_2(tmp_path, capsys, make, expect):
    path = make(tmp_path)
    with respx.mock() as mock:
        code = main(["check-urls", str(path)])
        assert mock.calls.call_count == 0
    out, err = capsys.readouterr()
    assert code == 2
    assert err.startswith(f"sourcedesk: {path}: ") and expect in err
    assert "Hint:" in err and "Traceback" not in err and out == ""


def test_untrusted_titles_and_urls_are_printed_literally(tmp_path, monkeypatch, capsys):
    memo = make_memo(
        tmp_path, "Claim. [^1]", [Cite("1", "https://evil.site/[bold]x[/bold]", title="[bold red]Pwned[/] \x1b[31mred")]
    )
    _resolve_public(monkeypatch, "evil.site")
    with respx.mock() as mock:
        mock.get(url__startswith="https://evil.site/").respond(404)
        main(["check-urls", str(memo)])
    out = capsys.readouterr().out
    assert "https://evil.site/[bold]x[/bold]" in out
    assert "[bold red]Pwned[/]" in out  # the house format escapes it in the note; we print what the note says
    assert "\x1b" not in out


def test_secrets_never_appear_in_the_output(tmp_path, monkeypatch, capsys):
    key = "exa-secret-key-1234567890"
    monkeypatch.setenv("EXA_API_KEY", key)
    memo = make_memo(tmp_path, "Leaky. [^1]", [Cite("1", f"https://api.site/search?key={key}")])
    _resolve_public(monkeypatch, "api.site")
    with respx.mock() as mock:
        mock.get(url__startswith="https://api.site/").respond(404)
        main(["check-urls", str(memo)])
        human = capsys.readouterr().out
        main(["check-urls", str(memo), "--json"])
        machine = capsys.readouterr().out
    assert key not in human and key not in machine
    assert "[redacted]" in human and "[redacted]" in machine


def test_the_exported_memo_is_grounded_against_every_section_set(tmp_path, monkeypatch, capsys):
    memo = make_memo(
        tmp_path,
        "Synadia raised $25M. [^E1]",
        [
            Cite("E1", "https://synadia.com/news", text="Synadia raised $25M in a Series B."),
        ],
    )
    assert main(["export", str(memo)]) == 0
    capsys.readouterr()
    _resolve_public(monkeypatch, "synadia.com")
    with respx.mock() as mock:
        mock.get("https://synadia.com/news").respond(200, text="x" * 3000)
        code = main(["check-urls", str(memo / "memo.md"), "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    assert payload["urls"][0]["key"] == "1" and payload["urls"][0]["in_retrieved_set"] is True
    assert payload["grounding"] == [
        {"note": str(memo / "memo.md"), "key": "1", "kind": "statistic", "text": "$25M", "status": "supported"}
    ]


def test_cli_offline_machine_reports_unreachable_and_still_grounds(tmp_path, monkeypatch, capsys):
    memo = make_memo(
        tmp_path,
        "NATS raised $25M. [^E1] A fake. [^2]",
        [
            Cite("E1", "https://nats.io/x", text="NATS raised $25M."),
            Cite("2", "https://example.com/x"),
        ],
    )

    async def no_dns(host: str, timeout_s: float = 10.0) -> list[str]:
        raise addresses.HostNotFound(f"DNS: no such host {host}")

    monkeypatch.setattr(addresses, "system_resolve", no_dns)
    with respx.mock() as mock:
        code = main(["check-urls", str(memo)])
        assert mock.calls.call_count == 0
    out, err = capsys.readouterr()
    assert code == 1  # the placeholder is a problem whatever the network does
    assert "1 unreachable, 1 placeholder" in out and "1 supported" in out
    assert "dead" not in out and "offline" in err
