"""Known-answer (gold) pairs end to end: `make_gold`, the silent mix of claims, blindness of the page
and the API, scoring by `calibration.metrics.quality`, the pause rule, and the report leaving them out."""

import json
import re

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.blindness_selectors import campaign_blindness_samples
from annotate.gold import DEGRADATIONS, targets_for
from annotate.models import Assignment, Campaign, Criterion, GoldPair, Pair, System
from annotate.selectors import calibration_pair_ids
from annotate.services.answers import label_save
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next, pairs_left
from annotate.services.gold import gold_draw
from annotate.services.labelling import assignment_submit
from calibration.gold import gold_pause_reason, gold_scores
from calibration.metrics import LabelTable
from calibration.metrics.quality import gold_accuracy
from calibration.report.build import build_report
from tests.calibration_builders import judge_rows
from tests.helpers import run

pytestmark = pytest.mark.django_db

REASON = "Read both articles with care."


def make_gold(campaign: Campaign, *args: str):
    return run("make_gold", "--campaign", campaign.name, *args)


def side_position(assignment: Assignment, side: str) -> str:
    """The page's position ("1" first, "2" second) of a side of the pair."""
    return "1" if (side == "a") == assignment.a_first else "2"


def answer(assignment: Assignment, user, pick) -> None:
    """Answers every criterion (pick(criterion key) -> side "a"/"b") and submits."""
    for criterion in Criterion.objects.filter(criterion_set=assignment.pair.campaign.criterion_set):
        label_save(
            assignment=assignment, criterion=criterion, user=user, position=side_position(assignment, pick(criterion.key)), rationale=REASON
        )
    assignment_submit(assignment=assignment, user=user)


def is_gold(assignment: Assignment) -> bool:
    return GoldPair.objects.filter(pair_id=assignment.pair_id).exists()


# --- the command ----------------------------------------------------------------------


def test_it_makes_gold_pairs_whose_original_must_win_on_the_targeted_criteria(campaign):
    result = make_gold(campaign, "--per-degradation", "2", "--seed", "3")
    assert result.code == 0, result.err
    golds = list(GoldPair.objects.filter(pair__campaign=campaign).select_related("pair__article_a__system", "pair__article_b__system"))
    rubric = set(campaign.criterion_set.criteria.values_list("key", flat=True))
    by_kind = {}
    for g in golds:
        by_kind.setdefault(g.degradation, []).append(g.pair.topic_id)
        assert g.pair.article_a.system == campaign.reference_system
        assert g.pair.article_b.system.is_gold and not g.pair.article_b.system.is_reference
        assert g.pair.article_a.topic_id == g.pair.article_b.topic_id == g.pair.topic_id
        assert g.pair.article_b.display_markdown != g.pair.article_a.display_markdown
        assert g.expected == {key: "a" for key in targets_for(g.degradation, rubric)}
    assert set(by_kind) == set(DEGRADATIONS)
    assert all(len(topics) == len(set(topics)) == 2 for topics in by_kind.values())
    assert f"{len(golds)} gold pair(s) added" in result.out
    # Again: nothing new, and the campaign's own pairs are untouched.
    assert make_gold(campaign, "--per-degradation", "2", "--seed", "3").code == 0
    assert GoldPair.objects.filter(pair__campaign=campaign).count() == len(golds) == 10
    assert Pair.objects.filter(campaign=campaign, gold__isnull=True).count() == 8


@pytest.mark.parametrize(
    "args, message",
    [
        (("--campaign", "Nope"), "No campaign named 'Nope'"),
        (("--campaign", "Pilot", "--per-degradation", "0"), "--per-degradation is a number of pairs from 1"),
        (("--campaign", "Pilot", "--per-degradation", "two"), "invalid int value"),
    ],
)
def test_it_refuses_bad_make_gold_arguments(campaign, args, message):
    result = run("make_gold", *args)
    assert result.code != 0 and message in result.err
    assert not GoldPair.objects.exists()


def test_it_refuses_campaigns_it_cannot_make_gold_pairs_for(catalogue):
    agents = campaign_create(name="Agents", criterion_set=catalogue, systems=["atlas_agent", "quill_researcher"], pair_mode="all")
    result = make_gold(agents)
    assert result.code != 0 and "no pair with its reference article on side A" in result.err
    labels = campaign_create(name="Labels", criterion_set=catalogue, labels_only=True)
    assert "labels-only campaign has no article texts" in make_gold(labels).err


