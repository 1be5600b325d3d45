"""The optional model-judge stage of a section's run: after reconcile, before the note.

Off unless ``support.judge: model`` (memo.yaml) or the ``support_judge`` setting says so. It asks
the section's writer (``sourcedesk.core.citations.model_judge``) about the citations the offline
check called ``partial`` or ``unchecked`` — at most ``support_judge_max_claims`` of them — in one
strict request, and records what it costs: ``cost.judge`` in the outcome, the run record and the
note's front matter, and ``judge`` in the report (per citation ``{verdict, reason, cost}``, the
call's cost shared among the claims it judged; for the run ``{model, judged, cost, requests}``).

It never changes a note's text or an offline verdict, and it never fails a section: a writer
error, a deadline or an answer with no usable verdict is a warning ("the model judge …; the
offline verdicts stand") and the note is written as it would have been without it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from sourcedesk.core.citations.ground import coerce_source
from sourcedesk.core.citations.model_judge import ASKED, JudgeItem, item_for, judge_prompt, read_verdicts
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.net.deadline import DeadlineExceeded, within
from sourcedesk.core.net.urls import normalise_url
from sourcedesk.core.writing.choice import choose
from sourcedesk.core.writing.registry import WriteRequest, WriterError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.core.pipeline.run import Reconciled, Resolved, SectionRun

JUDGE_DEADLINE = "the model judge's deadline (writer_deadline_s)"


def judge_mode(run: SectionRun) -> str:
    """``model`` or ``off``: the memo's ``support.judge`` when it says, else the setting."""
    return run.memo.support.judge or run.settings.support_judge


async def judge_section(run: SectionRun, resolved: Resolved, reconciled: Reconciled) -> None:
    """Judge the section's unsettled citations with the model, when the memo asks for it."""
    if judge_mode(run) != "model" or not run.outcome.report:
        return
    report = run.outcome.report
    citations: list[dict[str, Any]] = report.get("citations") or []
    asked = [c for c in citations if c.get("support") in ASKED and c.get("status") in ("verified", "substituted")]
    limit = run.settings.support_judge_max_claims
    pairs = _items(asked[:limit], resolved, reconciled)
    items = [item for item, _ in pairs]
    summary: dict[str, Any] = {"judged": 0, "asked": len(items), "cost": 0.0, "requests": 0}
    report["judge"] = summary
    run.outcome.cost["judge"] = 0.0
    if len(asked) > limit:
        run.outcome.warnings.append(
            f"the model judge was asked about {limit} of {len(asked)} unsettled claims (support_judge_max_claims)"
        )
    if not items:
        return
    run.enter("judging")
    started = time.monotonic()
    try:
        response = await _ask(run, items)
    except (WriterError, DeadlineExceeded, UserError) as exc:
        message = exc.message if isinstance(exc, WriterError) else str(exc)
        run.outcome.warnings.append(f"the model judge failed ({message}); the offline verdicts stand")
        summary["requests"] = exc.requests if isinstance(exc, WriterError) else 0
        return
    finally:
        run.outcome.timings["judge_s"] = round(time.monotonic() - started, 4)
    cost = round(float(response.cost_dollars or 0.0), 6)
    verdicts = read_verdicts(response.content, (i.id for i in items))
    summary.update(model=response.model, cost=cost, requests=response.requests, judged=len(verdicts))
    run.outcome.cost["judge"] = cost
    run.outcome.requests["judge"] = response.requests
    share = round(cost / len(verdicts), 6) if verdicts else 0.0
    by_id = {item.id: citation for item, citation in pairs}
    for item_id, said in verdicts.items():
        by_id[item_id]["judge"] = {"verdict": said.verdict, "reason": said.reason, "cost": share}
    if len(verdicts) < len(items):
        run.outcome.warnings.append(
            f"the model judge gave no usable verdict for {len(items) - len(verdicts)} of {len(items)} claims; "
            "their offline verdicts stand"
        )


async def _ask(run: SectionRun, items: list[JudgeItem]) -> Any:
    from sourcedesk.core.pipeline.run import _until_cancelled  # the run's own cancellation

    choice = choose(run.memo, run.section, has_presets=run.writer.has_presets, default_model=run.settings.writer_model)
    request = WriteRequest(prompt=judge_prompt(items), web_search=False, model=choice.model, temperature=0.0)
    return await _until_cancelled(
        within(run.writer.write(request), run.settings.writer_deadline_s, what=JUDGE_DEADLINE), run.cancel
    )


def _items(
    asked: list[dict[str, Any]], resolved: Resolved, reconciled: Reconciled
) -> list[tuple[JudgeItem, dict[str, Any]]]:
    """One item per citation asked about, with the text stored for the source it resolves to."""
    stored: dict[str, Any] = {normalise_url(s.url): s for s in resolved.sources}
    for result in reconciled.web_results:
        if isinstance(result.get("url"), str):
            stored.setdefault(normalise_url(result["url"]), result)
    items = []
    for n, citation in enumerate(asked, 1):
        source = stored.get(normalise_url(citation.get("resolved_url") or ""))
        if source is None:
            continue
        try:
            ground = coerce_source(source, "source")
        except UserError:
            continue
        claim = str(citation.get("claim") or "")
        evidence = str(citation.get("evidence") or "")
        items.append((item_for(f"c{n}", claim, ground.title, ground.evidence_fields(), evidence), citation))
    return items
