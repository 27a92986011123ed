"""Items of k articles (issue 38): a campaign whose rubric ranks k articles holds groups of k articles
of one topic, hands them out in an order drawn per annotator, takes each ranking by position and
stores it by slot, and refuses what does not fit."""

import io
import random
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import call_command

from annotate.models import Assignment, Campaign, Item, ItemArticle, Label
from annotate.reading_selectors import reading_page
from annotate.services.answers import answer_save
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import Incomplete, assignment_missing, assignment_submit
from annotate.services.readings import groups_of
from protocols import order as orders
from tests.helpers import run

RUBRIC = Path(__file__).resolve().parent.parent / "fixtures" / "ranking_three.json"


def ranking_campaign(systems="wikipedia,atlas_agent,quill_researcher", name="Ranked") -> Campaign:
    call_command("load_demo", stdout=io.StringIO())
    call_command("import_criteria", str(RUBRIC), stdout=io.StringIO())
    call_command("create_campaign", "--name", name, "--criteria", "ranking_three", "--systems", systems,
                 "--benchmark", "demo", "--overlap", "2", "--annotators", "annotator1,annotator2", stdout=io.StringIO())  # fmt: skip
    return Campaign.objects.get(name=name)


@pytest.mark.django_db
def test_it_makes_a_group_of_the_three_systems_per_topic_and_no_reading():
    campaign = ranking_campaign()

    groups = Item.objects.filter(campaign=campaign, kind=Item.Kind.GROUP)
    assert groups.count() == 4
    assert not Item.objects.filter(campaign=campaign, kind=Item.Kind.READING).exists()
    for group in groups:
        slots = list(ItemArticle.objects.filter(item=group).order_by("slot").select_related("article"))
        assert [s.slot for s in slots] == [0, 1, 2]
        assert {s.article.system.key for s in slots} == {"wikipedia", "atlas_agent", "quill_researcher"}
        assert {s.article.topic_id for s in slots} == {group.topic_id}
        assert group.article_a_id == slots[0].article_id and group.article_b_id is None


@pytest.mark.django_db
def test_it_refuses_a_campaign_whose_topics_hold_fewer_articles_than_its_rankings_ask():
    with pytest.raises(Exception, match="ranks 3 articles at a time, but no topic of this campaign has 3 articles"):
        ranking_campaign(systems="wikipedia,atlas_agent")
    assert not Campaign.objects.filter(name="Ranked").exists()  # nothing half-made


