"""The report's `steps` section (campaigns that show the agents' steps, issue 42): per system, the
share of up votes on its steps (overall and by kind of step) and on passages of its articles and
steps, how those rankings compare with the humans' Bradley-Terry ranking, and how far annotators
agree on step votes.

Every rate carries n votes, n pairs and a 95% interval resampling pairs. The overall ranking is the
humans' Bradley-Terry scores of the report (`bradley_terry.humans`), fitted on their per-criterion
verdicts; the Comparator ranks by overall votes instead, which a campaign asking the overall
question can read from `win_rates`.
"""

from __future__ import annotations

from annotate.models import Assignment, Campaign, Span, StepVote
from calibration.metrics.steps import Votes, ranking_tau, upvote_rates, vote_ceiling, vote_kappa

RULE = (
    "upvote rate: up votes / all votes of the system's steps (or passages), each annotator's vote on a step counted "
    "once; 95% bootstrap interval resampling pairs; kappa: Fleiss' kappa (varying raters) over steps two or more "
    "annotators voted on; ceiling: the share of votes equal to the strict majority of the other annotators' votes "
    "on the same step (steps where they tie left out)"
)


def wanted(campaign: Campaign) -> bool:
    return campaign.show_steps


def _estimate(estimate) -> dict:
    return {"value": estimate.value, "ci": [estimate.ci_low, estimate.ci_high], "n": estimate.n, "n_pairs": estimate.n_pairs}


def step_votes(campaign: Campaign, *, include_unsubmitted: bool = False) -> Votes:
    rows = StepVote.objects.filter(assignment__pair__campaign=campaign)
    if not include_unsubmitted:
        rows = rows.filter(assignment__status=Assignment.Status.SUBMITTED)
    fields = ("assignment__pair_id", "assignment__annotator__username", "step__article__system__key", "step_id", "step__kind", "vote")
    return Votes.of([(*row[:5], row[5] > 0) for row in rows.values_list(*fields).order_by("pk")])


def span_votes(campaign: Campaign, *, include_unsubmitted: bool = False) -> Votes:
    rows = Span.objects.filter(assignment__pair__campaign=campaign)
    if not include_unsubmitted:
        rows = rows.filter(assignment__status=Assignment.Status.SUBMITTED)
    fields = ("assignment__pair_id", "assignment__annotator__username", "article__system__key", "pk", "step_id", "polarity")
    return Votes.of(
        [(p, r, s, u, "step" if step else "article", pol > 0) for p, r, s, u, step, pol in rows.values_list(*fields).order_by("pk")]
    )


def section(campaign: Campaign, report: dict, *, include_unsubmitted: bool = False, rounds: int = 1000, seed: int = 0) -> dict:
    """`{rule, n_step_votes, n_span_votes, systems, by_kind, rankings, agreement, notes}`."""
    steps = step_votes(campaign, include_unsubmitted=include_unsubmitted)
    spans = span_votes(campaign, include_unsubmitted=include_unsubmitted)
    step_rates = upvote_rates(steps, rounds=rounds, seed=seed)
    span_rates = upvote_rates(spans, rounds=rounds, seed=seed)
    kind_rates = upvote_rates(steps, by_kind=True, rounds=rounds, seed=seed)
    systems = sorted(set(step_rates) | set(span_rates))
    overall = {row["system"]: row["score"] for row in report.get("bradley_terry", {}).get("humans", []) if row.get("estimable")}
    notes = []
    rankings = {}
    for name, rates in (("step_upvote_rate", step_rates), ("span_upvote_rate", span_rates)):
        tau, n = ranking_tau(overall, {s: e.value for s, e in rates.items() if e.value is not None})
        rankings[name] = {"kendall_tau": tau, "n_systems": n}
        if tau is not None and tau < 1:
            words = name.replace("_", " ")
            notes.append(
                f"The {words} orders the systems differently from the humans' Bradley-Terry ranking (Kendall's tau {tau:.2f}, {n} systems)."
            )
    kappa, units = vote_kappa(steps)
    return {
        "rule": RULE,
        "n_step_votes": len(steps),
        "n_span_votes": len(spans),
        "systems": [
            {
                "system": system,
                "step_upvote_rate": _estimate(step_rates[system]) if system in step_rates else None,
                "span_upvote_rate": _estimate(span_rates[system]) if system in span_rates else None,
                "bradley_terry": overall.get(system),
            }
            for system in systems
        ],
        "by_kind": [{"system": system, "kind": kind, "step_upvote_rate": _estimate(e)} for (system, kind), e in sorted(kind_rates.items())],
        "rankings": rankings,
        "agreement": {"kappa": kappa, "n_steps": units, "ceiling": _estimate(vote_ceiling(steps, rounds=rounds, seed=seed))},
        "notes": notes,
    }
