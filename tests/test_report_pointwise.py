"""The report's `pointwise` section: its figures are the (reference-tested) metrics' on the same answers.

The answers are imported through a labels file, so the section is read from the database by the
selectors; the expected figures are computed here from the generated rows themselves.
"""

import csv
import random

import pytest

from annotate.models import Campaign
from annotate.services.campaigns import campaign_create
from calibration import pointwise_selectors
from calibration.metrics import alttest
from calibration.metrics.alttest_wins import Ratings
from calibration.metrics.crossprotocol import PairVerdict, cross_protocol
from calibration.metrics.pointwise import Answer as Row
from calibration.metrics.pointwise import pointwise_tables
from calibration.metrics.pointwise_agreement import pointwise_statistics
from calibration.metrics.pointwise_powered import alt_test_long_form, powered_means
from calibration.report.build import build_report
from interchange import LABEL_COLUMNS
from tests.helpers import csv_file, run

pytestmark = pytest.mark.django_db

COLUMNS = LABEL_COLUMNS + ("response", "system", "answer", "model", "error")
SYSTEMS = ("gpt-4o", "qwen-72b")
HUMANS = ("ann_1", "ann_2", "ann_3")
JUDGES = ("close-judge", "coin-judge")
ROUNDS = 60


def synthetic_rows(topics: int = 36, seed: int = 7) -> list[dict]:
    """Each article has a true quality; annotators and the close judge answer near it, the coin judge at random."""
    rng = random.Random(seed)
    rows = []
    for t in range(topics):
        for system in SYSTEMS:
            quality = rng.randint(1, 5)
            for rater in (*HUMANS, *JUDGES):
                kind = "judge" if rater in JUDGES else "human"
                noisy = quality + rng.choice((-1, 0, 0, 1)) if rater != "coin-judge" else rng.randint(1, 5)
                point = min(5, max(1, noisy))
                answers = (
                    ("clarity", "rating 1-5", str(point)),
                    ("has_summary", "checklist", "yes" if point >= 3 else "no"),
                    ("errors", "count", str(max(0, 5 - point + rng.choice((0, 1))))),
                )
                for criterion, response, answer in answers:
                    rows.append({
                        "campaign": "arena", "topic": f"Topic {t:02d}", "criterion": criterion, "rater_kind": kind, "rater": rater,
                        "left_system": "", "right_system": "", "winner_system": "", "rationale": "", "started_at": "",
                        "saved_at": "2024-05-01T10:00:00Z" if kind == "human" else "", "response": response, "system": system,
                        "answer": answer, "model": "m/x" if kind == "judge" else "", "error": "",
                    })  # fmt: skip
    return rows


def as_metric_rows(rows: list[dict]) -> list[Row]:
    out = []
    for r in rows:
        response, scale = {"rating 1-5": ("rating", (1, 5)), "checklist": ("binary", None), "count": ("count", None)}[r["response"]]
        value = {"yes": 1.0, "no": 0.0}.get(r["answer"]) if response == "binary" else float(r["answer"])
        out.append(Row(f"{r['topic']}|{r['system']}", r["system"], r["topic"], r["criterion"], r["rater"], value, response,
                       r["rater_kind"] == "judge", scale))  # fmt: skip
    return out


def write_csv(path, rows):
    return csv_file(path, rows, COLUMNS)


@pytest.fixture
def arena(tmp_path):
    assert run("create_campaign", "--name", "arena", "--labels-only").code == 0
    rows = synthetic_rows()
    result = run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "answers.csv", rows)))
    assert result.code == 0, result.err
    return Campaign.objects.get(name="arena"), rows


