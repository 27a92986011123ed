"""Free-text answers (`"response": {"type": "text"}`, issue 39): stored as given on the single-article
page and through a labels file, exported, and in no statistic; judges are not asked them."""

import csv
import json

import pytest

import protocols
from annotate.models import Answer, Criterion
from annotate.services.claims import assignment_claim_next
from calibration.report.build import build_report
from judges.models import Judge
from judges.selectors import reading_groups
from protocols import text
from tests.helpers import csv_file, run
from tests.reading_campaigns import mixed_campaign, rubric
from tests.test_nominal_import import CELL, CLASSES, COLUMNS, one

NOTE = "Cites a 2019 survey of 1,200 households; the claim itself is never dated — « à vérifier »."
TEXT = {"id": "notes", "name": "Notes", "criteria": [{"id": "tx_note", "text": "What would you check?", "response": {"type": "text"}}]}


def test_it_reads_a_text_response_and_keeps_it_out_of_the_statistics_and_the_judges():
    assert protocols.criterion_response({"type": "text"}) == ({"type": "text"}, [])
    assert protocols.criterion_response({"type": "text", "classes": []})[1] == ["a text response has no parameter 'classes'"]
    assert text.answer_problems(NOTE) == [] and text.stored_answer(f"  {NOTE}\n") == NOTE
    assert text.answer_problems("x" * 5001) == ["Write at most 5,000 characters (5,001 given)."]
    assert text.metric_table({"type": "text"}) is None and text.AGREEMENT_STATISTICS == ()
    assert text.JUDGED is False and all(protocols.REGISTRY[n].JUDGED for n in protocols.REGISTRY if n != "text")
    asked = Criterion(key="nm", response={"type": "nominal", "classes": CLASSES})
    free = Criterion(key="tx", response={"type": "text"})
    assert reading_groups((free, asked), Judge.Mode.CATEGORY) == [((asked,), None, "nominal")]
    assert reading_groups((free,), Judge.Mode.CRITERION) == []


@pytest.mark.django_db
def test_it_saves_a_long_text_answer_on_the_single_article_page(client, catalogue, alice, bob):
    campaign = mixed_campaign(name="Notes", criterion_set=rubric("notes", TEXT), topics=1, annotators=[alice, bob])
    work = assignment_claim_next(campaign=campaign, user=alice)
    client.force_login(alice)
    page = client.get(f"/work/{work.pk}/").content.decode()
    assert 'data-protocol="text"' in page and '<textarea name="value"' in page
    response = client.post(f"/work/{work.pk}/criteria/tx_note/", {"value": NOTE, "rationale": "Worth a look."}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert Answer.objects.get(assignment=work).value == NOTE
    api = client.put(
        f"/api/assignments/{work.pk}/labels/tx_note/", data=json.dumps({"value": NOTE + " (bis)"}), content_type="application/json"
    )
    assert api.status_code == 200, api.content
    assert Answer.objects.get(assignment=work).value == NOTE + " (bis)"


@pytest.mark.django_db
def test_it_imports_exports_text_answers_and_reports_only_the_measured_criteria(tmp_path):
    assert run("create_campaign", "--name", "relations", "--labels-only").code == 0
    rows = []
    for t in range(4):
        for rater in ("ann_1", "ann_2"):
            rows.append(one(f"T{t}", "gpt-4o", "stance", rater, CLASSES[(t + (rater == "ann_2")) % 5], CELL))
            rows.append(one(f"T{t}", "gpt-4o", "note", rater, f"{NOTE} ({rater}, T{t})", "text"))
        rows.append(one(f"T{t}", "gpt-4o", "stance", "judge-mini", CLASSES[t % 5], CELL, kind="judge"))
    result = run("import_labels", "--campaign", "relations", str(csv_file(tmp_path / "in.csv", rows, COLUMNS)))
    assert result.code == 0, result.err
    assert Criterion.objects.get(key="note").response == {"type": "text"}
    assert Answer.objects.filter(criterion__key="note").count() == 8

    out = tmp_path / "out.csv"
    assert run("export_labels", "--campaign", "relations", "--out", str(out)).code == 0
    exported = [r for r in csv.DictReader(out.read_text(encoding="utf-8").splitlines()) if r["criterion"] == "note"]
    assert {r["answer"] for r in exported} == {r["answer"] for r in rows if r["criterion"] == "note"}
    assert {r["response"] for r in exported} == {"text"}

    from annotate.models import Campaign

    report = build_report(Campaign.objects.get(name="relations"), rounds=20)
    tables = report["pointwise"]["tables"]
    assert [t["response"] for t in tables] == ["nominal"] and list(tables[0]["criteria"]) == ["stance"]

    judged = [one("T0", "gpt-4o", "note", "judge-mini", "A judge's note.", "text", kind="judge")]
    refused = run("import_labels", "--campaign", "relations", str(csv_file(tmp_path / "judge.csv", judged, COLUMNS)))
    assert refused.code != 0 and "criterion 'note' is free text: judges are not asked it" in refused.err


@pytest.mark.django_db
def test_it_asks_judges_the_nominal_criteria_with_an_enum_and_never_the_text_one(catalogue, alice, llm_server, monkeypatch):
    from judges.models import JudgeRun, JudgeVerdict
    from tests.reading_campaigns import NOMINAL
    from tests.test_judge_readings import execute, llm_judge

    both = {**NOMINAL, "criteria": NOMINAL["criteria"][:1] + TEXT["criteria"]}
    campaign = mixed_campaign(name="Mixed classes", criterion_set=rubric("mixedclasses", both), topics=1, annotators=[alice])
    llm_server.one_article_policy = lambda key, message: "  sans RÉPONSE" if key == "nm_stance" else "A judge's note."
    run = execute(campaign, llm_judge(llm_server, monkeypatch))  # category mode: the text criterion beside it is left out
    assert run.status == JudgeRun.Status.FINISHED and run.errors == 0, run.message
    schemas = [body["response_format"]["json_schema"] for body in llm_server.requests]
    assert {s["name"] for s in schemas} == {"nominal"} and len(schemas) == campaign.readings.count()
    enum = schemas[0]["schema"]["properties"]["answers"]["properties"]["nm_stance"]["properties"]["answer"]["enum"]
    assert enum == ["Oui", "Partiellement", "Non", "Sans réponse", "Hors sujet"]
    assert set(JudgeVerdict.objects.values_list("criterion__key", "answer")) == {("nm_stance", "Sans réponse")}
