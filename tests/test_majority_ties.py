"""Majority-vote accuracy under three stated conventions for items whose humans tie: dropped (the
default), counted 1/k, or broken by a seeded draw; the mean single-label accuracy (PAR) named beside
it (issue 39, item 8)."""

from __future__ import annotations

import csv
import itertools

import numpy as np
import pytest
from sklearn.metrics import accuracy_score

from calibration import metrics as M
from tests.metrics_helpers import J, L, S, W

# Three items, three annotators at most:
#   p1: W W S  -> strict majority W; the judge says W (right under every convention)
#   p2: W S tie -> a three-way tie; the judge says W
#   p3: W S    -> a two-way tie; the judge says W
HUMANS = [
    L("p1", "c1", "h1", W), L("p1", "c1", "h2", W), L("p1", "c1", "h3", S),
    L("p2", "c1", "h1", W), L("p2", "c1", "h2", S), L("p2", "c1", "h3", M.TIE),
    L("p3", "c1", "h1", W), L("p3", "c1", "h2", S),
]  # fmt: skip
JUDGE = [J("p1", "c1", W), J("p2", "c1", W), J("p3", "c1", W)]
# An item's tied labels in the categories' order: the first system by name wins (storm), the second (wikipedia), a tie.
TIED = {"p2": (S, W, M.TIE), "p3": (S, W)}


def test_it_gives_three_figures_for_three_conventions_on_a_hand_example():
    drop, half, draw = (M.agreement(JUDGE, HUMANS, rounds=0, seed=0, majority_ties=c) for c in M.MAJORITY_TIES)

    assert drop.par_majority.value == pytest.approx(1.0) and drop.par_majority.n == 1  # p1 alone
    assert half.par_majority.value == pytest.approx((1 + 1 / 3 + 1 / 2) / 3) and half.par_majority.n == 3
    # the draw: per item in order, the floor(u * k)-th of its tied labels (u from the seed's generator)
    u = np.random.default_rng(0).random(3)
    picks = {"p2": TIED["p2"][int(u[1] * 3)], "p3": TIED["p3"][int(u[2] * 2)]}
    expected = (1 + (picks["p2"] == W) + (picks["p3"] == W)) / 3
    assert draw.par_majority.value == pytest.approx(expected) and draw.par_majority.n == 3
    # the mean single-label accuracy: 2 of 3, 1 of 3, 1 of 2 labels agree
    assert drop.par.value == pytest.approx(4 / 8)
    figures = {drop.par_majority.value, half.par_majority.value, draw.par_majority.value, drop.par.value}
    assert len(figures) == 4, figures
    assert drop.kappa.n == half.kappa.n == draw.kappa.n == 1  # κ: the strict majority whatever the convention


def test_it_counts_half_as_the_mean_accuracy_over_every_tie_break():
    """Half (1/k) is the expected accuracy of a uniform tie-break: scikit-learn's accuracy averaged over every way to break the ties."""
    judge = [W, W, W]
    accuracies = [
        accuracy_score([W, a, b], judge) for a, b in itertools.product(TIED["p2"], TIED["p3"])
    ]  # fmt: skip
    half = M.agreement(JUDGE, HUMANS, rounds=0, majority_ties="half")
    assert half.par_majority.value == pytest.approx(np.mean(accuracies), abs=1e-12)
    drop = M.agreement(JUDGE, HUMANS, rounds=0)
    assert drop.par_majority.value == pytest.approx(accuracy_score([W], [W]))


def test_it_draws_the_same_ties_for_the_same_seed_and_refuses_an_unknown_convention():
    many = [L(f"p{i}", "c1", h, w) for i in range(40) for h, w in (("h1", W), ("h2", S))]
    judge = [J(f"p{i}", "c1", W) for i in range(40)]
    first, again = (M.agreement(judge, many, rounds=0, seed=3, majority_ties="draw") for _ in range(2))
    assert first.par_majority.value == again.par_majority.value
    assert 0.2 < first.par_majority.value < 0.8  # about half of 40 coin flips
    with pytest.raises(ValueError, match="unknown majority-tie convention 'coin'"):
        M.agreement(judge, many, rounds=0, majority_ties="coin")


def test_it_spreads_a_judge_share_over_the_tied_labels():
    """A judge whose two orders count half each (swap policy half) gets its share of each tied label."""
    counts = np.array([[1, 1, 0], [2, 0, 0]])
    share = np.array([[0.5, 0.5, 0.0, 0.0], [0.5, 0.0, 0.0, 0.5]])
    credit, weight = M.majority_credit(counts, share, "half")
    assert credit.tolist() == [0.5, 0.5] and weight.tolist() == [1.0, 1.0]
    credit, weight = M.majority_credit(counts, share, "drop")
    assert credit.tolist() == [0.0, 0.5] and weight.tolist() == [0.0, 1.0]


@pytest.mark.django_db
def test_it_takes_the_convention_from_the_command_the_api_and_the_dashboard(client, django_user_model):
    from calibration.report.build import build_report
    from calibration.report.formats import render_table_csv
    from tests.calibration_builders import hand_campaign

    staff = django_user_model.objects.create_user("staff", is_staff=True, is_superuser=True)
    alice, bob = (django_user_model.objects.create_user(n) for n in ("alice", "bob"))
    campaign = hand_campaign([alice, bob])

    drop, half = (build_report(campaign, rounds=0, majority_ties=c) for c in ("drop", "half"))
    assert drop["parameters"]["majority_ties"] == "drop" and half["parameters"]["majority_rule"] == M.MAJORITY_TIE_RULES["half"]
    header = next(csv.reader(render_table_csv(half, "judges").splitlines()))
    assert "PAR (mean single-label accuracy)" in header and "Majority-vote accuracy (ties counted 1/k)" in header
    assert "Majority-vote accuracy (ties dropped)" in next(csv.reader(render_table_csv(drop, "judges").splitlines()))
    from calibration.report.formats import render_csv, render_md

    assert {r["majority_ties"] for r in csv.DictReader(render_csv(half).splitlines())} == {"half"}
    assert "Majority vote (--majority-ties half): " + M.MAJORITY_TIE_RULES["half"] in render_md(half)

    from tests.helpers import run

    command = run("calibration_report", "--campaign", campaign.name, "--rounds", "0", "--majority-ties", "draw", "--format", "csv",
                  "--table", "judges", "--out", "-")  # fmt: skip
    assert command.code == 0, command.err
    assert "Majority-vote accuracy (ties drawn)" in command.out.splitlines()[0]
    assert run("calibration_report", "--campaign", campaign.name, "--majority-ties", "coin").code != 0

    client.force_login(staff)
    api = client.get(f"/api/campaigns/{campaign.pk}/calibration/?majority_ties=draw")
    assert api.status_code == 200 and api.json()["parameters"]["majority_ties"] == "draw"
    bad = client.get(f"/api/campaigns/{campaign.pk}/calibration/?majority_ties=coin")
    assert bad.status_code == 400 and "unknown majority-tie convention 'coin'" in bad.json()["detail"]
    page = client.get(f"/calibration/campaign/{campaign.pk}/?majority_ties=coin")
    assert page.status_code == 400
    page = client.get(f"/calibration/campaign/{campaign.pk}/?majority_ties=half")
    assert page.status_code == 200
    assert '<option value="half" selected>half</option>' in page.content.decode()
