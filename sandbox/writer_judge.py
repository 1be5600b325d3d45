"""The sandbox writer's judge mode: an answer to sourcedesk's model-judge prompt
(``sourcedesk.core.citations.model_judge``), so the judge is tested through the real writer
client against both writer endpoints.

A request whose instructions open with the judge's tag is answered with the JSON the prompt asks
for, decided by a rule anyone can check by hand: a claim whose numbers all appear in its source
text and at least half of whose words do is ``supported``; a quarter of its words, ``partial``;
less, ``unsupported``. The reason says what was counted. Faults aimed at the judge alone are
``judge:KIND`` specs (``sourcedesk.sandbox.faults``): the section's own write still succeeds.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sourcedesk.core.citations.model_judge import JUDGE_TAG
from sourcedesk.sandbox.http import Request

_WORD = re.compile(r"[^\W\d_]{4,}")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_ITEMS = "ITEMS (JSON):"


def is_judge(text: str) -> bool:
    """Whether a prompt is the model judge's (its instructions open with the tag)."""
    return JUDGE_TAG in text[: len(JUDGE_TAG) + 200]


def is_judge_request(req: Request) -> bool:
    """The same test on a writer request's body (chat ``messages`` or Agent ``instructions``)."""
    try:
        body = req.json()
    except ValueError:
        return False
    if not isinstance(body, dict):
        return False
    if isinstance(body.get("instructions"), str):
        return is_judge(body["instructions"])
    messages = body.get("messages")
    if isinstance(messages, list):
        return any(
            isinstance(m, dict) and m.get("role") == "system" and isinstance(m.get("content"), str)
            and is_judge(m["content"])
            for m in messages
        )  # fmt: skip
    return False


def judge_answer(prompt_text: str) -> str:
    """The judge's JSON answer for the items in ``prompt_text``."""
    at = prompt_text.find(_ITEMS)
    try:
        items = json.loads(prompt_text[at + len(_ITEMS) :]) if at >= 0 else []
    except ValueError:
        items = []
    verdicts = [_verdict(item) for item in items if isinstance(item, dict)] if isinstance(items, list) else []
    return json.dumps({"verdicts": verdicts}, ensure_ascii=False)


def _verdict(item: dict[str, Any]) -> dict[str, str]:
    claim = str(item.get("claim", ""))
    given = item.get("source")
    source: dict[str, Any] = given if isinstance(given, dict) else {}
    text_parts = source.get("text")
    parts: list[Any] = text_parts if isinstance(text_parts, list) else []
    text = " ".join([str(source.get("title", "")), *(str(p) for p in parts)]).lower()
    words = set(_WORD.findall(claim.lower()))
    found = {w for w in words if w in text}
    numbers = _NUMBER.findall(claim)
    stated = [n for n in numbers if n in text]
    share = len(found) / len(words) if words else 0.0
    if share >= 0.5 and len(stated) == len(numbers):
        verdict = "supported"
    elif share >= 0.25:
        verdict = "partial"
    else:
        verdict = "unsupported"
    reason = f"{len(found)} of the claim's {len(words)} words and {len(stated)} of its {len(numbers)} numbers are in the source"
    return {"id": str(item.get("id", "")), "verdict": verdict, "reason": reason}
