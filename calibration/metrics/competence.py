"""Annotator competence and an aggregated label per item: Dawid-Skene and MACE, written here as short
EM loops (numpy/scipy only) and held equal to crowd-kit's in the tests.

The answers are categorical with three classes, the outcome codes of a :class:`LabelTable`: the
first of the pair's systems in name order wins (``a``), the second wins (``b``), a ``tie``.

Tie handling, the same in both aggregators: **a tie is a third class**, never dropped. A tie is a
real answer here (the two articles are as good on that criterion), so each model learns how often
an annotator says tie when the truth is a, b or tie, and an item's aggregated label may be a tie.
Only the classes someone used are modelled: when nobody answered tie, the models have two classes
(as crowd-kit does; it takes its classes from the data).

Input conventions, shared by both:

* Items are ``(pair, criterion)``; workers are the raters of the table passed in (give it the
  humans: ``table.humans()``). A rater's **first** label on an item is their answer there; a later
  one (a swapped repeat of the same pair) is a position check, not a second vote.
* Classes, raters and items are taken in code order. An item's label is the class with the highest
  posterior; an item whose two best classes are within ``1e-9`` of each other is *unresolved*
  (``label`` -1) and left out of the reference table, as items without a strict majority are left
  out of the majority.

What "equal to crowd-kit" means (tests/test_competence.py, crowd-kit 1.4.2): on the same answers,
with the same starting point and the same iterations (Dawid-Skene: majority-vote start, at most
``max_iter`` iterations, the same stopping rule on crowd-kit's loss with ``tol``; MACE: the same
seeded starting draws, ``iterations`` EM steps, one restart), every resolved item gets the same
label, the posteriors agree to 1e-6, and so do the parameters (confusion matrices and class priors;
spamming and strategy probabilities) and the competences derived from them.

CIs: each competence comes with a 95% percentile interval of the pair bootstrap (the draws of
``bootstrap.py``, so the same resampled pairs as every other figure with the same seed): in each
round the model is refitted on the drawn pairs (an item drawn k times weighs k), starting from the
fit on all the data (Dawid-Skene: until its loss settles, as in the fit; MACE: until no parameter
moves by more than 1e-6 in a step, at most ``iterations`` steps). A rater with no label in a round
has no competence in it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
from scipy.special import digamma

from calibration.metrics._common import HI_WINS, LO_WINS, TIE, TIED, as_float
from calibration.metrics.bootstrap import Estimate, draw_count_blocks, percentile_ci
from calibration.metrics.labels import LabelTable, Vocab

CLASS_NAMES = {LO_WINS: "lo", HI_WINS: "hi", TIED: TIE}
METHODS = ("dawid-skene", "mace")
UNRESOLVED = -1
_EPS = 1e-10  # crowd-kit's floor for probabilities (Dawid-Skene), kept so the two agree
_NEAR_TIE = 1e-9
_LOG_MARGINAL_FLOOR = np.log(1e-8)
_BOOTSTRAP_TOL = 1e-6  # a MACE bootstrap round stops once no parameter moves more than this in a step  # crowd-kit's MACE adds 1e-8 to each item's marginal before the log


@dataclass(frozen=True)
class RaterCompetence:
    """One rater's competence under a model.

    * Dawid-Skene: ``competence`` is the probability that the rater's answer is the true class,
      averaged over the classes with the fitted priors (``sum_c prior_c * confusion[c][c]``);
      ``confusion[c][k]`` is the probability of answering class k when the truth is c.
    * MACE: ``competence`` is the probability that the rater is not spamming (knows the answer and
      gives it); ``spamming`` the probability of each answer when they spam.

    ``competence.n`` counts the rater's labels (first per item), ``competence.n_pairs`` their pairs.
    """

    rater: str
    competence: Estimate
    confusion: tuple[tuple[float, ...], ...] | None = None
    spamming: tuple[float, ...] | None = None

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, eq=False)
class Aggregate:
    """A model's competences and its label per item.

    ``classes`` names the modelled classes (a subset of ``a``, ``b``, ``tie``, in code order);
    ``posterior`` is (items x classes); ``item_pair``/``item_criterion`` give each item's codes in
    the input table's vocabulary; ``label`` is each item's outcome code, or -1 when unresolved.
    ``reference`` holds one label per resolved item, by a rater named after the method (kind
    ``human``), on the input's vocabulary plus that rater: pass it where the report takes the humans.
    ``reason`` is set, and everything else empty, when the model cannot run (no labels).
    ``parameters``: the fitted arrays, raters in rater-code order: Dawid-Skene ``confusion``
    (raters x answer x truth) and ``priors``; MACE ``spam`` (raters x (P(spamming), P(knowing)), as
    the EM left them: under ``vb`` the rows need not sum to 1) and ``strategy`` (raters x answer).
    """

    method: str
    classes: tuple[str, ...]
    raters: tuple[RaterCompetence, ...]
    item_pair: np.ndarray
    item_criterion: np.ndarray
    posterior: np.ndarray
    label: np.ndarray
    reference: LabelTable
    iterations: int
    priors: tuple[float, ...] | None = None
    reason: str | None = None
    parameters: dict[str, np.ndarray] = field(default_factory=dict)
    n_unresolved: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_unresolved", int((self.label == UNRESOLVED).sum()))

    def competence_of(self, rater: str) -> RaterCompetence | None:
        return next((r for r in self.raters if r.rater == rater), None)

    def as_dict(self) -> dict:
        return {
            "method": self.method,
            "classes": list(self.classes),
            "raters": [r.as_dict() for r in self.raters],
            "priors": None if self.priors is None else list(self.priors),
            "iterations": self.iterations,
            "n_items": int(len(self.label)),
            "n_unresolved": self.n_unresolved,
            "reason": self.reason,
        }


# --------------------------------------------------------------------------
# the answers as arrays
# --------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Answers:
    """One answer per (rater, item): task, worker and class index per answer, and per task its pair unit."""

    task: np.ndarray
    worker: np.ndarray
    answer: np.ndarray
    n_tasks: int
    n_workers: int
    n_classes: int
    task_unit: np.ndarray  # per task: index of its pair among the units
    units: np.ndarray  # pair codes
    class_codes: np.ndarray  # outcome code of each class index
    worker_codes: np.ndarray  # rater code of each worker index
    first_row: np.ndarray  # per task: a row of the table holding it

    def subset(self, keep_tasks: np.ndarray) -> "_Answers":
        """The answers on the tasks in ``keep_tasks`` (a mask), tasks renumbered."""
        new_index = np.cumsum(keep_tasks) - 1
        rows = keep_tasks[self.task]
        return _Answers(
            new_index[self.task[rows]], self.worker[rows], self.answer[rows], int(keep_tasks.sum()), self.n_workers,
            self.n_classes, self.task_unit[keep_tasks], self.units, self.class_codes, self.worker_codes,
            self.first_row[keep_tasks],
        )  # fmt: skip


def _answers(table: LabelTable) -> _Answers:
    span = int(table.item.max()) + 1 if len(table) else 1
    _, first = np.unique(table.rater.astype(np.int64) * span + table.item, return_index=True)
    first = np.sort(first)
    t = table.select(first)
    items, first_row, task = np.unique(t.item, return_index=True, return_inverse=True)
    worker_codes, worker = np.unique(t.rater, return_inverse=True)
    class_codes, answer = np.unique(t.outcome, return_inverse=True)
    units, task_unit = np.unique(t.pair[first_row], return_inverse=True)
    return _Answers(
        task.astype(np.int64), worker.astype(np.int64), answer.astype(np.int64), len(items), len(worker_codes),
        len(class_codes), task_unit.astype(np.int64), units, class_codes.astype(np.int64), worker_codes.astype(np.int64),
        first[first_row],
    )  # fmt: skip


def _per_task(d: _Answers, values: np.ndarray) -> np.ndarray:
    """Sum per-answer rows (answers x k) into (tasks x k)."""
    return np.stack([np.bincount(d.task, weights=values[:, c], minlength=d.n_tasks) for c in range(values.shape[1])], axis=1)


def _normalise_rows(log_scores: np.ndarray) -> np.ndarray:
    shifted = np.exp(log_scores - log_scores.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


# --------------------------------------------------------------------------
# Dawid-Skene
# --------------------------------------------------------------------------


def _ds_confusion(d: _Answers, posterior: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """(workers x answer x truth) probabilities of each answer given the truth.

    Only the answers a worker gave have a probability (floored at 1e-10, as crowd-kit floors them);
    the answers they never gave have none (0), which changes nothing in the fit.
    """
    k = d.n_classes
    cell = d.worker * k + d.answer
    w = weight[d.task]
    counts = np.stack([np.bincount(cell, weights=w * posterior[d.task, c], minlength=d.n_workers * k) for c in range(k)], axis=1)
    given = np.bincount(cell, weights=w, minlength=d.n_workers * k) > 0
    counts = np.where(given[:, None], np.maximum(counts, _EPS), 0.0).reshape(d.n_workers, k, k)
    totals = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts / totals


def _ds_loss(d, posterior, priors, log_conf, weight) -> float:
    """crowd-kit's stopping criterion: the expected log joint over the answers plus the items'
    entropy, per answer (its evidence lower bound; the prior counts once per answer, as there)."""
    w = weight[d.task]
    joint = float((w[:, None] * posterior[d.task] * (log_conf + np.log(priors))).sum())
    floored = np.maximum(posterior, _EPS)
    entropy = -float((weight[:, None] * floored * np.log(floored)).sum())
    return (joint + entropy) / float(w.sum())


def _ds_fit(d: _Answers, weight: np.ndarray, start: np.ndarray, max_iter: int, tol: float):
    """EM from the item posteriors ``start``: (posterior, priors, confusion, iterations)."""
    posterior = start
    priors = (weight[:, None] * posterior).sum(axis=0) / weight.sum()
    confusion = _ds_confusion(d, posterior, weight)
    loss = -np.inf
    iterations = 0
    for _ in range(max_iter):
        iterations += 1
        with np.errstate(divide="ignore"):
            log_conf = np.log(confusion[d.worker, d.answer])  # (answers x truth)
        priors = np.maximum(priors, _EPS)
        posterior = _normalise_rows(np.log(priors) + _per_task(d, log_conf))
        priors = (weight[:, None] * posterior).sum(axis=0) / weight.sum()
        confusion = _ds_confusion(d, posterior, weight)
        with np.errstate(divide="ignore"):
            log_conf = np.log(confusion[d.worker, d.answer])
        priors = np.maximum(priors, _EPS)
        new_loss = _ds_loss(d, posterior, priors, log_conf, weight)
        if new_loss - loss < tol:
            break
        loss = new_loss
    return posterior, priors, confusion, iterations


def _majority_start(d: _Answers) -> np.ndarray:
    """Each item's share of answers per class (crowd-kit's start: the soft majority vote)."""
    onehot = np.zeros((len(d.task), d.n_classes))
    onehot[np.arange(len(d.task)), d.answer] = 1.0
    counts = _per_task(d, onehot)
    return counts / counts.sum(axis=1, keepdims=True)


def _ds_competence(priors: np.ndarray, confusion: np.ndarray) -> np.ndarray:
    diagonal = np.diagonal(confusion, axis1=1, axis2=2)  # (workers x classes): P(answer c | truth c)
    return diagonal @ priors


# --------------------------------------------------------------------------
# MACE
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _MaceSettings:
    iterations: int
    variational: bool
    alpha: float
    beta: float
    strategy_prior: float
    noise: float


def _mace_start(n_workers: int, n_classes: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Starting (spam, strategy) parameters: uniform draws on [1, 2 + noise) normalised per worker,
    both tables drawn from the same seed (a legacy RandomState), as crowd-kit draws them."""
    spam = np.random.RandomState(seed).uniform(0.0, 1.0, (n_workers, 2)) * (1.0 + noise) + 1.0
    strategy = np.random.RandomState(seed).uniform(0.0, 1.0, (n_workers, n_classes)) * (1.0 + noise) + 1.0
    return spam / spam.sum(axis=1, keepdims=True), strategy / strategy.sum(axis=1, keepdims=True)


