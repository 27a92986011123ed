"""The plan_labels command and the `plan_labels` service on the database: text and JSON, a dotted judge
name, clear errors, and a campaign without labels yet."""

import json

import numpy as np
import pytest

from annotate.models import Assignment, Criterion, Pair
from annotate.services.answers import label_save, position_from_winner
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import assignment_submit
from calibration import metrics as M
from calibration import selectors
from calibration.metrics import planning
from calibration.planner.labels import ASSUMPTIONS, plan_labels
from tests.calibration_builders import CRITERIA, by_criterion, hand_campaign, judge_rows
from tests.helpers import run

pytestmark = pytest.mark.django_db

TOPICS = ("Red Fox", "Salt Marsh", "Tide Pool", "Oak Gall", "Moss Bank", "Fen Edge", "Chalk Down", "Peat Bog")
MINI, LONGER = "gpt-4.1-mini", "longer"
N_CRITERIA = len(CRITERIA)
TOP = {"campaign", "n_pairs", "n_labelled_pairs", "target_halfwidth", "power", "confidence_level", "batch", "par",
       "leading_pair", "leading_pair_reason", "scores", "alt_test", "designs", "assumptions", "notes"}  # fmt: skip
PAR_KEYS = {
    "judge",
    "par",
    "n_labels",
    "n_pairs",
    "halfwidth",
    "pairs_needed",
    "more_pairs",
    "halfwidth_after_batch",
    "reachable",
    "best_halfwidth",
}
SCORE_KEYS = {
    "judge",
    "reference",
    "worst_system",
    "halfwidth",
    "halfwidth_after_batch",
    "pairs_needed",
    "more_pairs",
    "reachable",
    "best_halfwidth",
    "systems",
}


def _sides(rng, n: int = N_CRITERIA) -> list[str]:
    return [str(s) for s in rng.choice(["a", "b", "tie"], size=n, p=[0.5, 0.4, 0.1])]


def _label(campaign, user, truth: dict, pairs: int, rng, *, submit: bool = True) -> None:
    """`user` labels the next `pairs` pairs: the truth, but another side now and then."""
    criteria = {c.key: c for c in Criterion.objects.filter(criterion_set=campaign.criterion_set)}
    for _ in range(pairs):
        assignment = assignment_claim_next(campaign=campaign, user=user)
        assert assignment is not None
        for key, side in truth[assignment.pair_id].items():
            said = side if rng.random() < 0.85 else _sides(rng, 1)[0]
            label_save(
                assignment=assignment,
                criterion=criteria[key],
                user=user,
                position=position_from_winner(assignment, said),
                rationale="Clearer on this point.",
            )
        if submit:
            assignment_submit(assignment=assignment, user=user)


@pytest.fixture
def planned(alice, bob):
    """16 pairs (8 topics, wikipedia against two agents, three criteria); alice and bob label 7 pairs
    each (overlap 2); gpt-4.1-mini tracks the truth and `longer` is right about half of the time; both
    judge every pair."""
    campaign = hand_campaign([alice, bob], name="Plan", topics=TOPICS, allow_tie=True)
    rng = np.random.default_rng(3)
    pairs = list(Pair.objects.filter(campaign=campaign).order_by("id"))
    # Work is handed out in the campaign's order, drawn at random: fixed here, so that both systems
    # always get labelled pairs (a random order could leave one system with a single labelled pair):
    topics = sorted({pair.topic_id for pair in pairs})
    # A claim prefers a topic the annotator has not met, so each takes one pair a topic: the first of
    # each topic alternates between the two agents.
    by_topic = sorted(pairs, key=lambda pair: (topics.index(pair.topic_id), (pair.article_b.system_id + topics.index(pair.topic_id)) % 2))
    for order, pair in enumerate(by_topic):
        Pair.objects.filter(pk=pair.pk).update(order=order)
    truth = {p.id: by_criterion(*_sides(rng)) for p in pairs}
    _label(campaign, alice, truth, 7, rng)
    _label(campaign, bob, truth, 7, rng)
    mini = {(p, True): {k: s if rng.random() < 0.8 else "b" for k, s in truth[p.id].items()} for p in pairs}
    judge_rows(campaign, MINI, mini, model=MINI)
    judge_rows(campaign, LONGER, {(p, True): by_criterion(*_sides(rng)) for p in pairs})
    return campaign


