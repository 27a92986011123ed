"""Confidence of a verdict (calibration.metrics.confidence): from a logprobs.content list and from
repeated calls in both orders, on hand-made examples. No database."""

from __future__ import annotations

import math

import pytest

from calibration.metrics.confidence import logprob_confidences, sample_confidence, side_of
from tests.llm_replies import token_logprobs


def tok(token: str, p: float = 1.0, top: dict | None = None) -> dict:
    """One logprobs.content entry: the token, its log-probability, the alternatives {token: p}."""
    entry = {"token": token, "logprob": math.log(p), "bytes": list(token.encode())}
    entry["top_logprobs"] = [{"token": t, "logprob": math.log(q), "bytes": None} for t, q in (top or {}).items()]
    return entry


def reply(*pieces) -> list[dict]:
    return [piece if isinstance(piece, dict) else tok(piece) for piece in pieces]


def test_it_reads_each_verdict_of_a_json_reply_and_ignores_winner_inside_a_reason():
    content = reply(
        '{"', "verd", "icts", '":', ' [{"', "criterion", '":', ' "', "ww", "_1", '",', ' "', "reason", '":', ' "', "The",
        ' \\"', "winner", '\\":', " is", " 2", '",', ' "', "winner", '":', ' "',
        tok("1", 0.6, {"1": 0.6, "2": 0.3, "tie": 0.05, '"': 0.05}),
        '"},', ' {"', "criterion", '":', ' "', "ww", "_2", '",', ' "', "winner", '":', ' "',
        tok("t", 0.5, {"t": 0.5, "1": 0.25, "2": 0.2, "T": 0.05}),
        "ie", '"}]}',
    )  # fmt: skip
    first, second = logprob_confidences(content)
    assert (first.criterion, first.answer, first.normalised) == ("ww_1", "1", True)
    assert first.confidence == pytest.approx(0.6 / 0.95)  # the quote is no answer: left out
    assert first.masses == pytest.approx({"1": 0.6, "2": 0.3, "tie": 0.05})
    assert content[first.token]["token"] == "1"
    assert (second.criterion, second.answer) == ("ww_2", "tie")
    assert second.confidence == pytest.approx(0.5 / 0.95)  # "T" is no answer either


def test_it_reads_past_an_escaped_quote_in_a_reason():
    # one escaped quote: a scanner that ended strings at it would read the rest of the reply out of step
    content = reply(
        '{"criterion": "k9", "reason": "the \\"lead', '\\" is weak', '", "winner": "', tok("2", 0.9, {"2": 0.9, "1": 0.1}), '"}'
    )
    assert "".join(t["token"] for t in content).count('\\"') == 2
    (verdict,) = logprob_confidences(content)
    assert (verdict.criterion, verdict.answer, verdict.confidence) == ("k9", "2", pytest.approx(0.9))
    odd = reply('{"reason": "a \\" b", "winner": "', tok("1", 0.8, {"1": 0.8, "2": 0.2}), '"}')
    (verdict,) = logprob_confidences(odd)
    assert verdict.answer == "1" and verdict.confidence == pytest.approx(0.8)


def test_it_finds_an_answer_that_shares_a_token_with_the_quote():
    # a compact reply whose decision token is '"2' (the opening quote and the answer); the criterion comes after
    content = reply(
        '{"', "winner", '":', tok('"2', 0.7, {'"2': 0.7, '"1': 0.2, '"t': 0.05, ' "': 0.05}), '","', "criterion", '":"', "k3", '"}'
    )
    (verdict,) = logprob_confidences(content)
    assert (verdict.criterion, verdict.answer) == ("k3", "2")
    assert verdict.confidence == pytest.approx(0.7 / 0.95)  # ' "' does not start with the prefix '"'


def test_it_sums_the_spellings_of_one_answer_and_reads_numbers():
    content = reply('{"winner": ', tok("1", 0.5, {"1": 0.5, '1"': 0.1, "2": 0.4}), "}")
    (verdict,) = logprob_confidences(content)
    assert verdict.answer == "1" and verdict.criterion is None
    assert verdict.confidence == pytest.approx(0.6)


def test_it_falls_back_to_the_raw_probability_without_alternatives():
    content = reply('{"winner": "', tok("2", 0.8), '"}')
    (verdict,) = logprob_confidences(content)
    assert not verdict.normalised and verdict.confidence == pytest.approx(0.8)


def test_it_finds_nothing_where_there_is_no_verdict():
    assert logprob_confidences(reply("I cannot ", "decide.")) == []
    assert logprob_confidences(reply('{"winner": "', tok("A", 0.9, {"A": 0.9, "B": 0.1}), '"}')) == []
    assert logprob_confidences([]) == []
    with pytest.raises(ValueError, match="token"):
        logprob_confidences([{"logprob": 0.0}])


def test_it_takes_the_majority_of_repeated_calls_in_both_orders():
    # "1" means side a when a was shown first, side b when the order was swapped
    result = sample_confidence(["1", "2", "1", "tie"], [False, True, False, False])
    assert (result.verdict, result.confidence, result.n, result.n_swapped) == ("a", 0.75, 4, 1)
    assert result.counts == {"a": 3, "b": 0, "tie": 1}
    # a position-biased judge always says "1": half its samples favour each side, a split
    biased = sample_confidence(["1", "1", "1", "1"], [False, True, False, True])
    assert (biased.verdict, biased.confidence) == ("tie", 0.0)
    split_with_ties = sample_confidence(["tie", "tie", "1", "2"], [False, True, False, False])
    assert (split_with_ties.verdict, split_with_ties.confidence) == ("tie", 0.5)
    assert side_of("2", True) == "a" and side_of("tie", True) == "tie"


def test_it_rejects_bad_samples():
    with pytest.raises(ValueError, match="no samples"):
        sample_confidence([], [])
    with pytest.raises(ValueError, match="one order per answer"):
        sample_confidence(["1"], [])
    with pytest.raises(ValueError, match="'1', '2' or 'tie'"):
        sample_confidence(["3"], [False])


def test_it_names_each_verdict_by_the_key_it_sits_under_when_it_names_no_criterion():
    # The shape the answer schema asks (protocols.pairwise.prompt.response_schema): one object per
    # criterion key, without a "criterion" field; the reason of k2 mentions a key and a "winner".
    content = '{"verdicts": {"k1": {"reason": "clearer", "winner": "1"}, "k2": {"reason": "k1: \\"winner\\": 2", "winner": "2"}}}'
    found = logprob_confidences(token_logprobs(content, [0.8, 0.6], 2))
    assert [(f.criterion, f.answer) for f in found] == [("k1", "1"), ("k2", "2")]
    assert [f.confidence for f in found] == pytest.approx([0.8, 0.6])