def _mace_e_step(d: _Answers, spam: np.ndarray, strategy: np.ndarray, weight: np.ndarray):
    """(item posteriors, log marginal likelihood, expected (spam, know) counts, expected strategy counts).

    spam[w] = (P(spamming), P(knowing)); an answer k given truth t has probability
    spam[w,0] * strategy[w,k] + spam[w,1] * [t == k]; the truth is uniform over the classes.
    """
    k = d.n_classes
    guessed = spam[d.worker, 0] * strategy[d.worker, d.answer]  # (answers,)
    known = spam[d.worker, 1]
    per_truth = guessed[:, None] + known[:, None] * (np.arange(k)[None, :] == d.answer[:, None])
    log_gold = _per_task(d, np.log(per_truth)) - np.log(k)
    top = log_gold.max(axis=1, keepdims=True)
    log_marginal = top[:, 0] + np.log(np.exp(log_gold - top).sum(axis=1))
    posterior = np.exp(log_gold - log_marginal[:, None])
    log_likelihood = float((weight * np.logaddexp(log_marginal, _LOG_MARGINAL_FLOOR)).sum())
    w = weight[d.task]
    spammed = w * (posterior[d.task] * (guessed[:, None] / per_truth)).sum(axis=1)
    knew = w * posterior[d.task, d.answer] * known / (guessed + known)
    spam_counts = np.stack(
        [np.bincount(d.worker, weights=spammed, minlength=d.n_workers), np.bincount(d.worker, weights=knew, minlength=d.n_workers)],
        axis=1,
    )
    strategy_counts = np.bincount(d.worker * k + d.answer, weights=spammed, minlength=d.n_workers * k).reshape(d.n_workers, k)
    return posterior, log_likelihood, spam_counts, strategy_counts