def test_it_plans_every_judge_as_a_json_serialisable_dict(planned):
    plan = plan_labels(campaign=planned, target_halfwidth=0.05, power=0.9, batch=4)
    json.dumps(plan, allow_nan=False)
    assert set(plan) == TOP
    assert (plan["campaign"], plan["n_pairs"], plan["target_halfwidth"], plan["power"], plan["batch"]) == ("Plan", 16, 0.05, 0.9, 4)
    assert plan["confidence_level"] == 0.95 and set(plan["assumptions"]) == {"par", "leading_pair", "scores", "designs"}
    humans = selectors.calibration_inputs(campaign=planned).table.humans()
    assert 16 > plan["n_labelled_pairs"] == int(np.unique(humans.pair).size) > 2
    assert [e["judge"] for e in plan["par"]] == [MINI, LONGER]  # the higher PAR first
    assert [e["judge"] for e in plan["scores"]] == [MINI, LONGER]  # in the same order
    for entry in plan["par"]:
        assert set(entry) == PAR_KEYS and entry["reachable"] is not None
        assert entry["more_pairs"] == max(0, entry["pairs_needed"] - entry["n_pairs"])
        assert entry["halfwidth_after_batch"] < entry["halfwidth"]
    for entry in plan["scores"]:
        assert set(entry) == SCORE_KEYS and entry["reference"] == "wikipedia"
        assert {s["system"] for s in entry["systems"]} == {"atlas_agent", "quill_researcher"}
        assert entry["halfwidth"] == max(s["halfwidth"] for s in entry["systems"])
    lead = plan["leading_pair"]
    assert plan["leading_pair_reason"] is None and (lead["a"], lead["b"]) == (MINI, LONGER)
    assert lead["difference"] > 0 and 0 < lead["power_now"] <= lead["power_after_batch"] <= 1
    assert lead["more_pairs"] == max(0, lead["pairs_needed"] - lead["n_pairs"])


def test_it_reports_the_par_of_the_calibration_report(planned):
    inputs = selectors.calibration_inputs(campaign=planned)
    humans = inputs.table.humans()
    merged = M.merge_swapped(inputs.table.for_rater(MINI))
    ag = M.agreement(merged, humans, rounds=0)
    entry = plan_labels(campaign=planned, judge=MINI)["par"][0]
    assert entry["par"] == round(ag.par.value, 4) and entry["n_labels"] == ag.par.n
    moments = planning.par_moments(merged, humans)
    assert entry["halfwidth"] == round(moments.halfwidth(moments.n_pairs), 4)


def test_it_writes_a_readable_table_per_section(planned):
    result = run("plan_labels", "--campaign", "Plan", "--target-halfwidth", "0.05", "--batch", "4")
    assert result.code == 0, result.err
    out = result.out
    labelled = plan_labels(campaign=planned)["n_labelled_pairs"]
    assert out.startswith(
        f"Campaign 'Plan': 16 pairs, {labelled} with human labels. Target: 95% CI half-width 0.05, power 0.8, next batch 4 pairs."
    )
    for heading in (
        "(a) Each judge's agreement with the humans (PAR)",
        "(b) Telling the two leading judges apart",
        "(c) Prediction-powered system scores (win rates against wikipedia)",
        "(e) Uniform or active sampling for (c)'s target: pairs and money",
    ):
        assert heading in out
    assert out.count("\n  Assumes: ") == 4 and max(len(line) for line in out.splitlines() if "Assumes" in line) <= 110
    flat = " ".join(out.split())
    assert all(f"Assumes: {text}" in flat for text in ASSUMPTIONS.values())
    assert f"{MINI} vs {LONGER}: PAR difference" in out
    rows = [line.split() for line in out.splitlines() if line.startswith(f"  {MINI} ") and " vs " not in line]
    assert len(rows) == 3  # one row in (a), one in (c), one in (e)
    par, scores = plan_labels(campaign=planned, target_halfwidth=0.05, batch=4)["par"][0], plan_labels(campaign=planned)["scores"][0]
    assert rows[0][:6] == [
        MINI,
        f"{par['par']:.3f}",
        str(par["n_labels"]),
        str(par["n_pairs"]),
        f"{par['halfwidth']:.3f}",
        f"{par['halfwidth_after_batch']:.3f}",
    ]
    assert rows[1][:2] == [MINI, scores["worst_system"]]
    assert rows[2][:3] == [MINI, "-", "-"]  # (c) not reached within the campaign: no pairs, so no money
    assert f"  {MINI}: cost unknown: the human cost per pair not known." in out  # never $0


def test_it_plans_one_judge_with_a_dotted_name_in_json(planned):
    result = run("plan_labels", "--campaign", "Plan", "--judge", MINI, "--format", "json", "--power", "0.5")
    assert result.code == 0, result.err
    plan = json.loads(result.out)
    assert [e["judge"] for e in plan["par"]] == [MINI] and [e["judge"] for e in plan["scores"]] == [MINI]
    assert plan["power"] == 0.5
    assert plan["leading_pair"]["a"] == MINI  # (b) still weighs every judge


