"""Every acceptable verdict (issue 40 item 5): a campaign asks for sets, annotators mark them, a judge
agrees when its verdict is in the set, the report reads both ways side by side and flags a changed
best judge; the sets are exported and imported back."""

import csv
import io

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotate.models import Assignment, Campaign, Criterion, Label, LabelChange
from annotate.services.answers import label_save
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import assignment_submit
from calibration.report.build import build_report
from calibration.report.formats import render_html, render_md
from calibration.report.methods import render_methods
from interchange import label_rows
from tests.calibration_builders import ATLAS, QUILL, hand_campaign, judge_rows, pair_of
from tests.helpers import run
from tests.test_import_labels import import_labels, label_row, write_csv

pytestmark = pytest.mark.django_db


def test_it_refuses_a_set_where_the_campaign_does_not_ask_for_one(campaign, alice):
    work = assignment_claim_next(campaign=campaign, user=alice)
    criterion = Criterion.objects.filter(criterion_set=campaign.criterion_set).first()
    with pytest.raises(ValidationError, match="does not ask for every acceptable verdict"):
        label_save(assignment=work, criterion=criterion, user=alice, position="1", rationale="fine prose", acceptable=["2"])


def test_it_stores_the_set_by_side_and_audits_it(campaign, alice):
    Campaign.objects.filter(pk=campaign.pk).update(accept_sets=True, allow_tie=True)
    campaign.refresh_from_db()
    work = assignment_claim_next(campaign=campaign, user=alice)
    Assignment.objects.filter(pk=work.pk).update(a_first=False, order="ba")
    work.refresh_from_db()
    criterion = Criterion.objects.filter(criterion_set=campaign.criterion_set).first()
    label_save(assignment=work, criterion=criterion, user=alice, position="1", rationale="fine prose", acceptable=["tie", "1"])
    label = Label.objects.get(assignment=work, criterion=criterion)
    # Shown first is B (a_first False): the winner is b, a tie is also acceptable; the winner is not repeated.
    assert (label.winner, label.acceptable) == ("b", ["tie"])
    assert LabelChange.objects.get(criterion=criterion, field="acceptable").new_value == "tie"
    with pytest.raises(ValidationError, match="Mark as also acceptable only"):
        label_save(assignment=work, criterion=criterion, user=alice, position="1", acceptable=["3"])


def sets_campaign(alice, bob):
    campaign = hand_campaign([alice, bob], allow_tie=True)
    Campaign.objects.filter(pk=campaign.pk).update(accept_sets=True)
    campaign.refresh_from_db()
    keys = list(Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order").values_list("key", flat=True))
    for user in (alice, bob):
        for _ in range(2):
            work = assignment_claim_next(campaign=campaign, user=user)
            Assignment.objects.filter(pk=work.pk).update(a_first=True, order="ab")
            work.refresh_from_db()
            for key in keys:
                # A wins everywhere; a tie would do too, for both annotators.
                criterion = Criterion.objects.get(criterion_set=campaign.criterion_set, key=key)
                label_save(assignment=work, criterion=criterion, user=user, position="1", rationale="Clearer here.", acceptable=["tie"])
            assignment_submit(assignment=work, user=user)
    pairs = [pair_of(campaign, ATLAS), pair_of(campaign, QUILL)]
    judge_rows(campaign, "exact", {(pairs[0], True): dict.fromkeys(keys, "a"), (pairs[1], True): dict.fromkeys(keys, "b")})
    judge_rows(campaign, "hedger", {(pairs[0], True): dict.fromkeys(keys, "tie"), (pairs[1], True): dict.fromkeys(keys, "tie")})
    return campaign


def test_it_reads_judges_under_both_readings_and_flags_a_changed_best_judge(alice, bob):
    campaign = sets_campaign(alice, bob)
    report = build_report(campaign, rounds=50, seed=0)
    found = report["acceptable_sets"]
    figures = {j["judge"]: (j["par_single"]["value"], j["par_set"]["value"]) for j in found["judges"]}
    assert figures == {"exact": (0.5, 0.5), "hedger": (0.0, 1.0)}
    assert (found["best_single"], found["best_set"], found["best_changes"]) == ("exact", "hedger", True)
    md = render_md(report)
    assert "Judge selection: single choice and every acceptable verdict" in md
    assert "⚠ The best judge changes with the reading: exact on single choices, hedger on every acceptable verdict." in md
    assert "Judge selection: single choice and every acceptable verdict" in render_html(report, svgs={})
    assert "the best judge changes with the reading, from exact to hedger." in render_methods(report)


def test_it_writes_the_table_as_csv_and_says_why_it_is_absent(alice, bob):
    campaign = sets_campaign(alice, bob)
    result = run("calibration_report", "--campaign", campaign.name, "--rounds", "20", "--format", "csv", "--table", "acceptable_sets")
    assert result.code == 0, result.err
    rows = list(csv.reader(io.StringIO(result.out)))
    assert rows[0] == ["Judge", "PAR, single choice", "PAR, acceptable set"]
    assert [row[0] for row in rows[1:]] == ["exact ← best, single", "hedger ← best, set"]
    other = hand_campaign([alice, bob], name="No sets")
    assert "acceptable_sets" not in build_report(other, rounds=20, seed=0)
    result = run("calibration_report", "--campaign", other.name, "--rounds", "20", "--format", "csv", "--table", "acceptable_sets")
    assert result.code != 0 and "the campaign does not ask for sets" in result.err


def test_it_exports_every_human_row_with_its_set(alice, bob):
    campaign = sets_campaign(alice, bob)
    rows = [row for row in label_rows(campaign) if row["rater_kind"] == "human"]
    assert {row["acceptable_systems"] for row in rows} == {f"{row['winner_system']}|tie" for row in rows}


def test_it_imports_a_set_and_checks_it(demo_campaign, tmp_path):
    Campaign.objects.filter(pk=demo_campaign.pk).update(accept_sets=True, allow_tie=True)
    row = label_row(rater="r1")
    path = write_csv(
        tmp_path / "labels.csv", [{**row, "acceptable_systems": f"{row['winner_system']}|tie"}], (*row.keys(), "acceptable_systems")
    )
    result = import_labels(path)
    assert result.code == 0, result.err
    assert Label.objects.get().acceptable == ["tie"]
    assert "0 new, 0 updated, 1 unchanged" in import_labels(path).out
    bad = write_csv(tmp_path / "bad.csv", [{**row, "rater": "r2", "acceptable_systems": "tie"}], (*row.keys(), "acceptable_systems"))
    result = import_labels(bad)
    assert result.code == 1
    assert f"acceptable_systems must hold winner_system '{row['winner_system']}'" in result.err


def test_it_shows_the_table_on_the_dashboard(client, alice, bob, django_user_model):
    campaign = sets_campaign(alice, bob)
    staff = django_user_model.objects.create_user("staffer", password="x", is_staff=True)
    client.force_login(staff)
    page = client.get(reverse("calibration-dashboard", args=[campaign.pk]))
    assert page.status_code == 200
    text = page.content.decode()
    assert "Judge selection: single choice and every acceptable verdict" in text
    assert "The best judge changes with the reading" in text
