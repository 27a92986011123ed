"""Real model names, with dots and mixed case, as system keys and judge names on every path.

The rule (`common.names.NAME_RULE`): letters, digits, '-', '_' and '.', 1 to 100
characters, starting with a letter or digit, no '..', not ending in '.'.
"""

import csv
import io
import json
import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.html import escape

from annotate.models import Article, Campaign, System, Topic, validate_name
from annotate.services.claims import assignment_claim_next
from common.names import NAME_RULE, name_problem
from interchange import LABEL_COLUMNS
from judges.models import Judge, JudgeUnit, JudgeVerdict
from tests.helpers import RUBRIC, article, run, write_wlc

pytestmark = pytest.mark.django_db

PYTHIA, CEREBRAS = "pythia-6.9b", "cerebras-gpt-6.7B"
GOOD_NAMES = [PYTHIA, CEREBRAS, "qwen2.5-72b", "claude-3.5-sonnet", "gpt-3.5-turbo", "gpt-4.1", "gemini_2.5_pro", "a", "7", "x" * 100]
BAD_NAMES = [".hidden", "a..b", "name.", "a/b", "a b", "", "x" * 101, "-flag", "_a", "a:b", "é"]
TOPICS = {"Salt Marsh": "A salt marsh is a coastal wetland.", "Red Fox": "The red fox is a small canid."}
# An id or class a CSS selector can name as it is (no '.', which `#a.b` would read as a class).
PLAIN_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def articles_file(tmp_path, systems=("wikipedia", PYTHIA, CEREBRAS)):
    rows = []
    for title, body in TOPICS.items():
        for n, system in enumerate(systems):
            rows.append(
                {
                    "topic": title,
                    "system": system,
                    "system_name": f"Model number {n}",
                    "markdown": article(title, f"{body} Version {n} of the text, written plainly.\n\nA second paragraph {n}."),
                }
            )
    return jsonl(tmp_path / "dotted.jsonl", rows)


@pytest.fixture
def catalogue(tmp_path):
    assert run("import_articles", str(articles_file(tmp_path))).code == 0
    rubric = tmp_path / "tiny.json"
    rubric.write_text(json.dumps(RUBRIC), encoding="utf-8")
    assert run("import_criteria", str(rubric)).code == 0
    return tmp_path


@pytest.fixture
def campaign(catalogue, alice):
    result = run(
        "create_campaign", "--name", "Dotted", "--criteria", "tiny", "--systems", f"wikipedia,{PYTHIA},{CEREBRAS}", "--annotators", "alice"
    )
    assert result.code == 0, result.err
    return Campaign.objects.get(name="Dotted")


# --- the rule ------------------------------------------------------------------------


@pytest.mark.parametrize("name", GOOD_NAMES)
def test_it_accepts_real_model_names(name):
    assert name_problem(name) is None
    validate_name(name)


@pytest.mark.parametrize("name", BAD_NAMES)
def test_it_refuses_names_outside_the_rule_with_one_message(name):
    assert name_problem(name, what="system") == f"system '{name}' must be {NAME_RULE}"
    with pytest.raises(ValidationError):
        validate_name(name)
    with pytest.raises(ValidationError):
        System(key=name, name="x").full_clean()
    with pytest.raises(ValidationError):
        Judge(name=name, kind=Judge.Kind.LENGTH).full_clean()


def test_it_validates_dotted_names_on_the_models():
    System(key=PYTHIA, name="Pythia").full_clean()
    Judge(name="gpt-3.5-turbo", kind=Judge.Kind.LENGTH).full_clean()


# --- importing articles ----------------------------------------------------------------


def test_it_imports_dotted_system_keys_from_json_lines(tmp_path):
    result = run("import_articles", str(articles_file(tmp_path)))

    assert result.code == 0, result.err
    assert set(System.objects.values_list("key", flat=True)) == {"wikipedia", PYTHIA, CEREBRAS}
    assert Article.objects.filter(system__key=CEREBRAS).count() == 2
    assert run("import_articles", str(articles_file(tmp_path))).code == 0  # again: nothing new
    assert Article.objects.count() == 6


@pytest.mark.parametrize("name", [n for n in BAD_NAMES if n.strip()])
def test_it_refuses_a_bad_system_key_in_json_lines_and_writes_nothing(tmp_path, name):
    path = jsonl(tmp_path / "bad.jsonl", [{"topic": "Salt Marsh", "system": name, "markdown": "# Salt Marsh\n\nText."}])

    result = run("import_articles", str(path))

    assert result.code != 0
    assert f"{path}:1: system '{name}' must be {NAME_RULE}" in result.err
    assert (System.objects.count(), Topic.objects.count(), Article.objects.count()) == (0, 0, 0)


