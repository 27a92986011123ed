"""The planner's (e), uniform against active sampling for (c)'s target, in pairs and in money
(issue 27 item 3): a hand example of the pure module, then the planner on a campaign."""

from __future__ import annotations

import math

import numpy as np
import pytest
from django.urls import reverse

from annotate.models import Campaign
from annotate.services.claims import assignment_claim_next
from calibration import metrics as M
from calibration.planner.designs import DesignInputs, design_section, judge_correlation, variance_ratio
from calibration.planner.labels import plan_labels
from judges.models import JudgeUnit
from tests.calibration_builders import by_criterion, hand_campaign, label_pairs, order_flipping_judge
from tests.helpers import run
from tests.test_active_resample import TOPICS

ERRORS = [1.0, 1.0, 4.0, 4.0]


def test_it_gives_the_variance_ratio_of_a_hand_example():
    # u = 0.2: q_i = 0.2 / 4 + 0.8 sqrt(e_i) / (1 + 1 + 2 + 2) = 0.18333.. (e = 1) and 0.31666.. (e = 4).
    q_small, q_large = 0.05 + 0.8 / 6, 0.05 + 1.6 / 6
    by_hand = (2 * 1 / q_small + 2 * 4 / q_large) / (4 * 10)
    assert variance_ratio(ERRORS, 0.2) == pytest.approx(by_hand, abs=1e-12) == pytest.approx(0.904306, abs=1e-6)
    # Almost all by the error (Neyman's allocation): R = mean(sqrt e)^2 / mean(e) = 1.5^2 / 2.5 = 0.9.
    assert variance_ratio(ERRORS, 1e-12) == pytest.approx(0.9, abs=1e-9)
    assert variance_ratio([2.0, 2.0, 2.0], 0.2) == pytest.approx(1.0, abs=1e-12)  # nothing to weigh by: the uniform design
    assert variance_ratio([0.0, 0.0], 0.2) is None


def tables():
    """Four pairs, one criterion: the humans say a, a, b, tie; the judge a, b, b, a (a is the pair's first system)."""
    humans = [("p1", "sys_a"), ("p2", "sys_a"), ("p3", "sys_b"), ("p4", "tie")]
    judge = [("p1", "sys_a"), ("p2", "sys_b"), ("p3", "sys_b"), ("p4", "sys_a")]
    rows = [(p, "human:h", "human", w) for p, w in humans] + [(p, "j", "judge", w) for p, w in judge]
    table = M.LabelTable.from_columns(
        pair=[r[0] for r in rows], criterion=["c"] * 8, category=["k"] * 8, rater=[r[1] for r in rows], rater_kind=[r[2] for r in rows],
        system_a=["sys_a"] * 8, system_b=["sys_b"] * 8, winner=[r[3] for r in rows],
    )  # fmt: skip
    return table.humans(), table.for_rater("j")


def test_it_compares_the_designs_of_a_hand_example_in_pairs_and_money():
    humans, judge = tables()
    # Values h = (1, 1, -1, 0), j = (1, -1, -1, 1): rho = 1 / sqrt(11), the ceiling 1 / (1 - 1/11) = 1.1.
    rho = judge_correlation(humans, judge)
    assert rho == pytest.approx(1 / math.sqrt(11), abs=1e-12)
    assert rho == pytest.approx(np.corrcoef([1, 1, -1, 0], [1, -1, -1, 1])[0, 1], abs=1e-12)
    given = DesignInputs(predicted_error=np.array(ERRORS), note="model", uniform_share=0.2, human_cost=2.0, judge_cost_usd={"j": 4.0})
    scores = [{"judge": "j", "pairs_needed": 100, "reachable": True}]
    section = design_section(scores, humans, {"j": judge}, given, n_pairs=400, n_labelled_pairs=40)
    row = section["rows"][0]
    # Active: ceil(100 x 0.904306) = 91 pairs. Money: pairs x $2 + 400 pairs judged x ($4 / 4 pairs judged).
    assert (row["uniform_pairs"], row["active_pairs"]) == (100, 91)
    assert (row["uniform_more_pairs"], row["active_more_pairs"]) == (60, 51)
    assert row["judge_cost_per_pair_usd"] == 1.0
    assert (row["uniform_cost_usd"], row["active_cost_usd"]) == (600.0, 582.0)
    assert row["promise"] == pytest.approx(1 / 0.904306, abs=1e-3) and row["ceiling"] == 1.1 and row["rho"] == 0.302
    assert row["cost_note"] is None and section["variance_ratio"] == pytest.approx(0.9043, abs=1e-4)