def test_it_gives_each_judge_the_figures_of_its_response_type(arena):
    campaign, rows = arena
    report = build_report(campaign, rounds=ROUNDS, alt_epsilon=0.2, alt_epsilon_reason="crowd-like annotators")
    expected = pointwise_tables(as_metric_rows(rows))

    tables = {(t["response"], tuple(t["scale"]) if t["scale"] else None): t for t in report["pointwise"]["tables"]}
    assert set(tables) == set(expected) == {("binary", None), ("rating", (1, 5)), ("count", None)}
    for key, table in expected.items():
        stats = pointwise_statistics(table, rounds=ROUNDS)
        shown = tables[key]
        assert shown["n_answers"] == len(table) and shown["n_items"] == stats.n_items and shown["n_articles"] == 72
        for judge in JUDGES:
            figures = shown["judges"][judge]["figures"]["figures"]
            for name, est in stats.judge_figures[judge].figures.items():
                assert figures[name]["n"] == est.n, (key, judge, name)
                assert figures[name]["value"] == pytest.approx(est.value, abs=1e-6, nan_ok=True) if est.value is not None else True
            panel = shown["judges"][judge]["panel"]["figures"]
            for name, est in stats.judge_panels[judge].figures.items():
                if est.value is not None:
                    assert panel[name]["value"] == pytest.approx(est.value, abs=1e-6), (key, judge, name)
        for name, est in stats.ceiling.figures.items():
            if est.value is not None:
                assert shown["human_ceiling"]["figures"][name]["value"] == pytest.approx(est.value, abs=1e-6)
        for name, est in stats.human_panel.figures.items():
            if est.value is not None:
                assert shown["human_panel"]["figures"][name]["value"] == pytest.approx(est.value, abs=1e-6)
    rating = tables["rating", (1, 5)]
    expected_names = {"exact", "within_one", "kappa_linear", "kappa_quadratic", "spearman", "kendall", "bias", "mae"}
    assert expected_names <= set(rating["judges"]["close-judge"]["figures"]["figures"])
    assert {"alpha_ordinal", "alpha_interval", "icc2_1", "icc2_k"} <= set(rating["human_panel"]["figures"])
    assert {"kappa_majority", "agreement"} <= set(tables["binary", None]["judges"]["coin-judge"]["figures"]["figures"])
    assert "fleiss_kappa" in tables["binary", None]["human_panel"]["figures"]
    # The close judge agrees with the humans more than the coin does.
    close, coin = (rating["judges"][j]["figures"]["figures"]["kappa_quadratic"]["value"] for j in JUDGES)
    assert close > coin


def test_it_equals_the_metrics_on_the_selectors_tables_ci_included(arena):
    campaign, _ = arena
    report = build_report(campaign, rounds=ROUNDS, alt_epsilon=0.2, alt_epsilon_reason="crowd-like annotators")
    inputs = pointwise_selectors.pointwise_inputs(campaign=campaign)
    table = inputs.tables["rating", (1, 5)]
    shown = next(t for t in report["pointwise"]["tables"] if t["response"] == "rating")
    stats = pointwise_statistics(table, rounds=ROUNDS)

    kappa = stats.judge_figures["close-judge"].figures["kappa_quadratic"]
    assert shown["judges"]["close-judge"]["figures"]["figures"]["kappa_quadratic"]["ci"] == [
        pytest.approx(kappa.ci_low, abs=1e-6),
        pytest.approx(kappa.ci_high, abs=1e-6),
    ]
    icc = stats.human_panel.figures["icc2_k"]
    assert shown["human_panel"]["figures"]["icc2_k"]["ci"] == [pytest.approx(icc.ci_low, abs=1e-6), pytest.approx(icc.ci_high, abs=1e-6)]
    humans, own, scoring = alt_test_long_form(table, "close-judge")
    alt = alttest.alt_test(Ratings(**humans), Ratings(**own), epsilon=0.2, unit="pair", scoring=scoring, rounds=ROUNDS, seed=0)
    shown_alt = shown["judges"]["close-judge"]["alt_test"]
    assert scoring == "numeric" and alt.ran and shown_alt["ran"]
    assert shown_alt["omega"] == pytest.approx(alt.omega) and shown_alt["passes"] == alt.passes
    assert shown_alt["rho"]["value"] == pytest.approx(alt.rho.value)
    means, _ = powered_means(table, "close-judge")
    for system, mean in means.items():
        ppi = shown["judges"]["close-judge"]["powered_means"]["systems"][system]["ppi"]
        assert ppi["value"] == pytest.approx(mean.ppi.value, abs=1e-6) and ppi["n"] == mean.ppi.n
        assert ppi["ci"] == [pytest.approx(mean.ppi.ci[0], abs=1e-6), pytest.approx(mean.ppi.ci[1], abs=1e-6)]
    binary = next(t for t in report["pointwise"]["tables"] if t["response"] == "binary")
    assert binary["judges"]["close-judge"]["alt_test"]["scoring"] == "categorical"


def test_it_leaves_a_pairwise_report_without_the_section(calibration_campaign):
    report = build_report(calibration_campaign, rounds=20)
    assert "pointwise" not in report


