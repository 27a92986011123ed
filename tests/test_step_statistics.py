"""The step and passage vote statistics (calibration/metrics/steps.py, the report's `steps` section):
upvote rates equal hand counts, Fleiss' kappa equals statsmodels', the ceiling a hand example."""

import io

import numpy as np
import pytest
from django.contrib.auth.models import User
from statsmodels.stats.inter_rater import fleiss_kappa

from calibration.metrics.steps import Votes, ranking_tau, upvote_rates, vote_ceiling, vote_kappa
from tests.test_campaign_steps import steps_campaign, traces  # noqa: F401 (traces: a fixture)


def votes(rows):
    return Votes.of(rows)


def test_it_counts_upvote_rates_per_system_and_kind_as_by_hand():
    rows = [
        # item, rater, system, unit, kind, up
        (1, "ada", "alpha", 10, "plan", True),
        (1, "ada", "alpha", 11, "search", False),
        (1, "ada", "beta", 20, "plan", True),
        (2, "bob", "alpha", 12, "plan", True),
        (2, "bob", "beta", 21, "read", False),
        (2, "bob", "beta", 22, "read", False),
        (3, "bob", "alpha", 13, "search", True),
    ]
    rates = upvote_rates(votes(rows), rounds=200)
    assert (rates["alpha"].value, rates["alpha"].n, rates["alpha"].n_pairs) == (3 / 4, 4, 3)
    assert (rates["beta"].value, rates["beta"].n, rates["beta"].n_pairs) == (1 / 3, 3, 2)
    by_kind = upvote_rates(votes(rows), by_kind=True, rounds=200)
    assert by_kind[("alpha", "search")].value == 1 / 2 and by_kind[("beta", "read")].value == 0.0
    low, high = rates["alpha"].ci_low, rates["alpha"].ci_high
    assert low is None or low <= 0.75 <= high


def test_it_gives_fleiss_kappa_as_statsmodels_when_every_step_has_as_many_votes():
    rng = np.random.default_rng(4)
    rows, table = [], []
    for unit in range(40):
        ups = 0
        for rater in ("ada", "bob", "cy"):
            up = bool(rng.random() < (0.8 if unit % 3 else 0.3))
            ups += up
            rows.append((unit // 4, rater, "alpha", unit, "plan", up))
        table.append([ups, 3 - ups])
    kappa, units = vote_kappa(votes(rows))
    assert units == 40
    assert kappa == pytest.approx(fleiss_kappa(np.array(table), method="fleiss"), abs=1e-12)


def test_it_counts_the_leave_one_out_ceiling_by_hand():
    rows = [
        (1, "ada", "alpha", 10, "plan", True),
        (1, "bob", "alpha", 10, "plan", True),
        (1, "cy", "alpha", 10, "plan", False),  # others: 2 up -> majority up; ada, bob agree with theirs (1-1 tie for them: left out)
        (2, "ada", "alpha", 11, "plan", False),
        (2, "bob", "alpha", 11, "plan", False),
    ]
    # unit 10: ada's others (bob up, cy down) tie -> out; bob's others tie -> out; cy's others up,up -> disagree.
    # unit 11: ada's other (bob down) -> agree; bob's other (ada down) -> agree.
    ceiling = vote_ceiling(votes(rows), rounds=100)
    assert (ceiling.value, ceiling.n, ceiling.n_pairs) == (2 / 3, 3, 2)


def test_it_compares_rankings_with_kendalls_tau():
    assert ranking_tau({"a": 3, "b": 2, "c": 1}, {"a": 0.9, "b": 0.5, "c": 0.1}) == (1.0, 3)
    assert ranking_tau({"a": 3, "b": 2, "c": 1}, {"a": 0.1, "b": 0.5, "c": 0.9}) == (-1.0, 3)
    assert ranking_tau({"a": 3}, {"a": 0.2, "b": 0.1}) == (None, 1)


@pytest.mark.django_db
def test_it_reports_the_votes_of_a_steps_campaign_in_every_format(traces):  # noqa: F811
    from django.core.management import call_command

    from annotate.services.claims import assignment_claim_next
    from annotate.services.step_votes import step_vote_save
    from calibration.report.build import build_report
    from calibration.report.formats import render

    ada = User.objects.create_user("ada2", password="pw-ada-12345")
    campaign = steps_campaign(annotators=[ada])
    assignment = assignment_claim_next(campaign=campaign, user=ada)
    steps = [*assignment.pair.article_a.steps.order_by("order")]
    for step, vote in zip(steps, ["up", "up", "down"]):
        step_vote_save(assignment=assignment, step_id=step.pk, vote=vote, user=ada)
    report = build_report(campaign, rounds=50, include_unsubmitted=True)
    system = assignment.pair.article_a.system.key
    [entry] = [e for e in report["steps"]["systems"] if e["system"] == system]
    assert entry["step_upvote_rate"]["value"] == pytest.approx(2 / 3) and entry["step_upvote_rate"]["n"] == 3
    assert report["steps"]["n_step_votes"] == 3
    for fmt in ("md", "html", "json"):  # the report's CSV is the judges' table; the steps table is --table steps, below
        text = render(report, fmt)
        assert "steps" in text.lower()
    out = io.StringIO()
    call_command(
        "calibration_report", "--campaign", campaign.name, "--format", "csv", "--table", "steps", "--include-unsubmitted", stdout=out
    )
    assert system in out.getvalue()