def test_it_imports_dotted_system_folders_from_the_wiki_live_challenge(tmp_path):
    systems = {key: {"Red_Fox": article("Red Fox", f"Foxes, as {n} tells it.")} for n, key in enumerate((PYTHIA, CEREBRAS))}
    repo = write_wlc(tmp_path, systems=systems)

    result = run("import_wlc", str(repo))

    assert result.code == 0, result.err
    assert {PYTHIA, CEREBRAS} <= set(System.objects.values_list("key", flat=True))
    assert Article.objects.get(topic__title="Red Fox", system__key=CEREBRAS).raw_markdown.startswith("# Red Fox")


@pytest.mark.parametrize("name", [".hidden", "a..b", "name.", "a b", "x" * 101, "_a"])
def test_it_refuses_a_wiki_live_challenge_folder_named_outside_the_rule(tmp_path, name):
    repo = write_wlc(tmp_path, systems={name: {"Red_Fox": article("Red Fox", "Foxes.")}, PYTHIA: {"Red_Fox": article("Red Fox", "Fox.")}})

    result = run("import_wlc", str(repo))

    assert result.code != 0
    assert f"test_data/{name}: system '{name}' must be {NAME_RULE}: skipped; rename the folder" in result.err
    assert not System.objects.filter(key=name).exists()
    assert System.objects.filter(key=PYTHIA).exists()  # the rest is imported
    assert "listed in agencies.json but has no md_data" not in result.out


# --- campaigns, pages and blindness --------------------------------------------------------


def test_it_creates_a_campaign_with_a_dotted_reference(catalogue):
    result = run(
        "create_campaign",
        "--name",
        "Dotted reference",
        "--criteria",
        "tiny",
        "--systems",
        f"{PYTHIA},{CEREBRAS}",
        "--reference",
        PYTHIA,
    )

    assert result.code == 0, result.err
    campaign = Campaign.objects.get(name="Dotted reference")
    assert campaign.reference_system.key == PYTHIA
    assert {p.article_a.system.key for p in campaign.pairs.all()} == {PYTHIA}


def test_it_serves_the_compare_and_removed_pages_of_a_dotted_system(client, rachel, catalogue):
    client.force_login(rachel)
    topic = Topic.objects.get(title="Red Fox")

    compare = client.get(reverse("topic-compare", args=[topic.pk]), {"left": PYTHIA, "right": CEREBRAS})
    removed_url = reverse("topic-removed", args=[topic.pk, CEREBRAS])
    removed = client.get(removed_url)

    assert compare.status_code == 200
    page = compare.content.decode()
    assert page.count('<section class="column">') == 2
    columns = page[page.index('<section class="column">') :]
    assert columns.index("Model number 1") < columns.index("Model number 2")  # left: PYTHIA, as asked
    assert f'href="{removed_url}"' in page and removed_url.endswith(f"/removed/{CEREBRAS}/")
    assert removed.status_code == 200 and "Model number 2" in removed.content.decode()
    assert client.get(reverse("topic-removed", args=[topic.pk, "pythia-6.9"])).status_code == 404


def test_it_keeps_the_annotation_page_blind_to_dotted_system_keys(client, alice, catalogue):
    result = run(
        "create_campaign",
        "--name",
        "Blind",
        "--criteria",
        "tiny",
        "--systems",
        f"{PYTHIA},{CEREBRAS}",
        "--pairs",
        "all",
        "--annotators",
        "alice",
    )
    assert result.code == 0, result.err
    campaign = Campaign.objects.get(name="Blind")
    assignment = assignment_claim_next(campaign=campaign, user=alice)
    assert {assignment.pair.article_a.system.key, assignment.pair.article_b.system.key} == {PYTHIA, CEREBRAS}
    client.force_login(alice)

    responses = [
        client.get(reverse("assignment", args=[assignment.pk])),
        client.get(reverse("api:assignment-detail", args=[assignment.pk])),
        client.get(reverse("home")),
    ]

    for response in responses:
        assert response.status_code == 200
        text = response.content.decode()
        for leak in (PYTHIA, CEREBRAS, "pythia", "cerebras", "6.9b", "6.7B", "Model number"):
            assert leak not in text, leak


# --- judges -----------------------------------------------------------------------------


def test_it_adds_a_dotted_judge_with_the_command():
    result = run("add_judge", "gpt-3.5-turbo", "--kind", "length")

    assert result.code == 0, result.err
    assert "Judge 'gpt-3.5-turbo' added" in result.out
    assert Judge.objects.get().name == "gpt-3.5-turbo"