def _mace_m_step(spam_counts, strategy_counts, s: _MaceSettings, n_classes: int):
    if s.variational:
        # Variational Bayes with Beta(alpha, beta) on spamming and a symmetric Dirichlet on the
        # strategies: exp(digamma(count + prior)) / exp(digamma(total)); the rows need not sum to 1.
        priors = np.array([s.alpha, s.beta])
        spam = np.exp(digamma(spam_counts + priors) - digamma((spam_counts + priors).sum(axis=1, keepdims=True)))
        strategy = np.exp(
            digamma(strategy_counts + s.strategy_prior) - digamma((strategy_counts + s.strategy_prior).sum(axis=1, keepdims=True))
        )
        return spam, strategy
    smoothing = 0.01 / n_classes  # crowd-kit's smoothing of the plain EM step
    spam = (spam_counts + smoothing) / (spam_counts + smoothing).sum(axis=1, keepdims=True)
    strategy = (strategy_counts + smoothing) / (strategy_counts + smoothing).sum(axis=1, keepdims=True)
    return spam, strategy


def _mace_fit(d: _Answers, weight: np.ndarray, spam: np.ndarray, strategy: np.ndarray, s: _MaceSettings, tol: float = 0.0):
    """``iterations`` EM steps from (spam, strategy): (posterior, log likelihood, spam, strategy).
    With ``tol`` > 0 it stops early once no parameter moves by more than ``tol`` in a step."""
    posterior, log_likelihood, spam_counts, strategy_counts = _mace_e_step(d, spam, strategy, weight)
    for _ in range(s.iterations):
        new_spam, new_strategy = _mace_m_step(spam_counts, strategy_counts, s, d.n_classes)
        moved = max(np.abs(new_spam - spam).max(), np.abs(new_strategy - strategy).max())
        spam, strategy = new_spam, new_strategy
        posterior, log_likelihood, spam_counts, strategy_counts = _mace_e_step(d, spam, strategy, weight)
        if tol > 0 and moved < tol:
            break
    return posterior, log_likelihood, spam, strategy


