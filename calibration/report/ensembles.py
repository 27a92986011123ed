"""Ensembles of judges in the calibration report: their names, how a command line or a query string
lists them, and their verdicts and cost as one more judge of the report (`calibration.report.build`)."""

from __future__ import annotations

from annotate.models import Campaign
from calibration import metrics as M
from calibration import selectors

ENSEMBLE_PREFIX = "ensemble:"


def ensemble_name(members: list[str] | tuple[str, ...]) -> str:
    """`ensemble:a+b+c` (judge names hold neither ':' nor '+')."""
    return ENSEMBLE_PREFIX + "+".join(members)


def parse_ensembles(values: list[str] | None) -> list[tuple[str, ...]]:
    """`["a,b,c", ...]` (a command line's or a query string's) as member tuples, checked for form only."""
    out: list[tuple[str, ...]] = []
    for value in values or []:
        members = tuple(dict.fromkeys(m.strip() for m in value.split(",") if m.strip()))
        if len(members) < 2:
            raise ValueError(f"an ensemble needs at least two different judges, comma-separated, not '{value}'")
        if set(members) not in [set(o) for o in out]:  # a,b and b,a vote alike
            out.append(members)
    return out


def ensemble_inputs(
    members: tuple[str, ...], by_name: dict, merged_by_judge: dict, campaign: Campaign
) -> tuple[selectors.JudgeSummary, M.LabelTable]:
    """An ensemble's summary (its members' calls, tokens and costs added up; cost unknown when a
    member's is) and its majority verdicts; ValueError naming the judges with verdicts when a member has none."""
    for m in members:
        if m not in by_name or not len(merged_by_judge[m]):
            known = ", ".join(sorted(n for n in by_name if len(merged_by_judge[n]))) or "none"
            raise ValueError(f"ensemble member '{m}' has no verdicts in campaign '{campaign.name}' (judges with verdicts: {known})")
    name = ensemble_name(members)
    table = M.ensemble_verdicts([merged_by_judge[m] for m in members], name)
    parts = [by_name[m] for m in members]
    summary = selectors.JudgeSummary(
        name=name,
        model=" + ".join(p.model or p.name for p in parts),
        kind="ensemble",
        n_units=sum(p.n_units for p in parts),
        errors=sum(p.errors for p in parts),
        n_calls=sum(p.n_calls for p in parts),
        n_invalid_calls=sum(p.n_invalid_calls for p in parts),
        cost_usd=None if any(p.cost_usd is None for p in parts) else sum(p.cost_usd for p in parts),
        prompt_tokens=sum(p.prompt_tokens for p in parts),
        cached_tokens=sum(p.cached_tokens for p in parts),
        completion_tokens=sum(p.completion_tokens for p in parts),
        mean_latency_ms=None,
        possibly_billed_usd=None if any(p.possibly_billed_usd is None for p in parts) else sum(p.possibly_billed_usd for p in parts),
        n_possibly_billed=sum(p.n_possibly_billed for p in parts),
    )
    return summary, table
