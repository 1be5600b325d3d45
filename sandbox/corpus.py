"""The sandbox's bundled corpus: pages written for the sandbox, not copied from the web.

Each ``sandbox/corpus/*.yaml`` file holds a list of pages. Every page is
fictional-but-plausible text written for testing sourcedesk and carries the
``SANDBOX_LABEL`` in its text so nobody mistakes it for the real site.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

CORPUS_DIR = Path(__file__).parent / "corpus"
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


@lru_cache(maxsize=4)
def load_corpus(directory: str | None = None) -> tuple[Page, ...]:
    root = Path(directory) if directory else CORPUS_DIR
    pages: list[Page] = []
    for path in sorted(root.glob("*.yaml")):
        for raw in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            page = Page(**raw)
            if SANDBOX_LABEL not in page.text:
                page.text = f"{SANDBOX_LABEL}\n\n{page.text}"
            pages.append(page)
    return tuple(pages)
