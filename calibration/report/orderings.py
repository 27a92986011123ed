"""The report's `orderings` section: rankings of k articles (a campaign's groups), humans and judges.

One entry per ranking criterion, with: the systems' Plackett-Luce strengths fitted on the humans'
orderings, with item-bootstrap CIs; Kendall's W among the annotators who ranked the same item (the
mean over items); the human leave-one-out ceiling (each annotator's Kendall's tau-b against the mean
ranks of the item's other annotators); and per judge, its tau-b against the humans' mean ranks and
the share of pairs of systems it orders as they do, each with its CI, next to the ceiling
(`calibration.metrics.orderings`). Every figure carries its n and the items it rests on. What was
left out is counted: tied orderings in the fit, pairs the humans tie, judges' units in error.

Present only when the campaign's rubric asks rankings: any other report is unchanged.
"""

from __future__ import annotations

from calibration.metrics import orderings as metrics
from calibration.ordering_selectors import OrderingInputs, ordering_inputs
from calibration.report.sections import estimate

STATEMENT = (
    "Rankings of k articles of one topic, best first (ties where a criterion allows them). Ranks are 1 for the best; tied "
    "articles share the mean of the ranks they span. Plackett-Luce strengths (log scale, mean 0; choix's ILSR with ridge "
    "alpha {alpha}) are fitted on the humans' strict orderings only: an ordering with a tie is left out and counted. Kendall's W "
    "is corrected for ties and averaged over the items two or more annotators ranked. A judge is compared with the humans' mean "
    "ranks of each item: Kendall's tau-b averaged over items, and the share of the pairs the humans order that it orders the "
    "same way (a pair the humans tie is left out and counted; a judge's tie is never alike). The ceiling is each annotator "
    "against the others' mean ranks. CIs: 95% percentile bootstrap over items ({rounds:,} rounds, seed {seed})."
)


def _criterion(entry, *, rounds: int, seed: int) -> dict:
    fit = metrics.plackett_luce(entry.humans, rounds=rounds, seed=seed)
    ceiling = metrics.leave_one_out_ceiling(entry.humans, rounds=rounds, seed=seed)
    judges = {}
    for name, own in sorted(entry.judges.items()):
        agreement = metrics.order_agreement(own, entry.humans, rounds=rounds, seed=seed)
        judges[name] = {
            "n_orderings": len(own),
            "n_items": agreement.n_items,
            "tau_mean_rank": estimate(agreement.tau),
            "pairs_ordered_alike": estimate(agreement.pairs_alike),
            "n_pairs_humans_tied": agreement.n_pairs_humans_tied,
            # Below the humans' own ceiling or not: the judge's tau against the ceiling's interval, never the point alone.
            "within_ceiling": _within(agreement.tau, ceiling),
        }
    return {
        "criterion": entry.key,
        "text": entry.text,
        "articles": entry.articles,
        "ties_allowed": entry.ties,
        "n_items": len({o.item for o in entry.humans}),
        "n_orderings": len(entry.humans),
        "annotators": sorted({o.rater for o in entry.humans}),
        "plackett_luce": {
            "n_items": fit.n_items,
            "n_orderings": fit.n_rankings,
            "n_skipped_tied": fit.n_skipped_tied,
            "systems": {system: estimate(value, "strength") for system, value in sorted(fit.strengths.items())},
        },
        "kendalls_w": estimate(metrics.mean_agreement(entry.humans, rounds=rounds, seed=seed)),
        "ceiling": estimate(ceiling),
        "judges": judges,
    }


def _within(tau, ceiling) -> str:
    """'yes' when the judge's tau CI reaches the ceiling's CI, 'no' when it lies wholly below it; '' when
    either has no interval (too few items to say)."""
    if tau.value is None or ceiling.value is None or tau.shown_ci is None or ceiling.shown_ci is None:
        return ""
    return "yes" if tau.shown_ci[1] >= ceiling.shown_ci[0] else "no"


def section(inputs: OrderingInputs | None, *, rounds: int, seed: int) -> dict | None:
    if inputs is None:
        return None
    return {
        "statement": STATEMENT.format(alpha=metrics.ALPHA, rounds=rounds, seed=seed),
        "n_groups": inputs.n_groups,
        "criteria": [_criterion(entry, rounds=rounds, seed=seed) for entry in inputs.criteria],
        "judge_errors": inputs.judge_errors,
    }


def orderings_add(report: dict, campaign, include_unsubmitted: bool, *, rounds: int, seed: int) -> None:
    """Adds the `orderings` section and a note when the campaign's rubric asks rankings."""
    found = section(ordering_inputs(campaign=campaign, include_unsubmitted=include_unsubmitted), rounds=rounds, seed=seed)
    if found is None:
        return
    report["orderings"] = found
    total = sum(c["n_orderings"] for c in found["criteria"])
    report["notes"].append(
        f"Rankings of {found['criteria'][0]['articles'] if found['criteria'] else 'k'} articles ({total:,} human orderings on "
        f"{found['n_groups']:,} groups) are in the orderings section, not in the pairwise figures."
    )
