"""Whether the pointwise difference predicts the pairwise verdict (calibration/metrics/crossprotocol.py):
the tie rule, the sources, the topic bootstrap, and the hit rate against scikit-learn. No database."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import accuracy_score

from calibration.metrics.bootstrap import draw_counts
from calibration.metrics.crossprotocol import PairVerdict, cross_protocol
from calibration.metrics.pointwise import RATING, pointwise_table

TOL = 1e-6


def _table(scores):
    """scores: {(article, criterion, rater): value}; the judge is 'judge.x'; topic = the article's prefix."""
    keys = list(scores)
    return pointwise_table(
        article=[k[0] for k in keys], system=[k[0].split("/")[1] for k in keys], topic=[k[0].split("/")[0] for k in keys],
        criterion=[k[1] for k in keys], rater=[k[2] for k in keys], value=[scores[k] for k in keys],
        is_judge=[k[2] == "judge.x" for k in keys], response=RATING, scale=(1, 5),
    )  # fmt: skip


def test_it_applies_the_tie_rule():
    scores = {
        # topic t1: humans' mean 4 vs 3 (a ahead); the judge 3 vs 3 (a zero difference)
        ("t1/a", "depth", "ann", 4.0), ("t1/a", "depth", "bea", 4.0), ("t1/b", "depth", "ann", 3.0), ("t1/b", "depth", "bea", 3.0),
        ("t1/a", "depth", "judge.x", 3.0), ("t1/b", "depth", "judge.x", 3.0),
        # topic t2: humans' mean 2.5 vs 2.5 (zero); the judge 2 vs 5 (b ahead)
        ("t2/a", "depth", "ann", 2.0), ("t2/a", "depth", "bea", 3.0), ("t2/b", "depth", "ann", 3.0), ("t2/b", "depth", "bea", 2.0),
        ("t2/a", "depth", "judge.x", 2.0), ("t2/b", "depth", "judge.x", 5.0),
    }  # fmt: skip
    table = _table({k[:3]: k[3] for k in scores})
    verdicts = [
        PairVerdict("t1", "depth", "ann", "t1/a", "t1/b", 1),  # humans: a ahead, a preferred: hit
        PairVerdict("t1", "depth", "bea", "t1/a", "t1/b", 0),  # a ahead, a tie: miss (and not decisive)
        PairVerdict("t2", "depth", "ann", "t2/a", "t2/b", 0),  # zero difference, a tie: hit
        PairVerdict("t2", "depth", "bea", "t2/a", "t2/b", -1),  # zero difference, b preferred: miss
        PairVerdict("t1", "depth", "judge.x", "t1/a", "t1/b", 0, is_judge=True),  # judge zero, tie: hit
        PairVerdict("t2", "depth", "judge.x", "t2/a", "t2/b", 1, is_judge=True),  # judge b ahead, a preferred: miss
        PairVerdict("t2", "depth", "judge.x", "t2/b", "t2/a", 1, is_judge=True),  # swapped order: b ahead of a, hit
    ]
    result = cross_protocol(table, verdicts, rounds=0)
    humans, judge = result.humans, result.judges["judge.x"]
    assert humans.figures["hit_rate"].value == pytest.approx(0.5) and humans.figures["hit_rate"].n == 4
    assert humans.figures["hit_rate_decisive"].value == pytest.approx(1.0) and humans.figures["hit_rate_decisive"].n == 1
    assert humans.counts == {"verdicts": 4, "zero_difference": 2, "tie_verdicts": 2, "no_pointwise": 0}
    assert judge.figures["hit_rate"].value == pytest.approx(2 / 3)
    assert judge.figures["hit_rate_decisive"].value == pytest.approx(0.5) and judge.figures["hit_rate_decisive"].n == 2
    assert judge.counts == {"verdicts": 3, "zero_difference": 1, "tie_verdicts": 1, "no_pointwise": 0}
    assert humans.figures["hit_rate"].n_pairs == 2  # clusters are topics
    assert list(humans.by_criterion) == ["depth"]


