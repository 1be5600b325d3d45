"""A key that a server echoes back is scrubbed where it enters: no output path ever carries it.

One memo, one hostile Exa that reflects the bearer token into every field it sends
(titles, URLs, page text, highlights, summaries, facts, error bodies) and pages that
quote it, then every way the product puts text somewhere: ``retrieve`` and ``run``
(human and JSON), the section note, ``export``'s memo.md, ``check-urls`` (human and
JSON), the store (db.json and every payload), and the log.
"""

from __future__ import annotations

import json
import logging

import pytest

from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.tui.cli import main
from tests.hostile_server import HostileServer, Reply

EXA_KEY = "exa-echoed-SECRET-4c1d9e77"
WRITER_KEY = "pplx-echoed-SECRET-4c1d9e77"

MEMO_YAML = """\
title: Acme Robotics — profile
subject: {name: Acme Robotics, url: https://acme-robotics.io}
writer: {web-search: false, target-words: 80}
sections:
  - id: overview
    title: Company overview
    include-sources:
      - provider: exa
        query: "{{subject}} overview"
        pin: none
        num-results: 3
        contents: {text: true, highlights: true}
"""


@pytest.fixture
def servers():
    with HostileServer() as hostile, SandboxServer(port=0, seed=5) as writer:
        yield hostile, writer


def test_an_echoed_key_reaches_no_output(servers, tmp_path, monkeypatch, capsys, caplog):
    hostile, writer = servers
    results = [
        {
            "url": f"{hostile.url}/about?token={{key}}",
            "title": "Acme Robotics {key}",
            "text": "Acme Robotics builds warehouse robots. Your key is {key}.",
            "highlights": ["key={key}"],
            "summary": '{"summary": "Acme builds robots ({key}).", "ceo": "{key}"}',
            "author": "{key}",
        },
        {"url": f"{hostile.url}/team", "title": "Team", "summary": "Founded in 2019 by {key}."},
    ]
    body = json.dumps({"results": results, "costDollars": {"total": 0.01}}).encode()
    hostile.serve("exa", Reply(body=body))
    page = f"<html><title>Page not found {EXA_KEY}</title><body>not found</body></html>".encode()
    hostile.route("/about", Reply(body=page, headers=(("Content-Type", "text/html"),)))
    hostile.route("/team", Reply(404, b"gone " + EXA_KEY.encode()))

    memo = tmp_path / "memo"
    memo.mkdir()
    (memo / "memo.yaml").write_text(MEMO_YAML, encoding="utf-8")
    for name, value in {
        "SOURCEDESK_EXA_URL": hostile.url,
        "SOURCEDESK_WRITER_URL": writer.url,
        "EXA_API_KEY": EXA_KEY,
        "PERPLEXITY_API_KEY": WRITER_KEY,
        "SOURCEDESK_MAX_RETRIES": "0",
        "SOURCEDESK_CHECK_MAX_RETRIES": "0",
    }.items():
        monkeypatch.setenv(name, value)

    outputs: dict[str, str] = {}
    with caplog.at_level(logging.DEBUG):
        for label, argv in [
            ("retrieve", ["retrieve", str(memo)]),
            ("retrieve --json", ["retrieve", str(memo), "--json", "--refresh"]),
            ("run", ["run", str(memo)]),
            ("run --json", ["run", str(memo), "--json", "--refresh"]),
            ("export", ["export", str(memo)]),
            ("check-urls", ["check-urls", str(memo), "--allow-private"]),
            ("check-urls --json", ["check-urls", str(memo), "--json", "--allow-private"]),
        ]:
            code = main(argv)
            captured = capsys.readouterr()
            assert code in (0, 1), (label, captured.err)
            outputs[f"{label} (stdout)"] = captured.out
            outputs[f"{label} (stderr)"] = captured.err
    outputs["log"] = caplog.text

    # the pipeline really carried the echo through: the sources are there, redacted
    doc = json.loads(outputs["retrieve --json (stdout)"])
    titles = [s["title"] for s in doc["sections"][0]["sources"]]
    assert "Acme Robotics [redacted]" in titles
    assert any("echoed the API key" in w["message"] for w in doc["sections"][0]["warnings"])
    checked = outputs["check-urls --json (stdout)"]
    assert "[redacted]" in checked, checked  # the page's title, quoted in a detail (whole output on failure)

    for path in sorted(memo.rglob("*")):
        if path.is_file() and path.name != "lock":
            outputs[str(path.relative_to(memo))] = path.read_bytes().decode("utf-8", errors="replace")
    assert "sections/01-overview.md" in outputs and "memo.md" in outputs
    assert any(name.startswith(".sourcedesk/payloads/") for name in outputs)
    for where, text in outputs.items():
        assert EXA_KEY not in text, where
        assert WRITER_KEY not in text, where
