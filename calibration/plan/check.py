"""The frozen study plan (pre-registration): its canonical form, its hash, and the deviations of a campaign from it.

A plan record is a JSON object (see `calibration.plan.study.plan_record` for what it holds). Its
canonical form is JSON with sorted keys, no spaces and non-ASCII kept as is, encoded in UTF-8; the
SHA-256 of those bytes identifies the plan. `deviations` compares a frozen record with the same
record built from the campaign as it is now, and with what a report measured and computed.

Pure: no Django.
"""

from __future__ import annotations

import hashlib
import json

# The statistics a plan may promise, in the order they are listed.
STATISTICS = ("par", "kappa", "alt-test", "selective")
DEFAULT_STATISTICS = ("par", "kappa")

# The design fields compared one by one, with how a deviation names them.
DESIGN_FIELDS = {
    "protocol": "protocol",
    "pair_mode": "pair mode",
    "pairs": "pairs in the campaign",
    "overlap": "overlap (annotators per pair)",
    "calibration_pairs": "calibration pairs",
    "gold_rate": "gold rate",
    "neutral_emphasis": "neutral emphasis",
    "neutral_headings": "neutral headings",
    "guess_question": "guess question (which article is the reference)",
    "reference_name": "the reference's name in the guess question",
    "allow_tie": "ties allowed",
    "rationale_required": "rationale required",
    "rationale_min_length": "rationale minimum length",
    "reference_system": "reference system",
}
# Design fields plans record since issue 34: a plan frozen before them says nothing about them, which is no deviation.
LATER_DESIGN_FIELDS = frozenset({"neutral_headings", "guess_question", "reference_name"})
JUDGE_FIELDS = ("kind", "model", "prompt_sha256", "temperature", "max_tokens", "confidence", "mode", "structured_output")


def canonical_json(record: dict) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def record_sha256(record: dict) -> str:
    return hashlib.sha256(canonical_json(record).encode("utf-8")).hexdigest()


def parse_statistics(text: str | None) -> list[str]:
    """`par,kappa,alt-test` as a list in the order of STATISTICS; ValueError naming an unknown one."""
    if text is None or not text.strip():
        return list(DEFAULT_STATISTICS)
    asked = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [s for s in asked if s not in STATISTICS]
    if unknown:
        raise ValueError(f"unknown statistic '{unknown[0]}' (choose from {', '.join(STATISTICS)})")
    return [s for s in STATISTICS if s in asked]


def _deviation(kind: str, what: str, planned, now) -> dict:
    return {"kind": kind, "what": what, "planned": planned, "now": now}


def _judge_deviations(planned: list[dict], current: list[dict]) -> list[dict]:
    out = []
    before = {j["name"]: j for j in planned}
    after = {j["name"]: j for j in current}
    for name in sorted(before.keys() - after.keys()):
        out.append(_deviation("judge_removed", f"judge {name} was planned and is not in the campaign now", name, None))
    for name in sorted(after.keys() - before.keys()):
        out.append(_deviation("judge_added", f"judge {name} was not in the plan", None, name))
    for name in sorted(before.keys() & after.keys()):
        for field in JUDGE_FIELDS:
            old, new = before[name].get(field), after[name].get(field)
            if old != new:
                kind = "judge_prompt_changed" if field == "prompt_sha256" else "judge_changed"
                out.append(_deviation(kind, f"judge {name}: {field.replace('_', ' ')}", old, new))
    return out


def deviations(frozen: dict, current: dict, *, n_pairs: int | None = None, statistics_used: list[str] | None = None) -> list[dict]:
    """Every way `current` (the campaign now) and a report departs from the `frozen` plan.

    `n_pairs`: the pairs the report rests on, compared with the planned number; `statistics_used`:
    the statistics the report computed, each one the plan did not promise being a deviation.
    Each deviation: {kind, what, planned, now}, in a fixed order (rubric, judges, design, ε, α/δ, n, statistics).
    """
    out = []
    rubric_old, rubric_new = frozen.get("rubric") or {}, current.get("rubric") or {}
    for field, words in (("key", "rubric"), ("version", "rubric version"), ("criteria_sha256", "hash of the rubric's criteria")):
        if rubric_old.get(field) != rubric_new.get(field):
            out.append(_deviation("rubric_changed", words, rubric_old.get(field), rubric_new.get(field)))
    out += _judge_deviations(frozen.get("judges") or [], current.get("judges") or [])
    design_old, design_new = frozen.get("design") or {}, current.get("design") or {}
    for field, words in DESIGN_FIELDS.items():
        if field in LATER_DESIGN_FIELDS and field not in design_old:
            continue
        if design_old.get(field) != design_new.get(field):
            out.append(_deviation("design_changed", words, design_old.get(field), design_new.get(field)))
    eps_old, eps_new = frozen.get("epsilon") or {}, current.get("epsilon") or {}
    if eps_old.get("value") != eps_new.get("value"):
        out.append(_deviation("epsilon_changed", "alt-test ε", eps_old.get("value"), eps_new.get("value")))
    elif eps_old.get("reason") != eps_new.get("reason"):
        out.append(_deviation("epsilon_changed", "reason given for ε", eps_old.get("reason"), eps_new.get("reason")))
    for field in ("alpha", "delta"):
        if field in current and frozen.get(field) != current.get(field):
            out.append(_deviation("selective_changed", f"selective {'α' if field == 'alpha' else 'δ'}", frozen.get(field), current[field]))
    planned = frozen.get("planned_pairs")
    if n_pairs is not None and planned is not None and n_pairs != planned:
        out.append(_deviation("n_differs", "pairs analysed (n)", planned, n_pairs))
    promised = set(frozen.get("statistics") or [])
    for statistic in statistics_used or []:
        if statistic not in promised:
            out.append(_deviation("statistic_not_planned", f"statistic {statistic} reported but not in the plan", None, statistic))
    return out


def altered_deviation(stored_sha256: str, recomputed_sha256: str) -> dict:
    """The deviation of a stored plan whose record no longer hashes to the hash frozen with it."""
    return _deviation("plan_altered", "plan altered: the stored record's SHA-256", stored_sha256, recomputed_sha256)


def deviation_text(d: dict) -> str:
    """One deviation in words: `alt-test ε: planned 0.2, now 0.15`."""

    def shown(value) -> str:
        return "none" if value is None or value == "" else str(value)

    if d["kind"] in ("judge_added", "judge_removed", "statistic_not_planned"):
        return d["what"]
    return f"{d['what']}: planned {shown(d['planned'])}, now {shown(d['now'])}"
