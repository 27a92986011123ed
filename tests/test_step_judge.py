"""A judge that votes on the agents' steps (issue 42, item 5): one call per step through the real
loopback HTTP server, billed and ledgered like every call, blind like the page, and its agreement
with the annotators' votes equal to a direct computation."""

import io
import json
from collections import Counter, defaultdict

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.management import call_command
from sklearn.metrics import cohen_kappa_score

from annotate.models import ArticleStep, CriterionSet
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next
from annotate.services.step_votes import step_vote_save
from calibration.report.build import build_report
from judges.models import JudgeCall, JudgeRun, JudgeUnit
from judges.services import judge_create, judge_run_create, judge_run_execute
from protocols import step_vote
from protocols.base import InvalidResponse
from tests.test_campaign_steps import AGENTS, TRACES
from tests.test_export_labels import finish

pytestmark = pytest.mark.django_db
KEY_ENV = "FAKE_JUDGE_API_KEY"
RATERS = ("ada", "lin", "noor")


@pytest.fixture
def voted_campaign(db):
    """The traces campaign, each of three annotators voting on every step of every pair (by a rule of
    their own, so that they disagree now and then)."""
    call_command("import_articles", str(TRACES), "--benchmark", "traces", stdout=io.StringIO())
    call_command("import_criteria", "fixtures/criteria/wiki_writing.json", stdout=io.StringIO())
    users = [User.objects.create_user(name, password=f"pw-{name}-12345") for name in RATERS]
    campaign = campaign_create(
        name="Traces", criterion_set=CriterionSet.objects.get(key="wiki_writing"), systems=AGENTS, pair_mode="all",
        benchmark="traces", show_steps=True, overlap=3, annotators=users, ask_overall=True,
    )  # fmt: skip
    for i, user in enumerate(users):
        while (assignment := assignment_claim_next(campaign=campaign, user=user)) is not None:
            pair = assignment.pair
            for step in ArticleStep.objects.filter(article_id__in=(pair.article_a_id, pair.article_b_id)):
                vote = "down" if (step.pk * 7 + i * (step.order % 2)) % 3 == 0 else "up"
                step_vote_save(assignment=assignment, step_id=step.pk, vote=vote, user=user)
            finish(assignment, overall="1")  # submitted: the next claim is another pair
    return campaign


