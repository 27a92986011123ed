"""calibration.metrics.acceptable: judge selection under the single choice and under the set of every
acceptable verdict (issue 40), on a constructed case where the best judge changes."""

from sklearn.metrics import accuracy_score

from calibration.metrics.acceptable import SetComparison, judge_selection


def constructed() -> list[SetComparison]:
    # Ten items, one human each, whose winner is always A; on the first six the human also accepts a tie.
    rows = []
    for item in range(10):
        accepted = ("a", "tie") if item < 6 else ("a",)
        rows.append(SetComparison(item, "exact", "a" if item >= 6 else "b", "a", accepted))  # right on 4 of 10 either way
        rows.append(SetComparison(item, "hedger", "tie" if item < 6 else "b", "a", accepted))  # a tie where a tie is acceptable
    return rows


def test_it_flags_that_the_best_judge_changes_when_sets_are_read():
    selection = judge_selection(constructed(), rounds=200, seed=1)
    figures = {j.judge: (j.single.value, j.in_set.value) for j in selection.judges}
    assert figures == {"exact": (0.4, 0.4), "hedger": (0.0, 0.6)}
    assert (selection.best_single, selection.best_set, selection.changed) == ("exact", "hedger", True)
    assert selection.n_labels_with_sets == 12
    exact = next(j for j in selection.judges if j.judge == "exact")
    assert exact.single.n == 10 and exact.single.n_pairs == 10
    assert exact.in_set.ci_low <= 0.4 <= exact.in_set.ci_high


def test_it_equals_accuracy_on_the_single_reading_and_changes_nothing_without_sets():
    rows = [SetComparison(r.pair, r.judge, r.verdict, r.winner, (r.winner,)) for r in constructed()]
    selection = judge_selection(rows, rounds=50)
    for judge in selection.judges:
        mine = [r for r in rows if r.judge == judge.judge]
        reference = accuracy_score([r.winner for r in mine], [r.verdict for r in mine])
        assert judge.single.value == judge.in_set.value == reference
    assert (selection.best_single, selection.best_set, selection.changed) == ("exact", "exact", False)
    assert judge_selection([]).judges == []
