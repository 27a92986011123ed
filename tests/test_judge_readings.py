"""Judge runs over a rubric with one-article criteria (checklist, rating, count): pairs are asked the
pairwise criteria, readings (one article alone) the others, through the real openai client against
tests/llm_server.py; the Batch API too. Runs on SQLite and on PostgreSQL (DATABASE_URL)."""

import pytest

from annotate.models import Criterion, Pair, Reading
from interchange import call_rows, label_rows, rows_format
from interchange.formats import LABEL_COLUMNS, ONE_ARTICLE_COLUMNS
from judges.models import JudgeCall, JudgeRun, JudgeUnit, JudgeVerdict
from judges.selectors import campaign_pairs, run_estimate
from judges.services import judge_create, judge_run_create, judge_run_execute
from tests.reading_builders import campaign_with_readings, mixed_rubric

pytestmark = pytest.mark.django_db

KEY_ENV = "FAKE_JUDGE_API_KEY"
SECRET = "sk-test-readings-51c0"
SYSTEMS = ["wikipedia", "atlas_agent", "quill_researcher"]
PAIRWISE = {"p_clear", "p_short", "l_better"}
# Per reading: the checklist of "layout" in one call, the rating and the count of "scores" one each
# (one category mixing two one-article protocols is asked per criterion).
READING_UNITS = 3


@pytest.fixture
def mixed_campaign(catalogue, alice, tmp_path):
    return campaign_with_readings(name="Mixed", criterion_set=mixed_rubric(tmp_path), systems=SYSTEMS, annotators=[alice])


def llm_judge(server, monkeypatch, name="fake-gpt", **options):
    monkeypatch.setenv(KEY_ENV, SECRET)
    judge, _ = judge_create(
        name=name, model="fake-judge", base_url=server.base_url, api_key_env=KEY_ENV,
        input_price="2.50", output_price="10", max_tokens=4000, **options,
    )  # fmt: skip
    return judge


def execute(campaign, judge, **options):
    options.setdefault("concurrency", 4)
    return judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, **options))


def answers_from_the_message(key: str, message: str):
    """What a model answers, worked out from the request alone, in the loose forms a model writes."""
    return {"l_intro": "YES", "l_refs": "n/a", "s_overall": 1 + len(message) % 5, "s_typos": str(len(message) % 21)}[key]


def stored(key: str, message: str) -> str:
    return {"l_intro": "yes", "l_refs": "na", "s_overall": str(1 + len(message) % 5), "s_typos": str(len(message) % 21)}[key]


def user_message(body: dict) -> str:
    return body["messages"][-1]["content"]


def test_it_asks_pairs_the_pairwise_criteria_and_readings_the_others(mixed_campaign, llm_server, monkeypatch):
    llm_server.one_article_policy = answers_from_the_message
    judge = llm_judge(llm_server, monkeypatch)
    pairs, readings = Pair.objects.filter(campaign=mixed_campaign).count(), list(Reading.objects.filter(campaign=mixed_campaign))
    assert (pairs, len(readings)) == (8, 12)

    run = execute(mixed_campaign, judge, swap=True)

    assert run.status == JudgeRun.Status.FINISHED, run.message
    # Pairs: both orders of the two categories with pairwise criteria; readings: one order.
    expected = pairs * 2 * 2 + len(readings) * READING_UNITS
    assert (run.units_total, run.units_done, run.errors, run.calls) == (expected, expected, 0, expected)
    assert len(llm_server.requests) == expected
    by_schema = {}
    for body in llm_server.requests:
        by_schema.setdefault(body["response_format"]["json_schema"]["name"], []).append(body)
    assert {name: len(bodies) for name, bodies in by_schema.items()} == {
        "verdicts": pairs * 4, "checklist": len(readings), "rating": len(readings), "count": len(readings),
    }  # fmt: skip
    pair_units = JudgeUnit.objects.filter(run=run, pair__kind="pair")
    assert pair_units.count() == pairs * 4 and not pair_units.filter(pair__kind="reading").exists()
    pair_verdicts = JudgeVerdict.objects.filter(unit__in=pair_units).select_related("criterion")
    assert {v.criterion.key for v in pair_verdicts} == PAIRWISE
    assert all(v.winner in ("a", "b") and v.answer == "" for v in pair_verdicts)
    assert pair_verdicts.count() == pairs * 2 * 3

    for reading in readings:
        text = reading.article_a.display_markdown.strip()
        one_article = [body for name, bodies in by_schema.items() if name != "verdicts" for body in bodies]
        asked = [body for body in one_article if text in user_message(body)]
        # The article alone, as the pair page shows it: never beside another one.
        assert len(asked) == READING_UNITS and all("Article 2" not in user_message(body) for body in asked)
        units = JudgeUnit.objects.filter(run=run, pair=reading)
        assert units.count() == READING_UNITS and all(u.a_first and u.status == JudgeUnit.Status.DONE for u in units)
        verdicts = JudgeVerdict.objects.filter(unit__pair=reading).select_related("criterion", "call")
        got = {v.criterion.key: v.answer for v in verdicts}
        expected_answers = {}
        for body in asked:
            for key in ("l_intro", "l_refs", "s_overall", "s_typos"):
                if f"- {key}:" in user_message(body):
                    expected_answers[key] = stored(key, user_message(body))
        assert got == expected_answers and len(got) == 4
        assert all(v.winner == "" and v.call.valid and v.rationale.startswith("Fake reason") for v in verdicts)
    checklist = by_schema["checklist"][0]
    assert "- l_intro:" in user_message(checklist) and "- l_refs:" in user_message(checklist)
    assert "- l_better:" not in user_message(checklist)  # the pairwise criterion of the category is asked on pairs