def test_it_explains_an_unknown_campaign_or_judge(planned):
    campaign = run("plan_labels", "--campaign", "Nope")
    assert campaign.code == 1 and "No campaign named 'Nope'" in campaign.err
    judge = run("plan_labels", "--campaign", "Plan", "--judge", "gpt-5")
    assert judge.code == 1 and f"no judge named 'gpt-5' has worked on campaign 'Plan' (judges: {MINI}, {LONGER})" in judge.err
    assert "Traceback" not in judge.err


@pytest.mark.parametrize(
    "args,message",
    [
        (["--target-halfwidth", "0"], "the target half-width must lie between 0 and 0.5"),
        (["--target-halfwidth", "0.5"], "the target half-width must lie between 0 and 0.5"),
        (["--target-halfwidth", "nan"], "the target half-width must lie between 0 and 0.5"),
        (["--power", "1"], "the power must lie between 0 and 1"),
        (["--power", "-0.2"], "the power must lie between 0 and 1"),
        (["--batch", "0"], "the batch must be 1 pair or more, not 0"),
        (["--batch", "ten"], "invalid int value: 'ten'"),
        (["--format", "csv"], "invalid choice: 'csv'"),
    ],
)
def test_it_refuses_bad_parameters(planned, args, message):
    result = run("plan_labels", "--campaign", "Plan", *args)
    assert result.code == 1 and message in result.err


def test_it_plans_nothing_without_labels_and_says_why(alice, bob):
    campaign = hand_campaign([alice, bob], name="Fresh", topics=TOPICS[:2])
    empty = plan_labels(campaign=campaign)
    assert empty["par"] == [] and empty["scores"] == [] and empty["leading_pair"] is None
    assert empty["n_labelled_pairs"] == 0 and empty["leading_pair_reason"].startswith("No human labels yet")
    assert any(n.startswith("No human labels yet in submitted assignments") for n in empty["notes"])
    assert any(n.startswith("No judge has worked on this campaign yet") for n in empty["notes"])
    judge_rows(campaign, MINI, {(p, True): by_criterion("a", "b", "a") for p in Pair.objects.filter(campaign=campaign)})
    plan = plan_labels(campaign=campaign)
    (par,) = plan["par"]
    assert par["par"] is None and par["halfwidth"] is None and par["pairs_needed"] is None and par["n_labels"] == 0
    (scores,) = plan["scores"]
    assert scores["halfwidth"] is None and scores["systems"] == []
    text = run("plan_labels", "--campaign", "Fresh")
    assert text.code == 0 and "- No human labels yet in submitted assignments" in text.out


def test_it_counts_unsubmitted_labels_only_when_asked(alice, bob):
    campaign = hand_campaign([alice, bob], name="Started", topics=TOPICS[:3], allow_tie=True)
    rng = np.random.default_rng(5)
    pairs = list(Pair.objects.filter(campaign=campaign))
    truth = {p.id: by_criterion(*_sides(rng)) for p in pairs}
    _label(campaign, alice, truth, 2, rng)
    _label(campaign, alice, truth, 1, rng, submit=False)
    judge_rows(campaign, MINI, {(p, True): truth[p.id] for p in pairs})
    assert plan_labels(campaign=campaign)["par"][0]["n_pairs"] == 2
    assert plan_labels(campaign=campaign, include_unsubmitted=True)["par"][0]["n_pairs"] == 3
    assert Assignment.objects.filter(pair__campaign=campaign, status=Assignment.Status.SUBMITTED).count() == 2


def test_it_says_why_the_leading_judges_cannot_be_told_apart(alice, bob):
    campaign = hand_campaign([alice, bob], name="Twins", topics=TOPICS[:3], allow_tie=True)
    rng = np.random.default_rng(8)
    pairs = list(Pair.objects.filter(campaign=campaign).order_by("id"))
    truth = {p.id: by_criterion(*_sides(rng)) for p in pairs}
    _label(campaign, alice, truth, 4, rng)
    verdicts = {(p, True): by_criterion(*_sides(rng)) for p in pairs[:5]}
    judge_rows(campaign, MINI, verdicts)
    alone = plan_labels(campaign=campaign)
    assert alone["leading_pair"] is None and alone["leading_pair_reason"].startswith("Fewer than two judges have a PAR")
    assert f"{MINI} has judged 5 of the 6 pairs; the figures assume it will judge the pairs labelled next." in alone["notes"]
    judge_rows(campaign, "twin.v2", verdicts)
    twins = plan_labels(campaign=campaign, judge="twin.v2")
    assert twins["leading_pair"] is None
    assert twins["leading_pair_reason"].startswith(f"{MINI} and twin.v2 agree with the humans equally often")  # a tie in PAR: by name
    assert [n for n in twins["notes"] if "has judged 5" in n] == [
        "twin.v2 has judged 5 of the 6 pairs; the figures assume it will judge the pairs labelled next."
    ]
    text = run("plan_labels", "--campaign", "Twins")
    assert text.code == 0 and "agree with the humans equally often on the items both judged (difference 0)" in text.out
