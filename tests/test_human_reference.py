"""Which humans are the reference (issue 26 item 4): `--human-reference`, `?human_reference=`, the
`human_reference`, `competence` and `sensitivity` sections of the report and their tables."""

from __future__ import annotations

import html
import json

import numpy as np
import pytest
from django.urls import reverse

from annotate.models import Campaign
from calibration import metrics as M
from calibration.metrics.competence import dawid_skene, mace
from calibration.metrics.labels import LabelRow
from calibration.report import alttest as report_alttest
from calibration.report import ppi as report_ppi
from calibration.report import reference as report_reference
from calibration.report import sections
from calibration.report.build import report_cached, report_from_inputs
from tests.calibration_builders import TOP_KEYS, assert_contract, offline_campaign, offline_inputs, summary
from tests.helpers import RUBRIC, run
from tests.test_alttest_report import COLUMNS
from tests.test_labels_only import write_csv

ANSWERS = ("sys_a", "sys_b", "tie")
CAREFUL = ("h1", "h2", "h3", "h4")
CARELESS = "careless"
NEW_KEYS = {"human_reference", "competence", "sensitivity", "human_position"}
EPSILON = dict(alt_epsilon=0.15, alt_epsilon_reason="trained annotators with a written guide")


def answers(pairs: int = 40, seed: int = 3):
    """(topic, criterion, rater, kind, winner): four careful annotators (right 85% of the time), one
    answering at random, a good judge (right 80%) and a poor one (50%), on every item."""
    rng = np.random.default_rng(seed)
    for p in range(pairs):
        for criterion in ("ww_cc_1", "ww_wtw_1", "n_1"):
            truth = ANSWERS[rng.choice(3, p=[0.45, 0.45, 0.1])]

            def noisy(skill):
                return truth if rng.random() < skill else ANSWERS[rng.integers(3)]

            for name in CAREFUL:
                yield f"Topic {p:03d}", criterion, name, "human", noisy(0.85)
            yield f"Topic {p:03d}", criterion, CARELESS, "human", ANSWERS[rng.integers(3)]
            yield f"Topic {p:03d}", criterion, "good", "judge", noisy(0.8)
            yield f"Topic {p:03d}", criterion, "poor", "judge", noisy(0.5)


def offline():
    rows = [LabelRow(t, c, "cat", f"human:{r}" if k == "human" else r, k, "sys_a", "sys_b", w) for t, c, r, k, w in answers()]
    return offline_campaign(), offline_inputs(rows, [summary("good"), summary("poor")])


def build(reference: str | None = None, rounds: int = 40, sensitivity: bool = False) -> dict:
    campaign, inputs = offline()
    kw = {} if reference is None else {"human_reference": reference}
    if sensitivity:
        kw["sensitivity"] = True
    return report_from_inputs(campaign, inputs, rounds=rounds, **EPSILON, **kw)


@pytest.fixture(scope="module")
def default_report():
    return build()


@pytest.fixture(scope="module")
def sensitive():
    """The default reference with the annotator models asked for (`--sensitivity`)."""
    return build(sensitivity=True)


def test_it_leaves_every_key_of_the_default_report_as_the_humans_give_it(default_report, sensitive):
    assert_contract(default_report)
    assert set(default_report) == set(TOP_KEYS) | NEW_KEYS
    explicit = build("majority")
    for key in TOP_KEYS:
        if key != "generated_at":
            assert explicit[key] == default_report[key], key
            assert sensitive[key] == default_report[key], key  # asking for the sensitivity changes no other figure
    # Today's behaviour: the judge figures, the alt-test and the prediction-powered figures against the humans themselves.
    campaign, inputs = offline()
    humans = inputs.table.humans()
    merged = {}
    for s in inputs.judges:
        raw = inputs.table.for_rater(s.name)
        votes = M.judge_votes(raw, M.LabelTable.empty(raw.vocab))
        merged[s.name] = votes.items
        direct = sections.judge_section(s, raw, votes.items, votes, humans, 40, 0)
        assert next(j for j in default_report["judges"] if j["name"] == s.name) == direct
    assert default_report["alt_test"] == report_alttest.section(
        humans, merged, epsilon=0.15, reason=EPSILON["alt_epsilon_reason"], source="given", rounds=40, seed=0
    )
    assert default_report["prediction_powered"] == report_ppi.section(humans, merged, None, 1000.0)
    assert not any("human reference" in note for note in default_report["notes"])
    assert default_report["human_reference"]["used"] == "majority"
    assert "'majority' human reference" in default_report["human_reference"]["statement"]


def test_it_computes_no_annotator_model_unless_asked(default_report, sensitive):
    for key in ("competence", "sensitivity"):
        assert default_report[key] == {"computed": False, "note": report_reference.NOT_COMPUTED}
        assert sensitive[key]["computed"] is True
    assert "--sensitivity" in report_reference.NOT_COMPUTED and "?sensitivity=1" in report_reference.NOT_COMPUTED
    reference = default_report["human_reference"]
    assert reference["computed"] is False and reference["used"] == "majority" and "flagged" not in reference
    assert sensitive["human_reference"]["computed"] is True and "flagged" in sensitive["human_reference"]
    assert build("mace")["competence"]["computed"] is True  # another reference needs the models anyway