def test_it_cuts_a_topic_into_groups_that_hold_every_article():
    draw = random.Random(7)
    for n in range(1, 14):
        for k in range(3, 7):
            groups = groups_of(list(range(n)), k, draw)
            if n < k:
                assert groups == []
                continue
            assert len(groups) == -(-n // k)
            assert all(len(g) == k == len(set(g)) for g in groups)
            assert set().union(*map(set, groups)) == set(range(n))


@pytest.mark.django_db
def test_it_hands_out_a_group_in_a_drawn_order_and_stores_a_ranking_by_slot():
    campaign = ranking_campaign()
    annotator = get_user_model().objects.get(username="annotator1")

    work = assignment_claim_next(campaign=campaign, user=annotator)

    assert work.pair.kind == Item.Kind.GROUP
    assert orders.problem(work.order, 3) is None and work.a_first == orders.a_first(work.order)
    page = reading_page(assignment=work)
    assert [c["position"] for c in page["columns"]] == [1, 2, 3]
    held = {s.slot: s.article for s in ItemArticle.objects.filter(item=work.pair).select_related("article")}
    for column, slot in zip(page["columns"], work.order, strict=True):
        # The column at each position is the article of the slot drawn there, and it names no system.
        assert held[orders.SLOTS.index(slot)].html.replace(' id="sec-', f' id="a{column["position"]}-sec-')[:200] in column["html"]
    rows = {row.criterion.key: row for block in page["categories"] for row in block.rows}
    assert set(rows) == {"rk_clear", "rk_tight", "rk_broad"} and list(rows["rk_clear"].numbers) == [1, 2, 3]
    assert rows["rk_tight"].ties and not rows["rk_clear"].ties

    criteria = {c.key: c for c in campaign.criterion_set.criteria.all()}
    answer_save(assignment=work, criterion=criteria["rk_clear"], user=annotator, value="2>1>3", rationale="The second reads best.")
    stored = Label.every.get(assignment=work, criterion=criteria["rk_clear"]).value
    assert stored == ">".join(work.order[p - 1] for p in (2, 1, 3))
    again = {row.criterion.key: row for block in reading_page(assignment=work)["categories"] for row in block.rows}
    assert again["rk_clear"].value == "2>1>3"  # shown back by position

    with pytest.raises(ValidationError):
        answer_save(assignment=work, criterion=criteria["rk_clear"], user=annotator, value="2=1>3", rationale="x")  # no ties here
    with pytest.raises(ValidationError, match="a group of articles: give `value`"):
        answer_save(assignment=work, criterion=criteria["rk_clear"], user=annotator, position="1")
    assert Label.every.get(assignment=work, criterion=criteria["rk_clear"]).value == stored

    with pytest.raises(Incomplete):
        assignment_submit(assignment=work, user=annotator)
    assert list(dict.fromkeys(line.split(":")[0] for line in assignment_missing(assignment=work))) == ["rk_tight", "rk_broad"]
    answer_save(assignment=work, criterion=criteria["rk_tight"], user=annotator, value="1=3>2", rationale="Two are as tight.")
    answer_save(assignment=work, criterion=criteria["rk_broad"], user=annotator, value="3>2>1", rationale="The third covers most.")
    assignment_submit(assignment=work, user=annotator)
    assert Assignment.every.get(pk=work.pk).status == Assignment.Status.SUBMITTED


@pytest.mark.django_db
def test_it_asks_a_judge_each_group_in_an_order_drawn_per_call_and_stores_its_ranking_by_slot(llm_server, monkeypatch):
    from judges.models import JudgeUnit, JudgeVerdict
    from judges.services import judge_create, judge_run_create, judge_run_execute

    campaign = ranking_campaign()
    llm_server.one_article_policy = lambda key, message: [[1], [2], [3]]  # the article shown first is best
    monkeypatch.setenv("FAKE_JUDGE_API_KEY", "sk-test-groups-7a1c")
    judge, _ = judge_create(name="fake.gpt-4.1", model="fake-judge", base_url=llm_server.base_url, api_key_env="FAKE_JUDGE_API_KEY")

    run = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, concurrency=2))

    # One call per group and category (writing, coverage), each through the real client and server.
    units = list(JudgeUnit.objects.filter(judge=judge).select_related("pair", "category"))
    assert run.units_done == len(units) == 4 * 2 and {u.status for u in units} == {JudgeUnit.Status.DONE}
    assert all(u.pair.kind == Item.Kind.GROUP and orders.problem(u.order, 3) is None for u in units)
    assert all(u.a_first == orders.a_first(u.order) for u in units)
    assert len({u.order for u in units}) > 1  # drawn per call, not one order for all
    texts = {}
    for unit in units:
        held = {s.slot: s.article.display_markdown for s in ItemArticle.objects.filter(item=unit.pair).select_related("article")}
        texts[unit.pk] = [held[orders.SLOTS.index(slot)] for slot in unit.order]
    assert len(llm_server.requests) == len(units)
    messages = [body["messages"][-1]["content"] for body in llm_server.requests]
    for unit in units:
        # The call of the unit's group and category shows its slots as Article 1, 2, 3 in the unit's order.
        (message,) = [m for m in messages if unit.category.name in m and all(t[:80] in m for t in texts[unit.pk])]
        at = [message.index(text[:80]) for text in texts[unit.pk]]
        assert at == sorted(at) and message.index("Article 1") < at[0] < message.index("Article 2") < at[1]
    for verdict in JudgeVerdict.objects.filter(unit__judge=judge).select_related("unit"):
        assert verdict.winner == "" and verdict.answer == ">".join(verdict.unit.order)  # position 1 best, undone by slot
    assert JudgeVerdict.objects.filter(unit__judge=judge).count() == 4 * 3

    judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, concurrency=2))
    assert len(llm_server.requests) == len(units)  # a rerun draws the same orders and asks nothing again
    assert {u.pk: u.order for u in JudgeUnit.objects.filter(judge=judge)} == {u.pk: u.order for u in units}


