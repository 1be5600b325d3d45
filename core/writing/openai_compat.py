"""``writer_api: openai`` — any OpenAI-compatible ``/chat/completions`` (OpenAI, a gateway, a local model).

Such a model has no web search of its own, so every section is written strictly
from its retrieved set; no Perplexity-only field is ever sent, and a local
server may need no key at all.
"""

from __future__ import annotations

from typing import Any

from sourcedesk.core.writing.base import WriteRequest
from sourcedesk.core.writing.chat import ChatCompletionsWriter


class OpenAICompatibleWriter(ChatCompletionsWriter):
    api = "openai"
    label = "OpenAI-compatible chat completions"
    key_name = "OPENAI_API_KEY"
    searches_web = False
    needs_key = False  # local servers take none; a real endpoint answers 401, which is reported
    default_model = None

    def request_body(self, request: WriteRequest) -> dict[str, Any]:
        body = self.base_body(request)
        if self.stream:
            body["stream_options"] = {"include_usage": True}
        return self.finish_body(body, request)
