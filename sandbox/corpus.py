"""The sandbox's bundled corpus: pages written for the sandbox, not copied from the web.

Each ``sandbox/corpus/*.yaml`` file holds a list of pages. Every page is
fictional-but-plausible text written for testing sourcedesk and carries the
``SANDBOX_LABEL`` in its text so nobody mistakes it for the real site.
"""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sourcedesk.core.net.urls import host_of

CORPUS_DIR = Path(__file__).parent / "corpus"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: 10x faster
SANDBOX_LABEL = "[sourcedesk sandbox page — written for offline testing, not the real site]"


class Page(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str
    title: str
    published: str | None = None  # ISO date
    author: str | None = None
    summary: str  # what Exa's summary would say
    text: str  # page body (the sandbox label is prepended on load)
    facts: dict[str, Any] = Field(default_factory=dict)  # answers for summary schemas
    entity: dict[str, Any] | None = None  # company entity properties (category: company)
    topics: list[str] = Field(default_factory=list)  # extra ranking keywords
    kind: str = "page"  # page, company, news, aggregator, namesake

    @field_validator("published", mode="before")
    @classmethod
    def _iso_date(cls, value: Any) -> Any:
        """YAML reads an unquoted 2024-05-14 as a date; keep it an ISO string, and check it is one."""
        if isinstance(value, date):
            return value.isoformat()
        if isinstance(value, str):
            date.fromisoformat(value[:10])
        return value

    @property
    def host(self) -> str:
        """Canonical host of the page's URL ("docs.cresta.com")."""
        return host_of(self.url) or ""


@lru_cache(maxsize=4)
def load_corpus(directory: str | None = None) -> tuple[Page, ...]:
    root = Path(directory) if directory else CORPUS_DIR
    pages: list[Page] = []
    for path in sorted(root.glob("*.yaml")):
        try:
            raws = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER) or []
        except yaml.YAMLError as exc:
            raise ValueError(f"{path}: not valid YAML ({exc})") from None
        if not isinstance(raws, list):
            raise ValueError(f"{path}: expected a list of pages at the top level")
        for index, raw in enumerate(raws):
            try:
                page = Page(**raw)
            except (TypeError, ValidationError) as exc:
                url = raw.get("url") if isinstance(raw, dict) else None
                raise ValueError(f"{path}: page #{index + 1} ({url or 'no url'}) is invalid: {exc}") from None
            if SANDBOX_LABEL not in page.text:
                page.text = f"{SANDBOX_LABEL}\n\n{page.text}"
            pages.append(page)
    return tuple(pages)
