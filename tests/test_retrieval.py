"""The retrieval stage end to end, against the real sandbox on a loopback socket."""

from __future__ import annotations

import asyncio
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.domain import clock
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.net.hosts import host_matches_pin
from sourcedesk.core.sources.providers import ProviderClients, get_provider
from sourcedesk.core.sources.providers.exa.client import ExaClient
from sourcedesk.core.sources.retrieve import retrieve_section_outcome
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.store.global_store import GlobalStore
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.headless import retrieve_memo_folder, retrieve_memo_sets
from tests.conftest import EXA_KEY, exa_stats

FIXTURES = Path(__file__).parent / "fixtures" / "memos"
KEY = EXA_KEY
IMPOSTORS = {"alcresta.com", "codecresta.com", "ridgecresta.com", "cresta.com.au", "grupocresta.com.gt"}
AGGREGATORS = ("github.com", "wikipedia.org", "linkedin.com", "reddit.com", "medium.com")
stats = exa_stats


def faults(sandbox, *specs: str) -> None:
    httpx.post(f"{sandbox.url}/_sandbox/faults", json=list(specs)).raise_for_status()


def memo_copy(tmp_path: Path, name: str) -> Path:
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


def write_memo(tmp_path: Path, text: str, name: str = "memo") -> Path:
    d = tmp_path / name
    d.mkdir()
    (d / "memo.yaml").write_text(text, encoding="utf-8")
    return d


def run(memo_dir, **kw):
    return asyncio.run(retrieve_memo_folder(memo_dir, settings=kw.pop("settings", None) or Settings(), **kw))


def _given(client: ExaClient) -> ProviderClients:
    """The run's provider clients, with the test's own Exa client (kept open: the test closes it)."""
    return ProviderClients(Settings(), {"exa": client})


def only(outcomes):
    assert len(outcomes) == 1
    return outcomes[0]


def warning_codes(ss) -> list[str]:
    return [w.code for w in ss.warnings]


# ----------------------------------------------------------------------------- pins


def test_cresta_entity_pin_removes_impostors_and_lists_them_as_namesakes(exa, tmp_path):
    out = only(run(memo_copy(tmp_path, "cresta-profile")))
    ss = out.source_set
    assert ss.sources and not ss.degraded
    assert all(host_matches_pin(s.url, "cresta.com") for s in ss.sources)
    removed = {r.host.removeprefix("www.") for r in ss.namesakes}
    assert removed == IMPOSTORS  # every look-alike the substring filter let through, and only them
    assert all(r.reason == "namesake" and r.rule == "cresta.com" and r.title for r in ss.namesakes)
    assert "namesakes_removed" in warning_codes(ss)
    assert [s.marker for s in ss.sources] == [f"E{i}" for i in range(1, len(ss.sources) + 1)]
    assert out.requests >= 1 and ss.cost_dollars > 0
    facts = next(s.facts for s in ss.sources if s.url == "https://cresta.com/")
    assert facts["founded_year"] == "2017" and "null" not in json.dumps(facts)


def test_pin_without_url_warns_and_sends_nothing(exa, tmp_path):
    d = write_memo(
        tmp_path,
        """
title: No URL
subject: {name: Cresta}
sections:
  - id: overview
    title: Overview
    include-sources: [{provider: exa, query: "{{subject}} overview", pin: entity}]
""",
    )
    ss = only(run(d)).source_set
    assert ss.sources == [] and "pin_without_url" in warning_codes(ss)
    assert ss.requests == 0 and stats(exa)["requests"] == 0


def test_public_suffix_pin_is_refused_and_the_rest_still_pins(exa, tmp_path):
    d = write_memo(
        tmp_path,
        """
title: Cresta
subject: {name: Cresta, url: "https://cresta.com", domains: [com.au]}
sections:
  - id: overview
    title: Overview
    include-sources: [{provider: exa, query: "{{subject}} contact center", pin: entity, num-results: 4}]
""",
    )
    ss = only(run(d)).source_set
    assert "pin_refused" in warning_codes(ss)
    assert ss.sources and all(host_matches_pin(s.url, "cresta.com") for s in ss.sources)
    assert not any(s.host.endswith(".com.au") for s in ss.sources)