def test_it_refuses_a_gold_rate_outside_0_to_1_everywhere(catalogue, rachel):
    for bad in ("1.5", "-0.1", "nan"):
        result = run(
            "create_campaign", "--name", "G", "--criteria", "wiki_writing", "--systems", "wikipedia,atlas_agent", "--gold-rate", bad
        )
        assert result.code != 0 and "gold rate is a share of claims between 0 and 1" in result.err
    result = run(
        "create_campaign", "--name", "G", "--criteria", "wiki_writing", "--systems", "wikipedia,atlas_agent", "--gold-pause-below", "0"
    )
    assert result.code != 0 and "pause threshold" in result.err
    assert not Campaign.objects.filter(name="G").exists()
    assert (
        run("create_campaign", "--name", "G", "--criteria", "wiki_writing", "--systems", "wikipedia,atlas_agent", "--gold-rate", "0.2").code
        == 0
    )
    assert Campaign.objects.get(name="G").gold_rate == 0.2
    client = Client()
    client.force_login(rachel)
    systems = list(System.objects.filter(key__in=["wikipedia", "atlas_agent"]).values_list("pk", flat=True))
    form = {"name": "Web", "criterion_set": catalogue.pk, "systems": systems, "overlap": 1, "pair_mode": "reference"}
    form.update(rationale_min_length=10, claim_timeout_minutes=120, gold_rate="2")
    response = client.post(reverse("campaign-new"), form)
    assert response.status_code == 422 and "less than or equal to 1" in response.content.decode()
    assert not Campaign.objects.filter(name="Web").exists()
    form["gold_rate"] = "0.25"
    assert client.post(reverse("campaign-new"), form).status_code == 302
    assert Campaign.objects.get(name="Web").gold_rate == 0.25


# --- the mix of claims ---------------------------------------------------------------------


def test_it_mixes_gold_pairs_into_claims_at_the_rate_and_counts_them_like_any_pair(campaign, alice):
    make_gold(campaign, "--per-degradation", "2")
    Campaign.objects.filter(pk=campaign.pk).update(gold_rate=0.4)
    campaign.refresh_from_db()
    # Ids differ between databases and runs: take the first member whose first claims hold a gold turn.
    alice = next(
        u
        for u in [alice, *(User.objects.create_user(f"extra{i}") for i in range(8))]
        if any(gold_draw(campaign_id=campaign.pk, user_id=u.pk, index=i) < 0.4 for i in range(3))
    )
    campaign.annotators.add(alice)
    golds_left, kinds, counts = 10, [], []
    index = 0
    while True:
        counts.append(pairs_left(campaign=campaign, user=alice))
        a = assignment_claim_next(campaign=campaign, user=alice)
        if a is None:
            break
        # The rule: a claim's gold turn (its keyed draw below the rate) gives a gold pair while any is left.
        expected = golds_left > 0 and gold_draw(campaign_id=campaign.pk, user_id=alice.pk, index=index) < 0.4
        assert is_gold(a) == expected, index
        golds_left -= is_gold(a)
        kinds.append(is_gold(a))
        assert pairs_left(campaign=campaign, user=alice, active=a) == counts[-1]
        Assignment.objects.filter(pk=a.pk).update(status=Assignment.Status.SUBMITTED)
        index += 1
    assert kinds.count(False) == 8 and kinds.count(True) >= 1
    # The count an annotator sees falls by one per pair, gold or not, to 0.
    assert counts == list(range(len(kinds), -1, -1))
    # The draws hold the rate: 4,000 claims of 3 users, within 3 standard errors of 0.4.
    share = sum(gold_draw(campaign_id=campaign.pk, user_id=u, index=i) < 0.4 for u in (1, 2, 3) for i in range(4000)) / 12000
    assert abs(share - 0.4) < 3 * (0.4 * 0.6 / 12000) ** 0.5


