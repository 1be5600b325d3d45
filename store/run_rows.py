"""A run record as both backends store it: a short row and, when large, a body apart.

The History tab lists runs by status, counts, cost and timings; the bulk of a record (the
prompt, the raw answer, the report) is read only when one run is opened. So a record is
split once, here, into the row every listing reads and the body kept elsewhere (a payload
file in a TinyDB store, a payload row on PostgreSQL), and both backends agree on the shape.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from pydantic_core import to_jsonable_python

from sourcedesk.core.domain import clock
from sourcedesk.core.domain.records import RunRecord
from sourcedesk.store.json_storage import encode

# Run fields that move to a payload as one JSON document when large.
RUN_BODY_FIELDS = (
    "raw_response",
    "raw_responses",
    "prompt",
    "messages",
    "response",
    "report",
    "previous_note",
    "outcome",
    "started_at",
    "web_search",
    "refresh",
    "domain_filter",
    "model",
    "note_sha256",
    "web_results",
    "annotations",
    "writer",
)
RUN_BODY_KEY = "body"


def new_run_id() -> str:
    now = clock.now()
    return f"run-{now:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


def split_run(run: RunRecord, run_id: str) -> tuple[dict[str, Any], dict[str, Any], bytes]:
    """``(row, body, encoded body)`` of ``run`` stored as ``run_id``; the body's fields are
    already out of the row."""
    data = run.model_dump(mode="json", exclude_defaults=True)
    data["id"] = run_id
    data.setdefault("created_at", clock.now().isoformat())
    report = run.the_report
    if report is not None:
        data["counts"] = report.counts()
    outcome = data.get("outcome")
    if isinstance(outcome, dict) and "report" in data:
        outcome.pop("report", None)  # the run keeps it once
    body = {k: data.pop(k) for k in RUN_BODY_FIELDS if k in data}
    return data, body, encode(body)


def merged_state(
    before: Mapping[str, Any] | None, changes: Mapping[str, Any], run: RunRecord, run_id: str
) -> dict[str, Any]:
    """The section's state with ``changes`` merged in; ``last_run`` names the id the record
    was stored under (which differs from the record's own when that was taken)."""
    state = dict(before or {})
    new = to_jsonable_python(dict(changes))
    if run.id and new.get("last_run") == run.id:
        new["last_run"] = run_id
    state.update(new)
    return state


__all__ = ["RUN_BODY_FIELDS", "RUN_BODY_KEY", "merged_state", "new_run_id", "split_run"]
