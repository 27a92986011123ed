"""Imported judges belong to the campaign they were imported into unless named as a global judge on
purpose (`--judge-scope global`): two studies' "close-judge" are two judges (issue 39, item 13)."""

import pytest

from annotate.models import Campaign
from calibration.report.build import build_report
from judges.models import Judge, JudgeUnit
from judges.services import judge_create
from tests.helpers import run
from tests.test_report_pointwise import synthetic_rows, write_csv

pytestmark = pytest.mark.django_db


def study(tmp_path, name: str, *args: str, seed: int = 7):
    """A labels-only campaign `name` and the result of importing its answers (a close judge and a coin judge among them)."""
    if not Campaign.objects.filter(name=name).exists():
        assert run("create_campaign", "--name", name, "--labels-only").code == 0
    rows = [dict(r, campaign="") for r in synthetic_rows(topics=3, seed=seed)]
    return run("import_labels", "--campaign", name, str(write_csv(tmp_path / f"{name}.csv", rows)), *args)


def judge_of(campaign: str, name: str) -> set[int]:
    units = JudgeUnit.objects.filter(pair__campaign__name=campaign, pair__kind="reading", judge__name=name)
    return set(units.values_list("judge_id", flat=True))


def test_it_gives_each_campaign_its_own_judge_of_a_shared_name(tmp_path):
    first, second = study(tmp_path, "study-a"), study(tmp_path, "study-b", seed=8)

    assert first.code == 0 and second.code == 0, first.err + second.err
    judges = Judge.objects.filter(name="close-judge").order_by("campaign__name")
    assert [j.campaign.name for j in judges] == ["study-a", "study-b"]
    assert all(j.kind == Judge.Kind.IMPORTED for j in judges)
    assert judge_of("study-a", "close-judge") == {judges[0].pk} and judge_of("study-b", "close-judge") == {judges[1].pk}
    assert "judges created: 2" in second.out  # before: 0, study-b's answers joined study-a's judges
    again = study(tmp_path, "study-a")
    assert again.code == 0 and "judges created: 0" in again.out and Judge.objects.filter(name="close-judge").count() == 2
    report = build_report(Campaign.objects.get(name="study-b"), rounds=0)
    assert {"close-judge", "coin-judge"} <= set(report["pointwise"]["tables"][0]["judges"])


def test_it_shares_one_global_judge_when_named_on_purpose(tmp_path):
    first = study(tmp_path, "study-a", "--judge-scope", "global")
    second = study(tmp_path, "study-b", "--judge-scope", "global", seed=8)

    assert first.code == 0 and second.code == 0, first.err + second.err
    judge = Judge.objects.get(name="close-judge")
    assert judge.campaign is None
    assert judge_of("study-a", "close-judge") == judge_of("study-b", "close-judge") == {judge.pk}


def test_it_refuses_a_global_name_where_the_campaign_has_its_own_judge_of_it(tmp_path):
    assert study(tmp_path, "study-a").code == 0
    units = JudgeUnit.objects.count()

    result = study(tmp_path, "study-a", "--judge-scope", "global")

    assert result.code == 1
    assert "campaign 'study-a' has its own judge named 'close-judge', 'coin-judge'" in result.err and "nothing was imported" in result.err
    assert JudgeUnit.objects.count() == units and not Judge.objects.filter(campaign__isnull=True).exists()


def test_it_keeps_a_configured_judge_of_that_name_global(tmp_path):
    """A judge configured on this server (a baseline, an LLM) is one judge by its name: an import never shadows it."""
    judge_create(name="close-judge", kind="length")

    result = study(tmp_path, "study-a")

    assert result.code == 0, result.err
    assert Judge.objects.filter(name="close-judge").count() == 1


def test_it_rejects_an_unknown_scope(tmp_path):
    result = study(tmp_path, "study-a", "--judge-scope", "everywhere")

    assert result.code != 0 and "invalid choice: 'everywhere'" in result.err


def test_it_names_the_campaign_of_a_scoped_judge_on_the_judges_page(tmp_path, client, django_user_model):
    assert study(tmp_path, "study-a").code == 0 and study(tmp_path, "study-b", seed=8).code == 0
    client.force_login(django_user_model.objects.create_user("staff", is_staff=True))

    page = client.get("/judges/")

    assert page.status_code == 200
    text = page.content.decode()
    assert 'close-judge <small class="muted">of study-a only</small>' in text and "of study-b only" in text


def test_it_does_not_reuse_an_earlier_global_import_of_that_name_by_default(tmp_path):
    """A judge imported globally (or before judges had campaigns) is another study's: a default import makes its own."""
    assert study(tmp_path, "study-a", "--judge-scope", "global").code == 0
    shared = Judge.objects.get(name="close-judge", campaign__isnull=True)

    result = study(tmp_path, "study-b", seed=8)

    assert result.code == 0, result.err
    own = Judge.objects.get(name="close-judge", campaign__name="study-b")
    assert judge_of("study-b", "close-judge") == {own.pk} and judge_of("study-a", "close-judge") == {shared.pk}
    again = study(tmp_path, "study-a")  # study-a's global judge already works there: it stays study-a's judge
    assert again.code == 0 and "judges created: 0" in again.out