@pytest.fixture
def llm_judge(llm_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-steps")
    judge, _ = judge_create(
        name="fake.gpt-4o-mini", model="fake-judge", base_url=llm_server.base_url, api_key_env=KEY_ENV,
        input_price="0.15", output_price="0.60", max_tokens=2000,
    )  # fmt: skip
    return judge


def step_requests(server) -> list[dict]:
    return [r for r in server.requests if step_vote.NAME == ((r.get("response_format") or {}).get("json_schema") or {}).get("name")]


def test_it_votes_once_per_step_billed_and_blind_and_keeps_the_votes_on_their_units(voted_campaign, llm_judge, llm_server):
    run = judge_run_execute(run=judge_run_create(campaign=voted_campaign, judge=llm_judge, steps=True, concurrency=4))

    assert run.status == JudgeRun.Status.FINISHED, run.message
    articles = {a for p in voted_campaign.pairs.all() for a in (p.article_a_id, p.article_b_id)}
    steps = ArticleStep.objects.filter(article_id__in=articles)
    units = JudgeUnit.objects.filter(run=run, question=JudgeUnit.Question.STEP)
    assert units.count() == steps.count() == llm_server.step_requests == len(step_requests(llm_server))
    assert set(units.values_list("step_id", flat=True)) == set(steps.values_list("pk", flat=True))
    assert all(u.vote in (1, -1) and u.reason == "Fake reason for the step." and u.category_id is None for u in units)
    calls = JudgeCall.objects.filter(unit__in=units)
    assert calls.count() == units.count() and all(c.valid and c.cost_usd > 0 for c in calls)
    assert run.cost_usd == sum(c.cost_usd for c in JudgeCall.objects.filter(run=run))
    # Blind: the task, the steps before and the step; never a system, an agent's name or a URL.
    for request in step_requests(llm_server):
        text = json.dumps(request["messages"])
        assert "The step to vote on:" in text
        for leak in (*AGENTS, "Agent Alpha", "Agent Beta", "example.com", "example.org", "https://"):
            assert leak not in text
    # A second run of the same judge finds every step voted on: nothing is asked again.
    again = judge_run_execute(run=judge_run_create(campaign=voted_campaign, judge=llm_judge, steps=True))
    assert again.status == JudgeRun.Status.FINISHED and again.calls == 0


def test_it_shows_the_judge_the_steps_before_the_one_it_votes_on_in_order(voted_campaign, llm_judge, llm_server):
    judge_run_execute(run=judge_run_create(campaign=voted_campaign, judge=llm_judge, steps=True))
    step = ArticleStep.objects.filter(order=2).first()
    earlier = list(ArticleStep.objects.filter(article=step.article, order__lt=2).order_by("order"))
    texts = [r["messages"][-1]["content"] for r in step_requests(llm_server)]
    [asked] = [
        t for t in texts if t.split("The step to vote on:")[1].strip().startswith(f"Step 3 ({step.kind})") and step.content.strip() in t
    ]
    before, _ = asked.split("The step to vote on:")
    assert [line.split(" (")[0] for line in before.splitlines() if line.startswith("Step ")] == ["Step 1", "Step 2"]
    assert all(e.content.strip() in before for e in earlier)


def test_it_measures_the_judge_against_the_annotators_as_a_direct_computation_does(voted_campaign, llm_judge, llm_server):
    judge_run_execute(run=judge_run_create(campaign=voted_campaign, judge=llm_judge, steps=True))
    report = build_report(voted_campaign, rounds=200, seed=1)
    found = report["steps"]["judges"]
    entry = found["judges"][llm_judge.name]

    judge_votes = dict(JudgeUnit.objects.filter(question=JudgeUnit.Question.STEP).values_list("step_id", "vote"))
    human = defaultdict(dict)
    for vote in voted_campaign.pairs.values_list(
        "assignments__step_votes__step_id", "assignments__annotator__username", "assignments__step_votes__vote"
    ):
        if vote[0] is not None:
            human[vote[0]][vote[1]] = vote[2]
    pairs = [(judge_votes[step], v) for step, votes in human.items() for v in votes.values()]
    j, h = [a > 0 for a, _ in pairs], [b > 0 for _, b in pairs]
    assert found["n_votes"] == len(pairs) + len(judge_votes) and found["n_steps"] == len(human)
    assert entry["figures"]["agreement"]["value"] == pytest.approx(sum(a == b for a, b in zip(j, h)) / len(pairs))
    assert entry["figures"]["agreement"]["n"] == len(pairs)
    assert entry["figures"]["kappa"]["value"] == pytest.approx(cohen_kappa_score(j, h))
    majority = {}
    for step, votes in human.items():
        counts = Counter(v > 0 for v in votes.values())
        if counts[True] != counts[False]:
            majority[step] = counts[True] > counts[False]
    assert entry["figures"]["agreement_majority"]["value"] == pytest.approx(
        sum((judge_votes[s] > 0) == m for s, m in majority.items()) / len(majority)
    )
    assert entry["figures"]["mean"]["value"] == pytest.approx(sum(j) / len(j))
    low, high = entry["figures"]["agreement"]["ci"]
    assert low <= entry["figures"]["agreement"]["value"] <= high
    assert set(entry["powered_upvote_rates"]) == set(AGENTS)
    assert entry["alt_test"]["scoring"] == "categorical"
    assert found["human_ceiling"]["agreement"]["n"] > 0


def test_it_refuses_steps_for_a_baseline_or_a_campaign_without_steps(voted_campaign, llm_judge):
    from annotate.models import Campaign

    baseline, _ = judge_create(name="longer", kind="length")
    with pytest.raises(ValidationError, match="only an LLM judge can vote on steps"):
        judge_run_create(campaign=voted_campaign, judge=baseline, steps=True)
    Campaign.objects.filter(pk=voted_campaign.pk).update(show_steps=False)
    voted_campaign.refresh_from_db()
    with pytest.raises(ValidationError, match="does not show the agents' steps"):
        judge_run_create(campaign=voted_campaign, judge=llm_judge, steps=True)


@pytest.mark.parametrize(
    ("reply", "vote", "reason"),
    [
        ('{"vote": "up", "reason": "A good plan."}', "up", "A good plan."),
        ('```json\n{"vote": "Down", "reason": "Off topic."}\n```', "down", "Off topic."),
        ('{"helpful": true}', "up", ""),
        ('{"vote": "not helpful", "reason": 3}', "down", "3"),
        ('<think>Is it useful?</think>{"vote": "-", "reason": "A dead end."}', "down", "A dead end."),
    ],
)
def test_it_reads_the_step_vote_replies_real_endpoints_give(reply, vote, reason):
    assert step_vote.parse_verdicts(reply) == {step_vote.KEY: (vote, reason)}


@pytest.mark.parametrize(
    "reply",
    ['{"vote": "maybe"}', '{"answer": null}', '{"note": "up"}', "[]", "no json at all, sorry", "<think>hm</think> down", '{"vote": 2}'],
)
def test_it_refuses_a_step_vote_reply_that_is_neither_vote(reply):
    with pytest.raises(InvalidResponse):
        step_vote.parse_verdicts(reply)


def test_it_shows_the_step_judges_in_every_format_of_the_report(voted_campaign, llm_judge, llm_server, tmp_path):
    from tests.helpers import run

    judge_run_execute(run=judge_run_create(campaign=voted_campaign, judge=llm_judge, steps=True))
    data = run("calibration_report", "--campaign", "Traces", "--rounds", "50")
    assert data.code == 0 and json.loads(data.out)["steps"]["judges"]["judges"][llm_judge.name]["figures"]["kappa"]["n"] > 0
    markdown = run("calibration_report", "--campaign", "Traces", "--rounds", "50", "--format", "md")
    assert markdown.code == 0, markdown.err
    assert "Judges' votes on the agents' steps against the annotators'" in markdown.out and llm_judge.name in markdown.out
    table = run("calibration_report", "--campaign", "Traces", "--rounds", "50", "--format", "csv", "--table", "step_judges")
    assert table.code == 0, table.err
    header, row = table.out.splitlines()[:2]
    assert header.startswith("Judge,Agreement,Cohen's kappa") and row.startswith(llm_judge.name)
    html = run("calibration_report", "--campaign", "Traces", "--rounds", "50", "--format", "html")
    assert html.code == 0 and (
        "Judges&#x27; votes on the agents&#x27; steps" in html.out or "Judges' votes on the agents' steps" in html.out
    )


def test_it_exports_the_judges_votes_on_steps_and_imports_them_back_exactly(voted_campaign, llm_judge, llm_server, tmp_path):
    from tests.helpers import run
    from tests.test_step_votes_interchange import files, renamed, table

    judge_run_execute(run=judge_run_create(campaign=voted_campaign, judge=llm_judge, steps=True))
    source = tmp_path / "traces.csv"
    assert run("export_labels", "--campaign", "Traces", "--out", str(source)).code == 0
    rows = table(files(source)[3])
    judged = [r for r in rows if r["rater_kind"] == "judge"]
    assert len(judged) == JudgeUnit.objects.filter(question=JudgeUnit.Question.STEP).count()
    assert {r["rater"] for r in judged} == {llm_judge.name} and all(r["comment"] == "Fake reason for the step." for r in judged)
    assert {r["rater_kind"] for r in rows} == {"human", "judge"}

    campaign_create(
        name="Copy", criterion_set=voted_campaign.criterion_set, systems=AGENTS, pair_mode="all", benchmark="traces",
        show_steps=True, overlap=3, ask_overall=True,
    )  # fmt: skip
    for path in files(source):
        renamed(path, "Copy")
    result = run("import_labels", "--campaign", "Copy", str(source))
    assert result.code == 0, result.err
    assert f"judges' votes on steps: {len(judged)} new, 0 updated, 0 unchanged" in result.out
    again = tmp_path / "copy.csv"
    assert run("export_labels", "--campaign", "Copy", "--out", str(again)).code == 0
    assert table(files(again)[3]) == rows
    original = build_report(voted_campaign, rounds=50, seed=1)["steps"]["judges"]["judges"][llm_judge.name]["figures"]
    copied = build_report(voted_campaign.__class__.objects.get(name="Copy"), rounds=50, seed=1)["steps"]["judges"]
    assert copied["judges"][llm_judge.name]["figures"]["kappa"]["value"] == original["kappa"]["value"]
    again_result = run("import_labels", "--campaign", "Copy", str(source))
    assert f"judges' votes on steps: 0 new, 0 updated, {len(judged)} unchanged" in again_result.out, again_result.out