def _mace_competence(spam: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return spam[:, 1] / spam.sum(axis=1)


# --------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------


def _labels_of(posterior: np.ndarray, class_codes: np.ndarray) -> np.ndarray:
    if posterior.shape[1] == 1:
        return np.full(len(posterior), class_codes[0], dtype=np.int64)
    ordered = np.sort(posterior, axis=1)
    best = class_codes[posterior.argmax(axis=1)]
    return np.where(ordered[:, -1] - ordered[:, -2] <= _NEAR_TIE, UNRESOLVED, best).astype(np.int64)


def _reference_table(table: LabelTable, d: _Answers, label: np.ndarray, name: str) -> LabelTable:
    v = table.vocab
    raters, kinds = v.raters, v.rater_kinds
    if name not in raters:
        raters, kinds = raters + (name,), kinds + ("human",)
    vocab = Vocab(v.pairs, v.criteria, v.categories, raters, kinds, v.systems)
    keep = label != UNRESOLVED
    rows = table.select(d.first_row[keep])
    return LabelTable(
        vocab, rows.pair, rows.criterion, rows.category, np.full(len(rows), raters.index(name)), rows.sys_lo, rows.sys_hi,
        label[keep], np.full(len(rows), -1), rows.longer,
    )  # fmt: skip


def _cannot_run(method: str, table: LabelTable, reason: str) -> Aggregate:
    empty = np.zeros(0, dtype=np.int64)
    ref = LabelTable.empty(table.vocab)
    return Aggregate(method, (), (), empty, empty, np.zeros((0, 0)), empty, ref, 0, None, reason)


def _bootstrap(d: _Answers, rounds: int, seed: int, refit) -> np.ndarray:
    """(rounds x workers) competences refitted on pair-bootstrap draws; NaN where a worker has no label."""
    n_units = len(d.units)
    out = []
    if rounds <= 0 or n_units == 0:
        return np.zeros((0, d.n_workers))
    for block in draw_count_blocks(n_units, rounds, seed):
        for counts in block:
            weight = counts[d.task_unit]
            keep = weight > 0
            sub = d.subset(keep)
            competence = refit(sub, weight[keep], keep)
            present = np.bincount(sub.worker, minlength=d.n_workers) > 0
            out.append(np.where(present, competence, np.nan))
    return np.array(out)


def _rater_estimates(table, d, point, samples, extra) -> tuple[RaterCompetence, ...]:
    lo, hi = percentile_ci(samples) if len(samples) else (np.full(d.n_workers, np.nan),) * 2
    n_labels = np.bincount(d.worker, minlength=d.n_workers)
    pairs_of = [np.unique(d.task_unit[d.task[d.worker == w]]).size for w in range(d.n_workers)]
    out = []
    for w in range(d.n_workers):
        estimate = Estimate(as_float(point[w]), int(n_labels[w]), as_float(lo[w]), as_float(hi[w]), int(pairs_of[w]))
        out.append(RaterCompetence(table.vocab.raters[d.worker_codes[w]], estimate, **extra(w)))
    return tuple(out)


def _check(table: LabelTable, rounds: int) -> None:
    if not isinstance(table, LabelTable):
        raise TypeError("pass a LabelTable (LabelTable.from_labels converts rows)")
    if rounds < 0:
        raise ValueError("rounds must be 0 or more")


def dawid_skene(labels: LabelTable, *, max_iter: int = 100, tol: float = 1e-5, rounds: int = 200, seed: int = 0) -> Aggregate:
    """Dawid-Skene (full confusion matrix per rater) by EM, as crowd-kit's ``DawidSkene(n_iter=max_iter, tol=tol)``.

    ``labels``: the raters to model (usually ``table.humans()``). Starts from the soft majority vote
    of each item, then alternates the item posteriors and the class priors and confusion matrices
    until crowd-kit's loss improves by less than ``tol`` or ``max_iter`` iterations have run.
    ``rounds``/``seed``: the pair bootstrap of the competences (0 rounds: no CI). Cannot run (``reason``
    set, nothing else) on an empty table. One rater alone is their own reference (competence 1).
    """
    _check(labels, rounds)
    if max_iter < 1 or tol < 0:
        raise ValueError("max_iter must be at least 1 and tol at least 0")
    if not len(labels):
        return _cannot_run("dawid-skene", labels, "no labels to aggregate")
    d = _answers(labels)
    ones = np.ones(d.n_tasks)
    posterior, priors, confusion, iterations = _ds_fit(d, ones, _majority_start(d), max_iter, tol)
    point = _ds_competence(priors, confusion)

    def refit(sub, weight, keep):
        _, p, c, _ = _ds_fit(sub, weight, posterior[keep], max_iter, tol)
        return _ds_competence(p, c)

    samples = _bootstrap(d, rounds, seed, refit)
    # confusion[w] is (answer x truth) here; shown the other way round: row = truth, column = answer.
    raters = _rater_estimates(
        labels, d, point, samples, lambda w: {"confusion": tuple(tuple(float(x) for x in row) for row in np.nan_to_num(confusion[w].T))}
    )
    label = _labels_of(posterior, d.class_codes)
    return Aggregate(
        "dawid-skene", tuple(CLASS_NAMES[int(c)] for c in d.class_codes), raters, labels.pair[d.first_row],
        labels.criterion[d.first_row], posterior, label, _reference_table(labels, d, label, "dawid-skene"), iterations,
        tuple(float(x) for x in priors), None, {"confusion": confusion, "priors": priors},
    )  # fmt: skip


def mace(
    labels: LabelTable,
    *,
    iterations: int = 50,
    method: str = "vb",
    alpha: float = 0.5,
    beta: float = 0.5,
    strategy_prior: float = 10.0,
    noise: float = 0.5,
    restarts: int = 1,
    init_seed: int = 0,
    rounds: int = 200,
    seed: int = 0,
) -> Aggregate:
    """MACE (Hovy et al. 2013) as crowd-kit's ``MACE(n_iter=iterations, method=method, n_restarts=1, random_state=init_seed)``.

    Each rater either knows the answer and gives it, or spams, answering from their own answer
    distribution. ``method`` is ``vb`` (variational Bayes with Beta(alpha, beta) on spamming and a
    symmetric Dirichlet(strategy_prior) on the spam answers; crowd-kit's default) or ``em`` (plain EM,
    smoothed by 0.01 / classes). Every restart runs ``iterations`` EM steps from seeded draws; the
    restart with the best marginal likelihood is kept. Restart r draws with seed ``init_seed + r``
    (crowd-kit draws every restart from the same seed, so its restarts are one; ours equal its
    result with ``restarts=1``). ``rounds``/``seed``: the pair bootstrap of the competences, each
    round starting from the fitted parameters and stopping once they move less than 1e-6. Cannot
    run on an empty table (``reason`` set).
    """
    _check(labels, rounds)
    if method not in ("vb", "em"):
        raise ValueError(f"unknown MACE method {method!r} (choose vb or em)")
    if iterations < 0 or restarts < 1:
        raise ValueError("iterations must be 0 or more and restarts at least 1")
    if not len(labels):
        return _cannot_run("mace", labels, "no labels to aggregate")
    s = _MaceSettings(int(iterations), method == "vb", float(alpha), float(beta), float(strategy_prior), float(noise))
    d = _answers(labels)
    ones = np.ones(d.n_tasks)
    best = None
    for r in range(restarts):
        spam, strategy = _mace_start(d.n_workers, d.n_classes, s.noise, init_seed + r)
        fit = _mace_fit(d, ones, spam, strategy, s)
        if best is None or fit[1] > best[1]:
            best = fit
    posterior, _, spam, strategy = best

    def refit(sub, weight, keep):
        # From the fitted parameters a round needs few steps: it stops once they move less than 1e-6.
        return _mace_competence(_mace_fit(sub, weight, spam, strategy, s, _BOOTSTRAP_TOL)[2])

    samples = _bootstrap(d, rounds, seed, refit)
    raters = _rater_estimates(labels, d, _mace_competence(spam), samples, lambda w: {"spamming": tuple(float(x) for x in strategy[w])})
    label = _labels_of(posterior, d.class_codes)
    return Aggregate(
        "mace", tuple(CLASS_NAMES[int(c)] for c in d.class_codes), raters, labels.pair[d.first_row], labels.criterion[d.first_row],
        posterior, label, _reference_table(labels, d, label, "mace"), int(iterations), None, None,
        {"spam": spam, "strategy": strategy},
    )  # fmt: skip


# --------------------------------------------------------------------------
# any categorical answers (one-article checklists, nominal classes)
# --------------------------------------------------------------------------


def categorical_fit(task, worker, answer, *, method: str, max_iter: int = 100, tol: float = 1e-5, iterations: int = 50):
    """Dawid-Skene or MACE (crowd-kit's defaults, as :func:`dawid_skene` and :func:`mace` fit them) on
    any categorical answers given as codes: one answer per (task, worker), ``answer`` a class index
    0..C-1. Returns (posterior (tasks x C), competence per worker). For answers about one article,
    which are not pairs: no pair bootstrap here."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} (choose {', '.join(METHODS)})")
    task, worker, answer = (np.asarray(a, dtype=np.int64) for a in (task, worker, answer))
    n_tasks, n_workers, n_classes = int(task.max()) + 1, int(worker.max()) + 1, int(answer.max()) + 1
    d = _Answers(
        task, worker, answer, n_tasks, n_workers, n_classes, np.zeros(n_tasks, np.int64), np.zeros(1, np.int64),
        np.arange(n_classes), np.arange(n_workers), np.zeros(n_tasks, np.int64),
    )  # fmt: skip
    ones = np.ones(n_tasks)
    if method == "dawid-skene":
        posterior, priors, confusion, _ = _ds_fit(d, ones, _majority_start(d), max_iter, tol)
        return posterior, _ds_competence(priors, confusion)
    s = _MaceSettings(int(iterations), True, 0.5, 0.5, 10.0, 0.5)
    spam, strategy = _mace_start(n_workers, n_classes, s.noise, 0)
    posterior, _, spam, _ = _mace_fit(d, ones, spam, strategy, s)
    return posterior, _mace_competence(spam)


def categorical_labels(posterior: np.ndarray) -> np.ndarray:
    """Each task's class index of highest posterior, UNRESOLVED (-1) when its two best are within 1e-9."""
    return _labels_of(posterior, np.arange(posterior.shape[1]))