@pytest.mark.parametrize("name", [n for n in BAD_NAMES if n and not n.startswith("-")])  # "-flag" reads as an option
def test_it_refuses_a_bad_judge_name_with_the_command(name):
    result = run("add_judge", name, "--kind", "length")

    assert result.code == 1
    assert f"The judge name '{name}' must be {NAME_RULE}." in result.err
    assert not Judge.objects.exists()


def judge_form(name: str) -> dict:
    return {"name": name, "kind": "length", "input_price": "0", "output_price": "0", "temperature": "0", "max_tokens": "100"}


def test_it_adds_a_dotted_judge_on_the_judges_page(client, rachel):
    client.force_login(rachel)

    response = client.post(reverse("judge-list"), judge_form("gpt-3.5-turbo"), follow=True)

    page = response.content.decode()
    assert response.status_code == 200 and "Judge &#x27;gpt-3.5-turbo&#x27; added." in page
    assert "<td>gpt-3.5-turbo</td>" in page
    assert Judge.objects.get().name == "gpt-3.5-turbo"


@pytest.mark.parametrize("name", [n for n in BAD_NAMES if n])
def test_it_refuses_a_bad_judge_name_on_the_judges_page(client, rachel, name):
    client.force_login(rachel)

    response = client.post(reverse("judge-list"), judge_form(name))

    assert response.status_code == 422
    page = response.content.decode()
    if len(name) > 100:
        assert "Ensure this value has at most 100 characters (it has 101)." in page
    else:
        assert escape(f"The judge name '{name}' must be {NAME_RULE}.") in page
    assert not Judge.objects.exists()


def test_it_refuses_an_empty_judge_name_on_the_judges_page(client, rachel):
    client.force_login(rachel)
    response = client.post(reverse("judge-list"), judge_form(""))
    assert response.status_code == 422 and not Judge.objects.exists()


def test_it_runs_a_dotted_judge_on_dotted_systems(campaign):
    assert run("add_judge", "longer-v1.0", "--kind", "length").code == 0

    result = run("run_judges", "--campaign", "Dotted", "--judge", "longer-v1.0")

    assert result.code == 0, result.err
    assert result.out.startswith("longer-v1.0: finished")
    assert JudgeVerdict.objects.filter(unit__judge__name="longer-v1.0").count() == campaign.pairs.count() * 3


def wlc_results(campaign, topic: str) -> dict:
    details: dict[str, list] = {}
    for index, criterion in enumerate(campaign.criterion_set.criteria.select_related("category").order_by("order")):
        details.setdefault(criterion.category.name, []).append(
            {
                "criterion_id": criterion.key,
                "criterion_index": index,
                "criterion_text": criterion.text,
                "category": criterion.category.name,
                "winner": "gen",
                "winner_code": 2,
                "reason": "Clearer.",
            }
        )
    return {"topic": topic, "mode": "winrate", "details": details}


def test_it_imports_wiki_live_challenge_results_for_a_dotted_judge_and_system(campaign, tmp_path):
    path = tmp_path / "red_fox.json"
    path.write_text(json.dumps(wlc_results(campaign, "Red Fox")), encoding="utf-8")

    result = run("import_wlc_results", "--campaign", "Dotted", "--judge", "gpt-4.1", "--system", PYTHIA, str(path))

    assert result.code == 0, result.err
    assert "judge 'gpt-4.1' (created)" in result.out
    unit = JudgeUnit.objects.filter(judge__name="gpt-4.1").select_related("pair__article_b__system").first()
    assert unit.pair.article_b.system.key == PYTHIA


@pytest.mark.parametrize("name", [".hidden", "a..b", "name.", "a/b", "a b", "x" * 101])
def test_it_refuses_wiki_live_challenge_results_for_a_bad_judge_name(campaign, tmp_path, name):
    path = tmp_path / "red_fox.json"
    path.write_text(json.dumps(wlc_results(campaign, "Red Fox")), encoding="utf-8")

    result = run("import_wlc_results", "--campaign", "Dotted", "--judge", name, "--system", PYTHIA, str(path))

    assert result.code == 1
    assert f"The judge name '{name}' must be {NAME_RULE}." in result.err
    assert not Judge.objects.exists() and not JudgeUnit.objects.exists()


# --- labels files and the report -----------------------------------------------------------


COLUMNS = LABEL_COLUMNS + ("model", "error")
CRITERIA = ("ww_cc_1", "ww_wtw_1", "n_1")