def test_it_checks_the_pointwise_difference_against_another_campaigns_pairwise_verdicts(catalogue, alice, bob, tmp_path):
    """A 1-5 rating campaign on the same articles and criteria as a pairwise one: does the rating
    difference predict the pairwise winner?"""
    assert run("import_criteria", "fixtures/rating_writing_1to5.json").code == 0, "rating rubric"
    systems = ["wikipedia", "atlas_agent", "quill_researcher"]
    pairwise = campaign_create(name="Pairs", criterion_set=catalogue, systems=systems, overlap=1, annotators=[alice], allow_tie=True)
    rated = Campaign.objects.get(
        pk=campaign_create(name="Rated", criterion_set=_rating_set(), systems=systems, overlap=1, annotators=[bob]).pk
    )
    topics = sorted({p.topic.title for p in pairwise.pairs.select_related("topic")})
    rng = random.Random(3)
    quality = {(t, s): rng.randint(1, 5) for t in topics for s in systems}
    rating_rows, pair_rows, verdicts = [], [], []
    for (topic, system), q in quality.items():
        for rater in ("ann_1", "ann_2"):
            rating_rows.append({"campaign": "Rated", "topic": topic, "criterion": "ww_cc_1", "rater_kind": "human", "rater": rater,
                                "left_system": "", "right_system": "", "winner_system": "", "rationale": "", "started_at": "",
                                "saved_at": "", "response": "rating", "system": system, "answer": str(q), "model": "", "error": ""})  # fmt: skip
    for pair in pairwise.pairs.select_related("topic", "article_a__system", "article_b__system"):
        a, b = pair.article_a.system.key, pair.article_b.system.key
        qa, qb = quality[pair.topic.title, a], quality[pair.topic.title, b]
        winner = a if qa > qb else b if qb > qa else "tie"
        if rng.random() < 0.2:
            winner = b if winner == a else a
        pair_rows.append({"campaign": "Pairs", "topic": pair.topic.title, "criterion": "ww_cc_1", "rater_kind": "human", "rater": "pat",
                          "left_system": a, "right_system": b, "winner_system": winner, "rationale": "", "started_at": "",
                          "saved_at": "", "response": "", "system": "", "answer": "", "model": "", "error": ""})  # fmt: skip
        preferred = 1 if winner == a else -1 if winner == b else 0
        verdicts.append(PairVerdict(pair.topic.title, "ww_cc_1", "pat", f"{pair.topic.title}|{a}", f"{pair.topic.title}|{b}", preferred))
    assert run("import_labels", "--campaign", "Rated", str(write_csv(tmp_path / "rated.csv", rating_rows))).code == 0
    assert run("import_labels", "--campaign", "Pairs", str(write_csv(tmp_path / "pairs.csv", pair_rows))).code == 0

    report = build_report(rated, rounds=ROUNDS)
    expected_table = pointwise_tables(
        Row(f"{r['topic']}|{r['system']}", r["system"], r["topic"], r["criterion"], r["rater"], float(r["answer"]), "rating", False, (1, 5))
        for r in rating_rows
    )["rating", (1, 5)]
    expected = cross_protocol(expected_table, verdicts, rounds=ROUNDS)

    cross = report["pointwise"]["tables"][0]["cross_protocol"]
    assert cross["campaigns"] == ["Pairs"]
    hit = cross["humans"]["figures"]["hit_rate"]
    assert hit["value"] == pytest.approx(expected.humans.figures["hit_rate"].value, abs=1e-9)
    assert hit["n"] == expected.humans.figures["hit_rate"].n == len(verdicts)
    assert cross["humans"]["by_criterion"]["ww_cc_1"]["hit_rate"]["value"] == pytest.approx(hit["value"])
    assert cross["humans"]["counts"] == expected.humans.counts


def _rating_set():
    from annotate.models import CriterionSet

    return CriterionSet.objects.filter(criteria__response__type="rating").distinct().get()


