"""What an answer from the offline sandbox says about its own citations.

The sandbox writer (``sourcedesk.sandbox.writer_truth``) adds ``sandbox_truth`` to every raw
answer: one entry per citation with its class (correct, invented, wrong metadata, out of
range…). The run history shows those counts beside the reconciler's, so the demo can be
checked by eye; an answer from a real writer has none, and nothing is shown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any


def raw_citation_classes(raw_response: Mapping[str, Any] | None) -> dict[str, int] | None:
    """How many of the writer's raw citations fell in each class, read from a stored raw
    answer's ``sandbox_truth``; None for an answer that did not come from the sandbox."""
    truth = raw_response.get("sandbox_truth") if isinstance(raw_response, Mapping) else None
    if not isinstance(truth, Mapping) or not isinstance(truth.get("citations"), list):
        return None
    counts = Counter(str(c.get("class")) for c in truth["citations"] if isinstance(c, Mapping))
    return dict(sorted(counts.items()))
