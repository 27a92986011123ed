"""Confidence of a judge's verdict: the functions live in `protocols.pairwise.confidence`, beside the
parsing of the replies they read, so that judges can use them at run time (judges may not import
calibration); the metrics and the tests read them from here too."""

from protocols.pairwise.confidence import (  # noqa: F401
    ANSWERS,
    AnswerConfidence,
    SampleConfidence,
    logprob_confidences,
    sample_confidence,
    side_of,
)
