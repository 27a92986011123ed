"""The study plan's canonical hash and the deviations of a campaign from it (calibration.plan.check, pure)."""

import copy
import hashlib
import json

import pytest

from calibration.plan import check as P

JUDGE = {
    "name": "gpt",
    "kind": "llm",
    "model": "gpt-x",
    "prompt_sha256": "ab" * 32,
    "temperature": 0.0,
    "max_tokens": 4096,
    "confidence": "none",
    "mode": "category",
    "structured_output": True,
}
RECORD = {
    "schema": "pairwise-study-plan",
    "version": 1,
    "campaign": "Pilot",
    "rubric": {"key": "wiki", "version": 1, "n_criteria": 39, "criteria_sha256": "cd" * 32},
    "judges": [JUDGE],
    "design": {
        "protocol": "pairwise",
        "pair_mode": "reference",
        "pairs": 8,
        "overlap": 2,
        "calibration_pairs": 0,
        "gold_rate": 0.0,
        "neutral_emphasis": False,
        "allow_tie": False,
        "rationale_required": True,
        "rationale_min_length": 5,
        "reference_system": "wikipedia",
    },
    "epsilon": {"value": 0.2, "reason": "experts"},
    "alpha": 0.15,
    "delta": 0.1,
    "planned_pairs": 8,
    "statistics": ["par", "kappa", "alt-test"],
}


def _leaves(value, path=()):
    """Every leaf of a JSON value, as a path of keys and indices."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))
    else:
        yield path


def _changed(record, path):
    out = copy.deepcopy(record)
    target = out
    for key in path[:-1]:
        target = target[key]
    old = target[path[-1]]
    if isinstance(old, bool):
        new = not old
    elif isinstance(old, (int, float)):
        new = old + 1
    elif isinstance(old, list):
        new = old[:-1]
    else:
        new = f"{old}-changed"
    target[path[-1]] = new
    return out


def test_it_hashes_the_canonical_json_with_sorted_keys():
    text = json.dumps(RECORD, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert P.record_sha256(RECORD) == hashlib.sha256(text.encode()).hexdigest()
    shuffled = dict(reversed(list(RECORD.items())))
    assert P.record_sha256(shuffled) == P.record_sha256(RECORD)
    assert P.record_sha256(copy.deepcopy(RECORD)) == P.record_sha256(RECORD)


@pytest.mark.parametrize("path", list(_leaves(RECORD)), ids=lambda p: ".".join(map(str, p)))
def test_it_changes_the_hash_when_any_field_changes(path):
    assert P.record_sha256(_changed(RECORD, path)) != P.record_sha256(RECORD)


def test_it_finds_no_deviation_when_nothing_changed():
    assert P.deviations(RECORD, copy.deepcopy(RECORD), n_pairs=8, statistics_used=["par", "kappa", "alt-test"]) == []


def _kinds(frozen, current, **kw):
    return [(d["kind"], d["what"], d["planned"], d["now"]) for d in P.deviations(frozen, current, **kw)]


def test_it_lists_a_changed_rubric():
    now = copy.deepcopy(RECORD)
    now["rubric"]["version"] = 2
    now["rubric"]["criteria_sha256"] = "ef" * 32
    assert _kinds(RECORD, now) == [
        ("rubric_changed", "rubric version", 1, 2),
        ("rubric_changed", "hash of the rubric's criteria", "cd" * 32, "ef" * 32),
    ]


def test_it_lists_judges_added_removed_and_changed():
    now = copy.deepcopy(RECORD)
    now["judges"] = [dict(JUDGE, name="claude"), dict(JUDGE, name="gpt", prompt_sha256="00" * 32, temperature=0.7)]
    removed = copy.deepcopy(RECORD)
    removed["judges"] = []
    assert _kinds(RECORD, now) == [
        ("judge_added", "judge claude was not in the plan", None, "claude"),
        ("judge_prompt_changed", "judge gpt: prompt sha256", "ab" * 32, "00" * 32),
        ("judge_changed", "judge gpt: temperature", 0.0, 0.7),
    ]
    assert _kinds(RECORD, removed) == [("judge_removed", "judge gpt was planned and is not in the campaign now", "gpt", None)]


def test_it_lists_a_changed_design_and_epsilon():
    now = copy.deepcopy(RECORD)
    now["design"]["overlap"] = 3
    now["design"]["neutral_emphasis"] = True
    now["epsilon"] = {"value": 0.1, "reason": "crowd"}
    assert _kinds(RECORD, now) == [
        ("design_changed", "overlap (annotators per pair)", 2, 3),
        ("design_changed", "neutral emphasis", False, True),
        ("epsilon_changed", "alt-test ε", 0.2, 0.1),
    ]
    reason_only = copy.deepcopy(RECORD)
    reason_only["epsilon"]["reason"] = "skilled"
    assert _kinds(RECORD, reason_only) == [("epsilon_changed", "reason given for ε", "experts", "skilled")]


def test_it_lists_n_and_statistics_beyond_the_plan():
    assert _kinds(RECORD, copy.deepcopy(RECORD), n_pairs=5, statistics_used=["par", "kappa", "selective"]) == [
        ("n_differs", "pairs analysed (n)", 8, 5),
        ("statistic_not_planned", "statistic selective reported but not in the plan", None, "selective"),
    ]


def test_it_words_a_deviation_in_one_line():
    d = P.deviations(RECORD, dict(copy.deepcopy(RECORD), epsilon={"value": None, "reason": None}))[0]
    assert P.deviation_text(d) == "alt-test ε: planned 0.2, now none"


def test_it_reads_the_statistics_asked():
    assert P.parse_statistics(None) == ["par", "kappa"]
    assert P.parse_statistics("selective, par") == ["par", "selective"]
    with pytest.raises(ValueError, match="unknown statistic 'bleu'"):
        P.parse_statistics("par,bleu")