def test_rejected_subdomain_inside_the_pin_is_still_removed(exa, tmp_path):
    d = write_memo(
        tmp_path,
        """
title: Cresta
subject: {name: Cresta, url: "https://cresta.com"}
sections:
  - id: integrations
    title: Integrations
    include-sources: [{provider: exa, query: "Cresta Amazon Connect integration docs", pin: entity, num-results: 4}]
""",
    )
    before = only(run(d)).source_set
    assert any(s.host == "docs.cresta.com" for s in before.sources)
    with MemoStore(d) as store:
        store.add_reject("docs.cresta.com")
    ss = only(run(d)).source_set
    assert ss.sources and not any(s.host == "docs.cresta.com" for s in ss.sources)
    assert all(host_matches_pin(s.url, "cresta.com") for s in ss.sources)
    removed = [r for r in ss.excluded if r.host == "docs.cresta.com"]
    assert removed and all(r.reason == "rejected" and r.rule == "memo:docs.cresta.com" for r in removed)


def test_rejecting_the_pin_itself_empties_the_entry_visibly(exa, tmp_path):
    d = memo_copy(tmp_path, "cresta-profile")
    GlobalStore().add_reject("cresta.com")
    ss = only(run(d)).source_set
    assert ss.sources == [] and ss.excluded
    assert all(r.reason == "rejected" and r.rule == "global:cresta.com" for r in ss.excluded)
    assert "short" in warning_codes(ss)


# ----------------------------------------------------------------------------- wide search and exclusions


def test_nats_market_map_excludes_aggregators_and_keeps_competitors(exa, tmp_path):
    d = memo_copy(tmp_path, "nats-market-map")
    ss = only(run(d)).source_set
    assert not ss.degraded and len(ss.sources) == 8
    hosts = [s.host for s in ss.sources]
    assert not any(host_matches_pin(h, a) for h in hosts for a in AGGREGATORS)
    assert not any(host_matches_pin(h, "nats.aero") for h in hosts)
    competitors = {h for h in hosts if not host_matches_pin(h, "nats.io") and not host_matches_pin(h, "synadia.com")}
    assert {"www.rabbitmq.com", "streamnative.io"} <= competitors  # the wide search enumerates the segment
    # The same search without the aggregator list is polluted by platform pages.
    text = (d / "memo.yaml").read_text().replace("sections:", "settings: {aggregators: []}\nsections:")
    polluted = only(run(write_memo(tmp_path, text, "no-aggregators"))).source_set
    assert any(host_matches_pin(s.host, a) for s in polluted.sources for a in AGGREGATORS)


def test_unlimited_exclusions_send_1200_and_enforce_all_with_over_fetch(exa, tmp_path):
    d = memo_copy(tmp_path, "nats-market-map")
    baseline = only(run(d)).source_set
    wanted = len(baseline.sources)
    targets = sorted({s.host.removeprefix("www.") for s in baseline.sources})[:3]
    # 2000 rejected domains; the real offenders sit beyond the 1200 that fit in one request.
    rejects = [f"a{i:04d}.example.org" for i in range(1997)] + targets  # the store lists A→Z
    GlobalStore().add_rejects(rejects)
    bodies: list[dict] = []

    async def record(request: httpx.Request) -> None:
        bodies.append(json.loads(request.content))

    async def go():
        http = httpx.AsyncClient(event_hooks={"request": [record]})
        client = ExaClient(exa.url, KEY, http=http)
        try:
            return await retrieve_memo_folder(d, refresh=True, settings=Settings(), clients=_given(client))
        finally:
            await http.aclose()

    ss = only(asyncio.run(go())).source_set
    assert bodies and all(len(b["excludeDomains"]) == 1200 for b in bodies)
    assert not any(t in b["excludeDomains"] for b in bodies for t in targets)
    assert not any(host_matches_pin(s.url, t) for s in ss.sources for t in targets)
    assert {r.rule for r in ss.excluded} >= {f"global:{t}" for t in targets}
    # over-fetch made up for what was removed (the namesakes' pages among them are held out: issue 17)
    assert len(ss.sources) + len(ss.held_out) == wanted
    assert bodies[0]["numResults"] > wanted


