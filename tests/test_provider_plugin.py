"""A provider from outside the package: one module, found through the ``sourcedesk.providers``
entry point of a distribution installed next to sourcedesk (a real ``.dist-info`` on
``sys.path``), with its own settings, key and client — and a section runs with it.

The provider's search service and the writer (OpenAI-compatible) are answered by respx;
everything else is the product's own code path: ``sourcedesk run`` loads the settings once
(the plugin's too), the memo loader validates the plugin's entry, retrieval opens the
plugin's client, and the reconciler verifies the ``A`` markers against what it returned.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import respx

from sourcedesk import providers
from sourcedesk.core.config.settings import load_settings
from sourcedesk.providers import PROVIDERS, discover, get_provider
from sourcedesk.tui.cli import main

ACME_KEY = "acme-key-5f0c2e9a71"
ACME_URL = "https://search.acme.test"
LLM_URL = "https://llm.test/v1"

PLUGIN = '''\
"""Acme's vector search as an include-sources provider: everything about Acme is here."""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import AliasChoices, ConfigDict, Field, SecretStr

from sourcedesk.providers import (
    PluginEntry,
    Provider,
    ProviderContext,
    ProviderResult,
    ProviderSettings,
    RetrievalError,
    Settings,
    Source,
    render,
)


class AcmeSettings(ProviderSettings):
    acme_url: str = "https://api.acme.example"
    acme_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("ACME_API_KEY", "acme_api_key"))
    acme_top_k: int = Field(default=5, ge=1, le=50)


class AcmeEntry(PluginEntry):
    model_config = ConfigDict(extra="forbid")

    query: str


class AcmeClient:
    def __init__(self, url: str, key: str) -> None:
        self.http = httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=5)
        self.requests_sent = 0

    async def search(self, query: str, k: int) -> list[dict[str, Any]]:
        self.requests_sent += 1
        answer = await self.http.post("/search", json={"query": query, "k": k})
        if answer.status_code != 200:
            raise RetrievalError(f"Acme answered HTTP {answer.status_code}", requests=1)
        return list(answer.json()["hits"])

    async def aclose(self) -> None:
        await self.http.aclose()


class AcmeProvider(Provider):
    name = "acme"
    label = "Acme"
    marker_prefix = "A"
    uses_network = True
    key_env = "ACME_API_KEY"
    settings_model = AcmeSettings
    entry_model = AcmeEntry

    def open_client(self, settings: Settings) -> AcmeClient:
        own = self.own_settings(settings, AcmeSettings)
        key = self.api_key(settings)
        return AcmeClient(own.acme_url, key.get_secret_value() if key else "")

    def describe(self, entry: AcmeEntry, ctx: ProviderContext) -> dict[str, Any]:
        return {"provider": self.name, "query": render(entry.query, ctx.variables)}

    async def fetch(self, entry: AcmeEntry, ctx: ProviderContext) -> ProviderResult:
        client = ctx.client(self)
        assert isinstance(client, AcmeClient)
        own = self.own_settings(ctx.settings, AcmeSettings)
        query = render(entry.query, ctx.variables)
        hits = await client.search(query, own.acme_top_k)
        sources = [
            Source(provider=self.name, url=h["url"], title=h["title"], summary=h["text"], rank=i, entry=ctx.entry_index, query=query)
            for i, h in enumerate(hits)
        ]
        return ProviderResult(sources=sources, requests=1)
