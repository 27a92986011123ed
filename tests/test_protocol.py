"""The pairwise protocol's judge prompt and answer parsing (protocols.pairwise), and the wire format's hashing, estimates and reply reading (judges.wire); no Django."""

import json
import re

import pytest

from judges.wire import (
    COMPLETION_OVERHEAD_TOKENS,
    COMPLETION_TOKENS_PER_CRITERION,
    estimate_completion_tokens,
    estimate_prompt_tokens,
    read_completion,
    request_hashes,
)
from protocols.base import CriterionSpec, InvalidResponse, JudgeRequest
from protocols.pairwise import build_request, parse_verdicts
from tests.helpers import strict_subset_problems

CRITERIA = [
    CriterionSpec("ww_cc_1", "The better article is easy to follow."),
    CriterionSpec("ww_cc_2", "The better article  explains\nits terms."),
    CriterionSpec("ww_cc_3", "The better article stands on its own."),
]
KEYS = ("ww_cc_1", "ww_cc_2", "ww_cc_3")
ARTICLE_1 = "# Lake Baikal\n\nLake Baikal is a rift lake in Siberia.\n\n## Geography\n\n- depth: 1,642 m\n"
ARTICLE_2 = "# Lake Baikal\n\nThe deepest lake on Earth lies in southern Siberia.\n"


def make_request(**overrides) -> JudgeRequest:
    arguments = dict(
        topic="Lake Baikal",
        article_1=ARTICLE_1,
        article_2=ARTICLE_2,
        category="Well-written",
        category_description="The prose is clear and concise.",
        criteria=CRITERIA,
        allow_tie=False,
        structured=True,
    )
    arguments.update(overrides)
    return build_request(**arguments)


def answer(*verdicts) -> str:
    return json.dumps({"verdicts": [{"criterion": k, "winner": w, "reason": f"because {k}"} for k, w in verdicts]})


GOOD = answer(("ww_cc_1", "1"), ("ww_cc_2", "2"), ("ww_cc_3", "1"))
EXPECTED = {"ww_cc_1": ("1", "because ww_cc_1"), "ww_cc_2": ("2", "because ww_cc_2"), "ww_cc_3": ("1", "because ww_cc_3")}


def parse(content, allow_tie=False):
    return parse_verdicts(content, criteria=KEYS, allow_tie=allow_tie)


# ------------------------------------------------------------------ the prompt


def test_it_builds_a_system_and_a_user_message():
    request = make_request()
    assert [m["role"] for m in request.messages] == ["system", "user"]
    assert request.criteria == KEYS
    assert request.allow_tie is False


def test_it_labels_both_articles_in_order():
    user = make_request().messages[1]["content"]
    assert "Article 1" in user and "Article 2" in user
    assert user.index("Lake Baikal is a rift lake") < user.index("The deepest lake on Earth")
    assert user.index("Article 1") < user.index("Lake Baikal is a rift lake") < user.index("Article 2")
    assert ARTICLE_1.strip() in user and ARTICLE_2.strip() in user


def test_it_gives_the_topic_category_and_its_description():
    user = make_request().messages[1]["content"]
    assert "Topic: Lake Baikal" in user
    assert "Well-written" in user
    assert "The prose is clear and concise." in user


def test_it_writes_every_criterion_on_its_own_line():
    user = make_request().messages[1]["content"]
    lines = user.splitlines()
    assert "- ww_cc_1: The better article is easy to follow." in lines
    # Whitespace inside a criterion text is folded so it stays on one line.
    assert "- ww_cc_2: The better article explains its terms." in lines
    assert "- ww_cc_3: The better article stands on its own." in lines


def test_the_criteria_come_after_the_articles():
    # The articles form a prefix shared by the calls for every category of a pair.
    user = make_request().messages[1]["content"]
    assert user.index("End of Article 2") < user.index("- ww_cc_1: ")


def test_the_template_never_says_where_an_article_comes_from():
    for allow_tie in (True, False):
        request = make_request(
            topic="Lake",
            article_1="Text one.",
            article_2="Text two.",
            category="Style",
            category_description="Plain.",
            allow_tie=allow_tie,
        )
        text = " ".join(m["content"] for m in request.messages).lower()
        for word in ("reference", "wikipedia", "human", "generated", "machine", "written by"):
            assert word not in text, word


