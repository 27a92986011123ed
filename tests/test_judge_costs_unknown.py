"""A judge saved without prices has unknown costs, shown as such on the judges' pages and in their
commands and handed to the calibration report as None, never as $0; offline baselines cost $0."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from calibration.selectors import judge_summaries
from interchange.export import call_rows
from judges.imports import imported_judge_create
from judges.models import Judge, JudgeCall, JudgeRun, JudgeUnit
from judges.selectors import campaign_judge_summary, campaign_runs, unanswered_calls
from judges.services import judge_create, judge_run_create, judge_run_execute
from tests.helpers import run

pytestmark = pytest.mark.django_db

KEY_ENV = "FAKE_JUDGE_API_KEY"


@pytest.fixture
def unpriced(llm_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-unknown-1b2c")
    return judge_create(name="no-prices", model="fake-judge", base_url=llm_server.base_url, api_key_env=KEY_ENV)[0]


def test_it_saves_a_judge_without_prices_as_unknown_not_zero(llm_server):
    result = run("add_judge", "no-prices", "--model", "fake-judge", "--base-url", llm_server.base_url, "--api-key-env", KEY_ENV)

    assert result.code == 0 and "no prices, so its costs are unknown" in result.out
    judge = Judge.objects.get()
    assert (judge.input_price, judge.output_price, judge.costs_known) == (None, None, False)
    half = run("add_judge", "half", "--model", "m", "--base-url", llm_server.base_url, "--api-key-env", KEY_ENV, "--output-price", "3")
    assert half.code == 1 and "Give both the input and the output price" in half.err


def test_it_records_a_run_of_a_judge_without_prices_at_an_unknown_cost(campaign, unpriced, llm_server):
    result = run("run_judges", "--campaign", "Pilot", "--judge", "no-prices", "--limit", "1")

    done = JudgeRun.objects.get()
    assert result.code == 0 and done.status == JudgeRun.Status.FINISHED and done.calls == 3
    assert done.cost_usd is None and done.prompt_tokens > 0  # the tokens are known, the dollars are not
    assert set(JudgeCall.objects.values_list("cost_usd", flat=True)) == {None}
    assert "cost unknown (the judge has no prices)" in result.out and "$0.0000" not in result.err + result.out
    assert all(row["cost_usd"] is None for row in call_rows(campaign))


def test_it_shows_cost_unknown_on_the_judges_pages(client, rachel, campaign, unpriced):
    judge_run_execute(run=judge_run_create(campaign=campaign, judge=unpriced, limit=1))
    killed = judge_run_create(campaign=campaign, judge=unpriced)
    JudgeRun.objects.filter(pk=killed.pk).update(status=JudgeRun.Status.STOPPED)
    unit = JudgeUnit.objects.filter(judge=unpriced, status=JudgeUnit.Status.PENDING).first() or JudgeUnit.objects.create(
        judge=unpriced, pair=campaign.pairs.last(), category=campaign.criterion_set.categories.first(), a_first=False, order="ba"
    )
    JudgeCall.objects.create(unit=unit, run=killed, attempt=1, status=JudgeCall.Status.SENT, reserved_usd=None, request_hash="h")
    client.force_login(rachel)

    listing = client.get(reverse("judge-list")).content.decode()
    page = client.get(reverse("judge-campaign", args=[campaign.pk])).content.decode()

    assert listing.count('<span class="muted">unknown</span>') == 2  # input and output prices
    assert page.count("cost unknown") >= 3  # both runs' cost, and the judge's recorded cost
    assert "+ a cost unknown possibly billed (1 call sent, no answer recorded)" in page
    assert '<td class="num">cost unknown</td><td class="num">cost unknown (1 call)</td>' in page  # recorded, possibly billed
    assert "0.00000000" not in page
    runs = campaign_runs(campaign=campaign)
    [row] = campaign_judge_summary(campaign=campaign, runs=runs)
    assert (row["recorded_usd"], row["possibly_billed_usd"], row["possibly_billed"]) == (None, None, 1)
    assert unanswered_calls(judge=unpriced, campaign=campaign) == (1, None)


def test_it_refuses_a_budget_it_cannot_keep(campaign, unpriced):
    with pytest.raises(ValidationError, match="has no prices, so what its calls cost is unknown and no budget can be kept"):
        judge_run_create(campaign=campaign, judge=unpriced, budget_usd=1)

    result = run("run_judges", "--campaign", "Pilot", "--judge", "no-prices", "--budget-usd", "1")
    assert result.code == 1 and "no budget can be kept" in result.err


def test_it_estimates_an_unknown_cost_in_a_dry_run(campaign, unpriced):
    result = run("run_judges", "--campaign", "Pilot", "--judge", "no-prices", "--dry-run")

    assert result.code == 0
    assert "cost unknown synchronous, cost unknown with --batch (the judge has no prices)" in result.out
    assert "estimated total: cost unknown synchronous" in result.out


def test_it_hands_the_calibration_report_none_for_unknown_costs_and_zero_for_baselines(campaign, unpriced, llm_server, monkeypatch):
    priced = judge_create(
        name="priced", model="fake-judge-2", base_url=llm_server.base_url, api_key_env=KEY_ENV, input_price="2", output_price="8"
    )[0]
    longer = judge_create(name="longer", kind="length")[0]
    for judge in (unpriced, priced, longer):
        assert judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, limit=1)).status == JudgeRun.Status.FINISHED
    imported = imported_judge_create(name="elsewhere", model="gpt-x")
    JudgeUnit.objects.create(
        judge=imported, pair=campaign.pairs.first(), category=campaign.criterion_set.categories.first(), a_first=True, order="ab"
    )

    costs = {s.name: s.cost_usd for s in judge_summaries(campaign=campaign)}

    assert costs["no-prices"] is None and costs["elsewhere"] is None  # unknown, never 0
    assert costs["longer"] == 0.0  # offline: free, and known to be
    assert costs["priced"] > 0


def test_it_records_a_batch_run_of_a_judge_without_prices_at_an_unknown_cost(campaign, unpriced, llm_server, settings):
    settings.JUDGE_BATCH_POLL_SECONDS = 0.01

    done = judge_run_execute(run=judge_run_create(campaign=campaign, judge=unpriced, limit=1, batch=True))

    assert done.status == JudgeRun.Status.FINISHED and done.units_done == 3, done.message
    assert done.cost_usd is None and len(llm_server.batch_requests) == 3
    assert set(JudgeCall.objects.values_list("cost_usd", flat=True)) == {None}


@pytest.mark.django_db(transaction=True)
def test_it_makes_the_zero_prices_of_judges_saved_before_unknown():
    """Judges saved before prices could be left empty got $0 for none: the migration makes them unknown."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before, after = ("judges", "0005_judge_run_worker_heartbeat_interrupted"), ("judges", "0006_unknown_prices_and_costs")
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    try:
        old = executor.loader.project_state([before]).apps.get_model("judges", "Judge")
        old.objects.create(name="zero", kind="llm", model="m", input_price=0, output_price=0)
        old.objects.create(name="priced", kind="llm", model="m", input_price=1, output_price=2)
        old.objects.create(name="free-local", kind="llm", model="m", input_price=0, output_price=3)
        old.objects.create(name="elsewhere", kind="imported", model="m")
        old.objects.create(name="longer", kind="length")
        executor = MigrationExecutor(connection)
        executor.migrate([after])
        new = executor.loader.project_state([after]).apps.get_model("judges", "Judge")
        prices = {j.name: (j.input_price, j.output_price) for j in new.objects.all()}
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())

    assert prices["zero"] == (None, None) and prices["elsewhere"] == (None, None)
    assert prices["priced"] == (1, 2) and prices["free-local"] == (0, 3) and prices["longer"] == (0, 0)