def test_it_gives_the_competence_and_the_sensitivity_of_the_pure_functions(sensitive):
    default_report = sensitive
    _, inputs = offline()
    humans = inputs.table.humans()
    ds, mc = dawid_skene(humans, rounds=40, seed=0), mace(humans, rounds=40, seed=0)
    section = default_report["competence"]
    assert section["rounds"] == 40 and "a tie as a third class" in section["note"]
    for a in section["annotators"]:
        for key, model in (("dawid_skene", ds), ("mace", mc)):
            c = model.competence_of(f"human:{a['name']}").competence
            assert a[key]["value"] == pytest.approx(c.value, abs=1e-6) and a[key]["n"] == c.n == 120
            assert a[key]["ci"] == pytest.approx([c.ci_low, c.ci_high], abs=1e-6)
    labels = [i["label"] for i in section["dawid_skene"]["items"]]
    names = {M.LO_WINS: "sys_a", M.HI_WINS: "sys_b", M.TIED: "tie"}
    assert labels == [names.get(int(code)) for code in ds.label]
    assert len(labels) == 120

    sens = {row["judge"]: row for row in default_report["sensitivity"]["judges"]}
    votes = {s.name: M.judge_votes(inputs.table.for_rater(s.name), M.LabelTable.empty(inputs.table.vocab)) for s in inputs.judges}
    for judge in ("good", "poor"):
        main = next(j for j in default_report["judges"] if j["name"] == judge)
        assert sens[judge]["par"]["majority"]["value"] == main["par"] and sens[judge]["kappa"]["majority"]["value"] == main["cohen_kappa"]
        assert sens[judge]["alt_test"]["majority"]["value"] == (
            "passes" if default_report["alt_test"]["judges"][judge]["pooled"]["passes"] else "fails"
        )
        direct = M.agreement(votes[judge].items, ds.reference, 40, 0)
        cell = sens[judge]["par"]["dawid-skene"]
        assert cell["value"] == pytest.approx(direct.par.value, abs=1e-6) and cell["n"] == direct.par.n == 120
        assert cell["shift"] == pytest.approx(direct.par.value - main["par"], abs=1e-6)
        assert sens[judge]["alt_test"]["dawid-skene"]["value"] == "cannot run"


def test_it_leaves_the_careless_annotator_out_under_exclude_flagged(default_report, sensitive):
    assert list(sensitive["human_reference"]["flagged"]) == [CARELESS]
    assert [a["name"] for a in sensitive["competence"]["annotators"] if a["flagged"]] == [CARELESS]
    report = build("exclude-flagged")
    good = next(j for j in report["judges"] if j["name"] == "good")
    before = next(j for j in default_report["judges"] if j["name"] == "good")
    assert good["n_labels"] == 4 * 120 and before["n_labels"] == 5 * 120
    assert good["par"] > before["par"]  # the random answers no longer count against the judge
    assert report["humans"] == default_report["humans"]  # the annotators' own figures stay theirs
    assert any("'exclude-flagged' human reference" in note for note in report["notes"])
    assert report["alt_test"]["judges"]["good"]["pooled"]["n_annotators"] == 4
    assert report["sensitivity"]["used"] == "exclude-flagged"
    assert report["sensitivity"]["judges"] == sensitive["sensitivity"]["judges"]


@pytest.mark.parametrize("reference", ["dawid-skene", "mace"])
def test_it_measures_the_judges_against_one_aggregated_label_per_item(reference):
    report = build(reference)
    _, inputs = offline()
    aggregate = (dawid_skene if reference == "dawid-skene" else mace)(inputs.table.humans(), rounds=0)
    for j in report["judges"]:
        assert j["n_labels"] == len(aggregate.reference) == 120
    pooled = report["alt_test"]["judges"]["good"]["pooled"]
    assert not pooled["ran"] and "at most 1 per item" in pooled["reason"]
    assert report["human_reference"]["used"] == reference


def test_it_refuses_an_unknown_reference():
    with pytest.raises(ValueError, match="unknown human reference 'experts'"):
        build("experts")


# --- through the command, the dashboard, the downloads and the API -------------------------


@pytest.fixture
def study(tmp_path, db):
    (tmp_path / "tiny.json").write_text(json.dumps(RUBRIC), encoding="utf-8")
    assert run("import_criteria", str(tmp_path / "tiny.json")).code == 0
    assert run("create_campaign", "--name", "vetted", "--criteria", "tiny", "--labels-only", "--allow-tie").code == 0
    rows = [
        {"campaign": "vetted", "topic": t, "criterion": c, "rater_kind": k, "rater": r, "left_system": "sys_a", "right_system": "sys_b",
         "winner_system": w, "rationale": "", "started_at": "", "saved_at": "2025-01-01T10:00:00Z"}
        for t, c, r, k, w in answers()
    ]  # fmt: skip
    result = run("import_labels", "--campaign", "vetted", str(write_csv(tmp_path / "vetted.csv", rows, COLUMNS)))
    assert result.code == 0, result.err
    return Campaign.objects.get(name="vetted")


