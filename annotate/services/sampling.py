"""A campaign's sampling options: which pairs humans label (`Campaign.sampling`).

Under active sampling the human queue holds only the pairs whose `PairAdmission` admitted them; the
admissions are drawn on the calibration side (`sample_pairs`), which has the judges' verdicts and the
statistics. This module checks the options and answers the claim path's one question.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from annotate.models import Campaign, PairAdmission

SAMPLING_CHOICES = ("uniform", "active")


def sampling_problems(
    *, sampling: str, burn_in: int, uniform_share: float, human_cost: Decimal | float | None, budget: int | None
) -> list[str]:
    """Why these sampling options cannot be used (empty: they can)."""
    problems = []
    if sampling not in SAMPLING_CHOICES:
        problems.append(f"Sampling must be one of {', '.join(SAMPLING_CHOICES)}, not '{sampling}'.")
    if burn_in is None or burn_in < 0:
        problems.append("The sampling burn-in is a number of pairs, 0 or more.")
    if uniform_share is None or not 0 <= uniform_share <= 1:
        problems.append("The sampling uniform share is a share between 0 and 1.")
    if human_cost is not None:
        try:
            cost = Decimal(str(human_cost))
        except InvalidOperation:
            cost = None
        if cost is None or not cost.is_finite() or cost <= 0:
            problems.append("The human cost per pair must be a positive amount.")
    if sampling == "active" and uniform_share is not None and uniform_share <= 0:
        problems.append("Active sampling needs a uniform share above 0: a pair with probability 0 would bias the estimates.")
    if budget is not None and budget < 1:
        problems.append("The sampling budget is an expected number of pairs to label, at least 1.")
    if sampling == "active" and budget is None:
        problems.append("Active sampling needs a budget: the expected number of pairs humans should label.")
    if sampling != "active" and (burn_in or budget is not None):
        problems.append("A burn-in and a budget apply to active sampling only.")
    return problems


def admitted_pair_ids(*, campaign: Campaign) -> set[int] | None:
    """The pairs active sampling put in the human queue; None when the campaign samples uniformly (every pair)."""
    if campaign.sampling != "active":
        return None
    return set(PairAdmission.objects.filter(pair__campaign=campaign, admitted=True).values_list("pair_id", flat=True))
