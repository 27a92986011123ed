"""The report's blinding section: the indices from the stored guesses, the verdicts by guess, style control, and
every format (JSON, Markdown, HTML tables, CSV, the methods paragraph)."""

import pytest

from annotate.services.guesses import assignment_guess_save
from calibration.metrics.blinding import FIRST, SECOND, Guess, blinding
from calibration.report.build import build_report
from calibration.report.display import tables
from calibration.report.methods import render_methods
from tests.test_export_labels import claim, finish

pytestmark = pytest.mark.django_db


def answered(campaign, username, *, a_first, answer):
    assignment = claim(campaign, username, a_first=a_first)
    finish(assignment, overall="1")
    assignment.refresh_from_db()
    if answer:
        assignment_guess_save(assignment=assignment, user=assignment.annotator, answer=answer)
    return assignment


def test_it_reports_the_indices_of_the_stored_guesses(demo_campaign):
    work = [
        answered(demo_campaign, "annotator1", a_first=True, answer="first"),
        answered(demo_campaign, "annotator2", a_first=False, answer="first"),
        answered(demo_campaign, "annotator1", a_first=False, answer="unknown"),
        answered(demo_campaign, "annotator2", a_first=True, answer=""),
    ]
    expected = blinding(
        [
            Guess(
                pair=a.pair_id,
                reference_first=a.a_first,  # the demo's pairs hold the reference as article A
                answer={"a": FIRST if a.a_first else SECOND, "b": SECOND if a.a_first else FIRST}.get(a.guess, a.guess),
            )
            for a in work
        ],
        rounds=50,
    )

    report = build_report(demo_campaign, rounds=50)

    section = report["blinding"]
    assert section["asked"] and section["reference"] == "wikipedia"
    for arm in ("first", "second"):
        assert section["overall"]["bang"][arm]["value"] == pytest.approx(expected.bang[arm].value)
    assert section["overall"]["james"]["missing"] == 1 == expected.counts.missing
    assert section["overall"]["james"]["dont_know"] == 1
    assert set(section["by_annotator"]) == {"annotator1", "annotator2"}
    humans = section["verdicts_by_guess"]["humans"]["overall"]
    assert humans["by_guess"]["right"]["n"] + humans["by_guess"]["wrong"]["n"] + humans["by_guess"]["dont_know"]["n"] == 3 * 39
    assert section["verdicts_by_guess"]["n_labels_without_answer"] == 39
    assert "overall" in section["style"]["fits"]["humans"]

    shown = tables(report)
    assert [row[0] for row in shown["blinding"].rows][0] == "All (original assignments)"
    assert shown["verdicts_by_guess"].rows[0][:3] == ["humans", "reference win rate", "overall"]
    assert shown["style_control"].rows and shown["style_control"].rows[0][0] == "humans"
    methods = render_methods(report)
    assert "Blinding: Bang's index per arm" in methods and "James' index over both arms" in methods


def test_it_says_when_nobody_answered(demo_campaign):
    answered(demo_campaign, "annotator1", a_first=True, answer="")

    report = build_report(demo_campaign, rounds=50)

    assert report["blinding"]["overall"] is None
    assert tables(report)["blinding"].empty == "no answers to the guess question"
    assert "Blinding:" not in render_methods(report)
