"""The pointwise statistics (calibration/metrics/pointwise_*.py) against reference libraries on
shared inputs, to 1e-6: scikit-learn (kappa, accuracy, MAE, RMSE), scipy (Spearman, Kendall),
krippendorff (alpha), pingouin (ICC), statsmodels (Fleiss' kappa). Also the clustered bootstrap:
its intervals are the percentiles of the reference statistic recomputed on each round's drawn
articles. No database."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import accuracy_score, cohen_kappa_score, mean_absolute_error, root_mean_squared_error

from calibration.metrics.bootstrap import draw_counts
from calibration.metrics.pointwise import BINARY, COUNT, RATING, pointwise_table
from calibration.metrics.pointwise_agreement import human_ceiling, judge_figures, pointwise_statistics
from calibration.metrics.pointwise_panel import panel_figures, panels

krippendorff = pytest.importorskip("krippendorff")
pingouin = pytest.importorskip("pingouin")
inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")

TOL = 1e-6
HUMANS = ("ann", "bea", "cem", "dia")
JUDGES = ("gpt-4.1", "judge.b")


def _answers(response: str, seed: int = 3, articles: int = 36, criteria: int = 3, missing: float = 0.15):
    """values[article, criterion, rater] (NaN: no answer) for the four annotators then two judges,
    from a latent quality per item, and the table built from them."""
    rng = np.random.default_rng(seed)
    raters = HUMANS + JUDGES
    if response == RATING:
        truth = rng.integers(1, 6, (articles, criteria))[..., None]
        noise = rng.integers(-1, 2, (articles, criteria, len(raters)))
        noise[..., 5] = rng.integers(-2, 3, (articles, criteria))  # a noisy judge
        values = np.clip(truth + noise, 1, 5).astype(float)
    elif response == COUNT:
        truth = rng.poisson(3.0, (articles, criteria))[..., None]
        values = np.maximum(truth + rng.integers(-1, 3, (articles, criteria, len(raters))), 0).astype(float)
    else:
        truth = (rng.random((articles, criteria)) < 0.6)[..., None]
        flip = rng.random((articles, criteria, len(raters))) < 0.2
        values = np.where(flip, ~truth, truth).astype(float)
        values[rng.random(values.shape) < 0.1] = np.nan  # N/A answers
    answered = rng.random(values.shape) >= missing
    answered[..., 4] = True  # the first judge answers everything
    cols = {k: [] for k in ("article", "system", "topic", "criterion", "rater", "value", "is_judge")}
    for a, c, r in zip(*np.nonzero(answered)):
        cols["article"].append(f"article-{a}")
        cols["system"].append(f"sys-{a % 3}.1")
        cols["topic"].append(f"topic-{a // 3}")
        cols["criterion"].append(f"crit-{c}")
        cols["rater"].append(raters[r])
        cols["value"].append(values[a, c, r])
        cols["is_judge"].append(r >= 4)
    values = np.where(answered, values, np.nan)
    table = pointwise_table(**cols, response=response, scale=(1, 5) if response == RATING else None)
    return values, answered, table


def _article_order(table):
    """Row index into the test's article axis for each of the table's article codes."""
    return np.asarray([int(name.split("-")[1]) for name in table.articles])


def _judge_pairs(values, j):
    """(judge answer, one annotator's answer) for every pair where both answered (not N/A)."""
    x, h = [], []
    for a, c in np.ndindex(values.shape[:2]):
        if np.isnan(values[a, c, j]):
            continue
        for r in range(4):
            if not np.isnan(values[a, c, r]):
                x.append(values[a, c, j])
                h.append(values[a, c, r])
    return np.asarray(x), np.asarray(h)


def _judge_means(values, j, crit=None):
    x, m = [], []
    for a, c in np.ndindex(values.shape[:2]):
        if crit is not None and c != crit:
            continue
        hum = values[a, c, :4]
        if not np.isnan(values[a, c, j]) and (~np.isnan(hum)).any():
            x.append(values[a, c, j])
            m.append(np.nanmean(hum))
    return np.asarray(x), np.asarray(m)


def _loo(values):
    """Ceiling comparisons: (annotator answer, each other answer) pairs and (answer, others' mean)."""
    pairs_x, pairs_y, mean_x, mean_y, who = [], [], [], [], []
    for a, c in np.ndindex(values.shape[:2]):
        for r in range(4):
            v = values[a, c, r]
            others = [values[a, c, o] for o in range(4) if o != r and not np.isnan(values[a, c, o])]
            if np.isnan(v) or not others:
                continue
            pairs_x += [v] * len(others)
            pairs_y += others
            mean_x.append(v)
            mean_y.append(np.mean(others))
            who.append(r)
    return (np.asarray(p) for p in (pairs_x, pairs_y, mean_x, mean_y, who))


@pytest.fixture(scope="module")
def rating():
    return _answers(RATING)


def test_it_matches_sklearn_and_scipy_for_a_judge_on_ratings(rating):
    values, _, table = rating
    fig = judge_figures(table, "judge.b", rounds=0).figures
    x, h = _judge_pairs(values, 5)
    assert abs(fig["exact"].value - accuracy_score(h, x)) < TOL
    assert abs(fig["within_one"].value - np.mean(np.abs(x - h) <= 1)) < TOL
    assert fig["exact"].n == len(x)
    for kind in ("linear", "quadratic"):
        assert abs(fig[f"kappa_{kind}"].value - cohen_kappa_score(x, h, weights=kind, labels=[1, 2, 3, 4, 5])) < TOL
    x, m = _judge_means(values, 5)
    assert abs(fig["spearman"].value - stats.spearmanr(x, m)[0]) < TOL
    assert abs(fig["kendall"].value - stats.kendalltau(x, m)[0]) < TOL
    assert abs(fig["mae"].value - mean_absolute_error(m, x)) < TOL
    assert abs(fig["rmse"].value - root_mean_squared_error(m, x)) < TOL
    assert abs(fig["bias"].value - (x.mean() - m.mean())) < TOL
    assert abs(fig["human_mean"].value - m.mean()) < TOL
    assert fig["spearman"].n == len(x) and fig["spearman"].n_pairs == 36


def test_it_matches_the_references_per_criterion(rating):
    values, _, table = rating
    per = judge_figures(table, "gpt-4.1", rounds=0).by_criterion
    assert sorted(per) == ["crit-0", "crit-1", "crit-2"]
    for c in range(3):
        x, m = _judge_means(values, 4, crit=c)
        assert abs(per[f"crit-{c}"]["kendall"].value - stats.kendalltau(x, m)[0]) < TOL
        assert abs(per[f"crit-{c}"]["mae"].value - mean_absolute_error(m, x)) < TOL
        xp, hp = _judge_pairs(values[:, c : c + 1], 4)
        kq = cohen_kappa_score(xp, hp, weights="quadratic", labels=[1, 2, 3, 4, 5])
        assert abs(per[f"crit-{c}"]["kappa_quadratic"].value - kq) < TOL


def test_it_computes_the_ceiling_as_each_annotator_against_the_others(rating):
    values, _, table = rating
    pooled, annotators = human_ceiling(table, rounds=0)
    px, py, mx, my, who = _loo(values)
    fig = pooled.figures
    assert abs(fig["kappa_linear"].value - cohen_kappa_score(px, py, weights="linear", labels=[1, 2, 3, 4, 5])) < TOL
    assert abs(fig["exact"].value - accuracy_score(py, px)) < TOL
    assert abs(fig["spearman"].value - stats.spearmanr(mx, my)[0]) < TOL
    assert abs(fig["kendall"].value - stats.kendalltau(mx, my)[0]) < TOL
    assert abs(fig["rmse"].value - root_mean_squared_error(my, mx)) < TOL
    assert fig["spearman"].n == len(mx)
    for r, name in enumerate(HUMANS):
        mine = annotators[name].figures
        assert abs(mine["mae"].value - mean_absolute_error(my[who == r], mx[who == r])) < TOL
        assert abs(mine["kendall"].value - stats.kendalltau(mx[who == r], my[who == r])[0]) < TOL


def _reliability(values, raters):
    return values[:, :, list(raters)].reshape(-1, len(raters)).T  # raters x items


def test_it_matches_krippendorff_for_the_panels(rating):
    values, _, table = rating
    humans, judged = panels(table, rounds=0)
    # The panel with a judge: on the items the judge answered (judge.b skips some).
    judge_items = ~np.isnan(values[:, :, 5:6])
    for panel, raters, data in (
        (humans, range(4), values),
        (judged["judge.b"], [0, 1, 2, 3, 5], np.where(judge_items, values, np.nan)),
    ):
        data = _reliability(data, raters)
        ordinal = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
        interval = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
        assert abs(panel.figures["alpha_ordinal"].value - ordinal) < TOL
        assert abs(panel.figures["alpha_interval"].value - interval) < TOL
    same = krippendorff.alpha(
        reliability_data=_reliability(np.where(judge_items, values, np.nan), range(4)), level_of_measurement="interval"
    )
    change = judged["judge.b"].figures["alpha_interval_change"].value
    assert abs(change - (judged["judge.b"].figures["alpha_interval"].value - same)) < TOL
    c1 = values[:, 1:2]
    one = panel_figures(table.for_criterion("crit-1"), rounds=0).figures["alpha_ordinal"].value
    ref = krippendorff.alpha(reliability_data=_reliability(c1, range(4)), level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
    assert abs(one - ref) < TOL
    assert abs(humans.by_criterion["crit-1"]["alpha_ordinal"].value - ref) < TOL


def _icc_reference(values, raters):
    grid = values[:, :, list(raters)].reshape(-1, len(raters))
    complete = grid[~np.isnan(grid).any(axis=1)]
    long = pd.DataFrame(
        [(i, r, complete[i, r]) for i in range(len(complete)) for r in range(len(raters))], columns=["item", "rater", "score"]
    )
    res = pingouin.intraclass_corr(long, targets="item", raters="rater", ratings="score").set_index("Type")["ICC"]
    return res["ICC(A,1)"], res["ICC(A,k)"], len(complete)


def test_it_matches_pingouin_for_icc_on_the_fully_crossed_items(rating):
    values, _, table = rating
    humans, judged = panels(table, rounds=0)
    single, average, n = _icc_reference(values, range(4))
    assert abs(humans.figures["icc2_1"].value - single) < TOL
    assert abs(humans.figures["icc2_k"].value - average) < TOL
    assert humans.counts["icc_items"] == n == humans.figures["icc2_1"].n
    assert humans.counts["icc_items_left_out"] == 36 * 3 - n
    single, average, n = _icc_reference(values, [0, 1, 2, 3, 4])
    assert abs(judged["gpt-4.1"].figures["icc2_1"].value - single) < TOL
    assert abs(judged["gpt-4.1"].figures["icc2_k"].value - average) < TOL


def test_it_bootstraps_by_article_as_the_reference_recomputed_on_each_round(rating):
    """The CI is the 2.5/97.5 percentiles of the statistic on each round's drawn articles (all the
    criteria of a drawn article come along), with the seeded draws of calibration.metrics.bootstrap."""
    values, _, table = rating
    rounds, seed = 40, 7
    fig = judge_figures(table, "judge.b", rounds=rounds, seed=seed).figures
    order = _article_order(table)
    draws = draw_counts(len(table.articles), rounds, seed)
    kq, rho = [], []
    for counts in draws:
        picked = np.repeat(order, counts.astype(int))
        x, h = _judge_pairs(values[picked], 5)
        kq.append(cohen_kappa_score(x, h, weights="quadratic", labels=[1, 2, 3, 4, 5]))
        x, m = _judge_means(values[picked], 5)
        rho.append(stats.spearmanr(x, m)[0])
    for name, samples in (("kappa_quadratic", kq), ("spearman", rho)):
        lo, hi = np.percentile(samples, [2.5, 97.5])
        assert abs(fig[name].ci_low - lo) < TOL and abs(fig[name].ci_high - hi) < TOL
        assert fig[name].ci_low < fig[name].value < fig[name].ci_high


def test_it_bootstraps_by_topic_when_asked(rating):
    values, _, table = rating
    fig = judge_figures(table, "judge.b", cluster="topic", rounds=30, seed=1).figures
    assert fig["mae"].n_pairs == 12  # 36 articles, 3 per topic
    topic_of_article = np.asarray([table.article_topic[table.articles.index(f"article-{a}")] for a in range(36)])
    draws = draw_counts(12, 30, 1)
    maes = []
    for counts in draws:
        picked = np.concatenate([np.flatnonzero(topic_of_article == t) for t in np.repeat(np.arange(12), counts.astype(int))])
        x, m = _judge_means(values[picked], 5)
        maes.append(mean_absolute_error(m, x))
    lo, hi = np.percentile(maes, [2.5, 97.5])
    assert abs(fig["mae"].ci_low - lo) < TOL and abs(fig["mae"].ci_high - hi) < TOL
    with pytest.raises(ValueError, match="cluster must be one of"):
        judge_figures(table, "judge.b", cluster="system")


def test_it_bootstraps_the_icc_by_article(rating):
    values, _, table = rating
    rounds = 12
    fig = panel_figures(table, rounds=rounds, seed=2).figures
    order = _article_order(table)
    samples = []
    for counts in draw_counts(len(table.articles), rounds, 2):
        samples.append(_icc_reference(values[np.repeat(order, counts.astype(int))], range(4))[0])
    lo, hi = np.percentile(samples, [2.5, 97.5])
    assert abs(fig["icc2_1"].ci_low - lo) < TOL and abs(fig["icc2_1"].ci_high - hi) < TOL


@pytest.fixture(scope="module")
def binary():
    return _answers(BINARY, seed=5)


def test_it_matches_sklearn_for_a_judge_on_a_checklist(binary):
    values, answered, table = binary
    fig = judge_figures(table, "judge.b", rounds=0)
    x, h = _judge_pairs(values, 5)
    assert abs(fig.figures["agreement"].value - accuracy_score(h, x)) < TOL
    assert abs(fig.figures["kappa"].value - cohen_kappa_score(x, h)) < TOL
    xm, maj = [], []
    split = 0
    for a, c in np.ndindex(values.shape[:2]):
        hum = values[a, c, :4][~np.isnan(values[a, c, :4])]
        if np.isnan(values[a, c, 5]) or len(hum) == 0:
            continue
        if 2 * hum.sum() == len(hum):
            split += 1
            continue
        xm.append(values[a, c, 5])
        maj.append(float(2 * hum.sum() > len(hum)))
    assert abs(fig.figures["agreement_majority"].value - accuracy_score(maj, xm)) < TOL
    assert abs(fig.figures["kappa_majority"].value - cohen_kappa_score(xm, maj)) < TOL
    assert fig.counts["no_majority"] == split
    x, m = _judge_means(values, 5)
    assert abs(fig.figures["mean"].value - x.mean()) < TOL  # the judge's yes rate, N/A left out
    assert abs(fig.figures["bias"].value - (x.mean() - m.mean())) < TOL


def test_it_leaves_not_applicable_answers_out_and_counts_them(binary):
    values, answered, table = binary
    fig = judge_figures(table, "judge.b", rounds=0)
    hum_answered = answered[..., :4].any(axis=2)
    on = answered[..., 5] & hum_answered
    na_judge = on & np.isnan(values[..., 5])
    assert fig.counts["not_applicable"] == int(na_judge.sum()) > 0
    assert abs(fig.figures["not_applicable"].value - na_judge.sum() / on.sum()) < TOL
    ref_na = (answered[..., :4] & np.isnan(values[..., :4])).sum(axis=2)
    assert fig.counts["reference_not_applicable"] == int(ref_na[on].sum())
    share = ref_na[on] / answered[..., :4].sum(axis=2)[on]
    assert abs(fig.figures["human_not_applicable"].value - share.mean()) < TOL
    # an N/A is no answer: the comparisons are exactly the pairs without N/A on either side
    assert fig.figures["agreement"].n == len(_judge_pairs(values, 5)[0])


def test_it_matches_statsmodels_for_fleiss_kappa(binary):
    values, _, table = binary
    humans, judged = panels(table, rounds=0)
    for panel, raters in ((humans, range(4)), (judged["gpt-4.1"], range(5))):
        grid = values[:, :, list(raters)].reshape(-1, len(raters))
        if len(raters) == 5:  # with the judge: the items it answered (an N/A is no answer)
            grid = np.where(~np.isnan(grid[:, 4:5]), grid, np.nan)
        m = (~np.isnan(grid)).sum(axis=1)
        k = panel.counts["raters_per_item"]
        assert k == max(set(m[m >= 2].tolist()), key=lambda v: (list(m).count(v), v))
        rows = grid[m == k]
        counts = np.column_stack([(rows == 0).sum(axis=1), (rows == 1).sum(axis=1)])
        assert abs(panel.figures["fleiss_kappa"].value - inter_rater.fleiss_kappa(counts)) < TOL
        assert panel.counts["items_left_out"] == int(((m >= 2) & (m != k)).sum())


def test_it_matches_the_references_for_counts():
    values, _, table = _answers(COUNT, seed=11)
    result = pointwise_statistics(table, rounds=0)
    fig = result.judge_figures["judge.b"].figures
    x, m = _judge_means(values, 5)
    assert abs(fig["mae"].value - mean_absolute_error(m, x)) < TOL
    assert abs(fig["rmse"].value - root_mean_squared_error(m, x)) < TOL
    assert "kappa_linear" not in fig and "spearman" not in fig
    alpha = krippendorff.alpha(reliability_data=_reliability(values, range(4)), level_of_measurement="interval")
    assert abs(result.human_panel.figures["alpha_interval"].value - alpha) < TOL
    on_judge = np.where(~np.isnan(values[:, :, 5:6]), values, np.nan)
    alpha_j = krippendorff.alpha(reliability_data=_reliability(on_judge, [0, 1, 2, 3, 5]), level_of_measurement="interval")
    assert abs(result.judge_panels["judge.b"].figures["alpha_interval"].value - alpha_j) < TOL
    _, _, mx, my, _ = _loo(values)
    assert abs(result.ceiling.figures["mae"].value - mean_absolute_error(my, mx)) < TOL


def test_it_gives_every_figure_its_n_and_a_ci(rating):
    _, _, table = rating
    result = pointwise_statistics(table, rounds=200)
    groups = [
        result.ceiling,
        *result.judge_figures.values(),
        *result.annotators.values(),
        result.human_panel,
        *result.judge_panels.values(),
    ]
    for figures in groups:
        for name, est in figures.figures.items():
            assert est.value is not None and est.n > 0 and est.n_pairs > 0, name
            assert est.ci_low is not None and est.ci_low <= est.value + 1e-12 and est.value <= est.ci_high + 1e-12, name
    assert result.n_answers == len(table) and result.n_clusters == 36
    assert result.humans == HUMANS and result.judges == ("gpt-4.1", "judge.b")


def test_it_says_none_when_a_figure_cannot_run():
    """One annotator: no ceiling, no panel; a judge that always says 3: no correlation."""
    cols = {k: [] for k in ("article", "system", "topic", "criterion", "rater", "value", "is_judge")}
    for a in range(6):
        for rater, value, judge in (("ann", 1 + a % 5, False), ("flat-judge", 3, True)):
            for k, v in zip(cols, (f"a{a}", "s", "t", "c", rater, float(value), judge)):
                cols[k].append(v)
    table = pointwise_table(**cols, response=RATING, scale=(1, 5))
    result = pointwise_statistics(table, rounds=50)
    fig = result.judge_figures["flat-judge"].figures
    assert fig["spearman"].value is None and fig["spearman"].n == 6
    assert fig["mae"].value is not None
    assert result.ceiling.figures["exact"].value is None and result.ceiling.figures["exact"].n == 0
    assert result.annotators == {}
    assert result.human_panel.figures["alpha_interval"].value is None
    assert result.human_panel.figures["icc2_1"].value is None  # one rater: no two-way ANOVA


def test_it_takes_the_larger_number_of_raters_for_fleiss_kappa_on_a_tie():
    # two items with two answers, two with three (N/A answers do not count): Fleiss' kappa on the three-answer items
    answers = {"i1": [1, 1, None], "i2": [0, 1, float("nan")], "i3": [1, 1, 0], "i4": [0, 0, 0]}
    cols = {k: [] for k in ("article", "system", "topic", "criterion", "rater", "value", "is_judge")}
    for item, values in answers.items():
        for rater, value in zip(("ann", "bea", "cem"), values):
            for key, v in zip(cols, (item, "s", "t", "q", rater, value, False)):
                cols[key].append(v)
    panel = panel_figures(pointwise_table(**cols, response=BINARY), rounds=0)
    assert panel.counts == {"items": 4, "raters_per_item": 3, "items_left_out": 2}
    expected = inter_rater.fleiss_kappa(np.array([[1, 2], [3, 0]]))
    assert abs(panel.figures["fleiss_kappa"].value - expected) < TOL


def test_it_computes_the_checklist_ceiling_against_the_others(binary):
    values, answered, table = binary
    pooled, annotators = human_ceiling(table, rounds=0)
    px, py, mx, my, who = _loo(values)
    assert abs(pooled.figures["agreement"].value - accuracy_score(py, px)) < TOL
    assert abs(pooled.figures["kappa"].value - cohen_kappa_score(px, py)) < TOL
    assert abs(pooled.figures["bias"].value - (mx.mean() - my.mean())) < TOL
    decided = my != 0.5  # the others' strict majority: their yes share is not one half
    assert abs(pooled.figures["agreement_majority"].value - accuracy_score(my[decided] > 0.5, mx[decided] == 1)) < TOL
    assert abs(pooled.figures["kappa_majority"].value - cohen_kappa_score(mx[decided], (my[decided] > 0.5).astype(float))) < TOL
    assert pooled.counts["no_majority"] == int((~decided).sum())
    for r, name in enumerate(HUMANS):
        mine = annotators[name]
        x, y = [], []
        for a, c in np.ndindex(values.shape[:2]):
            others = [values[a, c, o] for o in range(4) if o != r and not np.isnan(values[a, c, o])]
            if not np.isnan(values[a, c, r]):
                x += [values[a, c, r]] * len(others)
                y += others
        assert abs(mine.figures["kappa"].value - cohen_kappa_score(x, y)) < TOL
        on = answered[..., r] & (answered[..., :4].sum(axis=2) >= 2)
        assert mine.counts["not_applicable"] == int((on & np.isnan(values[..., r])).sum())
        assert abs(mine.figures["not_applicable"].value - (on & np.isnan(values[..., r])).sum() / on.sum()) < TOL
        assert abs(mine.figures["mean"].value - mx[who == r].mean()) < TOL


def test_it_computes_a_judges_fleiss_kappa_on_the_items_it_answered():
    """A judge answering under half the items: its panel is Fleiss' kappa on those items (statsmodels), with its
    coverage; before, the most common number of raters was the annotators' alone and the judge was left out."""
    rng = np.random.default_rng(5)
    items, humans = 60, 3
    truth = rng.random(items) < 0.5
    cols = {k: [] for k in ("article", "system", "topic", "criterion", "rater", "value", "is_judge")}
    grid = np.full((items, humans + 1), np.nan)
    for i in range(items):
        for r in range(humans + 1):
            if r == humans and i % 3 != 0:
                continue  # the judge answers one item in three
            value = float(truth[i] != (rng.random() < 0.25))
            grid[i, r] = value
            for key, v in zip(cols, (f"a{i}", "s", f"t{i}", "q", f"r{r}" if r < humans else "judge", value, r == humans)):
                cols[key].append(v)
    human_panel, judged = panels(pointwise_table(**cols, response=BINARY), rounds=0)
    panel = judged["judge"]
    on = ~np.isnan(grid[:, humans])
    expected = inter_rater.fleiss_kappa(np.column_stack([(grid[on] == 0).sum(axis=1), (grid[on] == 1).sum(axis=1)]))
    assert abs(panel.figures["fleiss_kappa"].value - expected) < TOL
    assert panel.figures["fleiss_kappa"].n == 20 and panel.counts["raters_per_item"] == humans + 1
    assert panel.counts["judge_items"] == 20 and panel.counts["human_items"] == 60
    assert abs(panel.counts["coverage"] - 1 / 3) < TOL
    alone = inter_rater.fleiss_kappa(np.column_stack([(grid[on, :humans] == 0).sum(axis=1), (grid[on, :humans] == 1).sum(axis=1)]))
    assert abs(panel.figures["fleiss_kappa_change"].value - (expected - alone)) < TOL
    assert human_panel.figures["fleiss_kappa"].n == 60