def test_company_category_with_exclusions_is_not_sent_api_side_but_enforced(exa, tmp_path):
    d = write_memo(
        tmp_path,
        """
title: Market
subject: {name: NATS, url: "https://nats.io"}
sections:
  - id: companies
    title: Companies
    include-sources:
      - {provider: exa, query: "NATS messaging company funding", category: company, pin: none, num-results: 5,
         exclude-domains: [synadia.com], start-published-date: "2000-01-01"}
""",
    )
    ss = only(run(d)).source_set
    assert not ss.degraded, ss.warnings  # no 400 from Exa
    assert stats(exa)["by_status"].get("400") is None
    assert not any(host_matches_pin(s.url, "synadia.com") for s in ss.sources)
    assert any(r.rule == "entry:synadia.com" for r in ss.excluded)


# ----------------------------------------------------------------------------- degrade, never block


def test_missing_key_degrades_without_a_request(exa, tmp_path, monkeypatch):
    monkeypatch.delenv("EXA_API_KEY")
    ss = only(run(memo_copy(tmp_path, "cresta-profile"))).source_set
    assert ss.degraded and ss.sources == []
    assert "EXA_API_KEY" in ss.warnings[-1].message and ss.warnings[-1].code == "degraded"
    assert stats(exa)["requests"] == 0


