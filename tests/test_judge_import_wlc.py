"""import_wlc_results: verdict files of the Wiki Live Challenge evaluation script as an imported judge."""

import json

import pytest

from annotate.models import Pair
from judges.models import Judge, JudgeUnit, JudgeVerdict
from judges.services import judge_create
from tests.helpers import run

pytestmark = pytest.mark.django_db

WINNER_CODES = {"gt": 1, "gen": 2, "tie": 0}


def results(campaign, topic: str, winners: dict[str, str] | None = None, errors: tuple[str, ...] = (), extra: list | None = None) -> dict:
    """A winrate file: every criterion of the campaign, "gen" unless told otherwise."""
    winners = winners or {}
    details: dict[str, list] = {}
    for index, criterion in enumerate(campaign.criterion_set.criteria.select_related("category").order_by("order")):
        winner = "tie" if criterion.key in errors else winners.get(criterion.key, "gen")
        reason = f"Error: 429 Too Many Requests for {criterion.key}" if criterion.key in errors else f"Because of {criterion.key}."
        details.setdefault(criterion.category.name, []).append(
            {
                "criterion_id": criterion.key,
                "criterion_index": index,
                "criterion_text": criterion.text,
                "category": criterion.category.name,
                "winner": winner,
                "winner_code": WINNER_CODES[winner],
                "reason": reason,
            }
        )
    for entry in extra or []:
        details.setdefault("Extra", []).append(entry)
    return {"topic": topic, "mode": "winrate", "allow_tie": True, "aggregate": {"gen_win_rate": 0.5}, "details": details}


def write(path, data):
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_it_imports_a_results_file_with_gt_as_article_1(campaign, tmp_path):
    path = write(tmp_path / "marrow.json", results(campaign, "Marrow River", winners={"ww_cc_1": "gt", "n_1": "gt"}))

    result = run("import_wlc_results", "--campaign", "Pilot", "--judge", "wlc-gpt", "--system", "atlas_agent", path)

    assert result.code == 0, result.err
    assert "judge 'wlc-gpt' (created): 1 file(s), 39 verdicts, 0 API errors imported as errors (not ties); units: 3 new" in result.out
    judge = Judge.objects.get(name="wlc-gpt")
    assert judge.kind == "imported"
    units = JudgeUnit.objects.filter(judge=judge)
    pair = Pair.objects.get(campaign=campaign, topic__title="Marrow River", article_b__system__key="atlas_agent")
    assert {(u.pair_id, u.a_first, u.status) for u in units} == {(pair.pk, True, "done")}
    verdicts = {v.criterion.key: v for v in JudgeVerdict.objects.filter(unit__judge=judge).select_related("criterion")}
    assert len(verdicts) == 39
    assert (verdicts["ww_cc_1"].winner, verdicts["n_1"].winner, verdicts["ww_cc_2"].winner) == ("a", "a", "b")
    assert verdicts["ww_cc_2"].rationale == "Because of ww_cc_2."

    again = run("import_wlc_results", "--campaign", "Pilot", "--judge", "wlc-gpt", "--system", "atlas_agent", path)
    assert again.code == 0 and "units: 0 new, 0 updated, 3 unchanged" in again.out


def test_it_imports_api_failures_as_errors_never_as_ties(campaign, tmp_path):
    path = write(tmp_path / "marrow.json", results(campaign, "Marrow River", winners={"bc_1": "tie"}, errors=("ww_cc_2", "ww_cc_3")))

    result = run("import_wlc_results", "--campaign", "Pilot", "--judge", "wlc-gpt", "--system", "atlas_agent", path)

    assert result.code == 0, result.err
    assert f"{path}: 2 verdict(s) were API errors in the source ('Error: …'): imported as errors, not ties" in result.out
    assert "37 verdicts, 2 API errors" in result.out
    assert "1 tie(s) imported although the campaign does not allow ties" in result.out
    failed = JudgeUnit.objects.get(status="error")
    assert failed.category.key == "well_written"
    assert "ww_cc_2: Error: 429 Too Many Requests" in failed.error and "ww_cc_3: Error:" in failed.error
    keys = set(failed.verdicts.values_list("criterion__key", flat=True))
    assert "ww_cc_2" not in keys and "ww_cc_3" not in keys and len(keys) == 19
    assert not JudgeVerdict.objects.filter(criterion__key__in=["ww_cc_2", "ww_cc_3"]).exists()
    assert JudgeVerdict.objects.get(criterion__key="bc_1").winner == "tie"