def test_it_leaves_a_unit_whose_answer_is_not_allowed_in_error_then_resumes_it(mixed_campaign, llm_server, monkeypatch):
    llm_server.one_article_policy = lambda key, message: {"l_intro": "maybe", "s_overall": 9}.get(
        key, answers_from_the_message(key, message)
    )
    judge = llm_judge(llm_server, monkeypatch, max_attempts=2)

    run = execute(mixed_campaign, judge)

    total = 8 * 2 + 12 * READING_UNITS
    assert run.status == JudgeRun.Status.FINISHED, run.message
    assert (run.units_total, run.units_done, run.errors) == (total, total - 24, 24)
    errors = JudgeUnit.objects.filter(run=run, status=JudgeUnit.Status.ERROR)
    checklist = errors.filter(category__key="layout", criterion__isnull=True)
    rating = errors.filter(criterion__key="s_overall")
    assert checklist.count() == rating.count() == 12
    assert all(u.error == "unreadable answer after 2 attempt(s): l_intro: answer 'maybe' is not one of yes, no" for u in checklist)
    assert all(u.error == "unreadable answer after 2 attempt(s): s_overall: answer 9 is not a point of the scale 1-5" for u in rating)
    # Never coerced: no verdict at all for a unit in error, and both attempts are billed calls.
    assert not JudgeVerdict.objects.filter(unit__in=errors).exists()
    assert JudgeCall.objects.filter(unit__in=errors, valid=False, http_status=200).count() == 48
    assert "24 unit(s) in error" in run.message

    llm_server.reset()
    llm_server.one_article_policy = answers_from_the_message
    again = execute(mixed_campaign, judge)

    # Only the units in error are asked again; the done ones are never redone.
    assert again.status == JudgeRun.Status.FINISHED and (again.units_done, again.errors, again.calls) == (total, 0, 24)
    assert len(llm_server.requests) == 24
    assert JudgeVerdict.objects.filter(unit__judge=judge, answer="yes", criterion__key="l_intro").count() == 12
    assert run_estimate(campaign=mixed_campaign, judge=judge).units_pending == 0


def test_it_asks_one_criterion_per_reading_unit_in_per_criterion_mode_and_plans_no_readings_for_baselines(
    mixed_campaign, llm_server, monkeypatch
):
    judge = llm_judge(llm_server, monkeypatch, per_criterion=True)

    plan = run_estimate(campaign=mixed_campaign, judge=judge, swap=True)
    assert plan.units_total == 8 * 2 * 3 + 12 * 4  # pairs x orders x pairwise criteria + readings x one-article criteria
    length, _ = judge_create(name="longer", kind="length")
    assert run_estimate(campaign=mixed_campaign, judge=length).units_total == 8 * 2  # baselines compare pairs only
    run = execute(mixed_campaign, length)
    assert run.status == JudgeRun.Status.FINISHED and not JudgeUnit.objects.filter(judge=length, pair__kind="reading").exists()


def test_it_asks_readings_once_and_without_logprobs_when_the_judge_wants_confidences(mixed_campaign, llm_server, monkeypatch):
    judge = llm_judge(llm_server, monkeypatch, confidence="samples:3", temperature=1.0)

    run = execute(mixed_campaign, judge, limit=1)

    assert run.status == JudgeRun.Status.FINISHED, run.message
    # One pair (2 categories, 3 samples each) and its two articles' readings (3 units each, asked once).
    assert len(llm_server.requests) == 2 * 3 + 2 * READING_UNITS
    verdicts = JudgeVerdict.objects.filter(unit__run=run)
    assert all(v.confidence is not None and len(v.samples.split(",")) == 3 for v in verdicts.filter(unit__pair__kind="pair"))
    assert all(v.confidence is None and v.samples == "" and v.answer for v in verdicts.filter(unit__pair__kind="reading"))

    llm_server.reset()
    sure = llm_judge(llm_server, monkeypatch, name="sure", confidence="logprobs")
    run = execute(mixed_campaign, sure, limit=1)
    assert run.status == JudgeRun.Status.FINISHED, run.message
    one_article = [b for b in llm_server.requests if b["response_format"]["json_schema"]["name"] != "verdicts"]
    assert len(one_article) == 2 * READING_UNITS and not any("logprobs" in b for b in one_article)
    assert all(v.confidence is None for v in JudgeVerdict.objects.filter(unit__run=run, unit__pair__kind="reading"))