def test_retrieval_switched_off_degrades_without_a_request(exa, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCEDESK_RETRIEVAL_ENABLED", "false")
    ss = only(run(memo_copy(tmp_path, "cresta-profile"))).source_set
    assert ss.degraded and "switched off" in ss.warnings[-1].message
    assert stats(exa)["requests"] == 0


def test_degraded_set_is_saved_once_and_never_reused(exa, tmp_path, monkeypatch):
    d = memo_copy(tmp_path, "cresta-profile")
    faults(exa, "exa:401")
    first = only(run(d)).source_set
    again = only(run(d)).source_set
    assert first.degraded and "401" in first.warnings[-1].message
    assert again.id == first.id  # the same failure does not pile up versions…
    assert stats(exa)["requests"] == 2  # …but each run did try the network again
    faults(exa)
    healed = only(run(d))
    assert healed.requests > 0 and healed.source_set.sources and not healed.source_set.degraded


def test_failed_refresh_keeps_the_curated_set(exa, tmp_path):
    d = memo_copy(tmp_path, "cresta-profile")
    good = only(run(d)).source_set
    faults(exa, "exa:500")
    out = only(run(d, refresh=True))
    assert out.kept_previous and out.source_set.id == good.id
    assert [s.url for s in out.source_set.sources] == [s.url for s in good.sources]
    assert {"stale", "degraded"} <= set(warning_codes(out.source_set))
    with MemoStore(d) as store:
        assert store.latest_source_set("overview").id == good.id  # nothing replaced it


def test_one_failing_section_does_not_stop_the_others(exa, tmp_path, monkeypatch):
    d = write_memo(
        tmp_path,
        """
title: Two sections
subject: {name: NATS, url: "https://nats.io"}
sections:
  - id: notes
    title: Notes
    include-sources: [{provider: files, glob: "*.md"}]
  - id: overview
    title: Overview
    include-sources: [{provider: exa, query: "NATS JetStream overview", num-results: 3}]
""",
    )
    files = get_provider("files")

    async def explode(entry, ctx):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(files, "fetch", explode)
    notes, overview = run(d)
    assert notes.source_set.degraded and "disk on fire" in notes.source_set.warnings[-1].message
    assert overview.source_set.sources and not overview.source_set.degraded


# ----------------------------------------------------------------------------- the frozen set


def test_second_retrieve_reuses_the_frozen_set_with_zero_requests(exa, tmp_path):
    d = memo_copy(tmp_path, "cresta-profile")
    first = only(run(d))
    before = stats(exa)["requests"]

    async def again():
        client = ExaClient(exa.url, KEY)
        try:
            outcomes = await retrieve_memo_folder(d, settings=Settings(), clients=_given(client))
        finally:
            await client.aclose()
        return outcomes, client.requests_sent

    outcomes, sent = asyncio.run(again())
    second = only(outcomes)
    assert second.reused and second.requests == 0 and sent == 0
    assert stats(exa)["requests"] == before
    assert second.source_set.id == first.source_set.id
    assert second.source_set.sources == first.source_set.sources


def test_refresh_makes_a_new_version_and_keeps_the_old_one_readable(exa, tmp_path):
    d = memo_copy(tmp_path, "cresta-profile")
    v1 = only(run(d)).source_set
    out = only(run(d, refresh=True))
    assert not out.reused and out.requests > 0
    assert out.source_set.version == v1.version + 1 and out.source_set.fingerprint == v1.fingerprint
    with MemoStore(d) as store:
        old = store.get_source_set(v1.id)
        assert old is not None and old.sources == v1.sources
        assert [v.version for v in store.source_set_versions("overview")] == [1, 2]


def test_ttl_expiry_retrieves_again(exa, tmp_path):
    d = memo_copy(tmp_path, "cresta-profile")
    loaded = load_memo(d)
    settings = Settings(source_ttl_hours=24)
    t0 = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)

    def at(when):
        async def retrieve():
            with MemoStore(d) as store:
                return await retrieve_section_outcome(
                    loaded, "overview", store=store, settings=settings, global_rejects=[]
                )

        with clock.using(when):  # the sets are stamped, and their age read, on the product's clock
            return asyncio.run(retrieve())

    first = at(t0)
    within = at(t0 + timedelta(hours=23))
    expired = at(t0 + timedelta(hours=25))
    assert not first.reused and within.reused and within.requests == 0
    assert not expired.reused and expired.requests > 0 and expired.source_set.version == 2


def test_changing_the_request_changes_the_fingerprint_but_a_reject_does_not(exa, tmp_path):
    d = memo_copy(tmp_path, "cresta-profile")
    first = only(run(d)).source_set
    with MemoStore(d) as store:
        store.add_reject("alcresta.com")
        store.add_reject_name("Grupo Cresta")
    # A rejection is enforced on the frozen set; it is no reason to search again.
    kept = only(run(d))
    assert kept.reused and kept.requests == 0 and kept.source_set.id == first.id
    yaml_path = d / "memo.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("num-results: 6", "num-results: 5"))
    second = only(run(d))
    assert not second.reused and second.source_set.fingerprint != first.fingerprint


# ----------------------------------------------------------------------------- budget, dedupe, rate limit


def test_budget_truncation_is_recorded_and_markers_stay_contiguous(exa, tmp_path):
    d = write_memo(
        tmp_path,
        """
title: NATS
subject: {name: NATS, url: "https://nats.io", domains: [synadia.com]}
settings: {budget-chars: 1500}
sections:
  - id: overview
    title: Overview
    include-sources:
      - {provider: exa, query: "NATS messaging JetStream Synadia", num-results: 8, full-text: true,
         contents: {text: {max-characters: 700}}}
""",
    )
    ss = only(run(d)).source_set
    assert ss.omitted, "the budget should have dropped something"
    assert [s.marker for s in ss.sources] == [f"E{i}" for i in range(1, len(ss.sources) + 1)]
    assert all(o.source.marker is None and o.size > 0 for o in ss.omitted)
    assert ss.used_chars <= 1500 or len(ss.sources) == 1
    truncated = [w for w in ss.warnings if w.code == "truncated"]
    assert len(truncated) == 1 and f"{len(ss.omitted)} source(s) omitted" in truncated[0].message
    assert "1,500-character budget" in truncated[0].message


