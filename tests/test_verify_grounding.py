"""The parts of ``check-urls`` an analyst trusts without seeing them: what counts as a
quotation or a statistic, which citation it is attributed to, what "verbatim" means,
which addresses are private, and which 200 pages are really error pages or paywalls."""

from __future__ import annotations

import asyncio

import pytest

from sourcedesk.core.verify.addresses import HostNotFound, is_public_address, vet_url
from sourcedesk.core.verify.claims import find_items
from sourcedesk.core.verify.grounding import NOT_FOUND, SUPPORTED, UNVERIFIABLE, ground, normalise
from sourcedesk.core.verify.sniff import sniff_page
from sourcedesk.core.verify.targets import read_note


def _texts(prose: str) -> list[tuple[str, str]]:
    return [(i.kind, i.text) for i in find_items(prose)]


# ---------------------------------------------------------------- what is extracted


def test_a_range_is_one_statistic():
    # issue 19: "USD 84–88M" was checked as "USD 84" and "88M"
    assert _texts("Revenue was USD 84–88M in 2024, growing 10-12% from 2019-2021.") == [
        ("statistic", "USD 84–88M"),
        ("statistic", "10-12%"),
    ]


def test_statistics_are_money_percentages_scaled_numbers_multiples_and_grouped_counts():
    prose = (
        "Synadia raised $1.5B (USD 25 million in 2024), revenue rose 40% to €3.2bn, GBP 118m profit, "
        "10x faster, 20k stars and 9,100 flights; founded in 2017 with 44 staff on 28 August 2023, v2.10."
    )
    assert _texts(prose) == [
        ("statistic", "$1.5B"),
        ("statistic", "USD 25 million"),
        ("statistic", "40%"),
        ("statistic", "€3.2bn"),
        ("statistic", "GBP 118m"),
        ("statistic", "10x"),
        ("statistic", "20k"),
        ("statistic", "9,100"),
    ]


def test_quotations_need_three_words_and_any_quote_style_but_apostrophes_are_not_quotes():
    prose = (
        'The so-called "edge" is “the connective tissue of everything” and the company’s CEO said '
        "‘we ship every week’ while 'single quotes are apostrophes' here, \"mixed styles close”."
    )
    assert _texts(prose) == [
        ("quote", "the connective tissue of everything"),
        ("quote", "we ship every week"),
        ("quote", "mixed styles close"),
    ]


def test_a_statistic_inside_a_quotation_is_checked_as_part_of_the_quotation():
    assert _texts('He said "we grew 300% last year" today.') == [("quote", "we grew 300% last year")]


def _note(tmp_path, body: str):
    path = tmp_path / "01-overview.md"
    path.write_text(body, encoding="utf-8")
    return {(item.keys, item.text) for item in read_note(path).items}


def test_items_bind_to_the_citation_of_their_sentence_and_uncited_sentences_bind_to_none(tmp_path):
    body = (
        "Revenue exceeds 140 percent of plan. Customers include 9,100 teams. [^E1]\n\n"
        "Kafka grew 30% [^E2] while NATS grew 50% [^E3] and reached $10M.\n\n"
        "Both raised $25M. [^E1] [^E2]\n\n"
        "[^E1]: [A](https://a.site/)\n[^E2]: [B](https://b.site/)\n[^E3]: [C](https://c.site/)\n"
    )
    assert _note(tmp_path, body) == {
        (("E1",), "9,100"),  # the marker after the full stop cites the sentence before it only
        (("E2",), "30%"),
        (("E3",), "50%"),
        (("E3",), "$10M"),  # after the last marker of its sentence: that marker's
        (("E1", "E2"), "$25M"),  # a cluster
        ((), "140 percent"),  # uncited: grounded against the whole frozen set, bound to no citation
    }


def test_numbers_in_urls_code_and_footnote_definitions_are_not_statistics(tmp_path):
    body = (
        "See [the 2024 report for $5M](https://x.site/40%25/report-1,000) and `$9B` inline. [^1]\n\n"
        "[^1]: 2024. [Raised $7M](https://x.site/raise). x.site.\n"
    )
    assert _note(tmp_path, body) == {(("1",), "$5M")}


# ---------------------------------------------------------------- verbatim


@pytest.mark.parametrize(
    "kind, item, source, verdict",
    [
        ("statistic", "$1.5B", "raised $1.5B in 2024", SUPPORTED),
        ("statistic", "$15B", "raised $1.5B in 2024", NOT_FOUND),
        ("statistic", "$1.5B", "raised $11.5B in 2024", NOT_FOUND),
        ("statistic", "1.5B", "raised 11.5B in 2024", NOT_FOUND),
        ("statistic", "1,200", "1200 customers", NOT_FOUND),
        ("statistic", "1,200", "1,200 customers", SUPPORTED),
        ("statistic", "40%", "grew 40.5% last year", NOT_FOUND),
        ("statistic", "$25M", "raised $25 million", NOT_FOUND),  # verbatim: no unit rewriting
        ("statistic", "USD 25M", "raised USD\u00a025M", SUPPORTED),  # a no-break space is whitespace
        ("quote", "edge-to-cloud for all", "edge–to—cloud for all", SUPPORTED),
        ("quote", "the “best” broker", 'the "best" broker', SUPPORTED),
        ("quote", "We ship weekly", "and we ship weekly.", SUPPORTED),  # a woven-in quotation's first letter
        ("quote", "we SHIP weekly", "and we ship weekly.", NOT_FOUND),
        ("quote", "is fast and simple", "this fast and simple", NOT_FOUND),
        ("quote", "NATS is … simple.", "NATS is fast and simple", SUPPORTED),
        ("quote", "simple … NATS is", "NATS is fast and simple", NOT_FOUND),  # parts keep their order
    ],
)
def test_verbatim_means_whitespace_quote_and_dash_normalisation_only(kind, item, source, verdict):
    assert ground(kind, item, [source]) == verdict


