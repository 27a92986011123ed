"""Confidence of a judge's verdict: from token log-probabilities, or from repeated calls.

Pure Python; no network. Both functions read what an endpoint returned and never call it.

From token log-probabilities (:func:`logprob_confidences`)
------------------------------------------------------------
Input: the ``logprobs.content`` list of an OpenAI chat completion, as plain dicts
``{"token": str, "logprob": float, "top_logprobs": [{"token": str, "logprob": float}, ...]}``
(other keys, such as ``bytes``, are ignored; ``top_logprobs`` may be missing or empty).

How a verdict is located in a JSON reply such as
``{"verdicts": [{"criterion": "k1", "reason": "...", "winner": "1"}, ...]}``:

1. The tokens are joined into the reply's text; each token's start offset is kept.
2. The text is scanned as JSON (strings with their escapes, objects, arrays): a string followed
   by ``:`` is a key. In every object, the value of the key ``winner`` (also ``better``,
   ``preferred``, ``choice``: the names ``protocols.pairwise`` reads) is the verdict, and the value
   of ``criterion`` (or ``key``, ``id``) names it, else the key the object is the value of
   (``{"verdicts": {"k1": {"reason": …, "winner": "1"}}}``, the shape the schema asks). A ``"winner"`` inside a reason is inside a
   string and is never taken for a key.
3. The verdict's *first character* (after the opening quote when the value is a string) is where
   the model chose its answer. The token covering that character is the decision token, and the
   part of that token before the character is its prefix (e.g. ``":"`` in a token ``":"1``).
4. Each alternative of the decision token (its ``top_logprobs``, plus the chosen token itself) is
   read as an answer when it starts with the same prefix and what follows the prefix starts an
   answer's spelling (``1``, ``2``, ``tie``: ``t`` and ``ti`` count for ``tie``, ``1"`` for
   ``1``); alternatives that are no answer (a quote, ``A``, whitespace) are left out. The masses
   exp(logprob) of the alternatives read as each answer are summed.
5. Confidence = the chosen answer's mass / the mass of all answers found: the probability of the
   chosen answer among the answer options, renormalised. Later tokens of a multi-token answer
   (``ie`` after ``t``) are not read: the choice was made at the first one.

When the decision token has no ``top_logprobs`` only the chosen token's mass is known: the
confidence is then that raw probability (a lower bound of the renormalised one) and
``normalised`` is False. A reply whose verdicts cannot be found this way gives no entry for them.

From repeated calls (:func:`sample_confidence`)
-----------------------------------------------
The same item judged N times (several few-shot sets, both orders). Each answer (``"1"``, ``"2"``
or ``"tie"``: positions as shown) is mapped back to a side with its order: ``"1"`` is side ``a``
when ``a`` was shown first and side ``b`` when it was swapped. The verdict is the side most
samples give; when ``a`` and ``b`` are equally frequent and more frequent than ``tie``, the
samples are split and the verdict is ``tie`` (as this project merges two orders that disagree).
Confidence = the share of samples that give the verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

ANSWERS = {"1": ("1",), "2": ("2",), "tie": ("tie",)}
WINNER_KEYS = ("winner", "better", "preferred", "choice")
CRITERION_KEYS = ("criterion", "criterion_key", "key", "criterion_id", "id")
SIDES = ("a", "b", "tie")


@dataclass(frozen=True)
class AnswerConfidence:
    """One verdict found in a reply: its ``criterion`` (None when the object names none), the
    chosen ``answer`` (a key of the answers mapping), ``confidence`` in [0, 1], the mass of every
    answer at the decision token (``masses``), whether it is ``normalised``, and ``token`` (the
    index of the decision token in the content list)."""

    criterion: str | None
    answer: str
    confidence: float
    masses: dict
    normalised: bool
    token: int


def _answer_of(text: str, answers: Mapping[str, Sequence[str]]) -> str | None:
    """The answer whose spelling ``text`` starts (or is a start of); None when none or several."""
    if not text:
        return None
    found = set()
    for answer, spellings in answers.items():
        for spelling in spellings:
            if text.startswith(spelling) or spelling.startswith(text):
                found.add(answer)
    return found.pop() if len(found) == 1 else None


def _scan(text: str, owners: dict[int, str] | None = None):
    """Yield (object id, key, value start offset, value kind) for every key of every JSON object in
    ``text``; value kind is '"' for a string and the first character otherwise. ``owners``, when
    given, is filled with object id -> the key whose value the object is (``{"k1": {"winner": …}}``)."""
    stack: list[int] = []
    next_id = 0
    owner_of_next = None
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "{":
            if owners is not None and owner_of_next is not None:
                owners[next_id] = owner_of_next
            owner_of_next = None
            stack.append(next_id)
            next_id += 1
            i += 1
        elif ch == "}":
            if stack:
                stack.pop()
            i += 1
        elif ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            string = text[i + 1 : j]
            k = j + 1
            while k < n and text[k] in " \t\r\n":
                k += 1
            if stack and k < n and text[k] == ":":
                v = k + 1
                while v < n and text[v] in " \t\r\n":
                    v += 1
                if v < n:
                    owner_of_next = string if text[v] == "{" else None
                    yield stack[-1], string, v, text[v]
                i = v
            else:
                i = j + 1
        else:
            i += 1


def _string_value(text: str, start: int) -> str:
    j = start + 1
    while j < len(text) and text[j] != '"':
        j += 2 if text[j] == "\\" else 1
    return text[start + 1 : j]


def logprob_confidences(content: Sequence[Mapping], answers: Mapping[str, Sequence[str]] = ANSWERS) -> list[AnswerConfidence]:
    """Every verdict of a JSON reply with its confidence, in reply order (module docstring).

    ``content``: the ``logprobs.content`` list; ``answers``: answer -> spellings (default
    ``"1"``, ``"2"``, ``"tie"``). Raises ValueError when an entry lacks ``token`` or ``logprob``.
    """
    starts, pieces, offset = [], [], 0
    for entry in content:
        if "token" not in entry or "logprob" not in entry:
            raise ValueError("every logprobs entry needs 'token' and 'logprob'")
        starts.append(offset)
        pieces.append(entry["token"])
        offset += len(entry["token"])
    text = "".join(pieces)
    criteria: dict[int, str] = {}
    owners: dict[int, str] = {}  # a verdict keyed by its criterion: {"verdicts": {"k1": {"winner": …}}}
    found: list[tuple[int, int]] = []  # (object, value offset) of each verdict
    for obj, key, start, kind in _scan(text, owners):
        if key in CRITERION_KEYS and obj not in criteria:
            criteria[obj] = _string_value(text, start) if kind == '"' else text[start:].split(",")[0].split("}")[0].strip()
        elif key in WINNER_KEYS:
            found.append((obj, start + 1 if kind == '"' else start))
    out = []
    for obj, at in found:
        entry = _at(content, starts, at)
        if entry is None:
            continue
        index, token_start = entry
        prefix = content[index]["token"][: at - token_start]
        masses, chosen, normalised = _masses(content[index], prefix, answers)
        if chosen is None:
            continue
        total = sum(masses.values())
        confidence = masses[chosen] / total if normalised and total > 0 else math.exp(content[index]["logprob"])
        out.append(AnswerConfidence(criteria.get(obj, owners.get(obj)), chosen, min(1.0, confidence), masses, normalised, index))
    return out


def _at(content, starts: list[int], offset: int) -> tuple[int, int] | None:
    """(index, start) of the token covering character ``offset``; None past the end."""
    lo, hi = 0, len(starts) - 1
    if hi < 0 or offset >= starts[-1] + len(content[-1]["token"]):
        return None
    while lo < hi:  # the last token starting at or before offset
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo, starts[lo]


def _masses(entry: Mapping, prefix: str, answers) -> tuple[dict, str | None, bool]:
    chosen = _answer_of(entry["token"][len(prefix) :], answers)
    alternatives = {alt["token"]: alt["logprob"] for alt in entry.get("top_logprobs") or () if "token" in alt and "logprob" in alt}
    normalised = bool(alternatives)
    alternatives.setdefault(entry["token"], entry["logprob"])
    masses = dict.fromkeys(answers, 0.0)
    for token, logprob in alternatives.items():
        if not token.startswith(prefix):
            continue
        answer = _answer_of(token[len(prefix) :], answers)
        if answer is not None:
            masses[answer] += math.exp(logprob)
    return masses, chosen, normalised


@dataclass(frozen=True)
class SampleConfidence:
    """The verdict of N repeated calls: ``verdict`` ("a", "b" or "tie": sides, not positions),
    ``confidence`` (share of samples giving it), ``n`` samples, ``counts`` per side, and
    ``n_swapped`` (samples shown b first)."""

    verdict: str
    confidence: float
    n: int
    counts: dict
    n_swapped: int


def side_of(answer: str, swapped: bool) -> str:
    """The side ("a", "b" or "tie") an answer in positions ("1", "2", "tie") stands for."""
    if answer == "tie":
        return "tie"
    if answer not in ("1", "2"):
        raise ValueError(f"an answer is '1', '2' or 'tie', got {answer!r}")
    first, second = ("b", "a") if swapped else ("a", "b")
    return first if answer == "1" else second


def sample_confidence(answers: Sequence[str], swapped: Sequence[bool]) -> SampleConfidence:
    """Agreement over repeated calls on one item (module docstring). ``answers[i]`` was given with
    side b shown first when ``swapped[i]``. Raises ValueError on no samples or unequal lengths."""
    if len(answers) != len(swapped):
        raise ValueError("one order per answer")
    if not answers:
        raise ValueError("no samples")
    sides = [side_of(a, bool(s)) for a, s in zip(answers, swapped)]
    counts = {side: sides.count(side) for side in SIDES}
    top = max(counts.values())
    leaders = [side for side in SIDES if counts[side] == top]
    verdict = leaders[0] if len(leaders) == 1 else "tie"
    return SampleConfidence(verdict, counts[verdict] / len(sides), len(sides), counts, sum(bool(s) for s in swapped))