def test_duplicates_across_entries_are_kept_once(exa, tmp_path):
    d = write_memo(
        tmp_path,
        """
title: NATS
subject: {name: NATS, url: "https://nats.io"}
sections:
  - id: overview
    title: Overview
    include-sources:
      - {provider: exa, query: "NATS JetStream", num-results: 3}
      - {provider: exa, query: "NATS JetStream", num-results: 3}
""",
    )
    ss = only(run(d)).source_set
    urls = [s.url for s in ss.sources]
    assert len(urls) == len(set(urls)) == 3
    dupes = [r for r in ss.excluded if r.reason == "duplicate"]
    assert len(dupes) == 3 and all(r.rule == "entry 1" for r in dupes)


def test_three_concurrent_sections_stay_under_ten_requests_per_second(exa, tmp_path):
    entries = "\n".join(
        f'      - {{provider: exa, query: "NATS messaging topic {i}", pin: none, num-results: 2}}' for i in range(5)
    )
    sections = "\n".join(
        f"  - id: s{n}\n    title: Section {n}\n    include-sources:\n{entries.replace('topic', f'part{n} topic')}"
        for n in range(3)
    )
    d = write_memo(tmp_path, f"title: Load\nsubject: {{name: NATS, url: 'https://nats.io'}}\nsections:\n{sections}\n")
    outcomes = run(d, settings=Settings(max_retries=0))
    assert all(not o.source_set.degraded for o in outcomes), [o.source_set.warnings for o in outcomes]
    s = stats(exa)
    assert s["requests"] >= 15 and s["by_status"].get("429") is None


def test_retrieve_memo_returns_plain_source_sets(exa, tmp_path):
    sets = asyncio.run(retrieve_memo_sets(memo_copy(tmp_path, "cresta-profile"), ["overview"]))
    assert [s.section for s in sets] == ["overview"] and sets[0].id.startswith("overview@v1-")


def test_follow_up_search_makes_up_for_namesakes_when_exa_has_more(tmp_path, monkeypatch):
    """Impostors outrank the real site: the over-fetched first call is all namesakes, so a
    second, larger call is made and the entry still gets its num-results."""
    from sourcedesk.sandbox.corpus import Page

    loud = "acme widgets pricing " * 8
    pages = [
        Page(url=f"https://x{i}acme.com/", title=f"X{i}acme widgets pricing", summary=loud, text=loud, kind="namesake")
        for i in range(12)
    ] + [
        Page(url=f"https://acme.com/p{i}", title=f"Acme page {i}", summary="acme widgets", text="acme", kind="page")
        for i in range(3)
    ]
    d = write_memo(
        tmp_path,
        """
title: Acme
subject: {name: Acme, url: "https://acme.com"}
sections:
  - id: overview
    title: Overview
    include-sources: [{provider: exa, query: "acme widgets pricing", pin: entity, num-results: 3}]
""",
    )
    with SandboxServer(port=0, exa_key=KEY, pages=pages) as sb:
        monkeypatch.setenv("SOURCEDESK_EXA_URL", sb.url)
        monkeypatch.setenv("EXA_API_KEY", KEY)
        out = only(run(d))
        assert stats(sb)["requests"] == 2
    ss = out.source_set
    assert [s.url for s in ss.sources] == [f"https://acme.com/p{i}" for i in range(3)]
    assert len(ss.namesakes) == 12 and "short" not in warning_codes(ss)
    assert out.requests == 2 == ss.requests