def test_unknown_text_is_never_supported_and_a_title_alone_is_not_the_text():
    assert ground("statistic", "$1.5B", []) == UNVERIFIABLE
    assert ground("statistic", "$1.5B", None) == UNVERIFIABLE
    assert ground("statistic", "$1.5B", [], ["Synadia raises $25M"]) == UNVERIFIABLE
    assert ground("statistic", "$25M", [], ["Synadia raises $25M"]) == SUPPORTED
    assert ground("statistic", "$1.5B", ["Synadia is a company."], ["Synadia raises $25M"]) == NOT_FOUND


def test_normalise_never_touches_digits_dots_or_commas():
    assert normalise("  $1,5.0\u2009–\u00a0“x”  ") == '$1,5.0 - "x"'


# ---------------------------------------------------------------- private addresses


@pytest.mark.parametrize(
    "address, public",
    [
        ("93.184.216.34", True),
        ("2606:4700::1111", True),
        ("10.0.0.1", False),
        ("172.16.5.4", False),
        ("192.168.1.1", False),
        ("127.0.0.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("::ffff:10.0.0.1", False),
        ("2002:0a00:0001::1", False),  # 6to4 wrapping 10.0.0.1
    ],
)
def test_only_globally_routable_unicast_addresses_are_public(address, public):
    assert is_public_address(address) is public


def test_vet_url_refuses_names_that_resolve_privately_and_reports_missing_names():
    async def resolve(host: str) -> list[str]:
        table = {"ok.site": ["93.184.216.34"], "rebind.site": ["93.184.216.34", "127.0.0.1"]}
        if host not in table:
            raise HostNotFound(host)
        return table[host]

    async def go():
        return (
            await vet_url("https://ok.site/a", resolve),
            await vet_url("https://rebind.site/a", resolve),
            await vet_url("https://rebind.site/a", resolve, allow_private=True),
            await vet_url("http://localhost:8080/", resolve),
            await vet_url("http://2130706433/", resolve),  # 127.0.0.1 as one decimal number
        )

    ok, rebind, allowed, localhost, decimal = asyncio.run(go())
    assert ok.allowed and not rebind.allowed and "127.0.0.1" in rebind.reason and allowed.allowed
    assert not localhost.allowed and not decimal.allowed
    with pytest.raises(HostNotFound):
        asyncio.run(vet_url("https://gone.site/", resolve))


# ---------------------------------------------------------------- body sniffing


def test_error_pages_answering_200_are_soft_404_but_articles_about_errors_are_not():
    article = "<p>" + "A long article about web servers and their error pages. " * 60
    assert sniff_page("<title>404 Not Found</title>" + article).status == "soft_404"
    assert sniff_page("<title>Oops</title><p>The page you were looking for does not exist.</p>").status == "soft_404"
    assert sniff_page("<title>Why HTTP 404 pages matter</title>" + article) is None
    assert sniff_page("%PDF-1.7 not found", "application/pdf") is None


def test_paywall_stubs_are_detected_but_full_articles_with_a_banner_are_not():
    stub = "<title>Deal</title><p>This article is for subscribers only. Subscribe to continue reading.</p>"
    assert sniff_page(stub).status == "paywall"
    full = (
        "<title>Deal</title><p>"
        + "The full story of the deal, paragraph after paragraph. " * 150
        + "Subscribe to continue reading"
    )
    assert sniff_page(full) is None


def test_uncited_money_and_percentages_are_looked_for_in_the_whole_frozen_set(tmp_path):
    from sourcedesk.core.verify.check import ground_notes
    from sourcedesk.core.verify.evidence import Evidence

    path = tmp_path / "01-overview.md"
    path.write_text(
        "Synadia raised $25M in 2024. Its retention exceeds 140 percent. It has 44 staff.\n\n"
        "NATS is fast. [^E1]\n\n[^E1]: [A](https://a.site/)\n",
        encoding="utf-8",
    )
    note = read_note(path, "01-overview.md")
    # uncited money and percentages only: a plain count or a year is not grounded this way
    assert [(i.keys, i.kind, i.text) for i in note.items] == [
        ((), "uncited_statistic", "$25M"),
        ((), "uncited_statistic", "140 percent"),
    ]
    evidence = Evidence(sets=1)
    evidence.add("https://a.site/", ["NATS is fast."], retrieved=True)
    evidence.add("https://b.site/", ["Synadia raised 25 million dollars in a Series B."], retrieved=True)
    rows = ground_notes([note], {"01-overview.md": evidence}).grounding
    assert [(r.key, r.text, r.status) for r in rows] == [("", "$25M", SUPPORTED), ("", "140 percent", NOT_FOUND)]
    unknown = ground_notes([note], {"01-overview.md": Evidence()}).grounding  # no frozen set: unknown
    assert {r.status for r in unknown} == {UNVERIFIABLE}