def test_it_renders_the_section_in_markdown_html_and_csv(arena):
    from calibration.report.formats import render_html, render_md, render_table_csv

    campaign, _ = arena
    report = build_report(campaign, rounds=ROUNDS, alt_epsilon=0.2, alt_epsilon_reason="crowd-like annotators")
    close = next(t for t in report["pointwise"]["tables"] if t["response"] == "rating")["judges"]["close-judge"]
    kappa = close["figures"]["figures"]["kappa_quadratic"]
    shown = f"{kappa['value']:.3f} [{kappa['ci'][0]:.3f}, {kappa['ci'][1]:.3f}]"

    markdown, html = render_md(report), render_html(report, svgs={})
    rows = list(csv.reader(render_table_csv(report, "pointwise_judges").splitlines()))

    assert "## One-article answers: judges against the humans" in markdown and shown in markdown
    assert "Cross-protocol" in markdown and "One-article answers: alternative annotator test" in html and shown in html
    assert rows[0] == ["Response", "Rater", "Figure", "Value [95% CI] (n, articles)"]
    assert ["rating 1-5", "close-judge", "kappa_quadratic"] in [r[:3] for r in rows]
    per = close["alt_test"]["by_criterion"]
    assert f"passes on {per['n_passed']} of {per['n_criteria']} criteria" in markdown
    assert ("| passes |" if close["alt_test"]["passes"] else "| fails |") in markdown
    assert (
        "> Answers about one article alone (360 checklist answers, 360 count answers, 360 rating 1-5 answers) are in the pointwise section"
        in markdown
    )


def test_it_adds_no_table_to_a_pairwise_report(calibration_campaign):
    from calibration.report.formats import render_md, tables

    report = build_report(calibration_campaign, rounds=20)
    assert not [key for key in tables(report) if key.startswith("pointwise")]
    assert "One-article" not in render_md(report)


def test_it_shows_the_section_on_the_dashboard(client, rachel, arena):
    from django.urls import reverse

    campaign, _ = arena
    client.force_login(rachel)
    response = client.get(reverse("calibration-dashboard", args=[campaign.pk]))
    html = response.content.decode()

    assert response.status_code == 200
    for title in ("One-article answers: judges against the humans", "One-article answers: agreement of the panel",
                  "One-article answers: prediction-powered mean per system"):  # fmt: skip
        assert title in html
    assert "kappa_quadratic" in html and "icc2_k" in html and "fleiss_kappa" in html


def test_it_changes_the_report_stamp_when_an_answer_changes(arena):
    from annotate.models import Answer
    from calibration.selectors import calibration_stamp

    campaign, _ = arena
    before = calibration_stamp(campaign=campaign)
    answer = Answer.objects.filter(assignment__pair__campaign=campaign).first()
    Answer.objects.filter(pk=answer.pk).update(saved_at=answer.saved_at.replace(year=2025))

    assert calibration_stamp(campaign=campaign) != before


def test_it_keeps_a_judge_named_like_an_annotator_apart(tmp_path):
    assert run("create_campaign", "--name", "arena", "--labels-only").code == 0
    rows = [r for r in synthetic_rows(topics=4) if r["rater"] != "coin-judge"]
    for r in rows:
        if r["rater"] == "close-judge":
            r["rater"] = "ann_1"  # a judge called like the account of an annotator
    assert run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "same.csv", rows))).code == 0

    report = build_report(Campaign.objects.get(name="arena"), rounds=20)

    table = report["pointwise"]["tables"][0]
    assert "ann_1" in table["humans"] and list(table["judges"]) == ["ann_1 (judge)"]


def test_it_states_a_judges_panel_coverage_and_says_so_under_half(tmp_path):
    from calibration.report.formats import render_table_csv

    rows = synthetic_rows(topics=12)
    # The coin judge answers the articles of one topic in three only.
    rows = [r for r in rows if r["rater"] != "coin-judge" or int(r["topic"].split()[-1]) % 3 == 0]
    assert run("create_campaign", "--name", "arena", "--labels-only").code == 0
    assert run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "a.csv", rows))).code == 0
    report = build_report(Campaign.objects.get(name="arena"), rounds=20)
    binary = next(t for t in report["pointwise"]["tables"] if t["response"] == "binary")
    counts = binary["judges"]["coin-judge"]["panel"]["counts"]
    assert (counts["judge_items"], counts["human_items"]) == (8, 24)
    assert binary["judges"]["coin-judge"]["panel"]["figures"]["fleiss_kappa"]["n"] == 8
    panels = {r[1] for r in csv.reader(render_table_csv(report, "pointwise_panels").splitlines())}
    assert (
        "annotators + coin-judge (on its 8 of 24 items, coverage 33%: under 50%, the figure describes a minority of the annotators' items)"
        in panels
    )
    assert "annotators + close-judge (on its 24 of 24 items, coverage 100%)" in panels
