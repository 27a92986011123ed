"""The ranking protocol (issue 38, step 4), as a pure module: what a criterion says, what an answer is,
how it is stored by slot and shown by position under any order, how a judge is asked about k articles
and how its reply is read. Items of more than two articles do not exist yet, so the registry refuses
it where a rubric names it, saying why."""

import itertools
import json

import pytest

import protocols
from annotate import kinds as items
from annotate.models import CriterionSet, Item
from protocols import order as orders
from protocols import ranking
from protocols.base import CriterionSpec, InvalidResponse
from tests.helpers import run

STRICT = {"type": "ranking", "articles": 3, "ties": False}
LOOSE = {"type": "ranking", "articles": 4, "ties": True}


def test_it_reads_a_criterions_number_of_articles_and_whether_it_allows_ties():
    assert ranking.read_response({"type": "ranking", "articles": 5}) == ({"type": "ranking", "articles": 5, "ties": False}, [])
    assert ranking.read_response({"type": "ranking", "articles": 2})[1] == ["articles must be a whole number from 3 to 6, not 2"]
    assert ranking.read_response({"type": "ranking", "articles": 7, "ties": "yes", "scale": 1})[1] == [
        "a ranking response has no parameter 'scale'",
        "articles must be a whole number from 3 to 6, not 7",
        "ties must be true or false, not 'yes'",
    ]
    assert ranking.read_response({"type": "ranking", "articles": True})[1] == ["articles must be a whole number from 3 to 6, not True"]
    assert ranking.article_count(LOOSE) == 4 and ranking.article_count({}) == 0


@pytest.mark.parametrize(
    "shown, response, problems",
    [
        ("", STRICT, []),
        ("2>1>3", STRICT, []),
        (" 3 > 2 > 1 ", STRICT, []),
        ("2>1", STRICT, ["Rank all 3 articles, each once (2 given)."]),
        ("2>2>3", STRICT, ["Each article takes one place: one is given twice."]),
        ("2>1>4", STRICT, ["Rank the articles by their numbers, 1 to 3."]),
        ("2>>1>3", STRICT, ["An empty place: write the articles best first, separated by '>'."]),
        ("2>1=3", STRICT, ["This criterion does not allow ties: give each article a place of its own."]),
        ("2=4>1=3", LOOSE, []),
        ("a>b>c", STRICT, ["Rank the articles by their numbers, 1 to 3."]),
        ("1>2>3", {"type": "ranking"}, ["This criterion does not say how many articles it ranks."]),
    ],
)
def test_it_checks_a_ranking_as_the_rater_gives_it(shown, response, problems):
    assert ranking.answer_problems(shown, response=response) == problems


def test_it_checks_a_ranking_of_systems_as_a_labels_file_gives_it():
    assert ranking.outcome_problems("gpt-4.1 > wiki = o3.mini", response={**STRICT, "ties": True}) == []
    assert ranking.outcome_problems("gpt-4.1 > wiki", response=STRICT) == ["rank all 3 systems, each once (2 given)"]
    assert ranking.outcome_problems("x > x > y", response=STRICT) == ["each system takes one place: one is given twice"]


@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_it_stores_by_slot_whatever_the_order_shown_and_shows_it_back(k):
    slots = orders.natural(k)
    truth = slots[::-1]  # the same ranking of the slots, however the viewer saw them
    for order in itertools.permutations(slots):
        order = "".join(order)
        shown = ">".join(str(orders.position_of(order, slot)) for slot in truth)
        assert ranking.stored_answer(shown, order=order) == ">".join(truth)
        assert ranking.shown_answer(">".join(truth), order=order) == shown
    assert ranking.stored_answer("3=1>2", order="cab") == "b=c>a"
    assert ranking.shown_answer("b=c>a", order="cab") == "3=1>2"
    assert ranking.stored_answer("", order="cab") == ranking.shown_answer("", order="cab") == ""


def test_it_hands_the_metrics_the_groups_of_slots_best_first():
    assert ranking.metric_outcome("b=c>a>d") == (("b", "c"), ("a",), ("d",))


def spec(key, response=STRICT):
    return CriterionSpec(key=key, text=f"Which article does {key} best?", response=response)