def test_it_gives_no_gold_pair_at_rate_0_and_keeps_the_calibration_set_free_of_them(catalogue, alice, bob):
    c = campaign_create(
        name="Cal", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], annotators=[alice, bob], calibration_pairs=2, overlap=1
    )
    make_gold(c)
    seen = []
    while (a := assignment_claim_next(campaign=c, user=alice)) is not None:
        seen.append(a)
        Assignment.objects.filter(pk=a.pk).update(status=Assignment.Status.SUBMITTED)
    assert seen and not any(is_gold(a) for a in seen)
    assert not GoldPair.objects.filter(pair_id__in=calibration_pair_ids(campaign=c)).exists()


# --- blindness -------------------------------------------------------------------------------


def _gold_and_normal_on_one_topic(campaign, alice, bob) -> tuple[Assignment, Assignment]:
    make_gold(campaign, "--per-degradation", "1")
    Campaign.objects.filter(pk=campaign.pk).update(gold_rate=1.0)
    campaign.refresh_from_db()
    gold = assignment_claim_next(campaign=campaign, user=alice)
    assert is_gold(gold)
    Campaign.objects.filter(pk=campaign.pk).update(gold_rate=0.0)
    campaign.refresh_from_db()
    while (normal := assignment_claim_next(campaign=campaign, user=bob)).pair.topic_id != gold.pair.topic_id:
        Assignment.objects.filter(pk=normal.pk).update(status=Assignment.Status.SUBMITTED)
    Assignment.objects.filter(pk__in=[gold.pk, normal.pk]).update(a_first=True, order="ab")
    return gold, normal


def _api(user, assignment) -> dict:
    client = APIClient()
    client.force_login(user)
    response = client.get(reverse("api:assignment-detail", args=[assignment.pk]))
    assert response.status_code == 200
    return response.json()


def test_it_shows_a_gold_pair_exactly_like_a_normal_one_in_the_api_and_the_page(campaign, alice, bob):
    gold, normal = _gold_and_normal_on_one_topic(campaign, alice, bob)
    g, n = _api(alice, gold), _api(bob, normal)
    assert g.keys() == n.keys()
    for key in g:
        if key == "id":
            assert isinstance(g[key], int) and isinstance(n[key], int)
        elif key == "claimed_at":
            assert re.fullmatch(r"[\d\-T:.+Z]+", g[key]) and re.fullmatch(r"[\d\-T:.+Z]+", n[key])
        elif key == "articles":
            assert [c.keys() for c in g[key]] == [c.keys() for c in n[key]]
            assert [c["position"] for c in g[key]] == [c["position"] for c in n[key]] == ["1", "2"]
            # The reference article, shown first in both, is the same text; only the other differs.
            assert g[key][0] == n[key][0] and g[key][1]["html"] != n[key][1]["html"]
        else:
            assert g[key] == n[key], key
    pages = []
    for user, assignment in ((alice, gold), (bob, normal)):
        client = Client()
        client.force_login(user)
        html = client.get(reverse("assignment", args=[assignment.pk])).content.decode()
        html = html.replace(f"/work/{assignment.pk}/", "/work/ID/").replace(user.username, "USER")
        html = html.replace(f"pairwise:reading:{assignment.pk}", "pairwise:reading:ID")  # where the reader was, per assignment
        html = re.sub(r'(csrfmiddlewaretoken" value="|X-CSRFToken": ")[^"]+', r"\1TOKEN", html)
        html = re.sub(r'(<article class="prose"[^>]*data-position="\d">).*?</article>', r"\1</article>", html, flags=re.S)
        # The section maps list each article's own headings, as the contents do: both are blanked alike.
        html = re.sub(r'(<details class="section-map" data-position="\d">).*?</details>', r"\1</details>", html, flags=re.S)
        html = re.sub(r'(<details class="toc"><summary>Contents</summary>).*?</details>', r"\1</details>", html, flags=re.S)
        html = re.sub(r'nonce="[^"]*"', 'nonce="N"', html)
        pages.append(html)
    assert pages[0] == pages[1]


def test_it_audits_gold_copies_as_it_audits_every_article_shown(campaign):
    before = campaign_blindness_samples(campaign=campaign)
    make_gold(campaign, "--per-degradation", "1")
    after = campaign_blindness_samples(campaign=campaign)
    copies = [s for s in after if s.system.startswith("gold-")]
    assert len(after) == len(before) + len(copies) == len(before) + 5
    assert all(not s.is_reference for s in copies)