def test_rejecting_a_domain_curates_the_frozen_set_without_a_search(exa, tmp_path):
    from sourcedesk.core.sources.retrieve import reapply_rejections

    d = write_memo(
        tmp_path,
        (FIXTURES / "nats-market-map" / "memo.yaml")
        .read_text()
        .replace("sections:", "settings: {budget-chars: 1000}\nsections:"),
    )
    v1 = only(run(d)).source_set
    assert v1.omitted  # something did not fit; after the reject it may
    victim = v1.sources[0].host.removeprefix("www.")
    loaded = load_memo(d)
    with MemoStore(d) as store:
        store.add_reject(victim)
        before = stats(exa)["requests"]
        v2 = reapply_rejections(loaded, "competitors", store=store, settings=Settings(), global_rejects=[])
    assert stats(exa)["requests"] == before
    assert v2.version == 2 and v2.created_at == v1.created_at
    assert not any(host_matches_pin(s.url, victim) for s in [*v2.sources, *(o.source for o in v2.omitted)])
    assert any(r.rule == f"memo:{victim}" for r in v2.excluded)
    assert [s.marker for s in v2.sources] == [f"E{i}" for i in range(1, len(v2.sources) + 1)]
    assert v1.omitted[0].source.url in [s.url for s in v2.sources]  # the freed budget is used
    again = only(run(d))
    assert again.reused and again.source_set.id == v2.id and stats(exa)["requests"] == before


def test_toggling_the_pin_away_and_back_returns_the_same_frozen_set(exa, tmp_path):
    d = memo_copy(tmp_path, "cresta-profile")
    entity = only(run(d)).source_set
    yaml_path = d / "memo.yaml"
    original = yaml_path.read_text()
    yaml_path.write_text(original.replace("pin: entity", "pin: none"))
    wide = only(run(d))
    assert not wide.reused and wide.source_set.fingerprint != entity.fingerprint
    yaml_path.write_text(original)
    back = only(run(d))
    assert back.reused and back.requests == 0 and back.source_set.id == entity.id


# ----------------------------------------------------------------------------- Exa as of late 2026


def test_exa_warnings_reach_the_section_warnings(tmp_path, monkeypatch):
    d = write_memo(
        tmp_path,
        """
title: Market
subject: {name: NATS, url: "https://nats.io"}
sections:
  - id: market
    title: Market
    include-sources: [{provider: exa, query: "NATS messaging", pin: none, num-results: 3}]
""",
    )

    answer = {
        "requestId": "r1",
        "results": [{"url": f"https://site{i}.example.org/", "title": f"Site {i}"} for i in range(3)],
        "warnings": [{"code": "index_degraded", "message": "results may be less fresh than usual"}],
    }
    import respx

    monkeypatch.setenv("SOURCEDESK_EXA_URL", "https://exa.test")
    monkeypatch.setenv("EXA_API_KEY", KEY)
    with respx.mock() as mock:
        mock.post("https://exa.test/search").respond(200, json=answer)
        ss = only(run(d)).source_set
    notes = [w for w in ss.warnings if w.code == "exa"]
    assert [w.message for w in notes] == ["Exa says: index_degraded: results may be less fresh than usual"]


def test_a_stale_category_loads_with_a_notice_and_is_not_sent(exa, tmp_path):
    d = write_memo(
        tmp_path,
        """
title: Papers
subject: {name: NATS, url: "https://nats.io"}
sections:
  - id: papers
    title: Papers
    include-sources: [{provider: exa, query: "NATS messaging benchmark", category: research paper, pin: none}]
""",
    )
    [notice] = load_memo(d).notices
    assert (
        "research paper" in notice and "memo.yaml:7:" in notice and "sections[0].include-sources[0].category" in notice
    )
    assert "company, publication, news, personal site, financial report, people" in notice and "'publication'" in notice
    ss = only(run(d)).source_set
    assert not ss.degraded and not [w for w in ss.warnings if w.code == "exa"]  # nothing stale reached Exa