def annotate_every_group(campaign):
    """annotator1 and annotator2 rank every group: annotator1 by system name, annotator2 the same but
    for the last two swapped on rk_clear; rk_tight ties the two generated systems for both."""
    rank = {"rk_clear": ["wikipedia", "atlas_agent", "quill_researcher"], "rk_broad": ["atlas_agent", "wikipedia", "quill_researcher"]}
    criteria = {c.key: c for c in campaign.criterion_set.criteria.all()}
    for name in ("annotator1", "annotator2"):
        user = get_user_model().objects.get(username=name)
        while (work := assignment_claim_next(campaign=campaign, user=user)) is not None:
            by_system = {s.article.system.key: orders.position_of(work.order, orders.SLOTS[s.slot])
                         for s in ItemArticle.objects.filter(item=work.pair).select_related("article__system")}  # fmt: skip
            for key, best_first in rank.items():
                systems = best_first if name == "annotator1" or key != "rk_clear" else [best_first[0], best_first[2], best_first[1]]
                shown = ">".join(str(by_system[s]) for s in systems)
                answer_save(assignment=work, criterion=criteria[key], user=user, value=shown, rationale=f"{name} ranked it.")
            tied = f"{by_system['wikipedia']}>{by_system['atlas_agent']}={by_system['quill_researcher']}"
            answer_save(assignment=work, criterion=criteria["rk_tight"], user=user, value=tied, rationale=f"{name} ranked it.")
            assignment_submit(assignment=work, user=user)


def first_is_best(campaign, llm_server, monkeypatch):
    """A judge run on every group through the loopback server, its model ranking the article shown first best."""
    from judges.services import judge_create, judge_run_create, judge_run_execute

    llm_server.one_article_policy = lambda key, message: [[1], [2], [3]]
    monkeypatch.setenv("FAKE_JUDGE_API_KEY", "sk-test-groups-7a1c")
    judge, _ = judge_create(name="fake.gpt-4.1", model="fake-judge", base_url=llm_server.base_url, api_key_env="FAKE_JUDGE_API_KEY")
    judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, concurrency=2))


@pytest.mark.django_db
def test_it_reports_the_rankings_in_every_format(llm_server, monkeypatch):
    import csv
    import json
    from html import escape

    from calibration.metrics import orderings as metrics
    from calibration.report.build import build_report
    from calibration.report.formats import render, render_table_csv

    campaign = ranking_campaign()
    annotate_every_group(campaign)
    first_is_best(campaign, llm_server, monkeypatch)

    report = build_report(campaign, rounds=200, seed=3)

    section = report["orderings"]
    clear = next(c for c in section["criteria"] if c["criterion"] == "rk_clear")
    assert (clear["n_items"], clear["n_orderings"], clear["articles"], clear["annotators"]) == (4, 8, 3, ["annotator1", "annotator2"])
    # The same orderings written by hand, by system: the report's figures are the metrics' on them.
    humans = [metrics.Ordering(str(g.pk), rater, tuple((s,) for s in best)) for g in Item.objects.filter(campaign=campaign, kind=Item.Kind.GROUP)
              for rater, best in (("annotator1", ("wikipedia", "atlas_agent", "quill_researcher")),
                                  ("annotator2", ("wikipedia", "quill_researcher", "atlas_agent")))]  # fmt: skip
    fit = metrics.plackett_luce(humans, rounds=200, seed=3)
    assert {s: e["strength"] for s, e in clear["plackett_luce"]["systems"].items()} == {
        s: round(e.value, 6) for s, e in fit.strengths.items()
    }
    # W on each item: two raters agreeing on the first place and swapping the other two. By hand: rank
    # sums 2, 5, 5 about their mean 4 give S = 6, and W = 12 S / (m² (n³ - n)) = 72 / (4 · 24) = 0.75.
    assert clear["kendalls_w"]["value"] == pytest.approx(0.75) and clear["kendalls_w"]["n"] == 4
    tight = next(c for c in section["criteria"] if c["criterion"] == "rk_tight")
    assert tight["plackett_luce"]["n_skipped_tied"] == 8 and tight["kendalls_w"]["value"] == pytest.approx(1.0)
    assert set(clear["judges"]) == {"fake.gpt-4.1"} and clear["judges"]["fake.gpt-4.1"]["n_items"] == 4
    assert clear["judges"]["fake.gpt-4.1"]["tau_mean_rank"]["n_pairs"] == 4

    as_json = json.loads(render(report, "json"))
    assert as_json["orderings"]["criteria"][0]["criterion"] == "rk_clear"
    md, html = render(report, "md"), render(report, "html")
    for title in ("Rankings: judges against the humans' mean ranks", "Rankings: agreement among the annotators",
                  "Rankings: the systems' Plackett-Luce strengths (humans)"):  # fmt: skip
        assert title in md and escape(title) in html
    assert "fake.gpt-4.1" in md and "quill_researcher" in html
    # No pairwise verdict anywhere (its pairs are a record only): the rankings open the Markdown, the
    # empty pairwise tables are named in one line instead of printed.
    headings = [line for line in md.splitlines() if line.startswith("## ")]
    assert headings[0] == "## Rankings: judges against the humans' mean ranks" and "Nothing to show." not in md
    assert any(line.startswith("No data in this campaign for: ") and "Bradley" in line for line in md.splitlines())
    rows = list(csv.reader(io.StringIO(render_table_csv(report, "orderings_systems"))))
    assert rows[0][:2] == ["Criterion", "System"] and len(rows) == 1 + 3 * 3
    assert render(report, "csv")  # the judges' CSV renders for a campaign without pairs
    for key in ("orderings_judges", "orderings_panel", "orderings_systems"):  # and each table through the command
        written = run("calibration_report", "--campaign", "Ranked", "--rounds", "20", "--format", "csv", "--table", key)
        assert written.code == 0 and list(csv.reader(io.StringIO(written.out)))[0], (key, written.err)
    assert "Ranked: 24 human orderings, 1 judge (no pairs)" in written.err