'''

MEMO = """\
title: Acme Vectors — profile
subject: {name: Acme Vectors, url: "https://acmevectors.example"}
writer: {api: openai, model: local-model}
sections:
  - id: overview
    title: Overview
    include-sources:
      - provider: acme
        query: "{{subject}} revenue and customers"
"""

HITS = [
    {
        "url": "https://acmevectors.example/annual-report-2025",
        "title": "Acme Vectors annual report 2025",
        "text": f"Acme Vectors reported revenue of $12 million in 2025. (support ref {ACME_KEY})",
    },
    {
        "url": "https://news.example/acme-banks",
        "title": "Acme Vectors signs banks",
        "text": "Acme Vectors now serves 40 banks across Europe.",
    },
]

ANSWER = (
    "Acme Vectors reported revenue of $12 million in 2025 [^A1]. "
    "It now serves 40 banks across Europe [^A2]. "
    "Analysts expect a listing soon [^1].\n\n"
    "[^1]: https://invented.example/acme-ipo\n"
)


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``acme-vectors`` installed into a directory on ``sys.path``, as pip would leave it."""
    site = tmp_path / "site"
    info = site / "acme_vectors-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "acme_vectors.py").write_text(PLUGIN, encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-vectors\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[sourcedesk.providers]\nacme = acme_vectors:AcmeProvider\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    try:
        yield site
    finally:
        providers.unregister("acme")
        providers.PLUGIN_ERRORS.pop("acme", None)
        sys.modules.pop("acme_vectors", None)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ACME_API_KEY", ACME_KEY)
    monkeypatch.setenv("SOURCEDESK_ACME_URL", ACME_URL)
    monkeypatch.setenv("SOURCEDESK_ACME_TOP_K", "2")
    monkeypatch.setenv("SOURCEDESK_WRITER_URL", LLM_URL)
    monkeypatch.setenv("SOURCEDESK_MAX_RETRIES", "0")
    memo = tmp_path / "memo"
    memo.mkdir()
    (memo / "memo.yaml").write_text(MEMO, encoding="utf-8")
    return memo


def _services(mock: respx.MockRouter) -> tuple[respx.Route, respx.Route]:
    search = mock.post(f"{ACME_URL}/search").respond(200, json={"hits": HITS})
    writer = mock.post(f"{LLM_URL}/chat/completions").respond(
        200,
        json={
            "id": "chatcmpl-1",
            "model": "local-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 60, "total_tokens": 960},
        },
    )
    return search, writer


def test_an_installed_distribution_adds_a_provider_and_a_section_runs_with_it(plugin, env, capsys):
    assert "acme" in discover()
    provider = get_provider("acme")
    assert type(provider).__module__ == "acme_vectors" and PROVIDERS["acme"] is provider

    with respx.mock(assert_all_called=True) as mock:
        search, writer = _services(mock)
        assert main(["run", str(env), "--json"]) == 0
    [outcome] = json.loads(capsys.readouterr().out)

    # The provider's own settings and key reached its own client.
    sent = search.calls.last.request
    assert sent.headers["Authorization"] == f"Bearer {ACME_KEY}"
    assert json.loads(sent.content) == {"query": "Acme Vectors revenue and customers", "k": 2}
    # Its sources were packed and numbered with its prefix, and went into the prompt.
    assert [s["marker"] for s in outcome["sources"]] == ["A1", "A2"]
    prompt = json.loads(writer.calls.last.request.content)["messages"][-1]["content"]
    assert "https://acmevectors.example/annual-report-2025" in prompt
    # The reconciler verified the two A citations and dropped the invented URL.
    assert outcome["status"] == "ok" and outcome["requests"] == {"writer": 1, "acme": 1}
    report = outcome["report"]
    assert (report["verified"], report["dropped"]) == (2, 1)
    note = Path(outcome["note_path"]).read_text(encoding="utf-8")
    assert "https://acmevectors.example/annual-report-2025" in note and "https://news.example/acme-banks" in note
    assert "invented.example" not in note
    # Its key is a secret like Exa's: the text that echoed it is stored redacted.
    stored = b"".join(p.read_bytes() for p in (env / ".sourcedesk").rglob("*") if p.is_file())
    assert ACME_KEY.encode() not in stored and b"[redacted]" in stored


def test_the_plugins_settings_take_the_one_error_path(plugin, env, monkeypatch, capsys):
    discover()
    monkeypatch.setenv("SOURCEDESK_ACME_TOP_K", "lots")
    assert main(["run", str(env)]) == 2
    err = capsys.readouterr().err
    assert "SOURCEDESK_ACME_TOP_K" in err and "acme_top_k" in err and "Traceback" not in err
    with pytest.raises(Exception, match="SOURCEDESK_ACME_TOP_K"):
        load_settings()


def test_without_its_key_the_plugins_entry_is_skipped_and_the_section_says_so(plugin, env, monkeypatch, capsys):
    discover()
    monkeypatch.delenv("ACME_API_KEY")
    with respx.mock(assert_all_called=False) as mock:
        search, _writer = _services(mock)
        assert main(["run", str(env), "--json"]) == 0
    [outcome] = json.loads(capsys.readouterr().out)
    assert not search.called and outcome["status"] == "degraded"
    assert any("no Acme API key is set — acme entry 1 was skipped; set ACME_API_KEY" in w for w in outcome["warnings"])


def test_a_broken_plugin_is_named_when_a_memo_asks_for_it(plugin, env, capsys):
    (plugin / "acme_vectors.py").write_text("raise ImportError('acme needs libfoo')\n", encoding="utf-8")
    discover()
    assert "acme" not in PROVIDERS
    assert main(["run", str(env)]) == 2
    err = capsys.readouterr().err
    assert "'acme'" in err and "acme needs libfoo" in err