def test_it_reports_unknown_topics_and_criteria_by_file(campaign, tmp_path):
    odd = {
        "criterion_id": "zz_9",
        "criterion_index": 99,
        "criterion_text": "?",
        "category": "Extra",
        "winner": "gen",
        "winner_code": 2,
        "reason": "?",
    }
    good = write(tmp_path / "good.json", results(campaign, "Marrow River", extra=[odd]))
    unknown = write(tmp_path / "unknown.json", results(campaign, "Atlantis"))
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")

    result = run("import_wlc_results", "--campaign", "Pilot", "--judge", "wlc-gpt", "--system", "atlas_agent", good, unknown, str(broken))

    assert result.code == 2
    assert f"{good}: unknown criterion 'zz_9'" in result.err
    assert f"{unknown}: unknown topic 'Atlantis'" in result.err
    assert f"{broken}: cannot be read as JSON" in result.err
    assert "3 problem(s) (listed above); everything else was imported" in result.err
    assert JudgeVerdict.objects.count() == 39


def test_it_creates_a_missing_pair_with_the_reference_as_article_a(campaign, tmp_path):
    Pair.objects.filter(campaign=campaign, topic__title="Marrow River", article_b__system__key="atlas_agent").delete()
    path = write(tmp_path / "marrow.json", results(campaign, "Marrow River"))

    result = run("import_wlc_results", "--campaign", "Pilot", "--judge", "wlc-gpt", "--system", "atlas_agent", path)

    assert result.code == 0, result.err
    assert "pairs created: 1" in result.out
    pair = Pair.objects.get(campaign=campaign, topic__title="Marrow River", article_b__system__key="atlas_agent")
    assert pair.article_a.system.key == "wikipedia" and pair.order > 0
    assert set(JudgeVerdict.objects.values_list("winner", flat=True)) == {"b"}


def test_it_refuses_to_import_into_a_judge_that_runs(campaign, tmp_path):
    judge_create(name="longer", kind="length")
    path = write(tmp_path / "marrow.json", results(campaign, "Marrow River"))

    result = run("import_wlc_results", "--campaign", "Pilot", "--judge", "longer", "--system", "atlas_agent", path)

    assert result.code == 1 and "import into a new name" in result.err
    assert not JudgeUnit.objects.exists()


def test_it_imports_one_judge_name_into_two_campaigns_as_two_judges_unless_global(campaign, catalogue, alice, tmp_path):
    """Issue 39, item 13: --judge names the campaign's own judge; --judge-scope global names the global one on purpose."""
    from annotate.services.campaigns import campaign_create

    other = campaign_create(name="Pilot 2", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], overlap=1, annotators=[alice])
    path = write(tmp_path / "marrow.json", results(campaign, "Marrow River"))

    def load(name, *args):
        return run("import_wlc_results", "--campaign", name, "--judge", "wlc-gpt", "--system", "atlas_agent", path, *args)

    assert load("Pilot").code == 0 and load("Pilot 2").code == 0
    assert sorted(Judge.objects.filter(name="wlc-gpt").values_list("campaign__name", flat=True)) == ["Pilot", "Pilot 2"]
    assert load("Pilot 2").code == 0 and Judge.objects.filter(name="wlc-gpt").count() == 2  # again: its own judge, unchanged
    assert {u.pair.campaign_id for u in JudgeUnit.objects.filter(judge__campaign=other)} == {other.pk}

    assert load("Pilot 2", "--judge-scope", "global").code == 1  # Pilot 2 has a judge of its own by that name
    shared = [run("import_wlc_results", "--campaign", c, "--judge", "wlc-shared", "--system", "atlas_agent", path, "--judge-scope", "global")
              for c in ("Pilot", "Pilot 2")]  # fmt: skip
    assert [r.code for r in shared] == [0, 0]
    judge = Judge.objects.get(name="wlc-shared")
    assert judge.campaign is None
    assert {u.pair.campaign_id for u in JudgeUnit.objects.filter(judge=judge)} == {campaign.pk, other.pk}
