"""The judges' answers to the guess question in the report's blinding section: their Bang's and James'
indices and their verdicts by their own guess, equal to a hand count, in every format."""

import csv
import io
import json

import pytest

from annotate.services.guesses import guess_position
from calibration.report.build import build_report
from calibration.report.formats import render_html, render_json, render_md, render_table_csv
from calibration.report.methods import render_methods
from judges.models import JudgeUnit, JudgeVerdict
from judges.services import judge_create, judge_run_create, judge_run_execute
from tests.test_report_blinding import answered

pytestmark = pytest.mark.django_db

KEY_ENV = "FAKE_JUDGE_API_KEY"


def mixed_guess(message: str) -> str:
    """Deterministic, and different between a pair's two orders (the first article's opening differs)."""
    return ("first", "second", "unknown")[sum(map(ord, message[:400])) % 3]


@pytest.fixture
def guessed(demo_campaign, llm_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-guess")
    judge, _ = judge_create(
        name="fake-gpt", model="fake-judge", base_url=llm_server.base_url, api_key_env=KEY_ENV, input_price="1", output_price="2",
    )  # fmt: skip
    llm_server.guess_policy = mixed_guess
    run = judge_run_execute(run=judge_run_create(campaign=demo_campaign, judge=judge, swap=True, guess=True))
    assert run.status == "finished", run.message
    return demo_campaign


def hand_count():
    """Per arm (reference shown first / second): right, wrong, don't know, from the stored guesses."""
    arms = {True: [0, 0, 0], False: [0, 0, 0]}
    outcomes = {}
    for unit in JudgeUnit.objects.filter(question=JudgeUnit.Question.GUESS).select_related("pair__article_a__system"):
        assert unit.pair.article_a.system.key == "wikipedia"  # the demo's pairs hold the reference as A
        reference_first = unit.a_first
        answer = guess_position(unit.guess, unit.a_first)
        outcome = 2 if answer == "unknown" else 0 if (answer == "first") == reference_first else 1
        arms[reference_first][outcome] += 1
        outcomes[unit.pair_id, unit.a_first] = ("right", "wrong", "dont_know")[outcome]
    return arms, outcomes


def test_it_reports_the_judges_indices_as_a_hand_count_gives_them(guessed):
    arms, outcomes = hand_count()
    assert all(sum(counts) for counts in arms.values()) and len({o for o in outcomes.values()}) == 3

    report = build_report(guessed, rounds=50)

    judge = report["blinding"]["judges"]["fake-gpt"]
    for arm, reference_first in (("first", True), ("second", False)):
        right, wrong, dont_know = arms[reference_first]
        entry = judge["overall"]["bang"][arm]
        assert (entry["right"], entry["wrong"], entry["dont_know"]) == (right, wrong, dont_know)
        assert entry["value"] == pytest.approx((right - wrong) / (right + wrong + dont_know))
        assert entry["n"] == right + wrong + dont_know
        # The demo's few pairs are under the report's minimum for an interval: it is withheld, and says so.
        assert entry["ci"] is None or entry["ci"][0] <= entry["value"] <= entry["ci"][1]
    # James' index by hand: rows the answer (first, second, don't know), columns the arm.
    (r1, w1, d1), (r2, w2, d2) = arms[True], arms[False]
    first_said, second_said = (r1, w2), (w1, r2)  # (arm first, arm second) of each answer
    guessed_n = r1 + w1 + r2 + w2
    observed = 0.5 * (w1 + w2) / guessed_n
    rows = [sum(first_said) / guessed_n, sum(second_said) / guessed_n]
    columns = [(r1 + w1) / guessed_n, (w2 + r2) / guessed_n]
    expected = 0.5 * (rows[0] * columns[1] + rows[1] * columns[0])
    p_dk = (d1 + d2) / (guessed_n + d1 + d2)
    james = (1 + p_dk + (1 - p_dk) * (observed - expected) / expected) / 2
    assert judge["overall"]["james"]["value"] == pytest.approx(james)
    assert judge["overall"]["james"]["guesses"] == guessed_n
    assert set(judge["by_system"]) == set(JudgeUnit.objects.filter(question="guess").values_list("pair__article_b__system__key", flat=True))


def test_it_splits_the_judges_verdicts_by_their_own_guess(guessed):
    _, outcomes = hand_count()
    wins = {"right": [0.0, 0], "wrong": [0.0, 0], "dont_know": [0.0, 0]}
    for verdict in JudgeVerdict.objects.filter(unit__question=JudgeUnit.Question.VERDICTS).select_related("unit"):
        group = wins[outcomes[verdict.unit.pair_id, verdict.unit.a_first]]
        group[0] += 0.5 if verdict.winner == "tie" else float(verdict.winner == "a")  # the reference is A
        group[1] += 1

    report = build_report(guessed, rounds=50)

    split = report["blinding"]["judges"]["fake-gpt"]["verdicts_by_guess"]["reference_win_rate"]["overall"]
    for group, (won, n) in wins.items():
        assert split["by_guess"][group]["n"] == n
        assert split["by_guess"][group]["value"] == pytest.approx(won / n, abs=1e-6)
    # No human label yet: nothing to agree with, and no empty rows.
    assert report["blinding"]["judges"]["fake-gpt"]["verdicts_by_guess"]["agreement"] == {}
    assert split["right_minus_dont_know"]["value"] == pytest.approx(
        wins["right"][0] / wins["right"][1] - wins["dont_know"][0] / wins["dont_know"][1], abs=1e-6
    )


def test_it_compares_the_judges_verdicts_with_the_humans_by_the_judges_guess(guessed):
    assignment = answered(guessed, "annotator1", a_first=True, answer="first")
    _, outcomes = hand_count()
    pair = assignment.pair_id
    labels = {label.criterion_id: label.winner for label in assignment.labels.all()}
    matches = {"right": [0, 0], "wrong": [0, 0], "dont_know": [0, 0]}
    for verdict in JudgeVerdict.objects.filter(unit__pair_id=pair, unit__question=JudgeUnit.Question.VERDICTS).select_related("unit"):
        group = matches[outcomes[pair, verdict.unit.a_first]]
        group[0] += verdict.winner == labels[verdict.criterion_id]
        group[1] += 1

    report = build_report(guessed, rounds=50)

    par = report["blinding"]["judges"]["fake-gpt"]["verdicts_by_guess"]["agreement"]["overall"]["par"]
    for group, (agree, n) in matches.items():
        assert par["by_guess"][group]["n"] == n
        if n:
            assert par["by_guess"][group]["value"] == pytest.approx(agree / n, abs=1e-6)
    # The humans' own figures stand beside them.
    assert report["blinding"]["overall"]["bang"]["first"]["right"] == 1


def test_it_shows_the_judges_rows_in_every_format(guessed):
    report = build_report(guessed, rounds=50)

    assert json.loads(render_json(report))["blinding"]["judges"]["fake-gpt"]["overall"]["bang"]["first"]["n"] > 0
    table = list(csv.reader(io.StringIO(render_table_csv(report, "blinding"))))
    assert any(row[0] == "judge fake-gpt" for row in table)
    assert any(row[0] == "judge fake-gpt, system atlas_agent" for row in table)
    verdicts = list(csv.reader(io.StringIO(render_table_csv(report, "verdicts_by_guess"))))
    assert any(row[:3] == ["fake-gpt", "reference win rate, by its own guess", "overall"] for row in verdicts)
    markdown = render_md(report)
    assert "| judge fake-gpt |" in markdown and "reference win rate, by its own guess" in markdown
    html = render_html(report, svgs={})
    assert "judge fake-gpt" in html and "by its own guess" in html
    methods = render_methods(report)
    assert "The judges were asked the same question in a call of its own" in methods and "fake-gpt:" in methods


def test_it_has_no_judges_rows_when_judges_were_not_asked(demo_campaign):
    report = build_report(demo_campaign, rounds=50)

    assert report["blinding"]["judges"] == {}