def test_it_asks_for_a_winner_and_a_reason_as_json_in_words():
    user = make_request(structured=False).messages[1]["content"]
    assert '{"verdicts": {"<key>": {"reason": "<short reason>", "winner": "1"}}}' in user
    assert "reason" in user and "JSON" in user


def test_it_offers_a_tie_only_when_allowed():
    with_tie = make_request(allow_tie=True).messages[1]["content"]
    without = make_request(allow_tie=False).messages[1]["content"]
    assert '"winner" is "1", "2" or "tie"' in with_tie
    assert '"winner" is "1" or "2".' in without
    assert 'There is no "tie" answer' in without


def test_the_user_message_is_the_same_with_and_without_structured_output():
    assert make_request(structured=True).messages == make_request(structured=False).messages


def test_it_sends_a_strict_schema_when_structured():
    response_format = make_request(allow_tie=False).response_format
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "verdicts"
    assert response_format["json_schema"]["strict"] is True
    schema = response_format["json_schema"]["schema"]
    assert schema["required"] == ["verdicts"] and schema["additionalProperties"] is False
    by_criterion = schema["properties"]["verdicts"]
    # One required property per criterion, in the order asked: a grammar-constrained decoder can
    # neither stop before the last criterion nor answer one twice.
    assert list(by_criterion["properties"]) == list(KEYS) == by_criterion["required"]
    assert by_criterion["additionalProperties"] is False
    for key in KEYS:
        item = by_criterion["properties"][key]
        assert item["additionalProperties"] is False
        assert item["required"] == ["reason", "winner"] == list(item["properties"])
        assert item["properties"]["winner"] == {"type": "string", "enum": ["1", "2"]}
        assert item["properties"]["reason"] == {"type": "string"}
    assert strict_subset_problems(schema) == []


def test_the_schema_allows_a_tie_only_when_allowed():
    schema = make_request(allow_tie=True).response_format["json_schema"]["schema"]
    assert {
        item["properties"]["winner"]["enum"] == ["1", "2", "tie"] for item in schema["properties"]["verdicts"]["properties"].values()
    } == {True}


def test_it_reads_the_answer_shaped_as_the_schema_asks():
    content = json.dumps({"verdicts": {k: {"reason": f"because {k}", "winner": w} for k, w in zip(KEYS, ["2", "1", "1"])}})
    assert parse_verdicts(content, criteria=KEYS, allow_tie=False) == {
        KEYS[0]: ("2", f"because {KEYS[0]}"), KEYS[1]: ("1", f"because {KEYS[1]}"), KEYS[2]: ("1", f"because {KEYS[2]}"),
    }  # fmt: skip


def test_it_sends_no_schema_when_not_structured():
    assert make_request(structured=False).response_format is None


def test_it_is_plain_json_serializable():
    json.dumps({"messages": make_request().messages, "response_format": make_request().response_format})


@pytest.mark.parametrize(
    "criteria",
    [[], [CriterionSpec("a b", "x")], [CriterionSpec("a", "x"), CriterionSpec("a", "y")]],
    ids=["none", "space-in-key", "duplicate"],
)
def test_it_refuses_unusable_criteria(criteria):
    with pytest.raises(ValueError):
        make_request(criteria=criteria)


# ------------------------------------------------------------------ parsing: tolerated forms


def test_it_parses_a_plain_answer():
    assert parse(GOOD) == EXPECTED


def test_it_returns_the_verdicts_in_the_asked_order():
    content = answer(("ww_cc_3", "1"), ("ww_cc_1", "1"), ("ww_cc_2", "2"))
    assert list(parse(content)) == list(KEYS)


@pytest.mark.parametrize(
    "wrap",
    [
        "```json\n{}\n```",
        "```\n{}\n```",
        "Here is my assessment:\n\n```json\n{}\n```\nLet me know if you need more.",
        "Here is my assessment: {} Hope this helps!",
        "<think>Article {{1}} seems [better]...</think>\n{}",
        "  \n{}\n  ",
    ],
    ids=["fence-json", "fence-bare", "fence-with-prose", "prose-around", "think-block", "whitespace"],
)
def test_it_finds_the_json_inside_a_reply(wrap):
    assert parse(wrap.replace("{}", GOOD)) == EXPECTED