def test_it_counts_verdicts_without_a_pointwise_answer():
    table = _table({("t1/a", "depth", "ann"): 4.0, ("t1/b", "depth", "ann"): 2.0})
    verdicts = [
        PairVerdict("t1", "depth", "ann", "t1/a", "t1/b", 1),
        PairVerdict("t1", "style", "ann", "t1/a", "t1/b", 1),  # no pointwise criterion 'style'
        PairVerdict("t1", "depth", "ann", "t1/a", "t1/zzz", 1),  # no such article
        PairVerdict("t1", "depth", "judge.y", "t1/a", "t1/b", 1, is_judge=True),  # a judge with no pointwise answers
    ]
    result = cross_protocol(table, verdicts, rounds=0)
    assert result.humans.counts["no_pointwise"] == 2 and result.humans.figures["hit_rate"].value == 1.0
    assert result.judges["judge.y"].figures["hit_rate"].value is None
    assert result.judges["judge.y"].counts == {"verdicts": 0, "zero_difference": 0, "tie_verdicts": 0, "no_pointwise": 1}
    with pytest.raises(ValueError, match="not 2"):
        cross_protocol(table, [PairVerdict("t1", "depth", "ann", "t1/a", "t1/b", 2)])


def _random_campaign(seed: int, topics: int = 30):
    rng = np.random.default_rng(seed)
    scores, verdicts = {}, []
    for t in range(topics):
        for c in ("depth", "style"):
            quality = rng.normal(3, 1, 2)
            for side, q in zip("ab", quality):
                for rater, noise in (("ann", 0.6), ("bea", 0.6), ("judge.x", 1.0)):
                    scores[(f"t{t}/{side}", c, rater)] = float(np.clip(np.rint(q + rng.normal(0, noise)), 1, 5))
            for rater, judge in (("ann", False), ("bea", False), ("cem", False), ("judge.x", True)):
                d = quality[0] - quality[1] + rng.normal(0, 0.7)
                verdicts.append(PairVerdict(f"t{t}", c, rater, f"t{t}/a", f"t{t}/b", 0 if abs(d) < 0.3 else int(np.sign(d)), judge))
    return _table(scores), verdicts, scores


def test_it_equals_sklearn_accuracy_and_bootstraps_by_topic():
    table, verdicts, scores = _random_campaign(8)
    rounds, seed = 50, 4
    result = cross_protocol(table, verdicts, rounds=rounds, seed=seed)

    def prediction(v):
        if v.is_judge:
            d = scores[(v.article_a, v.criterion, v.rater)] - scores[(v.article_b, v.criterion, v.rater)]
        else:
            mean = lambda art: np.mean([scores[(art, v.criterion, h)] for h in ("ann", "bea")])  # noqa: E731
            d = mean(v.article_a) - mean(v.article_b)
        return 0 if abs(d) <= 1e-9 else int(np.sign(d))

    for source, is_judge in (("humans", False), ("judge.x", True)):
        mine = [v for v in verdicts if v.is_judge == is_judge]
        fig = result.humans if source == "humans" else result.judges[source]
        pred = [prediction(v) for v in mine]
        assert abs(fig.figures["hit_rate"].value - accuracy_score([v.preferred for v in mine], pred)) < TOL
        assert fig.figures["hit_rate"].n == len(mine) and fig.figures["hit_rate"].n_pairs == 30
        style = [i for i, v in enumerate(mine) if v.criterion == "style"]
        ref = accuracy_score([mine[i].preferred for i in style], [pred[i] for i in style])
        assert abs(fig.by_criterion["style"]["hit_rate"].value - ref) < TOL
        # the interval: percentiles of the hit rate over rounds of drawn topics
        names = sorted({v.topic for v in verdicts})  # the bootstrap's units: topics in name order
        topic = np.asarray([names.index(v.topic) for v in mine])
        hit = np.asarray([p == v.preferred for p, v in zip(pred, mine)], dtype=float)
        samples = []
        for counts in draw_counts(30, rounds, seed):
            weight = counts[topic]
            samples.append((hit * weight).sum() / weight.sum())
        lo, hi = np.percentile(samples, [2.5, 97.5])
        assert abs(fig.figures["hit_rate"].ci_low - lo) < TOL and abs(fig.figures["hit_rate"].ci_high - hi) < TOL
        assert not math.isnan(fig.figures["hit_rate_decisive"].value)