def labels_rows(judges=("gpt-4.1", "claude-3.5-sonnet")) -> list[dict]:
    rows = []
    for topic in TOPICS:
        for system in (PYTHIA, CEREBRAS):
            for criterion in CRITERIA:
                common = {
                    "campaign": "Dotted",
                    "topic": topic,
                    "criterion": criterion,
                    "left_system": "wikipedia",
                    "right_system": system,
                    "started_at": "2025-03-01T09:00:00Z",
                    "saved_at": "2025-03-01T09:05:00Z",
                    "model": "",
                    "error": "",
                }
                for n, rater in enumerate(("ext1", "ext2")):
                    winner = system if (n + len(criterion)) % 2 else "wikipedia"
                    rows.append({**common, "rater_kind": "human", "rater": rater, "winner_system": winner, "rationale": "Reads better."})
                for judge in judges:
                    winner = system if judge == "gpt-4.1" else "wikipedia"
                    rows.append(
                        {**common, "rater_kind": "judge", "rater": judge, "winner_system": winner, "rationale": "Because.", "model": judge}
                    )
    return rows


def write_labels(path, rows):
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_it_imports_labels_of_dotted_judges_on_dotted_systems_and_reports_them_intact(campaign, tmp_path):
    path = write_labels(tmp_path / "labels.csv", labels_rows())

    result = run("import_labels", "--campaign", "Dotted", str(path))

    assert result.code == 0, result.err
    assert set(Judge.objects.values_list("name", flat=True)) == {"gpt-4.1", "claude-3.5-sonnet"}
    assert JudgeVerdict.objects.filter(unit__judge__name="gpt-4.1", unit__pair__article_b__system__key=CEREBRAS).count() == 6

    out = {}
    for fmt in ("json", "csv", "md", "html"):
        target = tmp_path / f"report.{fmt}"
        done = run("calibration_report", "--campaign", "Dotted", "--format", fmt, "--out", str(target), "--rounds", "20")
        assert done.code == 0, done.err
        out[fmt] = target.read_text(encoding="utf-8")
    report = json.loads(out["json"])
    assert {j["name"] for j in report["judges"]} == {"gpt-4.1", "claude-3.5-sonnet"}
    assert {"gpt-4.1", "claude-3.5-sonnet", "humans"} == set(report["bradley_terry"])
    assert {PYTHIA, CEREBRAS, "wikipedia"} == {row["system"] for row in report["bradley_terry"]["gpt-4.1"]}
    rows = list(csv.DictReader(io.StringIO(out["csv"])))
    assert {"gpt-4.1", "claude-3.5-sonnet", "humans"} <= {r["rater"] for r in rows}
    for fmt in ("md", "html"):
        for name in ("gpt-4.1", "claude-3.5-sonnet", PYTHIA, CEREBRAS):
            assert name in out[fmt], (fmt, name)
    assert all(PLAIN_ID.fullmatch(i) for i in re.findall(r'\bid="([^"]*)"', out["html"]))


def test_it_shows_dotted_names_on_the_dashboard_and_filters_by_a_dotted_judge(client, rachel, campaign, tmp_path):
    assert run("import_labels", "--campaign", "Dotted", str(write_labels(tmp_path / "labels.csv", labels_rows()))).code == 0
    client.force_login(rachel)
    url = reverse("calibration-dashboard", args=[campaign.pk])

    page = client.get(url).content.decode()
    filtered = client.get(url, {"criterion": "ww_cc_1", "judge": "gpt-4.1"}, headers={"HX-Request": "true"})
    runs = client.get(reverse("judge-campaign", args=[campaign.pk])).content.decode()

    assert '<option value="gpt-4.1">gpt-4.1</option>' in page and CEREBRAS in page
    assert all(PLAIN_ID.fullmatch(i) for i in re.findall(r'\bid="([^"]*)"', page))
    assert filtered.status_code == 200 and "(gpt-4.1 only)" in filtered.content.decode()
    assert "<td>gpt-4.1</td>" in runs
    assert (
        client.get(reverse("calibration-download", args=[campaign.pk, "csv"]))["Content-Disposition"]
        == 'attachment; filename="calibration-Dotted.csv"'
    )


@pytest.mark.parametrize("name", [".hidden", "a..b", "name.", "a/b", "a b", "x" * 101])
def test_it_refuses_labels_of_a_bad_judge_name_and_imports_nothing(campaign, tmp_path, name):
    path = write_labels(tmp_path / "labels.csv", labels_rows(judges=("gpt-4.1", name)))

    result = run("import_labels", "--campaign", "Dotted", str(path))

    assert result.code == 1
    assert f"judge name '{name}' must be {NAME_RULE}" in result.err
    assert not Judge.objects.exists() and not JudgeUnit.objects.exists()
    assert not campaign.pairs.filter(assignments__isnull=False).exists()