@pytest.mark.parametrize(
    ("human_cost", "judge_cost", "unknown"),
    [
        (None, 4.0, "the human cost per pair"),
        (2.0, None, "j's cost per pair"),
        (None, None, "the human cost per pair and j's cost per pair"),
    ],
)
def test_it_says_cost_unknown_never_zero(human_cost, judge_cost, unknown):
    humans, judge = tables()
    given = DesignInputs(predicted_error=np.array(ERRORS), note="model", human_cost=human_cost, judge_cost_usd={"j": judge_cost})
    row = design_section(
        [{"judge": "j", "pairs_needed": 100, "reachable": True}], humans, {"j": judge}, given, n_pairs=400, n_labelled_pairs=40
    )["rows"][0]
    assert row["uniform_cost_usd"] is None and row["active_cost_usd"] is None
    assert row["cost_note"] == f"cost unknown: {unknown} not known"
    assert row["active_pairs"] == 91  # the pairs stand whatever the money


def test_it_gives_no_active_figures_without_an_error_model():
    humans, judge = tables()
    section = design_section(
        [{"judge": "j", "pairs_needed": 100, "reachable": True}],
        humans,
        {"j": judge},
        DesignInputs(note="too few"),
        n_pairs=400,
        n_labelled_pairs=40,
    )
    assert section["note"] == "too few" and section["variance_ratio"] is None
    assert section["rows"][0]["active_pairs"] is None and section["rows"][0]["uniform_pairs"] == 100


@pytest.mark.django_db
def test_it_plans_both_designs_on_a_campaign(alice, rachel, client):
    campaign = hand_campaign([alice], topics=TOPICS)
    Campaign.objects.filter(pk=campaign.pk).update(human_cost_per_pair="1.50")
    campaign.refresh_from_db()
    pairs = list(campaign.pairs.order_by("order", "id"))
    order_flipping_judge(campaign, pairs)
    early = plan_labels(campaign=campaign)["designs"]
    assert early["variance_ratio"] is None and early["note"].startswith("No error model yet: it needs 8 labelled pairs")
    # Where the judge flips with the order the humans disagree with it (the swap feature predicts the
    # error); one pair where it holds still has a human doubt, so the fit is not perfect.
    human = {p: by_criterion("a", "a", "a") if i % 2 else by_criterion("b", "b", "b") for i, p in enumerate(pairs)}
    human[pairs[1]] = by_criterion("a", "b", "a")
    for _ in range(len(pairs)):  # the next pair the claims hand out, labelled as `human` says
        label_pairs(campaign, alice, {(pair := assignment_claim_next(campaign=campaign, user=alice).pair): human[pair]})
    designs = plan_labels(campaign=campaign, target_halfwidth=0.49)["designs"]
    assert designs["n_pairs_predicted"] == 12 and designs["human_cost_per_pair_usd"] == 1.5
    assert designs["note"].startswith("Error model fitted on 12 labelled pairs")
    row = designs["rows"][0]
    assert row["judge"] == "judge-1" and row["rho"] is not None and row["ceiling"] == pytest.approx(1 / (1 - row["rho"] ** 2), rel=0.01)
    # judge_rows bills $0.01 a unit, one unit per category and order of each of the 12 pairs.
    per_pair = JudgeUnit.objects.filter(pair__campaign=campaign).count() * 0.01 / 12
    assert row["judge_cost_per_pair_usd"] == pytest.approx(per_pair) and per_pair > 0
    assert row["uniform_pairs"] is not None and row["active_pairs"] is not None, row
    # R <= 1 (1/q is convex: the mixed shares do no worse than uniform ones), so never more pairs than uniform.
    assert 0 < designs["variance_ratio"] < 1 and row["active_pairs"] <= row["uniform_pairs"]
    assert "they predict the error" in designs["note"] and row["promise"] > 1
    assert row["uniform_cost_usd"] == pytest.approx(row["uniform_pairs"] * 1.5 + 12 * per_pair, abs=0.01)
    assert row["active_cost_usd"] == pytest.approx(row["active_pairs"] * 1.5 + 12 * per_pair, abs=0.01)
    client.force_login(rachel)
    page = client.get(reverse("calibration-plan", args=[campaign.pk]), {"target": "0.49"})
    assert page.status_code == 200
    text = page.content.decode()
    assert "(e) Uniform or active sampling" in text and f"×{row['ceiling']}" in text and f"×{row['promise']}" in text
    command = run("plan_labels", "--campaign", campaign.name, "--target-halfwidth", "0.49")
    assert command.code == 0 and f"x{row['ceiling']:g}" in command.out and "(e) Uniform or active sampling" in command.out
