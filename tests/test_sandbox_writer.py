"""The sandbox's Perplexity-style writer, over a real loopback socket with httpx.

Most tests run against a small fixed corpus (so the assertions name pages);
the last ones use the bundled corpus and the product's real prompt builder.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import date

import httpx
import pytest

from sourcedesk.core.domain.models import Source, SourceSet
from sourcedesk.core.memo.spec import Memo
from sourcedesk.core.net.urls import host_of, normalise_url
from sourcedesk.core.writing.prompt import build_prompt
from sourcedesk.sandbox.corpus import Page, load_corpus
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.sandbox.writer_text import supports
from tests.conftest import API_FIXTURES as TESTDATA

RECORDED = json.loads((TESTDATA / "sonar-chat-completion.json").read_text())
INVALID_MODEL = json.loads((TESTDATA / "sonar-error-400-invalid-model.json").read_text())
KEY = "pplx-sandbox-test-key"


def _page(url, title, published, summary, text, facts=None, kind="page"):
    return Page(url=url, title=title, published=published, summary=summary, text=text, facts=facts or {}, kind=kind)


PAGES = (
    _page(
        "https://nats.io/",
        "NATS.io – Cloud Native, Open Source, High-performance Messaging",
        "2024-02-01",
        "NATS is an open-source messaging system for cloud native applications, IoT and microservices.",
        "NATS is an open-source, high-performance messaging system for cloud native applications, IoT "
        "messaging and microservices. The project is maintained by Synadia and hosted by the Cloud Native "
        "Computing Foundation.",
        {"founded_year": "2011", "license": "Apache-2.0"},
        "company",
    ),
    _page(
        "https://docs.nats.io/nats-concepts/jetstream",
        "JetStream | NATS Docs",
        "2024-05-10",
        "JetStream is the persistence layer built into the NATS server.",
        "JetStream is the persistence layer built into the NATS server. It provides streams, consumers and "
        "key-value stores with at-least-once and exactly-once delivery.",
    ),
    _page(
        "https://www.synadia.com/about",
        "About Synadia | The company behind NATS",
        "2023-11-20",
        "Synadia is the company behind NATS, founded by Derek Collison in 2017 and headquartered in Los Angeles.",
        "Synadia is the company behind NATS, founded by Derek Collison in 2017. Synadia sells a managed NATS "
        "platform called Synadia Cloud to enterprises running distributed systems.",
        {"founded_year": "2017", "founders": ["Derek Collison"]},
        "company",
    ),
    _page(
        "https://techcrunch.com/2024/03/12/synadia-raises-25m-series-b/",
        "Synadia raises $25M Series B to take NATS to the edge",
        "2024-03-12",
        "Synadia raised $25 million in a Series B round led by Forgepoint Capital.",
        "Synadia, the company behind the NATS messaging system, has raised $25 million in a Series B round "
        "led by Forgepoint Capital. The funding will expand Synadia Cloud and edge deployments.",
        {"total_funding": "$41M"},
        "news",
    ),
    _page(
        "https://www.nats.aero/about-us/",
        "About NATS | UK air traffic control",
        "2023-06-01",
        "NATS provides air traffic control for UK airspace.",
        "NATS Holdings provides air traffic control services for aircraft flying in UK airspace. NATS handles "
        "around 2.5 million flights a year from centres at Swanwick and Prestwick.",
        kind="namesake",
    ),
    _page(
        "https://www.nats.aero/news/record-summer/",
        "NATS handles record summer traffic",
        "2025-09-02",
        "NATS handled record summer traffic in UK airspace.",
        "NATS, the UK air navigation service provider, handled record summer traffic as airspace "
        "modernisation continued across the south of England.",
        kind="namesake",
    ),
    _page(
        "https://www.anats.io/",
        "aNATS – a messaging look-alike",
        "2024-01-01",
        "aNATS is an unrelated product whose host contains nats.io as a substring.",
        "aNATS is an unrelated product whose host name happens to contain nats.io as a substring. NATS fans "
        "sometimes land here by mistake when they search for NATS messaging.",
    ),
    _page(
        "https://www.cncf.io/projects/nats/",
        "NATS | CNCF",
        "2022-10-01",
        "NATS joined the CNCF as an incubating project in 2018.",
        "NATS joined the Cloud Native Computing Foundation as an incubating project in 2018. It is used by "
        "companies such as Mastercard, Ericsson and Walmart for NATS messaging.",
    ),
    _page(
        "https://www.infoq.com/news/2023/05/nats-jetstream-kafka/",
        "NATS JetStream as a Kafka alternative",
        "2023-05-18",
        "Engineers compare NATS JetStream with Apache Kafka.",
        "Engineers compare NATS JetStream with Apache Kafka for event streaming. NATS offers lower operational "
        "overhead while Kafka offers a larger ecosystem of connectors.",
    ),
)


@pytest.fixture(scope="module")
def server():
    with SandboxServer(port=0, pages=PAGES, seed=7, writer_key=KEY, exa_rps=None) as sb:
        yield sb


@pytest.fixture(scope="module")
def http(server):
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {KEY}"}, timeout=10) as client:
        yield client


def source_block(pages, start=1):
    out = []
    for i, p in enumerate(pages, start):
        facts = "\n".join(f"{k}: {json.dumps(v)}" for k, v in p.facts.items())
        out.append(f"### [^E{i}] {p.title} — {p.url}\nPublished: {p.published}\n\n```yaml\n{facts}\n```\n\n{p.text}\n")
    return "\n".join(out)


def prompt(sources=(), title="Company overview", questions=("What does it do?", "Funding to date?"), tag=""):
    block = f"## Retrieved sources\n\n{source_block(sources)}\n" if sources else ""
    qs = "\n".join(f"- {q}" for q in questions)
    return (
        f"## Research subject\n\nSubject: NATS\nAlso known as: Synadia\nWebsite: https://nats.io\n{tag}\n\n"
        f"{block}## Section to write\n\nSection: {title}\nTarget length: about 350 words\n\n"
        f"Guiding questions:\n{qs}\n"
    )


def ask(http, content, **extra):
    body = {"model": "sonar-pro", "messages": [{"role": "user", "content": content}], **extra}
    return http.post("/chat/completions", json=body)


OWN = [p for p in PAGES if "synadia" in p.url or "techcrunch" in p.url or p.url == "https://nats.io/"]


def sample(n):
    """n different prompts: retrieved sets of 0..3 of our own pages, varied sections."""
    titles = ["Company overview", "Product", "Funding history", "Competitive landscape", "Team"]
    return [prompt(OWN[: i % 4], title=titles[i % 5], tag=f"Memo number {i}") for i in range(n)]


# --------------------------------------------------------------------------- shape, auth, errors


def test_response_mirrors_the_recorded_perplexity_shape(http):
    r = ask(http, prompt(OWN[:2]))
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    data = r.json()
    assert set(RECORDED) <= set(data)
    assert set(RECORDED["usage"]) <= set(data["usage"]) and set(RECORDED["usage"]["cost"]) <= set(data["usage"]["cost"])
    assert data["object"] == "chat.completion" and data["model"] == "sonar-pro"
    choice = data["choices"][0]
    assert choice["index"] == 0 and choice["finish_reason"] == "stop"
    assert choice["message"]["role"] == "assistant" and choice["message"]["content"].strip()
    assert 5 <= len(data["search_results"]) <= 8
    for result in data["search_results"]:
        assert set(RECORDED["search_results"][0]) | {"source"} <= set(result) and result["source"] == "web"
        page = next(p for p in PAGES if p.url == result["url"])  # only corpus pages are ever returned
        assert result["title"] == page.title and result["date"] == page.published
        assert result["last_updated"] >= result["date"]
    assert data["citations"] == [r["url"] for r in data["search_results"]]
    usage = data["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    cost = usage["cost"]
    assert cost["total_cost"] == pytest.approx(
        cost["input_tokens_cost"] + cost["output_tokens_cost"] + cost["request_cost"], abs=1e-9
    )


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong-key"},
        {"Authorization": f"Basic {KEY}"},
        {"Authorization": "Bearer"},
        {"x-api-key": KEY},
    ],
)
def test_bad_or_missing_key_gets_perplexitys_html_401(server, headers):
    r = httpx.post(
        server.url + "/chat/completions",
        headers=headers,
        json={"model": "sonar-pro", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert r.status_code == 401
    assert r.headers["content-type"].startswith("text/html")
    assert "<title>401 Authorization Required</title>" in r.text
    with pytest.raises(json.JSONDecodeError):
        json.loads(r.text)


def test_unknown_model_gets_the_documented_400_envelope(http):
    r = http.post("/chat/completions", json={"model": "sonar-pro ", "messages": [{"role": "user", "content": "x"}]})
    assert r.status_code == 400
    body = r.json()
    assert set(body) == set(INVALID_MODEL) and set(body["error"]) == set(INVALID_MODEL["error"])
    assert body["error"]["type"] == INVALID_MODEL["error"]["type"] == "invalid_model"
    assert body["error"]["code"] == 400 and body["error"]["message"].startswith("Invalid model 'sonar-pro '.")


@pytest.mark.parametrize(
    "model", ["sonar", "sonar-pro", "sonar-reasoning", "sonar-reasoning-pro", "sonar-deep-research"]
)
def test_documented_models_are_accepted(http, model):
    r = http.post("/chat/completions", json={"model": model, "messages": [{"role": "user", "content": prompt()}]})
    assert r.status_code == 200 and r.json()["model"] == model
    thinks = r.json()["choices"][0]["message"]["content"].startswith("<think>")
    assert thinks == ("reasoning" in model or "research" in model)


@pytest.mark.parametrize(
    "body",
    [
        {"model": "sonar-pro"},
        {"model": "sonar-pro", "messages": []},
        {"model": "sonar-pro", "messages": [{"role": "assistant", "content": "hello"}]},
        {"model": "sonar-pro", "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]},
        {"model": "sonar-pro", "messages": [{"role": "robot", "content": "a"}]},
    ],
)
def test_bad_messages_are_400_in_perplexitys_error_shape(http, body):
    r = http.post("/chat/completions", json=body)
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["code"] == 400 and error["type"] == "invalid_message"
    assert "messages" in error["message"] or "role" in error["message"]


def test_a_body_that_is_not_json_is_400(http):
    r = http.post("/chat/completions", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == 400


# --------------------------------------------------------------------------- search_domain_filter and strict mode


def test_more_than_twenty_filter_entries_is_400(http):
    twenty = [f"site{i}.com" for i in range(20)]
    assert ask(http, prompt(), search_domain_filter=twenty).status_code == 200
    r = ask(http, prompt(), search_domain_filter=[*twenty, "one-more.com"])
    assert r.status_code == 400 and "20" in r.json()["error"]["message"]


def test_mixing_allow_and_deny_entries_is_400(http):
    r = ask(http, prompt(), search_domain_filter=["nats.io", "-nats.aero"])
    assert r.status_code == 400
    assert "mix" in r.json()["error"]["message"]


def test_allow_list_pins_the_writers_own_search_to_true_subdomains(http):
    wide = ask(http, prompt()).json()
    wide_hosts = {host_of(r["url"]) for r in wide["search_results"]}
    assert "www.nats.aero" in wide_hosts or "www.anats.io" in wide_hosts  # the unpinned search does stray
    pinned = ask(http, prompt(), search_domain_filter=["nats.io"]).json()
    hosts = {host_of(r["url"]) for r in pinned["search_results"]}
    assert hosts == {"nats.io", "docs.nats.io"}  # a subdomain yes; www.anats.io (substring) no
    assert pinned["citations"] == [r["url"] for r in pinned["search_results"]]


def test_deny_list_removes_those_hosts_and_their_subdomains(http):
    denied = ask(http, prompt(), search_domain_filter=["-nats.aero", "-nats.io"]).json()
    hosts = {host_of(r["url"]) for r in denied["search_results"]}
    assert hosts and not any(h.endswith("nats.aero") or h in ("nats.io", "docs.nats.io") for h in hosts)
    assert "www.anats.io" in hosts  # "-nats.io" is a domain rule, not a substring rule


def test_disable_search_leaves_retrieved_markers_and_urls_typed_from_memory(http):
    memory = 0
    for i in range(12):
        data = ask(
            http,
            prompt(OWN[:3], tag=f"strict {i}"),
            disable_search=True,
            web_search_options={"search_context_size": "high"},
        ).json()
        assert data["search_results"] == [] and data["citations"] == []
        content = data["choices"][0]["message"]["content"]
        assert not re.search(r"(?<!\^)\[\d+\]", content), content  # no bare [N]
        truth = data["sandbox_truth"]["citations"]
        assert {c["kind"] for c in truth} <= {"retrieved", "footnote"}
        footnotes = [c for c in truth if c["kind"] == "footnote"]
        # with no search, every URL the answer types is recalled, never a real result
        assert all(c["class"] == "invented" for c in footnotes), footnotes
        defined = re.findall(r"^\[\^\d+\]: .*\((https?://[^)\s]+)\)", content, re.M)
        assert sorted(defined) == sorted(c["url"] for c in footnotes if c["defined"])
        memory += bool(footnotes)
        assert data["usage"]["search_context_size"] == "high"
    assert 1 <= memory <= 9  # some answers, not all (the field rate is ~35%)


# --------------------------------------------------------------------------- streaming


def _events(text):
    return [line[len("data: ") :] for line in text.split("\n\n") if line.startswith("data: ")]


def test_stream_delivers_deltas_then_one_final_chunk_with_results(http):
    content = prompt(OWN[:2], tag="stream")
    whole = ask(http, content).json()
    r = ask(http, content, stream=True)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = _events(r.text)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert len(chunks) > 5
    *deltas, final = chunks
    for chunk in deltas:
        assert not {"search_results", "citations", "usage"} & set(chunk)
        assert chunk["choices"][0]["finish_reason"] is None
    assert "".join(c["choices"][0]["delta"]["content"] for c in deltas) == whole["choices"][0]["message"]["content"]
    assert final["choices"][0]["finish_reason"] == "stop"
    assert final["search_results"] == whole["search_results"] and final["citations"] == whole["citations"]
    assert final["usage"]["cost"]["total_cost"] > 0


def test_stream_can_end_without_done_like_the_full_mode_recording(http):
    r = http.post(
        "/chat/completions",
        headers={"x-sandbox-no-done": "1"},
        json={"model": "sonar-pro", "stream": True, "messages": [{"role": "user", "content": prompt()}]},
    )
    events = _events(r.text)
    assert "[DONE]" not in events
    assert json.loads(events[-1])["choices"][0]["finish_reason"] == "stop"


# --------------------------------------------------------------------------- determinism, usage


def test_same_seed_and_prompt_give_the_same_answer(server, http):
    first, second = ask(http, prompt(OWN[:3])).json(), ask(http, prompt(OWN[:3])).json()
    assert first["choices"][0]["message"]["content"] == second["choices"][0]["message"]["content"]
    assert first["sandbox_truth"] == second["sandbox_truth"] and first["search_results"] == second["search_results"]
    assert first["id"] != second["id"]
    with SandboxServer(port=0, pages=PAGES, seed=8, writer_key=KEY, exa_rps=None) as other:
        third = httpx.post(
            other.url + "/chat/completions",
            headers={"Authorization": f"Bearer {KEY}"},
            json={"model": "sonar-pro", "messages": [{"role": "user", "content": prompt(OWN[:3])}]},
        )
    assert third.json()["choices"][0]["message"]["content"] != first["choices"][0]["message"]["content"]


def test_usage_and_cost_follow_tokens_model_and_context_size(http):
    short, long_ = ask(http, prompt()).json()["usage"], ask(http, prompt(OWN[:3])).json()["usage"]
    assert long_["prompt_tokens"] > short["prompt_tokens"]
    body = prompt(OWN[:1], tag="cost")
    pro = ask(http, body).json()["usage"]
    sonar = http.post("/chat/completions", json={"model": "sonar", "messages": [{"role": "user", "content": body}]})
    assert sonar.json()["usage"]["cost"]["total_cost"] < pro["cost"]["total_cost"]
    high = ask(http, body, web_search_options={"search_context_size": "high"}).json()["usage"]
    assert high["cost"]["request_cost"] > pro["cost"]["request_cost"]


def test_max_tokens_cuts_the_answer_with_finish_reason_length(http):
    data = ask(http, prompt(OWN[:3]), max_tokens=40).json()
    assert data["choices"][0]["finish_reason"] == "length"
    assert data["usage"]["completion_tokens"] <= 40
    content = data["choices"][0]["message"]["content"]
    assert content in ask(http, prompt(OWN[:3])).json()["choices"][0]["message"]["content"]
    body = re.sub(r"^\[\^\w+\]:.*$", "", content, flags=re.M)
    for entry in data["sandbox_truth"]["citations"]:  # the truth describes the cut text, not the whole one
        pattern = re.escape(entry["marker"]) if entry["kind"] != "numeric" else rf"(?<!\^)\[{entry['key']}\]"
        assert len(re.findall(pattern, body)) == entry["occurrences"]


# --------------------------------------------------------------------------- citation composition


def _sentence_with(content, marker):
    """The claim a marker binds to: its sentence (a marker after the full stop binds to the one before)."""
    for para in content.split("\n\n"):
        for sentence in re.findall(r"\S.*?[.!?](?:\s*\[[^\]\s]+\])*(?=\s|$)", para):
            if marker in sentence:
                return re.sub(r"\s*\[[^\]\s]+\]", "", sentence)
    return None


def _check_truth_against_text(data, n_sources):
    """Every class the sandbox claims is visible in the answer itself."""
    content = data["choices"][0]["message"]["content"]
    results = {normalise_url(r["url"]): r for r in data["search_results"]}
    corpus = {normalise_url(p.url) for p in PAGES}
    definitions = dict(re.findall(r"^\[\^(\w+)\]: (.+)$", content, re.M))
    for e in data["sandbox_truth"]["citations"]:
        if e["occurrences"]:
            assert e["marker"] in content
        if e["kind"] == "footnote":
            line = definitions[e["key"]]
            assert f"({e['url']})" in line
            result = results.get(normalise_url(e["url"]))
            dated = re.search(r"\((\d{4}-\d\d-\d\d)\)$", line)
            date_right = (dated.group(1) if dated else None) == (result or {}).get("date")
            if e["class"] == "correct":
                assert result and f"[{result['title']}]" in line and date_right
            elif e["class"] == "wrong_metadata":
                assert result is not None
                assert f"[{result['title']}]" not in line or not date_right
            elif e["class"] == "invented":
                assert result is None and normalise_url(e["url"]) not in corpus
                claim = _sentence_with(content, e["marker"]) if e["occurrences"] else None
                if claim and e["supported_by"] is None:  # filler: nothing retrieved supports it
                    assert not any(supports(claim, f"{r['title']} {r['snippet']}") for r in results.values())
        elif e["kind"] == "numeric":
            in_range = 1 <= int(e["key"]) <= len(data["search_results"])
            assert in_range == (e["class"] == "correct")
            if in_range:
                assert e["url"] == data["search_results"][int(e["key"]) - 1]["url"]
        else:
            assert (int(e["key"][1:]) <= n_sources) == (e["class"] == "retrieved")
    return content


def test_field_mode_mixes_every_citation_class_and_the_truth_is_checkable(http):
    classes: Counter[str] = Counter()
    hosts: Counter[str] = Counter()
    for i, content in enumerate(sample(20)):
        data = ask(http, content).json()
        _check_truth_against_text(data, n_sources=i % 4)
        for e in data["sandbox_truth"]["citations"]:
            classes[e["class"]] += 1
            if e["class"] == "invented":
                hosts["example" if "example.com" in e["url"] else "real-domain"] += 1
    assert all(classes[c] for c in ("correct", "wrong_metadata", "invented", "out_of_range", "retrieved")), classes
    assert hosts["example"] and hosts["real-domain"]
    web = classes["correct"] + classes["wrong_metadata"] + classes["invented"]
    for cls in ("correct", "wrong_metadata", "invented"):  # the field's 29/34/37, roughly
        assert 0.15 <= classes[cls] / web <= 0.55, classes


def test_field_mode_reproduces_the_marker_hygiene_faults(http):
    texts = [ask(http, c).json()["choices"][0]["message"]["content"] for c in sample(20)]
    joined = "\n".join(texts)
    assert re.search(r"[\w%)]\[\^?\w+\]\.", joined)  # marker before the full stop: $41M[^2].
    assert re.search(r"\[\^?\w+\]\[\^?\w+\]", joined)  # chains [^2][^3]
    assert "[needs source]" in joined
    tripled = False
    for text in texts:
        for para in text.split("\n\n"):
            counts = Counter(re.findall(r"\[\^?\w+\]", para))
            tripled |= any(n >= 3 for n in counts.values())
    assert tripled


def test_clean_mode_has_only_correct_citations_in_house_style(http):
    for i, content in enumerate(sample(12)):
        data = ask(http, content, sandbox_citation_mode="clean").json()
        body = _check_truth_against_text(data, n_sources=i % 4)
        assert {e["class"] for e in data["sandbox_truth"]["citations"]} <= {"correct", "retrieved"}
        assert not re.search(r"\S\[\^?\w+\]", body.split("\n\n[^")[0])  # markers after a space, never glued
        for para in body.split("\n\n"):
            counts = Counter(re.findall(r"\[\^?\w+\](?!:)", para))
            assert all(n == 1 for n in counts.values()), para  # one marker per source per paragraph
    header = http.post(
        "/chat/completions",
        headers={"x-sandbox-citation-mode": "clean"},
        json={"model": "sonar-pro", "messages": [{"role": "user", "content": prompt(OWN[:2])}]},
    )
    assert header.json()["sandbox_truth"]["mode"] == "clean"
    assert ask(http, prompt(), sandbox_citation_mode="sloppy").status_code == 400


def test_retrieved_markers_only_name_the_block_plus_deliberate_out_of_range(http):
    six = list(PAGES[:6])
    seen_out_of_range = False
    for i in range(10):
        data = ask(http, prompt(six, tag=f"six {i}")).json()
        content = data["choices"][0]["message"]["content"]
        used = set(re.findall(r"\[\^(E\d+)\]", content))
        out = {e["key"] for e in data["sandbox_truth"]["citations"] if e["class"] == "out_of_range"}
        assert used <= {f"E{n}" for n in range(1, 7)} | out
        assert all(int(k[1:]) > 6 for k in out if k.startswith("E"))
        seen_out_of_range |= any(k.startswith("E") for k in out)
        assert re.match(r"(NATS|Synadia)\b", content), content[:80]  # the lead names the subject
    assert seen_out_of_range
    for i in range(8):  # no retrieved block: E markers only as a deliberate out-of-range slip
        data = ask(http, prompt(tag=f"none {i}")).json()
        content = data["choices"][0]["message"]["content"]
        for key in re.findall(r"\[\^(E\d+)\]", content):
            entry = next(e for e in data["sandbox_truth"]["citations"] if e["key"] == key)
            assert entry["class"] == "out_of_range"


def test_prose_is_built_from_the_retrieved_facts_and_text(http):
    data = ask(http, prompt(OWN[1:3], tag="facts"), sandbox_citation_mode="clean").json()
    content = data["choices"][0]["message"]["content"]
    assert "2017" in content and "Derek Collison" in content  # founded year and founder from E1's facts
    assert "$25 million" in content or "$41M" in content  # funding from E2
    assert not re.search(r"^#", content, re.M)  # a section body: no headings


# --------------------------------------------------------------------------- the bundled corpus and the real prompt


@pytest.fixture(scope="module")
def bundled():
    with SandboxServer(port=0, seed=3, exa_rps=None) as sb:
        yield sb


def test_understands_the_products_prompt_over_the_bundled_corpus(bundled):
    corpus = {p.url: p for p in load_corpus()}
    memo = Memo.model_validate(
        {
            "title": "Synadia",
            "subject": {"name": "NATS", "url": "https://nats.io", "aliases": ["Synadia"]},
            "firm": {"name": "Example Ventures", "context": "Early-stage fund"},
            "sections": [{"id": "overview", "title": "Company overview", "questions": ["Funding to date?"]}],
        }
    )
    picks = [corpus["https://www.synadia.com/about"], corpus["https://nats.io/"], corpus["https://nats.io/about/"]]
    sources = SourceSet(
        section="overview",
        fingerprint="t",
        sources=[
            Source(
                provider="exa",
                url=p.url,
                title=p.title,
                published_date=p.published,
                summary=p.summary,
                facts=p.facts,
                marker=f"E{i}",
            )
            for i, p in enumerate(picks, 1)
        ],
    )
    built = build_prompt(memo, memo.sections[0], sources, today=date(2026, 1, 1))
    messages = [{"role": "system", "content": built.system}, {"role": "user", "content": built.user}]
    with httpx.Client(base_url=bundled.url, headers={"Authorization": "Bearer any-key"}) as client:
        pinned = client.post(
            "/chat/completions",
            json={"model": "sonar-pro", "messages": messages, "search_domain_filter": ["nats.io", "synadia.com"]},
        ).json()
        strict = client.post(
            "/chat/completions", json={"model": "sonar-pro", "messages": messages, "disable_search": True}
        ).json()
    assert pinned["search_results"] and all(r["url"] in corpus for r in pinned["search_results"])
    assert all(host_of(r["url"]).endswith(("nats.io", "synadia.com")) for r in pinned["search_results"])
    for data in (pinned, strict):
        content = data["choices"][0]["message"]["content"]
        out = {e["key"] for e in data["sandbox_truth"]["citations"] if e["class"] == "out_of_range"}
        assert set(re.findall(r"\[\^(E\d+)\]", content)) <= {"E1", "E2", "E3"} | out
        assert "[^E1]" in content or "[^E1][" in content
        assert "41.2" in content or "2017" in content  # Synadia's facts made it into the prose