def test_it_skips_bracketed_prose_before_the_json():
    assert parse(f"As the lead says [1], and [citation needed]: {GOOD}") == EXPECTED


def test_it_accepts_a_top_level_list():
    assert parse(json.dumps(json.loads(GOOD)["verdicts"])) == EXPECTED


def test_it_accepts_results_instead_of_verdicts():
    assert parse(json.dumps({"results": json.loads(GOOD)["verdicts"]})) == EXPECTED


def test_it_accepts_a_mapping_of_keys_to_verdicts():
    content = json.dumps({"ww_cc_1": {"winner": "1", "reason": "r"}, "ww_cc_2": "2", "ww_cc_3": {"winner": 1}})
    assert parse(content) == {"ww_cc_1": ("1", "r"), "ww_cc_2": ("2", ""), "ww_cc_3": ("1", "")}


def test_it_accepts_a_single_unnamed_verdict_when_one_criterion_was_asked():
    content = json.dumps({"winner": "2", "reason": "clearer"})
    assert parse_verdicts(content, criteria=("ww_cc_1",), allow_tie=False) == {"ww_cc_1": ("2", "clearer")}


@pytest.mark.parametrize(
    "item",
    [
        {"criterion": 2},
        {"criterion": "2"},
        {"criterion": 2.0},
        {"criterion_index": 2},
        {"index": 2},
        {"criterion": "WW_CC_2"},
        {"criterion": " `ww_cc_2` "},
        {"criterion": "ww_cc_2: The better article explains its terms."},
        {"criterion_key": "ww_cc_2"},
        {"key": "ww_cc_2"},
    ],
    ids=repr,
)
def test_it_recognises_the_criterion_by_key_or_position(item):
    verdicts = [{"criterion": "ww_cc_1", "winner": "1"}, {**item, "winner": "2"}, {"criterion": "ww_cc_3", "winner": "1"}]
    assert parse(json.dumps({"verdicts": verdicts}))["ww_cc_2"] == ("2", "")


@pytest.mark.parametrize(
    "winner, expected",
    [
        (1, "1"),
        (2, "2"),
        ("1", "1"),
        ("2", "2"),
        (" 2 ", "2"),
        ("Article 1", "1"),
        ("article 2", "2"),
        ("article_2", "2"),
        ("Article-1", "1"),
        ("ARTICLE2", "2"),
        ("A", "1"),
        ("b", "2"),
        ("Article B", "2"),
        ("first", "1"),
        ("Second", "2"),
        ("1.", "1"),
        ("**2**", "2"),
    ],
)
def test_it_reads_the_winner_in_its_usual_spellings(winner, expected):
    content = json.dumps([{"criterion": k, "winner": winner} for k in KEYS])
    assert {v[0] for v in parse(content).values()} == {expected}


@pytest.mark.parametrize("winner", ["tie", "Tie", "TIE.", "draw", "equal"])
def test_it_reads_a_tie_when_ties_are_allowed(winner):
    content = json.dumps([{"criterion": k, "winner": winner} for k in KEYS])
    assert {v[0] for v in parse(content, allow_tie=True).values()} == {"tie"}


def test_it_reads_other_winner_and_reason_field_names():
    content = json.dumps(
        [
            {"criterion": "ww_cc_1", "better": "1", "rationale": "r1"},
            {"criterion": "ww_cc_2", "preferred": "2", "explanation": "r2"},
            {"criterion": "ww_cc_3", "choice": "1", "reasoning": "r3"},
        ]
    )
    assert parse(content) == {"ww_cc_1": ("1", "r1"), "ww_cc_2": ("2", "r2"), "ww_cc_3": ("1", "r3")}


def test_a_missing_or_null_reason_is_empty():
    content = json.dumps(
        [
            {"criterion": "ww_cc_1", "winner": "1"},
            {"criterion": "ww_cc_2", "winner": "2", "reason": None},
            {"criterion": "ww_cc_3", "winner": "1", "reason": "  ok  "},
        ]
    )
    assert parse(content) == {"ww_cc_1": ("1", ""), "ww_cc_2": ("2", ""), "ww_cc_3": ("1", "ok")}