def test_it_asks_a_judge_about_every_article_numbered_in_the_order_drawn():
    request = ranking.build_request(
        topic="Ada Lovelace",
        articles=["First text.", "Second text.", "Third text."],
        category="Prose",
        category_description="How it reads",
        criteria=[spec("clarity"), spec("tone", {**STRICT, "ties": True})],
        structured=True,
    )
    user = request.messages[1]["content"]
    assert [user.index(f"===== Article {n} =====") for n in (1, 2, 3)] == sorted(user.index(f"===== Article {n} =====") for n in (1, 2, 3))
    assert "First text." in user and "Third text." in user and "Category: Prose (How it reads)" in user
    assert "- clarity: Which article does clarity best? [no ties]" in user
    assert "- tone: Which article does tone best? [ties allowed]" in user
    assert request.protocol == "ranking" and request.criteria == ("clarity", "tone")
    schema = request.response_format["json_schema"]["schema"]
    place = schema["properties"]["answers"]["properties"]["clarity"]["properties"]["answer"]
    assert place["items"]["items"]["enum"] == [1, 2, 3] and place["maxItems"] == 3


def test_it_refuses_to_ask_about_a_number_of_articles_its_criteria_do_not_rank():
    with pytest.raises(ValueError, match="ranks 3 articles, not the 4 given"):
        ranking.build_request(
            topic="T", articles=["a", "b", "c", "d"], category="C", category_description="", criteria=[spec("x")], structured=False
        )
    with pytest.raises(ValueError, match="3 to 6 articles, not 2"):
        ranking.build_request(topic="T", articles=["a", "b"], category="C", category_description="", criteria=[spec("x")], structured=False)


def reply(**answers):
    return json.dumps({"answers": {key: {"reason": "Because.", "answer": answer} for key, answer in answers.items()}})


def test_it_reads_a_judges_places_as_numbers_lists_or_written_out():
    criteria, responses = ("clarity", "tone"), (STRICT, {**STRICT, "ties": True})
    read = ranking.parse_verdicts(reply(clarity=[[2], [3], [1]], tone="2 > 1 = 3"), criteria=criteria, responses=responses)
    assert read == {"clarity": ("2>3>1", "Because."), "tone": ("2>1=3", "Because.")}
    read = ranking.parse_verdicts(
        "```json\n" + reply(clarity=[3, 1, 2], tone=[[1, 2, 3]]) + "\n```", criteria=criteria, responses=responses
    )
    assert read == {"clarity": ("3>1>2", "Because."), "tone": ("1=2=3", "Because.")}


@pytest.mark.parametrize(
    "answer, reason",
    [
        ([[1, 2], [3]], "clarity: ranking '[[1, 2], [3]]': This criterion does not allow ties"),
        ([1, 2], "clarity: ranking '[1, 2]': Rank all 3 articles, each once (2 given)"),
        ([1, 2, 5], "clarity: ranking '[1, 2, 5]': Rank the articles by their numbers, 1 to 3"),
        ([1, True, 3], "clarity: ranking '[1, true, 3]' is not a list of article numbers"),
        ({"first": 1}, "clarity: ranking '{\"first\": 1}' is not a list of places"),
    ],
)
def test_it_refuses_a_judges_ranking_that_is_not_whole(answer, reason):
    with pytest.raises(InvalidResponse) as caught:
        ranking.parse_verdicts(reply(clarity=answer), criteria=("clarity",), responses=(STRICT,))
    assert reason in str(caught.value)


def test_it_tells_how_many_articles_an_item_of_a_criterion_holds():
    assert protocols.arities(ranking) == (3, 4, 5, 6)
    assert protocols.arities(protocols.REGISTRY["rating"]) == (1,)
    assert protocols.arity({"type": "rating", "points": []}) == 1 and protocols.arity({}) == 2
    # The registry's item shapes and the kinds of item that hold them are one fact, written in two layers.
    assert set(items.KIND_OF_ARITY) == set(protocols.ITEM_ARTICLES)


@pytest.mark.django_db
def test_it_takes_a_rubric_of_rankings_of_one_size_and_refuses_one_mixing_sizes(tmp_path):
    def rubric(*sizes):
        criteria = [{"id": f"order_{i}", "text": "Order the articles from best to worst.", "response": {"type": "ranking", "articles": k}}
                    for i, k in enumerate(sizes)]  # fmt: skip
        path = tmp_path / f"rubric_{'_'.join(map(str, sizes))}.json"
        path.write_text(json.dumps({"categories": [{"id": "c", "criteria": criteria}]}))
        return path

    mixed = run("import_criteria", str(rubric(3, 4)))

    assert mixed.code == 1
    assert "criteria asking about three articles or more must all ask about the same number" in mixed.err
    assert "this rubric asks about 3 and 4" in mixed.err
    assert CriterionSet.objects.count() == 0

    taken = run("import_criteria", str(rubric(4, 4)))

    assert taken.code == 0, taken.err
    assert items.rubric_group_size(criterion_set_id=CriterionSet.objects.get().pk) == 4
    assert items.rubric_kinds(criterion_set_id=CriterionSet.objects.get().pk) == {Item.Kind.GROUP}
