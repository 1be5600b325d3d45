"""Rejected-domain web results and pages reached through both namespaces."""

from __future__ import annotations

from sourcedesk.core.citations import reconcile
from sourcedesk.core.net.hosts import excluded_by

RESULTS = [
    {"url": "https://nats.io/about/", "title": "About NATS", "snippet": "NATS is a connective technology."},
    {
        "url": "https://www.nats.aero/about-us/",
        "title": "About NATS (air traffic)",
        "snippet": "NATS provides air traffic control services for the UK.",
    },
]


def test_a_bare_marker_to_a_rejected_domain_is_dropped_without_shifting_the_others():
    draft = "NATS is a connective technology. [1]\n\nNATS provides air traffic control services. [2]\n"
    out = reconcile(draft, [], search_results=RESULTS, exclude=lambda u: excluded_by(u, ["nats.aero"]))
    rows = {c["key"]: c for c in out.report.to_json()["citations"]}
    assert rows["1"]["status"] == "verified" and rows["1"]["resolved_url"] == "https://nats.io/about/"
    assert rows["2"]["status"] == "dropped"
    assert "nats.aero" not in out.text
    assert any("rejected domain" in w for w in out.report.to_json()["warnings"])


def test_a_rejected_domain_is_never_a_substitute():
    draft = "NATS provides air traffic control services for the UK.[^1]\n\n[^1]: [x](https://example.com/nats)\n"
    out = reconcile(draft, [], search_results=RESULTS, exclude=lambda u: excluded_by(u, ["nats.aero"]))
    assert out.report.to_json()["citations"][0]["status"] == "dropped"
    assert "nats.aero" not in out.text
    # without the rejection the same draft is substituted by the air-traffic page
    plain = reconcile(draft, [], search_results=RESULTS)
    assert plain.report.to_json()["citations"][0]["status"] == "substituted"


def test_evidence_of_a_page_seen_in_both_namespaces_is_merged():
    retrieved = [
        {
            "url": "https://synadia.com/about",
            "title": "About Synadia",
            "marker": "E1",
            "summary": "Synadia builds NATS.",
        }
    ]
    web = [
        {
            "url": "https://www.synadia.com/about/",
            "title": "About",
            "snippet": "Synadia raised a Series B of 25 million dollars led by Forgepoint.",
        }
    ]
    draft = (
        "Synadia raised a Series B of 25 million dollars led by Forgepoint.[^9]\n\n"
        "[^9]: [Funding](https://bloomberg.com/invented)\n"
    )
    out = reconcile(draft, retrieved, search_results=web)
    row = out.report.to_json()["citations"][0]
    assert row["status"] == "substituted" and row["resolved_url"].rstrip("/").endswith("synadia.com/about")


def test_a_citation_of_a_result_naming_a_rejected_name_says_so_not_rejected_domain():
    """A web result removed because it names a rejected name is on no rejected domain: the warning
    names the phrase (the analyst looking for the domain in their rejects would find none)."""
    from sourcedesk.core.sources.name_rejects import assemble

    names = assemble(memo_names=["NATS air traffic"])
    results = [
        RESULTS[0],
        {"url": "https://www.theguardian.com/nats-outage", "title": "NATS air traffic outage", "snippet": "x y"},
    ]
    draft = "NATS is a connective technology. [1]\n\nFlights were delayed by an outage. [2]\n"
    out = reconcile(
        draft, [], search_results=results, exclude=lambda u: names.match(results[1]) if "guardian" in u else None
    )
    report = out.report.to_json()
    rows = {c["key"]: c for c in report["citations"]}
    assert rows["1"]["status"] == "verified" and rows["2"]["status"] == "dropped"
    (warning,) = [w for w in report["warnings"] if "theguardian.com" in w]
    assert "rejected name 'NATS air traffic'" in warning and "rejected domain" not in warning
    assert "rejected name 'NATS air traffic'" in rows["2"]["reason"]
    assert {
        "claim": "Flights were delayed by an outage.",
        "reason": "citation dropped: " + rows["2"]["reason"],
    } in report["uncited"]