# --- scoring and the pause rule ----------------------------------------------------------


def test_it_scores_gold_answers_with_quality_gold_accuracy(campaign, alice, bob, rachel):
    make_gold(campaign, "--per-degradation", "1")
    Campaign.objects.filter(pk=campaign.pk).update(gold_rate=1.0)
    campaign.refresh_from_db()
    rows = []
    for user, pick in ((alice, lambda key: "a"), (bob, lambda key: "b" if key in ("bc_7", "ww_cc_1", "bc_1") else "a")):
        for _ in range(3):
            a = assignment_claim_next(campaign=campaign, user=user)
            assert is_gold(a)
            answer(a, user, pick)
            pair = a.pair
            for criterion in Criterion.objects.filter(criterion_set=campaign.criterion_set):
                winner = pair.article_a.system.key if pick(criterion.key) == "a" else pair.article_b.system.key
                rows.append(
                    (str(pair.pk), criterion.key, "human:" + user.username, pair.article_a.system.key, pair.article_b.system.key, winner)
                )
    table = LabelTable.from_columns(
        pair=[r[0] for r in rows], criterion=[r[1] for r in rows], category=["c"] * len(rows), rater=[r[2] for r in rows],
        rater_kind=["human"] * len(rows), system_a=[r[3] for r in rows], system_b=[r[4] for r in rows], winner=[r[5] for r in rows],
    )  # fmt: skip
    expected = {(str(g.pair_id), key): g.pair.article_a.system.key for g in GoldPair.objects.all() for key in g.expected}
    kinds = {str(g.pair_id): g.degradation for g in GoldPair.objects.all()}
    ours = gold_scores(campaign=campaign)
    assert [s.as_dict() for s in ours] == [s.as_dict() for s in gold_accuracy(table, expected, kinds=kinds)]
    by_rater = {s.rater: s.accuracy for s in ours}
    assert by_rater["human:alice"].value == 1.0 and 0 < by_rater["human:bob"].value < 1.0
    assert by_rater["human:alice"].n_pairs == 3 and by_rater["human:alice"].ci_low < 1.0
    # Staff see it with its interval and n; annotators do not.
    staff = Client()
    staff.force_login(rachel)
    page = staff.get(reverse("calibration-gold", args=[campaign.pk])).content.decode()
    assert "alice" in page and f"{by_rater['human:alice'].ci_low:.2f}" in page and "n answers" in page
    annotator = Client()
    annotator.force_login(alice)
    assert annotator.get(reverse("calibration-gold", args=[campaign.pk])).status_code in (302, 403)


def test_it_pauses_an_annotator_clearly_below_the_threshold_with_a_message(campaign, alice, bob, rachel):
    make_gold(campaign, "--per-degradation", "1")
    # Degraded copies are recognisable by their text (tests/test_gold_separability.py): accepted explicitly here.
    Campaign.objects.filter(pk=campaign.pk).update(gold_rate=1.0, gold_pause_below=0.8, gold_pause_after=2, gold_accept_separable=True)
    campaign.refresh_from_db()
    for user, side in ((alice, "b"), (bob, "a")):
        for _ in range(2):
            assert gold_pause_reason(campaign=campaign, user=user) is None
            a = assignment_claim_next(campaign=campaign, user=user)
            assert is_gold(a)
            answer(a, user, lambda key, side=side: side)
    reason = gold_pause_reason(campaign=campaign, user=alice)
    assert reason and "paused" in reason and "2 check pairs" in reason
    with pytest.raises(PermissionDenied, match="paused"):
        assignment_claim_next(campaign=campaign, user=alice)
    client = Client()
    client.force_login(alice)
    response = client.post(reverse("claim-next", args=[campaign.pk]))
    assert response.status_code == 403 and "paused until a staff member" in response.content.decode()
    api = APIClient()
    api.force_login(alice)
    response = api.post(reverse("api:campaign-claim", args=[campaign.pk]))
    assert response.status_code == 403 and "paused" in json.dumps(response.json())
    # The careful annotator goes on.
    assert assignment_claim_next(campaign=campaign, user=bob) is not None
    # Staff see who is paused, and lift it: the rule then counts only gold pairs submitted afterwards.
    staff = Client()
    staff.force_login(rachel)
    page = staff.get(reverse("calibration-gold", args=[campaign.pk])).content.decode()
    assert page.count("Lift the pause") == 1 and "<strong>paused</strong>" in page
    refused = staff.post(reverse("calibration-gold-lift", args=[campaign.pk]), {"annotator": "nobody"})
    assert refused.status_code == 400 and "has no work in the campaign" in refused.content.decode()
    assert staff.post(reverse("calibration-gold-lift", args=[campaign.pk]), {"annotator": "alice"}).status_code == 302
    assert gold_pause_reason(campaign=campaign, user=alice) is None
    again = assignment_claim_next(campaign=campaign, user=alice)
    assert again is not None
    answer(again, alice, lambda key: "b")
    assert gold_pause_reason(campaign=campaign, user=alice) is None  # one gold pair since the lift: too few to judge
    answer(assignment_claim_next(campaign=campaign, user=alice), alice, lambda key: "b")
    assert "paused" in gold_pause_reason(campaign=campaign, user=alice)


