"""A judge's confidence option, and the confidence of each verdict it gives. Pure; no Django.

``Judge.confidence`` is one of:

- ``none``: verdicts carry no confidence;
- ``logprobs``: each request asks for token probabilities (``logprobs: true, top_logprobs:
  TOP_LOGPROBS`` in the chat-completions body) and each verdict's confidence is the probability of
  its answer at the token where the model chose it, renormalised over the answers
  (``protocols.pairwise.confidence.logprob_confidences``). An endpoint that returns none leaves
  the confidence empty;
- ``samples:N`` (N from 2 to MAX_SAMPLES): each unit is asked N times in its order (a run with
  both orders asks 2N times per pair); every sample is a call, billed, written ahead and reserved
  against the budget like any other. The unit's verdict is the answer most samples give (a tie when
  "1" and "2" are equally frequent and lead), and its confidence the share of samples giving it
  (``protocols.pairwise.confidence.sample_confidence``); the samples are kept so that the two
  orders can be pooled later. Samples differ only by the model's sampling: give the judge a
  temperature above 0.

Answers read from the cache carry no confidence (the cache keeps text only), so judges with a
confidence option never read the cache. Batch runs do not ask for confidences.

Confidences are pairwise only: a unit of one-article criteria (a reading: checklist, rating,
count) is asked once, without logprobs, whatever the option, and its verdicts carry none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocols.pairwise.confidence import logprob_confidences, sample_confidence

NONE, LOGPROBS, SAMPLES = "none", "logprobs", "samples"
TOP_LOGPROBS = 5
MAX_SAMPLES = 20


def confidence_mode(value: str) -> tuple[str, int]:
    """(kind, samples) of a confidence option: ("none", 1), ("logprobs", 1) or ("samples", N).
    Raises ValueError with a one-line message on anything else."""
    text = (value or NONE).strip().lower()
    if text in (NONE, LOGPROBS):
        return text, 1
    kind, _, count = text.partition(":")
    if kind == SAMPLES and count.isdigit() and 2 <= int(count) <= MAX_SAMPLES:
        return SAMPLES, int(count)
    raise ValueError(f"The confidence must be none, logprobs or samples:N with N from 2 to {MAX_SAMPLES}, got '{value}'.")


def logprob_map(content: Sequence[Mapping] | None, keys: Sequence[str]) -> dict[str, float]:
    """Criterion key -> confidence from a reply's ``logprobs.content`` (empty when there is none).
    A verdict object naming its criterion is matched by name; when none names one and the reply has
    one verdict per key, they are matched in order."""
    if not content:
        return {}
    try:
        found = logprob_confidences(content)
    except ValueError:
        return {}
    named = {f.criterion: f.confidence for f in found if f.criterion in keys}
    if named:
        return named
    return {key: f.confidence for key, f in zip(keys, found)} if len(found) == len(keys) else {}


def samples_merge(samples: Sequence[Mapping[str, tuple[str, str]]]) -> tuple[dict, dict, dict]:
    """N answers of one unit (each criterion key -> (position, reason), in one order) ->
    (verdicts, confidences, answers): the position most samples give with the reason of the first
    sample giving it, its share of the samples, and every sample's answer joined by commas."""
    verdicts, confidences, answers = {}, {}, {}
    for key in samples[0]:
        given = [sample[key][0] for sample in samples if key in sample]
        merged = sample_confidence(given, [False] * len(given))
        position = {"a": "1", "b": "2"}.get(merged.verdict, "tie")
        reason = next((sample[key][1] for sample in samples if key in sample and sample[key][0] == position), "")
        verdicts[key] = (position, reason)
        confidences[key] = merged.confidence
        answers[key] = ",".join(given)
    return verdicts, confidences, answers


def sampled_call(call, *, n: int, ledger, reserved):
    """Runs ``call(outcome)`` (one unit's request until it yields verdicts, continuing ``outcome``'s
    attempts) ``n`` times and merges the samples into the outcome (``samples_merge``). Each sample
    after the first reserves its worst case against the budget first; when it does not fit, the
    unit is left pending with the budget flag, like any request that does not fit. An error or a
    stop in any sample ends the unit as that sample ended it."""
    outcome = call(None)
    if n <= 1 or outcome.verdicts is None:
        return outcome
    samples = [outcome.verdicts]
    while len(samples) < n:
        if not ledger.reserve(reserved):
            outcome.verdicts, outcome.budget = None, True
            return outcome
        outcome.verdicts = None
        outcome = call(outcome)
        if outcome.verdicts is None:
            return outcome
        samples.append(outcome.verdicts)
    outcome.verdicts, outcome.confidences, outcome.samples = samples_merge(samples)
    return outcome