def test_it_shows_the_sensitivity_table_in_every_format(study, client, rachel, tmp_path, settings):
    settings.CALIBRATION_ROUNDS = 30
    md = run("calibration_report", "--campaign", "vetted", "--format", "md", "--rounds", "30", "--human-reference", "mace")
    assert md.code == 0, md.err
    assert "## Sensitivity to the human reference" in md.out and "| good | mace (used) |" in md.out
    assert "The judge statistics of this report are computed against the 'mace' human reference" in md.out
    assert "## Annotator competence" in md.out and "| careless |" in md.out
    csv = run("calibration_report", "--campaign", "vetted", "--format", "csv", "--table", "sensitivity", "--rounds", "30", "--sensitivity")
    assert csv.code == 0 and csv.out.splitlines()[0].startswith("Judge,Human reference,PAR")
    assert "good,majority (used)," in csv.out
    plain = run("calibration_report", "--campaign", "vetted", "--format", "md", "--rounds", "30")
    assert plain.code == 0 and "## Sensitivity to the human reference" in plain.out and "| good | majority" not in plain.out
    assert plain.out.count(report_reference.NOT_COMPUTED) == 2  # one line for each of the two tables
    refused = run("calibration_report", "--campaign", "vetted", "--human-reference", "experts")
    assert refused.code != 0 and "experts" in refused.err

    client.force_login(rachel)
    page = client.get(reverse("calibration-dashboard", args=[study.pk]), {"human_reference": "exclude-flagged"})
    assert page.status_code == 200
    text = page.content.decode()
    assert "Sensitivity to the human reference" in text and "exclude-flagged (used)" in text
    assert '<option value="exclude-flagged" selected>' in text and "human_reference=exclude-flagged" in text
    html = client.get(reverse("calibration-download", args=[study.pk, "html"]), {"human_reference": "dawid-skene"})
    assert html.status_code == 200 and "dawid-skene (used)" in html.content.decode()
    body = client.get(reverse("calibration-download", args=[study.pk, "json"]), {"human_reference": "dawid-skene"})
    assert json.loads(body.content)["human_reference"]["used"] == "dawid-skene"
    api = client.get(reverse("api-campaign-calibration", args=[study.pk]), {"human_reference": "mace"})
    assert api.status_code == 200 and api.json()["sensitivity"]["used"] == "mace"
    asked = client.get(reverse("api-campaign-calibration", args=[study.pk]), {"sensitivity": "1"})
    assert asked.status_code == 200 and asked.json()["sensitivity"]["computed"] is True
    plain = client.get(reverse("calibration-dashboard", args=[study.pk])).content.decode()
    assert report_reference.NOT_COMPUTED in plain and "majority (used)" not in plain
    ticked = client.get(reverse("calibration-dashboard", args=[study.pk]), {"sensitivity": "1"}).content.decode()
    assert "majority (used)" in ticked and 'name="sensitivity" value="1" checked' in ticked
    bad = client.get(reverse("api-campaign-calibration", args=[study.pk]), {"sensitivity": "maybe"})
    assert bad.status_code == 400 and "sensitivity must be 1 or 0" in bad.content.decode()


@pytest.mark.parametrize("where", ["calibration-dashboard", "api-campaign-calibration", "download"])
def test_it_answers_400_to_an_unknown_reference(study, client, rachel, where):
    client.force_login(rachel)
    url = reverse("calibration-download", args=[study.pk, "md"]) if where == "download" else reverse(where, args=[study.pk])
    response = client.get(url, {"human_reference": "experts"})
    assert response.status_code == 400
    assert (
        "unknown human reference 'experts' (choose majority, dawid-skene, mace, exclude-flagged, adjudicated)"
        in html.unescape(response.content.decode())  # the whole page, with the navigation
    )


def test_it_keeps_one_cached_report_per_reference(study):
    from django.core.cache import cache

    from calibration import cache as report_cache
    from calibration import selectors

    humans = selectors.calibration_inputs(campaign=study, include_unsubmitted=False).table.humans()
    fit_key = report_cache.cache_key((study.pk, "human-reference", 20, 0, report_reference.humans_digest(humans)))
    first = report_cached(study, rounds=20)
    assert cache.get(fit_key) is None  # the default report fitted no annotator model
    assert first["sensitivity"]["computed"] is False
    asked = report_cached(study, rounds=20, sensitivity=True)
    assert asked["sensitivity"]["computed"] is True and cache.get(fit_key) is not None
    cache.delete(fit_key)
    other = report_cached(study, rounds=20, human_reference="exclude-flagged")
    again = report_cached(study, rounds=20)
    assert first["human_reference"]["used"] == again["human_reference"]["used"] == "majority"
    assert other["human_reference"]["used"] == "exclude-flagged"
    assert other["judges"] != first["judges"]
    assert report_reference.check_reference(None) == "majority"
    # The models' fit is shared while the human labels stay the same (a judge's new verdicts do not refit them).
    kept = cache.get(fit_key)
    assert isinstance(kept, report_reference.Vetting) and list(kept.flagged) == [f"human:{CARELESS}"]
