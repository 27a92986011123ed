"""The alt-test in the calibration report (issue 24, item 1): its figures are those of the pure
functions on the same labels; epsilon is never defaulted and a bad one is refused in one line; a
design too thin for the test says so with its numbers; the Markdown, HTML, dashboard, planner,
commands and the campaign page carry it."""

import json

import numpy as np
import pytest
from django.urls import reverse

from annotate.models import Campaign
from calibration.metrics.alttest import Ratings, alt_test, alt_test_by_criterion
from calibration.metrics.alttest_plan import alt_test_items_needed
from calibration.planner.labels import plan_labels
from calibration.report import formats as report_formats
from calibration.report.build import build_report
from tests.calibration_builders import assert_contract
from tests.helpers import RUBRIC, run
from tests.test_labels_only import write_csv

pytestmark = pytest.mark.django_db

CRITERIA = ("ww_cc_1", "ww_wtw_1", "n_1")
ANSWERS = ("sys_a", "sys_b", "tie")
REASON = "trained annotators with a written guide: skilled (0.15, as the authors suggest)"
COLUMNS = ("campaign", "topic", "criterion", "rater_kind", "rater", "left_system", "right_system", "winner_system", "rationale",
           "started_at", "saved_at")  # fmt: skip


def rows_for(campaign: str, *, pairs: int, annotators: int, seed: int = 0) -> list[dict]:
    """Three criteria per pair, every annotator on every item (keeping the true answer 80% of the time);
    `copycat` copies the first annotator, `coin` answers at random."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(pairs):
        common = {"campaign": campaign, "topic": f"Topic {p:03d}", "left_system": "sys_a", "right_system": "sys_b", "rationale": "",
                  "started_at": "", "saved_at": "2025-01-01T10:00:00Z"}  # fmt: skip
        for criterion in CRITERIA:
            truth = ANSWERS[rng.integers(3)]
            given = [truth if rng.random() < 0.8 else ANSWERS[rng.integers(3)] for _ in range(annotators)]
            for k, answer in enumerate(given):
                rows.append({**common, "criterion": criterion, "rater_kind": "human", "rater": f"h{k + 1}", "winner_system": answer})
            for judge, answer in (("copycat", given[0]), ("coin", ANSWERS[rng.integers(3)])):
                rows.append({**common, "criterion": criterion, "rater_kind": "judge", "rater": judge, "winner_system": answer})
    return rows


def make_campaign(tmp_path, name: str, **kw) -> tuple[Campaign, list[dict]]:
    if not (tmp_path / "tiny.json").exists():
        (tmp_path / "tiny.json").write_text(json.dumps(RUBRIC), encoding="utf-8")
        assert run("import_criteria", str(tmp_path / "tiny.json")).code == 0
    assert run("create_campaign", "--name", name, "--criteria", "tiny", "--labels-only", "--allow-tie").code == 0
    rows = rows_for(name, **kw)
    result = run("import_labels", "--campaign", name, str(write_csv(tmp_path / f"{name}.csv", rows, COLUMNS)))
    assert result.code == 0, result.err
    return Campaign.objects.get(name=name), rows


def ratings(rows: list[dict], rater_kind: str, rater: str | None = None) -> Ratings:
    return Ratings.from_rows(
        (r["topic"], r["criterion"], r["rater"], r["winner_system"])
        for r in rows
        if r["rater_kind"] == rater_kind and (rater is None or r["rater"] == rater)
    )


@pytest.fixture
def study(tmp_path):
    return make_campaign(tmp_path, "study", pairs=40, annotators=3)


def test_it_gives_the_figures_of_the_pure_functions_on_the_same_labels(study):
    campaign, rows = study
    report = build_report(campaign, rounds=40, alt_epsilon=0.15, alt_epsilon_reason=REASON)
    assert_contract(report)
    section = report["alt_test"]
    assert (section["epsilon"], section["epsilon_reason"], section["epsilon_source"], section["unit"]) == (0.15, REASON, "given", "pair")
    humans = ratings(rows, "human")
    for judge in ("copycat", "coin"):
        direct = alt_test(humans, ratings(rows, "judge", judge), epsilon=0.15, unit="pair", rounds=40)
        per = alt_test_by_criterion(humans, ratings(rows, "judge", judge), epsilon=0.15, rounds=40)
        pooled, by_criterion = section["judges"][judge]["pooled"], section["judges"][judge]["by_criterion"]
        assert pooled["ran"] and pooled["omega"] == pytest.approx(direct.omega) and pooled["passes"] == direct.passes
        assert pooled["n_annotators"] == direct.n_annotators == 3 and pooled["rho"]["value"] == pytest.approx(direct.rho.value)
        assert pooled["items_per_annotator"] == direct.items_per_annotator == {"h1": 40, "h2": 40, "h3": 40}
        assert [a["p_adjusted"] for a in pooled["annotators"]] == pytest.approx([a.p_adjusted for a in direct.annotators], abs=1e-6)
        assert (by_criterion["n_passed"], by_criterion["n_ran"], by_criterion["n_tests"]) == (per.n_passed, per.n_ran, per.n_tests)
        assert [c["omega"] for c in by_criterion["criteria"]] == pytest.approx([r.omega for r in per.results])
    # The checks: a judge that copies an annotator beats them all; a coin beats none of three careful ones.
    assert section["judges"]["copycat"]["pooled"]["omega"] == 1.0 and section["judges"]["copycat"]["pooled"]["passes"]
    assert section["judges"]["coin"]["pooled"]["omega"] == 0.0 and not section["judges"]["coin"]["pooled"]["passes"]


def test_it_gives_the_papers_item_form_from_the_command_line(study, tmp_path):
    campaign, rows = study
    out = tmp_path / "report.json"
    result = run("calibration_report", "--campaign", "study", "--rounds", "20", "--epsilon", "0.15", "--epsilon-reason", REASON,
                 "--alt-unit", "item", "--out", str(out))  # fmt: skip
    assert result.code == 0, result.err
    section = json.loads(out.read_text())["alt_test"]
    direct = alt_test(ratings(rows, "human"), ratings(rows, "judge", "coin"), epsilon=0.15, unit="item", rounds=20)
    assert section["unit"] == "item" and section["judges"]["coin"]["pooled"]["items_per_annotator"]["h1"] == 120
    assert section["judges"]["coin"]["pooled"]["omega"] == pytest.approx(direct.omega)
    assert section["judges"]["coin"]["pooled"]["rho"]["value"] == pytest.approx(direct.rho.value)


def test_it_gives_no_verdict_without_epsilon_and_says_why(study):
    campaign, _ = study
    report = build_report(campaign, rounds=0)
    assert_contract(report)
    assert report["alt_test"]["judges"] == {} and report["alt_test"]["epsilon"] is None
    assert report["alt_test"]["note"].startswith("ε not set: the alt-test needs an ε chosen and justified (the authors suggest 0.2 experts")
    md = report_formats.render_md(report)
    assert "ε not set: the alt-test needs an ε chosen and justified" in md and "no verdict: ε not set" in md
    table = md.split("Can this judge replace the annotators?")[1].split("\n\n")[1]
    assert "| copycat | no verdict: ε not set |" in table and "| passes" not in table and "| fails" not in table


@pytest.mark.parametrize(
    ("epsilon", "reason", "message"),
    [
        ("1.5", REASON, "epsilon must lie strictly between 0 and 1, not 1.5"),
        ("0", REASON, "epsilon must lie strictly between 0 and 1, not 0"),
        ("0.15", None, "epsilon 0.15 needs a reason"),
        ("nan", REASON, "epsilon must be a number strictly between 0 and 1"),
    ],
)
def test_it_refuses_a_bad_epsilon_in_one_line(study, epsilon, reason, message):
    args = ["calibration_report", "--campaign", "study", "--rounds", "0", "--epsilon", epsilon]
    result = run(*args, *(["--epsilon-reason", reason] if reason else []))
    assert result.code == 1 and message in result.err and "Traceback" not in result.err and result.err.count("\n") == 1
    created = run("create_campaign", "--name", "other", "--criteria", "tiny", "--labels-only", "--epsilon", epsilon,
                  *(["--epsilon-reason", reason] if reason else []))  # fmt: skip
    assert created.code == 1 and message in created.err and not Campaign.objects.filter(name="other").exists()


def test_it_says_the_design_cannot_support_the_test_with_its_numbers(tmp_path):
    campaign, _ = make_campaign(tmp_path, "thin", pairs=40, annotators=2)
    report = build_report(campaign, rounds=0, alt_epsilon=0.2, alt_epsilon_reason="experts")
    pooled = report["alt_test"]["judges"]["coin"]["pooled"]
    assert not pooled["ran"] and pooled["omega"] is None and pooled["passes"] is None
    assert pooled["reason"] == (
        "2 of 2 annotators have at least 30 usable pairs (usable pairs per annotator: h1 40, h2 40); at least 3 are needed"
    )
    md = report_formats.render_md(report)
    assert f"cannot run: {pooled['reason']}" in md
    few, _ = make_campaign(tmp_path, "few", pairs=12, annotators=3)
    pooled = build_report(few, rounds=0, alt_epsilon=0.2, alt_epsilon_reason="experts")["alt_test"]["judges"]["coin"]["pooled"]
    assert (
        pooled["reason"]
        == "0 of 3 annotators have at least 30 usable pairs (usable pairs per annotator: h1 12, h2 12, h3 12); at least 3 are needed"
    )


def test_it_uses_the_campaigns_epsilon_and_shows_it_in_every_format(study, client, rachel):
    campaign, _ = study
    client.force_login(rachel)
    refused = client.post(reverse("campaign-epsilon", args=[campaign.pk]), {"epsilon": "2", "reason": REASON})
    assert refused.status_code == 400 and "strictly between 0 and 1" in refused.content.decode()
    refused = client.post(reverse("campaign-epsilon", args=[campaign.pk]), {"epsilon": "0.15", "reason": " "})
    assert refused.status_code == 400 and "needs a reason" in refused.content.decode()
    campaign.refresh_from_db()
    assert campaign.alt_epsilon is None
    saved = client.post(reverse("campaign-epsilon", args=[campaign.pk]), {"epsilon": "0.15", "reason": REASON})
    assert saved.status_code == 302
    campaign.refresh_from_db()
    assert (campaign.alt_epsilon, campaign.alt_epsilon_reason) == (0.15, REASON)

    page = client.get(reverse("calibration-dashboard", args=[campaign.pk]))
    assert page.status_code == 200
    text = page.content.decode()
    assert "Can this judge replace the annotators? (alt-test)" in text and f"ε = 0.15 (recorded on the campaign): {REASON}" in text
    assert "passes on" in text and "Alt-test per annotator (pooled)" in text
    html = client.get(reverse("calibration-download", args=[campaign.pk, "html"]))
    assert html.status_code == 200 and "Can this judge replace the annotators? (alt-test)" in html.content.decode()
    body = client.get(reverse("calibration-download", args=[campaign.pk, "json"])).content
    assert json.loads(body)["alt_test"]["epsilon_source"] == "campaign"
    md = client.get(reverse("calibration-download", args=[campaign.pk, "md"])).content.decode()
    copy_row = next(line for line in md.splitlines() if line.startswith("| copycat | passes"))
    assert "1.00 (3 of 3 annotators beaten)" in copy_row and "passes on 3 of 3 criteria" in copy_row

    cleared = client.post(reverse("campaign-epsilon", args=[campaign.pk]), {"epsilon": "", "reason": ""})
    assert cleared.status_code == 302
    again = client.get(reverse("calibration-download", args=[campaign.pk, "json"])).content
    assert json.loads(again)["alt_test"]["epsilon"] is None


def test_it_plans_the_items_per_annotator_for_the_alt_test(study):
    campaign, rows = study
    plan = plan_labels(campaign=campaign, epsilon=0.15, epsilon_reason=REASON, alt_margin=0.05)
    alt = plan["alt_test"]
    # The pilot agreement, counted here from the rows: two annotators' labels on one item that match.
    by_item: dict = {}
    for r in rows:
        if r["rater_kind"] == "human":
            by_item.setdefault((r["topic"], r["criterion"]), []).append(r["winner_system"])
    same = sum(a == b for labels in by_item.values() for i, a in enumerate(labels) for b in labels[i + 1 :])
    agreement = same / (3 * len(by_item))
    assert alt["pilot_agreement"] == pytest.approx(agreement, abs=1e-4) and alt["pilot_label_pairs"] == 3 * len(by_item)
    direct = alt_test_items_needed(target=0.8, epsilon=0.15, sizes=range(30, 301, 10), n_annotators=3, agreement=agreement,
                                   margin=0.05, simulations=400)  # fmt: skip
    assert alt["items_needed"] == direct.n_items and alt["equal"]["value"] == pytest.approx(direct.at(direct.n_items).equal.value)
    assert alt["worse"]["value"] == pytest.approx(direct.at(direct.n_items).worse.value) and "true answer" in alt["model"]
    text = run("plan_labels", "--campaign", "study", "--epsilon", "0.15", "--epsilon-reason", REASON).out
    assert f"items per annotator for the alt-test: {direct.n_items}" in text and "Assumes: the simulation model" in text
    assert plan_labels(campaign=campaign)["alt_test"]["note"].startswith("ε not set")