def test_extra_fields_are_ignored():
    content = json.dumps([{"criterion": k, "winner": "1", "confidence": 0.9} for k in KEYS])
    assert parse(content)["ww_cc_1"] == ("1", "")


# ------------------------------------------------------------------ parsing: refused forms


def refused(content, allow_tie=False, criteria=KEYS) -> str:
    with pytest.raises(InvalidResponse) as caught:
        parse_verdicts(content, criteria=criteria, allow_tie=allow_tie)
    return str(caught.value)


@pytest.mark.parametrize("content", ["", "   ", None])
def test_it_refuses_an_empty_answer(content):
    assert "empty" in refused(content)


def test_it_refuses_prose():
    message = refused("Article 1 is better on every criterion, I think.")
    assert "no JSON" in message and "Article 1 is better" in message


@pytest.mark.parametrize("cut", [len(GOOD) // 2, len(GOOD) - 1, len(GOOD) - 2, 30])
def test_it_refuses_truncated_json(cut):
    assert "truncated" in refused(GOOD[:cut])


def test_it_refuses_truncated_json_in_a_fence_or_after_prose():
    assert "truncated" in refused("```json\n" + GOOD[:-3])
    assert "truncated" in refused("Sure. " + GOOD[:-3])


def test_it_refuses_a_truncated_list():
    assert "truncated" in refused(json.dumps(json.loads(GOOD)["verdicts"])[:-5])


def test_it_refuses_a_missing_criterion():
    message = refused(answer(("ww_cc_1", "1"), ("ww_cc_3", "2")))
    assert "ww_cc_2" in message and "no verdict" in message


def test_it_refuses_an_empty_list():
    assert "3 of 3 criteria have no verdict" in refused('{"verdicts": []}')


def test_it_refuses_a_duplicated_criterion():
    message = refused(answer(("ww_cc_1", "1"), ("ww_cc_2", "2"), ("ww_cc_3", "1"), ("ww_cc_2", "1")))
    assert "ww_cc_2 is answered twice" in message


def test_it_refuses_an_unknown_criterion():
    message = refused(answer(("ww_cc_1", "1"), ("ww_cc_2", "2"), ("ww_cc_3", "1"), ("ww_cc_9", "1")))
    assert "unknown criterion 'ww_cc_9'" in message and "ww_cc_1, ww_cc_2, ww_cc_3" in message


@pytest.mark.parametrize("position", [0, 4, -1, "7"])
def test_it_refuses_a_position_out_of_range(position):
    content = json.dumps([{"criterion": position, "winner": "1"}])
    assert "out of range 1..3" in refused(content)


def test_it_refuses_an_unnamed_verdict_among_several_criteria():
    content = json.dumps([{"winner": "1"}, {"winner": "2"}, {"winner": "1"}])
    assert "does not name its criterion" in refused(content)


@pytest.mark.parametrize("value", [True, None, ["ww_cc_1"]])
def test_it_refuses_a_criterion_that_is_neither_key_nor_position(value):
    content = json.dumps([{"criterion": value, "winner": "1"}] + [{"criterion": k, "winner": "1"} for k in KEYS[1:]])
    with pytest.raises(InvalidResponse):
        parse(content)


@pytest.mark.parametrize("winner", [3, "3", 0, "Article 3", "C", "both", "neither", "", None, True, 1.5, "1 or 2", "the first one", ["1"]])
def test_it_refuses_a_winner_out_of_range(winner):
    content = json.dumps([{"criterion": "ww_cc_1", "winner": winner}] + [{"criterion": k, "winner": "1"} for k in KEYS[1:]])
    message = refused(content, allow_tie=True)
    assert message.startswith("ww_cc_1: winner") and "is not one of 1, 2, tie" in message


def test_it_refuses_a_verdict_without_a_winner():
    content = json.dumps([{"criterion": "ww_cc_1", "reason": "hmm"}] + [{"criterion": k, "winner": "1"} for k in KEYS[1:]])
    assert "ww_cc_1: no winner given" in refused(content)


@pytest.mark.parametrize("winner", ["tie", "draw", "equal"])
def test_it_refuses_a_tie_when_ties_are_not_allowed(winner):
    content = answer(("ww_cc_1", winner), ("ww_cc_2", "2"), ("ww_cc_3", "1"))
    assert "ties are not allowed" in refused(content, allow_tie=False)


def test_garbage_is_never_read_as_a_tie_even_when_ties_are_allowed():
    content = answer(("ww_cc_1", "unclear"), ("ww_cc_2", "2"), ("ww_cc_3", "1"))
    assert "'unclear' is not one of" in refused(content, allow_tie=True)


@pytest.mark.parametrize(
    "content, fragment",
    [
        ('"just a string"', "expected a JSON object"),
        ("42", "expected a JSON object"),
        ('{"answer": "1"}', "got keys ['answer']"),
        ('{"verdicts": "1, 2, 1"}', "'verdicts' must be a list"),
        ('{"verdicts": ["1", "2", "1"]}', "verdict 1 is not a JSON object"),
    ],
)
def test_it_refuses_the_wrong_shape(content, fragment):
    assert fragment in refused(content)


# ------------------------------------------------------------------ hashing and estimates


def digest(**overrides):
    arguments = dict(model="gpt-test", request=make_request(), temperature=0.0, max_tokens=1000)
    arguments.update(overrides)
    return request_hashes(**arguments)[0]


def test_the_hash_is_a_stable_sha256():
    assert re.fullmatch(r"[0-9a-f]{64}", digest())
    assert digest() == digest()
    assert digest(temperature=0) == digest(temperature=0.0)


def test_the_plain_hash_is_the_hash_of_the_request_without_its_schema():
    settings = dict(model="gpt-test", temperature=0.0, max_tokens=1000)
    with_schema, plain = request_hashes(request=make_request(), **settings)
    assert with_schema == digest() and plain == digest(request=make_request(structured=False)) != with_schema
    assert request_hashes(request=make_request(structured=False), **settings) == (plain, "")


def test_texts_that_run_together_differently_hash_differently():
    def split(first, second):
        messages = [{"role": "system", "content": first}, {"role": "user", "content": second}]
        return JudgeRequest(messages=messages, response_format=None, criteria=KEYS, allow_tie=False)

    assert digest(request=split("ab", "c")) != digest(request=split("a", "bc"))


def test_a_message_role_is_part_of_the_hash():
    request = make_request()
    changed = JudgeRequest(
        messages=[{**request.messages[0], "role": "developer"}, request.messages[1]],
        response_format=request.response_format,
        criteria=request.criteria,
        allow_tie=request.allow_tie,
    )
    assert digest(request=changed) != digest(request=request)


@pytest.mark.parametrize(
    "overrides",
    [
        {"model": "gpt-other"},
        {"temperature": 0.7},
        {"max_tokens": 1001},
        {"request": make_request(article_1=ARTICLE_1 + "x")},
        {"request": make_request(article_2=ARTICLE_2 + "x")},
        {"request": make_request(topic="Lake Ladoga")},
        {"request": make_request(category="Neutral")},
        {"request": make_request(category_description="Other.")},
        {"request": make_request(criteria=CRITERIA[:2])},
        {"request": make_request(criteria=[CRITERIA[0], CriterionSpec("ww_cc_2", "Changed."), CRITERIA[2]])},
        {"request": make_request(allow_tie=True)},
        {"request": make_request(structured=False)},
        {"request": make_request(article_1=ARTICLE_2, article_2=ARTICLE_1)},
    ],
    ids=[
        "model",
        "temperature",
        "max_tokens",
        "article_1",
        "article_2",
        "topic",
        "category",
        "description",
        "criteria",
        "criterion_text",
        "allow_tie",
        "structured",
        "swapped",
    ],
)
def test_the_hash_changes_with_every_input(overrides):
    assert digest(**overrides) != digest()


def test_the_prompt_estimate_follows_the_documented_heuristic():
    request = JudgeRequest(
        messages=[{"role": "system", "content": "x" * 40}, {"role": "user", "content": "y" * 401}],
        response_format=None,
        criteria=("a",),
        allow_tie=False,
    )
    assert estimate_prompt_tokens(request) == 10 + 4 + 101 + 4 + 3


def test_the_prompt_estimate_counts_the_schema_and_grows_with_the_articles():
    structured, plain = make_request(structured=True), make_request(structured=False)
    assert estimate_prompt_tokens(structured) > estimate_prompt_tokens(plain)
    longer = make_request(article_1=ARTICLE_1 + "word " * 400)
    assert estimate_prompt_tokens(longer) - estimate_prompt_tokens(make_request()) == 500


def test_the_completion_estimate_is_a_per_criterion_allowance():
    assert estimate_completion_tokens(make_request()) == COMPLETION_OVERHEAD_TOKENS + 3 * COMPLETION_TOKENS_PER_CRITERION
    assert estimate_completion_tokens(make_request(criteria=CRITERIA[:1])) == COMPLETION_OVERHEAD_TOKENS + COMPLETION_TOKENS_PER_CRITERION


# ------------------------------------------------------------------ reading the reply


def reply(**fields):
    body = {
        "id": "c1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}],
    }
    body.update(fields)
    return json.dumps(body).encode()


def test_it_reads_the_text_and_the_billed_tokens():
    completion = read_completion(
        reply(usage={"prompt_tokens": 1200, "completion_tokens": 80, "prompt_tokens_details": {"cached_tokens": 1024}})
    )
    assert (completion.content, completion.finish_reason, completion.problem) == ("{}", "stop", "")
    assert (completion.prompt_tokens, completion.cached_tokens, completion.completion_tokens) == (1200, 1024, 80)


def test_it_joins_the_text_of_content_parts():
    parts = [{"type": "text", "text": '{"verdicts": '}, {"type": "image_url"}, {"type": "text", "text": "[]}"}]
    completion = read_completion(reply(choices=[{"message": {"role": "assistant", "content": parts}, "finish_reason": "stop"}]))
    assert completion.content == '{"verdicts": []}' and not completion.problem


def test_it_reads_deepseeks_cache_hits():
    completion = read_completion(reply(usage={"prompt_tokens": 900, "completion_tokens": 10, "prompt_cache_hit_tokens": 640}))
    assert completion.cached_tokens == 640


@pytest.mark.parametrize(
    "usage",
    [None, {}, {"prompt_tokens": None, "completion_tokens": "12"}, {"prompt_tokens": -5, "completion_tokens": True}],
    ids=["absent", "empty", "not-numbers", "negative-or-bool"],
)
def test_missing_or_odd_usage_bills_nothing(usage):
    completion = read_completion(reply(usage=usage))
    assert (completion.prompt_tokens, completion.cached_tokens, completion.completion_tokens) == (0, 0, 0)
    assert completion.content == "{}"


def test_cached_tokens_never_exceed_the_prompt():
    completion = read_completion(reply(usage={"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 400}}))
    assert completion.cached_tokens == 100


@pytest.mark.parametrize(
    "body, problem",
    [
        (b"<html>Bad gateway</html>", "the reply is not JSON: '<html>Bad gateway</html>'"),
        (b"\xff\xfe", "the reply is not JSON"),
        (b"[1, 2]", "the reply is not a chat completion: '[1, 2]'"),
        (json.dumps({"error": {"message": "overloaded"}}).encode(), "the reply has no choices: overloaded"),
        (json.dumps({"choices": []}).encode(), "the reply has no choices"),
        (
            reply(choices=[{"message": {"role": "assistant", "content": None, "refusal": "I cannot help."}}]),
            "the model refused: 'I cannot help.'",
        ),
        (reply(choices=[{"message": {"role": "assistant", "content": ""}}]), "the reply has no text"),
    ],
    ids=["html", "bytes", "list", "error-object", "no-choices", "refusal", "empty"],
)
def test_it_names_what_is_wrong_with_a_reply_that_holds_no_answer(body, problem):
    completion = read_completion(body)
    assert completion.problem.startswith(problem) and completion.content == ""


def test_a_reply_without_an_answer_still_bills_its_usage():
    completion = read_completion(json.dumps({"error": {"message": "x"}, "usage": {"prompt_tokens": 50, "completion_tokens": 0}}).encode())
    assert completion.problem and completion.prompt_tokens == 50
