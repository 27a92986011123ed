"""The pointwise statistics as functions of summed sufficient statistics.

Every statistic of :mod:`.pointwise_agreement` is a function of sums over items: a contingency
table, a coincidence matrix, sums of values, squares and products. The sums of a bootstrap round
are the draw counts times per-cluster sums (:mod:`.bootstrap`), so a statistic is computed for all
rounds at once by applying one of these functions to an array whose leading axes are (rounds,
groups). Each function takes ``(..., k)`` or ``(..., C, C)`` arrays and returns ``(...)``, NaN
where the statistic is undefined (nothing to compare, no spread).

The tests hold each one equal, on shared inputs, to scikit-learn (weighted kappa), scipy (Spearman,
Kendall's tau-b), statsmodels (Fleiss' kappa), krippendorff (alpha) and pingouin (ICC).

Pure numpy, no Django.
"""

from __future__ import annotations

import numpy as np

NOMINAL, LINEAR, QUADRATIC = "nominal", "linear", "quadratic"


def safe_div(num, den):
    """num / den where den > 0, else NaN (elementwise)."""
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def disagreement_weights(n_categories: int, kind: str) -> np.ndarray:
    """(C, C) weights of Cohen's kappa: 0 on the diagonal; 1 elsewhere (``nominal``), |i - j|
    (``linear``) or (i - j)^2 (``quadratic``) for categories in scale order."""
    i = np.arange(n_categories)
    diff = np.abs(i[:, None] - i[None, :]).astype(np.float64)
    if kind == NOMINAL:
        return (diff > 0).astype(np.float64)
    if kind == LINEAR:
        return diff
    if kind == QUADRATIC:
        return diff**2
    raise ValueError(f"unknown kappa weighting {kind!r}")