# --- the report leaves gold pairs out ------------------------------------------------------


def test_it_leaves_gold_pairs_out_of_the_calibration_report(campaign, alice, bob):
    for user in (alice, bob):
        for _ in range(3):
            a = assignment_claim_next(campaign=campaign, user=user)
            answer(a, user, lambda key: "a" if len(key) % 2 else "b")
    keys = list(campaign.criterion_set.criteria.values_list("key", flat=True))
    normal = list(Pair.objects.filter(campaign=campaign))
    judge_rows(campaign, "judge-x", {(p, o): {k: "a" if (p.pk + len(k)) % 3 else "b" for k in keys} for p in normal for o in (True, False)})
    before = build_report(campaign, rounds=50)
    make_gold(campaign, "--per-degradation", "1")
    Campaign.objects.filter(pk=campaign.pk).update(gold_rate=1.0)
    campaign.refresh_from_db()
    for user in (alice, bob):
        a = assignment_claim_next(campaign=campaign, user=user)
        assert is_gold(a)
        answer(a, user, lambda key: "b")
    golds = list(Pair.objects.filter(campaign=campaign, gold__isnull=False))
    # The judge answers on gold pairs too (one unit failed), and is scored there by the same code.
    judge_rows(
        campaign,
        "judge-x",
        {(p, o): {k: "a" for k in keys} for p in golds for o in (True, False) if (p, o) != (golds[0], True)},
        errors=[(golds[0], "broad_coverage", True)],
    )
    after = build_report(campaign, rounds=50)
    # "plan" describes the campaign as it is now (its pairs and design, gold pairs included), like "campaign".
    # "gold" is the one section about them: present once the campaign has gold pairs (issue 41).
    strip = {"generated_at", "campaign", "plan", "gold"}
    assert {k: v for k, v in after.items() if k not in strip} == {k: v for k, v in before.items() if k not in strip}
    assert "gold" not in before and after["gold"]["n_gold_pairs"] == 5
    reported = {entry["rater"]: entry for entry in after["gold"]["raters"]}
    assert list(reported) == ["human:alice", "human:bob", "judge-x"]
    assert reported["judge-x"]["accuracy"]["value"] == 1.0 and reported["human:alice"]["accuracy"]["value"] == 0.0
    scores = {s.rater: s for s in gold_scores(campaign=campaign)}
    assert scores["judge-x"].rater_kind == "judge" and scores["judge-x"].accuracy.value == 1.0
    assert scores["judge-x"].accuracy.n_pairs == 5 and scores["human:alice"].accuracy.value == 0.0


def test_it_never_offers_a_gold_system_for_a_new_campaign(campaign, rachel):
    make_gold(campaign, "--per-degradation", "1")
    result = run("create_campaign", "--name", "Bad", "--criteria", "wiki_writing", "--systems", "wikipedia,gold-lead-removed")
    assert result.code != 0 and "Known-answer system(s) cannot be compared: gold-lead-removed" in result.err
    client = Client()
    client.force_login(rachel)
    form = client.get(reverse("campaign-new")).content.decode()
    assert "atlas_agent" in form and "gold-" not in form