def test_it_answers_readings_from_the_cache_on_a_second_judge_of_the_same_model(mixed_campaign, llm_server, monkeypatch):
    first = llm_judge(llm_server, monkeypatch)
    execute(mixed_campaign, first, limit=2)
    asked = len(llm_server.requests)
    second = llm_judge(llm_server, monkeypatch, name="same-model")

    run = execute(mixed_campaign, second, limit=2)

    assert run.status == JudgeRun.Status.FINISHED and len(llm_server.requests) == asked  # nothing sent again
    assert run.cost_usd == 0 and JudgeCall.objects.filter(run=run, from_cache=False).count() == 0
    answers = lambda judge: sorted(  # noqa: E731
        JudgeVerdict.objects.filter(unit__judge=judge, unit__pair__kind="reading").values_list("unit__pair", "criterion", "answer")
    )
    first_pairs = Pair.objects.filter(campaign=mixed_campaign).order_by("order", "id")[:2]
    articles = {a for pair in first_pairs for a in (pair.article_a_id, pair.article_b_id)}
    assert answers(second) == answers(first) and len(answers(first)) == len(articles) * 4


def test_it_sends_readings_through_the_batch_api(mixed_campaign, llm_server, monkeypatch, settings):
    settings.JUDGE_BATCH_POLL_SECONDS = 0.01
    llm_server.one_article_policy = answers_from_the_message
    judge = llm_judge(llm_server, monkeypatch)

    run = execute(mixed_campaign, judge, batch=True)

    total = 8 * 2 + 12 * READING_UNITS
    assert run.status == JudgeRun.Status.FINISHED, run.message
    assert (run.units_done, run.errors) == (total, 0)
    verdicts = JudgeVerdict.objects.filter(unit__run=run, unit__pair__kind="reading").select_related("criterion")
    assert verdicts.count() == 12 * 4 and {v.answer for v in verdicts if v.criterion.key == "l_refs"} == {"na"}
    assert all(v.winner == "" and v.call.batch_id for v in verdicts)


def test_it_exports_a_readings_answers_with_their_response_type(mixed_campaign, llm_server, monkeypatch):
    llm_server.one_article_policy = lambda key, message: {"l_intro": "maybe"}.get(key, answers_from_the_message(key, message))
    judge = llm_judge(llm_server, monkeypatch, max_attempts=1)
    execute(mixed_campaign, judge, limit=1)

    rows = label_rows(mixed_campaign)
    answers = [row for row in rows if row.get("response")]
    pairs = [row for row in rows if not row.get("response")]
    assert len(pairs) == 3 and all(row["winner_system"] and "answer" not in row for row in pairs)
    # --limit 1: the readings of the first pair's two articles (whatever order the readings were drawn in).
    first = campaign_pairs(campaign=mixed_campaign, limit=1)[0]
    assert len(answers) == 2 * 4
    for row in answers:
        assert row["left_system"] == row["right_system"] == row["winner_system"] == row["position"] == ""
    assert {row["system"] for row in answers} == {first.article_a.system.key, first.article_b.system.key}
    kinds = {row["criterion"]: row["response"].split(" ")[0] for row in answers}
    assert kinds == {"l_intro": "checklist", "l_refs": "checklist+na", "s_overall": "rating", "s_typos": "count"}
    failed = [row for row in answers if row["error"]]
    assert {row["criterion"] for row in failed} == {"l_intro", "l_refs"}  # the checklist unit: both its criteria
    assert all(row["answer"] == "" and "'maybe'" in row["error"] for row in failed)
    assert {row["answer"] for row in answers if row["criterion"] == "l_refs" and not row["error"]} <= {"na"}
    assert all(row["answer"].isdigit() for row in answers if row["criterion"] in ("s_overall", "s_typos"))

    text = "".join(rows_format(rows, fmt="csv", columns=LABEL_COLUMNS))
    assert set(ONE_ARTICLE_COLUMNS) <= set(text.splitlines()[0].split(","))
    calls = call_rows(mixed_campaign)
    assert len(calls) == len(JudgeCall.objects.filter(unit__judge=judge))
    assert sum(1 for row in calls if row["system_b"] == "") == JudgeCall.objects.filter(unit__pair__kind="reading").count() > 0


def test_it_leaves_pairwise_exports_without_the_answer_columns(campaign, llm_server, monkeypatch):
    judge = llm_judge(llm_server, monkeypatch)
    execute(campaign, judge, limit=1)
    assert not Criterion.objects.filter(criterion_set=campaign.criterion_set).exclude(response={}).exists()

    text = "".join(rows_format(label_rows(campaign), fmt="csv", columns=LABEL_COLUMNS))

    assert "answer" not in text.splitlines()[0].split(",") and "response" not in text.splitlines()[0].split(",")
