"""The report's `steps` section (campaigns that show the agents' steps, issue 42): per system, the
share of up votes on its steps (overall and by kind of step) and on passages of its articles and
steps, how those rankings compare with the humans' Bradley-Terry ranking, and how far annotators
agree on step votes; and, for each judge that voted on the steps (`run_judges --steps`), how far
its votes agree with the annotators'.

Every rate carries n votes, n pairs and a 95% interval resampling pairs. The overall ranking is the
humans' Bradley-Terry scores of the report (`bradley_terry.humans`), fitted on their per-criterion
verdicts; the Comparator ranks by overall votes instead, which a campaign asking the overall
question can read from `win_rates`.
"""

from __future__ import annotations

from annotate.models import Assignment, Campaign, Span, StepVote
from calibration.metrics.pointwise import BINARY, PointwiseAnswers, pointwise_table
from calibration.metrics.pointwise_agreement import pointwise_statistics
from calibration.metrics.steps import Votes, ranking_tau, upvote_rates, vote_ceiling, vote_kappa
from calibration.report.pointwise import alt_test_entry, clean, powered_entry
from judges.models import JudgeUnit

RULE = (
    "upvote rate: up votes / all votes of the system's steps (or passages), each annotator's vote on a step counted "
    "once; 95% bootstrap interval resampling pairs; kappa: Fleiss' kappa (varying raters) over steps two or more "
    "annotators voted on; ceiling: the share of votes equal to the strict majority of the other annotators' votes "
    "on the same step (steps where they tie left out)"
)


JUDGE_RULE = (
    "a judge's vote on a step (up = 1, down = 0) against every annotator's vote on that step: agreement and Cohen's kappa "
    "over (judge vote, annotator vote) pairs; against the annotators' strict majority (steps where they tie left out); "
    "mean: the judge's upvote rate, human_mean the annotators', on the same steps; an annotator who voted on one step in "
    "two pairs counts once, with the later vote; the ceiling is each annotator against the others; the prediction-powered "
    "upvote rate per system combines the judge's votes on every step with the annotators' on the steps they voted on; "
    "95% bootstrap intervals resampling articles (a step's votes move with its article's)"
)
# The judges' figures a binary answer has (`pointwise_agreement`), in the order the tables show them.
JUDGE_FIGURES = ("agreement", "kappa", "agreement_majority", "kappa_majority", "mean", "human_mean", "bias")


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


def step_vote_table(campaign: Campaign, *, include_unsubmitted: bool = False) -> PointwiseAnswers | None:
    """The annotators' and the judges' votes on the campaign's steps as binary answers (an item is a
    step: its article and its number), or None without a vote from both."""
    rows = StepVote.objects.filter(assignment__pair__campaign=campaign, assignment__repeat_of__isnull=True)
    if not include_unsubmitted:
        rows = rows.filter(assignment__status=Assignment.Status.SUBMITTED)
    fields = ("step__article_id", "step__article__system__key", "step__article__topic_id", "step__order", "vote")
    latest: dict[tuple, tuple] = {}
    for *head, rater, vote in rows.values_list(*fields[:4], "assignment__annotator__username", "vote").order_by("saved_at", "pk"):
        latest[(head[0], head[3], rater)] = (*head, rater, vote, False)  # the later vote on a step wins
    judged = JudgeUnit.objects.filter(
        pair__campaign=campaign, question=JudgeUnit.Question.STEP, status=JudgeUnit.Status.DONE, vote__isnull=False
    )
    judge_rows = [(*head, name, vote, True) for *head, name, vote in judged.values_list(*fields[:4], "judge__name", "vote")]
    answers = list(latest.values()) + judge_rows
    if not latest or not judge_rows:
        return None
    return pointwise_table(
        article=[str(r[0]) for r in answers], system=[r[1] for r in answers], topic=[str(r[2]) for r in answers],
        criterion=[f"step {r[3] + 1}" for r in answers], rater=[r[4] for r in answers], value=[1.0 if r[5] > 0 else 0.0 for r in answers],
        is_judge=[r[6] for r in answers], response=BINARY,
    )  # fmt: skip


def _figures(figures) -> dict:
    return {name: _estimate(figures.figures[name]) for name in JUDGE_FIGURES if name in figures.figures}


def judges_section(
    campaign: Campaign, *, include_unsubmitted: bool, epsilon: float | None, unit: str, rounds: int, seed: int
) -> dict | None:
    """Each judge's votes on the steps against the annotators' (`JUDGE_RULE`), or None without both."""
    table = step_vote_table(campaign, include_unsubmitted=include_unsubmitted)
    if table is None:
        return None
    stats = pointwise_statistics(table, rounds=rounds, seed=seed)
    judges = {}
    for name in table.judges:
        powered = powered_entry(table, name)
        judges[name] = {
            "figures": _figures(stats.judge_figures[name]),
            "counts": dict(stats.judge_figures[name].counts),
            "alt_test": alt_test_entry(table, name, epsilon=epsilon, unit=unit, rounds=rounds, seed=seed),
            "powered_upvote_rates": powered["systems"],
            "left_out": powered["left_out"],
        }
    return clean(
        {
            "rule": JUDGE_RULE,
            "n_votes": stats.n_answers,
            "n_steps": stats.n_items,
            "n_articles": stats.n_clusters,
            "humans": list(stats.humans),
            "human_ceiling": _figures(stats.ceiling),
            "judges": judges,
        }
    )


def section(
    campaign: Campaign,
    report: dict,
    *,
    include_unsubmitted: bool = False,
    rounds: int = 1000,
    seed: int = 0,
    epsilon: float | None = None,
    unit: str = "pair",
) -> dict:
    """`{rule, n_step_votes, n_span_votes, systems, by_kind, rankings, agreement, judges, notes}`; `judges`
    (None when no judge voted on the steps) is `judges_section`'s, its alt-test at the report's ε."""
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
        "judges": judges_section(campaign, include_unsubmitted=include_unsubmitted, epsilon=epsilon, unit=unit, rounds=rounds, seed=seed),
        "notes": notes,
    }