def kappa(table: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Cohen's kappa of a (..., C, C) contingency table (rows: rater x, columns: reference):
    1 - sum(w O) / sum(w E), E the table of independent margins with the same total."""
    n = table.sum(axis=(-2, -1))
    expected = table.sum(axis=-1)[..., :, None] * table.sum(axis=-2)[..., None, :]
    expected = expected * safe_div(1.0, n)[..., None, None]
    observed_w = (table * weights).sum(axis=(-2, -1))
    expected_w = (expected * weights).sum(axis=(-2, -1))
    return np.where(n > 0, 1.0 - safe_div(observed_w, expected_w), np.nan)


def share_within(table: np.ndarray, distance: int) -> np.ndarray:
    """Share of a (..., C, C) table's mass with |row - column| <= ``distance`` (0: exact agreement)."""
    i = np.arange(table.shape[-1])
    near = (np.abs(i[:, None] - i[None, :]) <= distance).astype(np.float64)
    return safe_div((table * near).sum(axis=(-2, -1)), table.sum(axis=(-2, -1)))


def _midranks(margin: np.ndarray) -> np.ndarray:
    """Average ranks (from 1) of the values in each category, from the category counts."""
    return np.cumsum(margin, axis=-1) - margin + (margin + 1.0) / 2.0


def spearman(table: np.ndarray) -> np.ndarray:
    """Spearman's rho of a (..., R, S) joint table of two variables' ordered distinct values:
    Pearson's correlation of their average ranks (ties share the mean of their ranks)."""
    n = table.sum(axis=(-2, -1))
    a, b = table.sum(axis=-1), table.sum(axis=-2)
    centre = ((n + 1.0) / 2.0)[..., None]
    dx, dy = _midranks(a) - centre, _midranks(b) - centre
    cov = np.einsum("...rs,...r,...s->...", table, dx, dy)
    var = (a * dx * dx).sum(axis=-1) * (b * dy * dy).sum(axis=-1)
    return safe_div(cov, np.sqrt(np.maximum(var, 0.0)))


def kendall_tau_b(table: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of a (..., R, S) joint table: (concordant - discordant) pairs over the
    geometric mean of the pairs untied in each variable."""
    r = table.shape[-2]
    n = table.sum(axis=(-2, -1))
    # later[r, s]: mass at rows > r in column s. Concordant minus discordant partners of a cell
    # (r, s): later rows with a column > s minus later rows with a column < s, that is
    # total(later) - 2 * (later, columns <= s) + later[r, s]. The sum over later rows is a
    # product with a small triangular matrix (R is a scale's points); the running sum over
    # columns, which can be many (distinct means), a cumsum along the contiguous last axis.
    later = np.matmul(np.tri(r, k=-1).T, table)
    up_to = np.cumsum(later, axis=-1)
    a, b = table.sum(axis=-1), table.sum(axis=-2)
    # sum over cells of table * partners, term by term (einsum: no array of partners in memory)
    difference = (a * later.sum(axis=-1)).sum(axis=-1) - 2.0 * np.einsum("...rs,...rs->...", table, up_to)
    difference = difference + np.einsum("...rs,...rs->...", table, later)
    pairs = n * (n - 1.0) / 2.0
    untied_x = pairs - (a * (a - 1.0) / 2.0).sum(axis=-1)
    untied_y = pairs - (b * (b - 1.0) / 2.0).sum(axis=-1)
    return safe_div(difference, np.sqrt(np.maximum(untied_x * untied_y, 0.0)))


# --------------------------------------------------------------------------
# Krippendorff's alpha
# --------------------------------------------------------------------------


def alpha_interval_terms(values: np.ndarray) -> np.ndarray:
    """Per item of a (items x raters) grid (NaN = no value): [pairable values m, sum, sum of squares,
    within-item disagreement sum_{i != j} (v_i - v_j)^2 / (m - 1)]; zeros for items with m < 2."""
    ok = ~np.isnan(values)
    m = ok.sum(axis=1).astype(np.float64)
    v = np.where(ok, values, 0.0)
    s, ss = v.sum(axis=1), (v * v).sum(axis=1)
    pairable = m >= 2
    within = safe_div(2.0 * m * ss - 2.0 * s * s, m - 1.0)
    terms = np.column_stack([m, s, ss, np.nan_to_num(within)])
    terms[~pairable] = 0.0
    return terms


def alpha_interval(terms: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha (interval metric) from summed :func:`alpha_interval_terms` (..., 4):
    1 - (n - 1) D_within / sum over all pairs of pairable values of (v - v')^2."""
    n, s, ss, within = (terms[..., j] for j in range(4))
    expected = 2.0 * n * ss - 2.0 * s * s
    return 1.0 - (n - 1.0) * safe_div(within, expected)


def coincidences(counts: np.ndarray) -> np.ndarray:
    """Per item, its coincidence matrix (items, C, C) from its category counts (items, C):
    (n_c n_k - [c = k] n_c) / (m - 1); zeros for items with fewer than two values."""
    m = counts.sum(axis=1).astype(np.float64)
    out = counts[:, :, None] * counts[:, None, :] - np.einsum("ic,cd->icd", counts, np.eye(counts.shape[1]))
    out = out * safe_div(1.0, m - 1.0)[:, None, None]
    out[m < 2] = 0.0
    return np.nan_to_num(out)


def alpha_nominal(coincidence: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha (nominal metric) from a summed (..., C, C) coincidence matrix: any two
    different categories are at distance 1, so 1 - (n - 1) (off-diagonal coincidences) / (sum over
    c != k of n_c n_k)."""
    n_c = coincidence.sum(axis=-1)
    n = n_c.sum(axis=-1)
    observed = n - np.trace(coincidence, axis1=-2, axis2=-1)
    expected = n * n - (n_c * n_c).sum(axis=-1)
    return 1.0 - (n - 1.0) * safe_div(observed, expected)


def alpha_ordinal(coincidence: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha (ordinal metric) from a summed (..., C, C) coincidence matrix of
    categories in scale order. The distance of c and k is the mass between them, half of each end
    included: (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2."""
    n_c = coincidence.sum(axis=-1)
    n = n_c.sum(axis=-1)
    cum = np.cumsum(n_c, axis=-1)
    between = cum[..., None, :] - cum[..., :, None] + (n_c[..., :, None] - n_c[..., None, :]) / 2.0
    delta = between * between
    observed = (coincidence * delta).sum(axis=(-2, -1))
    expected = (n_c[..., :, None] * n_c[..., None, :] * delta).sum(axis=(-2, -1))
    return 1.0 - (n - 1.0) * safe_div(observed, expected)


# --------------------------------------------------------------------------
# ICC and Fleiss' kappa
# --------------------------------------------------------------------------


def icc_terms(values: np.ndarray) -> np.ndarray:
    """Per item of a complete (items x k) grid: [1, sum, sum of squares, sum^2, v_1 .. v_k]."""
    s = values.sum(axis=1)
    return np.column_stack([np.ones(len(values)), s, (values * values).sum(axis=1), s * s, values])


def icc2(terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ICC(2,1) and ICC(2,k) (two-way random effects, absolute agreement; single rater and the mean
    of the k raters) from summed :func:`icc_terms` (..., 4 + k), by the two-way ANOVA mean squares."""
    k = terms.shape[-1] - 4
    n, s, ss, row2 = (terms[..., j] for j in range(4))
    cols = terms[..., 4:]
    correction = safe_div(s * s, n * k)
    ss_rows = row2 / k - correction
    ss_cols = safe_div((cols * cols).sum(axis=-1), n) - correction
    ss_error = ss - correction - ss_rows - ss_cols
    ms_rows = safe_div(ss_rows, n - 1.0)
    ms_cols = ss_cols / max(k - 1, 1)
    ms_error = safe_div(ss_error, (n - 1.0) * (k - 1))
    single = safe_div(ms_rows - ms_error, ms_rows + (k - 1) * ms_error + safe_div(k * (ms_cols - ms_error), n))
    average = safe_div(ms_rows - ms_error, ms_rows + safe_div(ms_cols - ms_error, n))
    valid = (n >= 2) & (k >= 2)
    return np.where(valid, single, np.nan), np.where(valid, average, np.nan)


def fleiss_terms(counts: np.ndarray) -> np.ndarray:
    """Per item of (items, C) category counts, all with the same number of raters m:
    [1, sum_c n_c^2, n_1 .. n_C]."""
    return np.column_stack([np.ones(len(counts)), (counts * counts).sum(axis=1), counts]).astype(np.float64)


def fleiss_kappa(terms: np.ndarray, raters_per_item: int) -> np.ndarray:
    """Fleiss' kappa from summed :func:`fleiss_terms` (..., 2 + C), ``raters_per_item`` = m."""
    m = float(raters_per_item)
    n, squares, cats = terms[..., 0], terms[..., 1], terms[..., 2:]
    observed = safe_div(squares - n * m, n * m * (m - 1.0))
    shares = cats * safe_div(1.0, n * m)[..., None]
    chance = (shares * shares).sum(axis=-1)
    return np.where(m >= 2, safe_div(observed - chance, 1.0 - chance), np.nan)


# --------------------------------------------------------------------------
# differences against a reference value
# --------------------------------------------------------------------------

ERROR_TERMS = ("n", "x", "reference", "error", "abs_error", "sq_error")


def error_terms(x: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Per comparison: [1, x, reference, x - reference, |x - reference|, (x - reference)^2]."""
    e = x - reference
    return np.column_stack([np.ones(len(x)), x, reference, e, np.abs(e), e * e])


def error_figures(terms: np.ndarray) -> dict[str, np.ndarray]:
    """From summed :func:`error_terms` (..., 6): the rater's mean, the reference's mean, bias (their
    difference), MAE and RMSE."""
    n = terms[..., 0]
    mean = {name: safe_div(terms[..., j], n) for j, name in enumerate(ERROR_TERMS) if j}
    return {
        "mean": mean["x"],
        "human_mean": mean["reference"],
        "bias": mean["error"],
        "mae": mean["abs_error"],
        "rmse": np.sqrt(mean["sq_error"]),
    }


# The checklist figures against the human majority, from the 2 x 2 table [rater answer, majority]
# (0 no, 1 yes; "yes" is the positive class): the names a checklist study publishes.
MAJORITY_SCORES = ("balanced_accuracy", "precision", "recall", "f1", "phi", "majority_yes_rate")


def majority_scores(table: np.ndarray) -> dict[str, np.ndarray]:
    """Each of MAJORITY_SCORES from (..., 2, 2) tables (NaN where a denominator is zero): recall is the
    share of the majority's yes the rater says yes to, precision the share of the rater's yes the
    majority says yes to, phi the correlation of the two 0/1 answers (Matthews), majority_yes_rate
    the share of items whose majority is yes."""
    tn, fn = table[..., 0, 0], table[..., 0, 1]
    fp, tp = table[..., 1, 0], table[..., 1, 1]
    recall = safe_div(tp, tp + fn)
    specificity = safe_div(tn, tn + fp)
    with np.errstate(invalid="ignore"):
        phi_den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return {
        "balanced_accuracy": (recall + specificity) / 2,
        "precision": safe_div(tp, tp + fp),
        "recall": recall,
        "f1": safe_div(2 * tp, 2 * tp + fp + fn),
        "phi": safe_div(tp * tn - fp * fn, phi_den),
        "majority_yes_rate": safe_div(tp + fn, tn + fn + fp + tp),
    }