@pytest.mark.django_db
def test_it_exports_each_ranking_by_system_key_and_an_import_counts_what_it_cannot_take(tmp_path, llm_server, monkeypatch):
    from interchange import label_rows, rows_format
    from interchange.formats import LABEL_COLUMNS

    campaign = ranking_campaign()
    annotate_every_group(campaign)
    first_is_best(campaign, llm_server, monkeypatch)

    rows = label_rows(campaign)

    ranked = [r for r in rows if r["criterion"] == "rk_clear"]
    assert len(ranked) == 4 * 2 + 4  # each annotator's and the judge's, per group
    human = [r["answer"] for r in ranked if r["rater"] == "annotator1"]
    assert human == ["wikipedia > atlas_agent > quill_researcher"] * 4 and {r["system"] for r in ranked} == {""}
    tight = {r["answer"] for r in rows if r["criterion"] == "rk_tight" and r["rater_kind"] == "human"}
    assert tight == {"wikipedia > atlas_agent = quill_researcher"}
    for row in (r for r in ranked if r["rater"] == "fake.gpt-4.1"):
        assert sorted(row["answer"].split(" > ")) == ["atlas_agent", "quill_researcher", "wikipedia"]

    path = tmp_path / "labels.csv"
    path.write_text("".join(rows_format(rows, fmt="csv", columns=LABEL_COLUMNS)))
    run("create_campaign", "--name", "Ranked again", "--labels-only", "--criteria", "ranking_three")
    result = run("import_labels", str(path), "--campaign", "Ranked again")
    assert result.code == 1  # nothing imported, nothing half-read
    refused = [line for line in result.err.splitlines() if "rankings of several articles are exported but not imported yet" in line]
    assert len(refused) == len(rows)  # every row, each with why
    skipped = run("import_labels", str(path), "--campaign", "Ranked again", "--skip-bad")
    assert "rankings of several articles are exported but not imported yet" in skipped.out + skipped.err
    assert not Label.every.filter(assignment__pair__campaign__name="Ranked again").exists()


