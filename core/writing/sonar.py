"""``writer_api: perplexity-sonar`` — Perplexity's Sonar chat completions, kept as the legacy path.

Perplexity ended support for it on 2026-09-27; gateways and accounts that still
serve it use this backend. Its own web search is switched off per request with
``disable_search`` (strict mode) and steered with a top-level
``search_domain_filter``.
"""

from __future__ import annotations

from typing import Any

from sourcedesk.core.writing.base import WriteRequest
from sourcedesk.core.writing.chat import ChatCompletionsWriter


class SonarWriter(ChatCompletionsWriter):
    api = "perplexity-sonar"
    label = "Perplexity Sonar (chat completions, legacy)"
    key_name = "PERPLEXITY_API_KEY"
    searches_web = True
    needs_key = True
    default_model = "sonar-pro"

    def request_body(self, request: WriteRequest) -> dict[str, Any]:
        body = self.base_body(request)
        if not request.web_search:
            body["disable_search"] = True
        elif request.domain_filter:
            body["search_domain_filter"] = list(request.domain_filter)
        return self.finish_body(body, request)