@pytest.mark.django_db
def test_it_serves_a_group_through_the_api_by_position_and_lists_it_with_its_progress():
    from django.urls import reverse

    from tests.test_api import client_for

    campaign = ranking_campaign()
    client = client_for(get_user_model().objects.get(username="annotator1"))

    claimed = client.post(reverse("api:campaign-claim", args=[campaign.pk])).json()

    assert claimed["kind"] == "group"
    detail = client.get(reverse("api:assignment-detail", args=[claimed["id"]])).json()
    assert [a["position"] for a in detail["articles"]] == [1, 2, 3] and "article" not in detail
    text = str(detail)
    assert not any(name in text for name in ("wikipedia", "atlas_agent", "quill_researcher"))
    assert {row["key"]: row["articles"] for row in detail["criteria"]} == {"rk_clear": 3, "rk_tight": 3, "rk_broad": 3}
    saved = client.put(reverse("api:label-save", args=[claimed["id"], "rk_clear"]), {"value": "3>1>2", "rationale": "r"}, format="json")
    assert saved.status_code == 200 and saved.json()["value"] == "3>1>2"
    refused = client.put(reverse("api:label-save", args=[claimed["id"], "rk_clear"]), {"value": "3>1>4"}, format="json")
    assert refused.status_code == 400 and refused.json()["errors"]
    listed = client.get(reverse("api:assignment-list")).json()["results"]
    assert [(row["kind"], row["progress"]) for row in listed] == [("group", {"done": 1, "total": 3})]


@pytest.mark.django_db
def test_it_counts_a_ranking_campaigns_slots_in_groups_not_in_its_pairs():
    call_command("load_demo", stdout=io.StringIO())
    call_command("import_criteria", str(RUBRIC), stdout=io.StringIO())

    result = run("create_campaign", "--name", "Thin", "--criteria", "ranking_three", "--benchmark", "demo",
                 "--systems", "wikipedia,atlas_agent,quill_researcher", "--overlap", "2", "--annotators", "annotator1,annotator2")  # fmt: skip

    assert result.code == 0, result.err
    assert "4 groups of 3 articles (overlap 2)" in result.out and "(8 assignments)" in result.out
    # Two annotators meet each topic's one group once each: every slot fits, so no warning (its 8 pairs,
    # a record only here, would have made 16 slots and warned of repeats).
    assert "warning" not in result.err


@pytest.mark.django_db
def test_it_hands_out_pairs_and_groups_of_a_rubric_mixing_them_and_never_a_topics_two_views_back_to_back(tmp_path):
    import json

    call_command("load_demo", stdout=io.StringIO())
    rubric = json.loads(RUBRIC.read_text())
    rubric["categories"].append({"id": "pair", "name": "Pair", "criteria": [{"id": "pw_clear", "text": "A better article is clearer."}]})
    path = tmp_path / "mixed_ranking.json"
    path.write_text(json.dumps(rubric))
    call_command("import_criteria", str(path), stdout=io.StringIO())
    call_command("create_campaign", "--name", "Mixed ranks", "--criteria", "mixed_ranking", "--benchmark", "demo",
                 "--systems", "wikipedia,atlas_agent,quill_researcher", "--annotators", "annotator1", stdout=io.StringIO())  # fmt: skip
    campaign = Campaign.objects.get(name="Mixed ranks")
    annotator = get_user_model().objects.get(username="annotator1")
    criteria = list(campaign.criterion_set.criteria.order_by("order"))

    seen = []
    while (work := assignment_claim_next(campaign=campaign, user=annotator)) is not None:
        seen.append((work.pair.kind, work.pair.topic_id))
        for criterion in criteria:
            if work.pair.kind == Item.Kind.GROUP and criterion.key.startswith("rk_"):
                answer_save(assignment=work, criterion=criterion, user=annotator, value="1>2=3" if criterion.key == "rk_tight" else "1>2>3",
                            rationale="Ranked on its merits.")  # fmt: skip
            elif work.pair.kind == Item.Kind.PAIR and criterion.key == "pw_clear":
                answer_save(assignment=work, criterion=criterion, user=annotator, position="1", rationale="The first is clearer.")
        assignment_submit(assignment=work, user=annotator)

    # Every pair (2 per topic: the reference against each agent) and every group (1 per topic), once each.
    assert sorted(kind for kind, _ in seen) == sorted([Item.Kind.PAIR] * 8 + [Item.Kind.GROUP] * 4)
    # While other work was left, a group never came right after a pair of its topic, nor the reverse.
    for i, (kind, topic) in enumerate(seen[:-1]):
        next_kind, next_topic = seen[i + 1]
        if next_kind != kind and next_topic == topic:
            still_left = [(k, t) for k, t in seen[i + 1 :] if not (t == topic and k != kind)]
            assert not still_left, f"claim {i + 2} gave topic {topic}'s other view while {still_left} were left"
