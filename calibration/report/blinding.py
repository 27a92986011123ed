"""The report's `blinding` section and its tables: what the annotators could tell, and what it did.

Three parts (issue 34), each read from the campaign's submitted, ordered assignments:

* the blinding indices of the guess question (`metrics.blinding`): Bang's per arm (the reference
  shown first / second) and James' over both, for the original assignments (known-answer pairs and
  swapped repeats apart, each on its own row), per generated system and per annotator;
* the verdicts split by guess (`metrics.guess_split`): the reference's human win rate and each
  judge's PAR and kappa per guess group, and "right minus don't know";
* the style-controlled Bradley-Terry fit (`metrics.style_control`) of the humans and of each judge,
  per criterion category and overall, with the blindness audit's style covariates;
* the judges' own answers to the guess question (`run_judges --guess`: one call of its own per pair
  and order, `judges.selectors`), through the same functions: each judge's Bang's index per arm and
  James' index (original pairs; known-answer pairs apart; per generated system), and its verdicts by
  its own guess: the reference's win rate in its verdicts, and its PAR and kappa against the human
  labels, the verdict of each order grouped by the guess of that order.
"""

from __future__ import annotations

from annotate.blindness_features import STYLE_FEATURES, style_of
from annotate.models import Assignment, Pair
from annotate.services.guesses import guess_position
from calibration import metrics as M
from calibration.metrics import blinding as B
from calibration.metrics import guess_split as G
from calibration.metrics.style_control import StyleVerdict, normalised_difference, style_fit
from calibration.report.sections import estimate, rounded
from calibration.report.table_format import DASH, Table, nested
from calibration.selectors import HUMAN_PREFIX
from judges.models import JudgeUnit

HUMANS = "humans"
# The guess groups as the report's JSON names them.
_GROUP_KEYS = {B.RIGHT: "right", B.WRONG: "wrong", B.DONT_KNOW: "dont_know"}
KINDS = ("original", "gold", "repeat")
BANG_RULE = (
    "Blinding: Bang's index per arm (the arms are the two randomised display orders: the reference shown first, or "
    "second) = (2 x right / (right + wrong) - 1) x (right + wrong) / all answers: 0 chance or all don't know, 1 all right, "
    "-1 all wrong"
)
JAMES_RULE = (
    "James' index over both arms = (1 + p_dk + (1 - p_dk) x kappa) / 2, kappa the weighted (right 0, wrong 1/2), "
    "chance-corrected disagreement of the guessers: 1 all don't know, 0.5 chance, 0 all right (systematically wrong "
    "guesses raise it too: read it beside Bang's)"
)
CI_RULE = (
    "95% CIs: expanded percentile intervals of a bootstrap over pairs for the indices, percentile intervals for the "
    "verdicts; a question left unanswered is missing, never don't know"
)
STYLE_RULE = (
    "style covariates: normalised differences (first system in name order minus the other, over their sum) in words, "
    "section headings, the share of list items and bold runs, as the blindness audit defines them; a logistic "
    "Bradley-Terry fit, Wald 95% CIs clustered by pair; a positive coefficient: the side with more of it is preferred "
    "beyond the systems' strengths"
)


def _reference(campaign) -> str | None:
    return campaign.reference_system.key if campaign.reference_system_id else None


def _guesses(campaign, reference: str) -> list[B.Guess]:
    rows = (
        Assignment.objects.filter(pair__campaign=campaign, status=Assignment.Status.SUBMITTED, order_known=True)
        .values_list(
            "pair_id", "annotator__username", "a_first", "guess", "repeat_of_id", "pair__gold__pair_id",
            "pair__article_a__system__key", "pair__article_b__system__key",
        )
        .order_by("pk")
    )  # fmt: skip
    out = []
    for pair_id, username, a_first, guess, repeat_of, gold, system_a, system_b in rows:
        if reference not in (system_a, system_b):
            continue
        reference_is_a = system_a == reference
        kind = "gold" if gold is not None else "repeat" if repeat_of is not None else "original"
        out.append(
            B.Guess(
                pair=pair_id,
                reference_first=reference_is_a == a_first,
                answer=guess_position(guess, a_first),
                system=system_b if reference_is_a else system_a,
                rater=username,
                kind=kind,
            )
        )
    return out


def _blinding_dict(result: B.Blinding) -> dict:
    def counts(c: B.Counts) -> dict:
        return {"right": c.right, "wrong": c.wrong, "dont_know": c.dont_know, "missing": c.missing, "guesses": c.guesses}

    return {
        "bang": {arm: {**estimate(result.bang[arm]), **counts(result.bang_counts[arm])} for arm in B.ARMS},
        "james": {**estimate(result.james), **counts(result.counts)},
        "n_pairs": result.n_pairs,
        "notes": result.notes,
    }


def _split_dict(split: G.Split) -> dict:
    return {
        "by_guess": {_GROUP_KEYS[g]: estimate(e) for g, e in split.by_guess.items()},
        "right_minus_dont_know": estimate(split.difference),
        "note": split.note,
    }


def _verdicts(table: M.LabelTable, guesses: list[B.Guess], reference: str, rounds: int, seed: int) -> dict:
    outcome_of = {(g.pair, g.rater): g.outcome for g in guesses if g.kind == "original"}
    vocab = table.vocab
    humans = table.humans()
    rows = []
    for i in range(len(humans)):
        pair, rater = int(humans.pair[i]), vocab.raters[humans.rater[i]]
        outcome = outcome_of.get((int(vocab.pairs[pair]), rater.removeprefix(HUMAN_PREFIX)), B.MISSING)
        lo, hi = vocab.systems[humans.sys_lo[i]], vocab.systems[humans.sys_hi[i]]
        ref = G.LO if lo == reference else G.HI if hi == reference else None
        rows.append(
            G.GuessedLabel(
                pair, vocab.criteria[humans.criterion[i]], vocab.categories[humans.category[i]], outcome, int(humans.outcome[i]), ref
            )
        )
    out = {HUMANS: {c: _split_dict(s) for c, s in G.reference_win_rate_by_guess(rows, rounds=rounds, seed=seed).items()}}
    judges = {}
    for name in table.judges().rater_names():
        merged = M.merge_swapped(table.for_rater(name))
        verdicts = {(int(merged.pair[i]), merged.vocab.criteria[merged.criterion[i]]): int(merged.outcome[i]) for i in range(len(merged))}
        split = G.agreement_by_guess(rows, verdicts, rounds=rounds, seed=seed)
        judges[name] = {c: {"par": _split_dict(s.par), "kappa": _split_dict(s.kappa)} for c, s in split.items()}
    out["judges"] = judges
    out["n_labels_without_answer"] = sum(1 for r in rows if r.guess == B.MISSING)
    return out


JUDGES_RULE = (
    "judges' rows: each judge's own answers to the same question, asked in a call of its own (no verdict in it, none after "
    "it) about each pair holding the reference, in each order it was shown (run_judges --guess); a pair judged in both "
    "orders has a guess in each arm"
)


def _judge_guesses(campaign, reference: str) -> dict[str, list[B.Guess]]:
    """Each judge's answers to the guess question (its units of question "guess" that are done), by judge name."""
    rows = (
        JudgeUnit.objects.filter(pair__campaign=campaign, question=JudgeUnit.Question.GUESS, status=JudgeUnit.Status.DONE)
        .values_list(
            "pair_id", "judge__name", "a_first", "guess", "pair__gold__pair_id", "pair__article_a__system__key",
            "pair__article_b__system__key",
        )
        .order_by("judge__name", "pk")
    )  # fmt: skip
    out: dict[str, list[B.Guess]] = {}
    for pair_id, judge, a_first, guess, gold, system_a, system_b in rows:
        if reference not in (system_a, system_b):
            continue
        reference_is_a = system_a == reference
        out.setdefault(judge, []).append(
            B.Guess(
                pair=pair_id,
                reference_first=reference_is_a == a_first,
                answer=guess_position(guess, a_first),
                system=system_b if reference_is_a else system_a,
                rater=judge,
                kind="gold" if gold is not None else "original",
            )
        )
    return out


def _reference_side(lo: str, hi: str, reference: str) -> int | None:
    return G.LO if lo == reference else G.HI if hi == reference else None


def _judge_verdicts(table: M.LabelTable, name: str, guesses: list[B.Guess], reference: str, rounds: int, seed: int) -> dict:
    """A judge's verdicts by its own guess: the reference's win rate in its verdicts, and its PAR and
    kappa against the human labels, each verdict (of one order) in the group of that order's guess."""
    outcome_of = {(g.pair, g.reference_first): g.outcome for g in guesses if g.kind == "original"}
    vocab = table.vocab
    own = table.for_rater(name)
    rows: list[G.GuessedLabel] = []
    verdicts: dict[tuple, int] = {}
    orders: dict[int, set[bool]] = {}
    for i in range(len(own)):
        code = int(own.first[i])
        if code < 0:
            continue  # the order shown is unknown (imported without it): no guess to group it by
        lo, hi = vocab.systems[own.sys_lo[i]], vocab.systems[own.sys_hi[i]]
        pair, criterion = int(vocab.pairs[own.pair[i]]), vocab.criteria[own.criterion[i]]
        order = (lo if code == 0 else hi) == reference
        outcome = int(own.outcome[i])
        guess = outcome_of.get((pair, order), B.MISSING)
        rows.append(
            G.GuessedLabel(pair, criterion, vocab.categories[own.category[i]], guess, outcome, _reference_side(lo, hi, reference), order)
        )
        verdicts[pair, criterion, order] = outcome
        orders.setdefault(pair, set()).add(order)
    humans = table.humans()
    labels: list[G.GuessedLabel] = []
    for i in range(len(humans)):
        pair, criterion = int(vocab.pairs[humans.pair[i]]), vocab.criteria[humans.criterion[i]]
        lo, hi = vocab.systems[humans.sys_lo[i]], vocab.systems[humans.sys_hi[i]]
        for order in sorted(orders.get(pair, ())):
            if (pair, criterion, order) in verdicts:
                guess = outcome_of.get((pair, order), B.MISSING)
                category = vocab.categories[humans.category[i]]
                labels.append(
                    G.GuessedLabel(pair, criterion, category, guess, int(humans.outcome[i]), _reference_side(lo, hi, reference), order)
                )
    win = G.reference_win_rate_by_guess(rows, rounds=rounds, seed=seed)
    agreement = G.agreement_by_guess(labels, verdicts, rounds=rounds, seed=seed) if labels else {}  # no human label to agree with
    return {
        "reference_win_rate": {c: _split_dict(split) for c, split in win.items()},
        "agreement": {c: {"par": _split_dict(split.par), "kappa": _split_dict(split.kappa)} for c, split in agreement.items()},
        "n_verdicts_without_answer": sum(1 for r in rows if r.guess == B.MISSING),
    }


def section_judges(campaign, table: M.LabelTable, *, rounds: int, seed: int) -> dict:
    """The judges' part of the section (`judges`): per judge that answered the guess question, its indices and
    its verdicts by its own guess; {} without a reference system."""
    reference = _reference(campaign)
    if reference is None:
        return {}
    out = {}
    for name, guesses in _judge_guesses(campaign, reference).items():
        originals = [g for g in guesses if g.kind == "original"]
        gold = [g for g in guesses if g.kind == "gold"]
        out[name] = {
            "overall": _blinding_dict(B.blinding(originals, rounds=rounds, seed=seed)) if originals else None,
            "by_kind": {"gold": _blinding_dict(B.blinding(gold, rounds=rounds, seed=seed))} if gold else {},
            "by_system": {k: _blinding_dict(v) for k, v in B.blinding_by(originals, lambda g: g.system, rounds=rounds, seed=seed).items()},
            "verdicts_by_guess": _judge_verdicts(table, name, guesses, reference, rounds, seed) if len(table) else None,
        }
    return out


STYLE_JUDGES_WITHHELD = (
    "the judges' style-controlled fits were not computed: the report has more than {n} judges "
    "(ask for them with --category-intervals all, as for the judges' per-category intervals)"
)


def _style(campaign, table: M.LabelTable, judges: bool = True) -> dict:
    articles = {}
    for pair_id, a_key, b_key, a_md, a_html, b_md, b_html in Pair.objects.filter(campaign=campaign).values_list(
        "pk", "article_a__system__key", "article_b__system__key",
        "article_a__display_markdown", "article_a__html", "article_b__display_markdown", "article_b__html",
    ):  # fmt: skip
        articles[str(pair_id)] = {a_key: (a_md, a_html), b_key: (b_md, b_html)}
    features: dict[tuple[str, str, bool], tuple[float, ...]] = {}

    def style(pair: str, system: str, neutral: bool) -> tuple[float, ...]:
        key = (pair, system, neutral)
        if key not in features:
            markdown, html = articles[pair][system]
            values = style_of(markdown or "", html or "", neutral_emphasis=neutral)
            features[key] = tuple(values[f] for f in STYLE_FEATURES)
        return features[key]

    vocab = table.vocab
    fits: dict[str, dict] = {}
    raters = [(HUMANS, table.humans(), campaign.neutral_emphasis)] + [
        (name, M.merge_swapped(table.for_rater(name)), False) for name in (table.judges().rater_names() if judges else [])
    ]
    for name, rows, neutral in raters:
        by_category: dict[str, list[StyleVerdict]] = {}
        for i in range(len(rows)):
            if rows.outcome[i] == M.TIED:
                continue
            pair = vocab.pairs[rows.pair[i]]
            lo, hi = vocab.systems[rows.sys_lo[i]], vocab.systems[rows.sys_hi[i]]
            if pair not in articles:
                continue
            x = tuple(normalised_difference(a, b) for a, b in zip(style(pair, lo, neutral), style(pair, hi, neutral), strict=True))
            verdict = StyleVerdict(pair, lo, hi, rows.outcome[i] == M.LO_WINS, x)
            by_category.setdefault(G.OVERALL, []).append(verdict)
            by_category.setdefault(vocab.categories[rows.category[i]], []).append(verdict)
        fitted = {}
        for category in sorted(by_category, key=lambda c: (c != G.OVERALL, c)):
            fit = style_fit(by_category[category], STYLE_FEATURES)
            if fit is not None:
                fitted[category] = _fit_dict(fit)
        fits[name] = fitted
    return {"features": list(STYLE_FEATURES), "rule": STYLE_RULE, "fits": fits, "judges_computed": judges}


def _fit_dict(fit) -> dict:
    return {
        "coefficients": {
            name: {
                "value": rounded(c.value),
                "ci": [rounded(c.ci[0]), rounded(c.ci[1])],
                "se": rounded(c.se),
                "excludes_zero": c.excludes_zero,
            }
            for name, c in fit.coefficients.items()
        },
        "ranking": fit.ranking(),
        "ranking_without_style": fit.ranking(with_style=False),
        "n": fit.n,
        "n_pairs": fit.n_pairs,
        "converged": fit.converged,
    }


def section(campaign, table: M.LabelTable, *, rounds: int, seed: int, style_judges: bool = True, max_judges: int = 0) -> dict:
    """The `blinding` section of a campaign's report (see the module docstring). `style_judges` False:
    the style control fits the humans only (a report of more than `max_judges` judges, unless asked:
    one fit per judge and category costs seconds at 65 judges), and says so."""
    reference = _reference(campaign)
    base = {
        "asked": campaign.guess_question,
        "reference_name": campaign.reference_name,
        "reference": reference,
        "bang_rule": BANG_RULE,
        "james_rule": JAMES_RULE,
        "ci_rule": CI_RULE,
        "judges_rule": JUDGES_RULE,
        "judges": section_judges(campaign, table, rounds=rounds, seed=seed),
    }
    guesses = _guesses(campaign, reference) if reference else []
    answered = any(g.answer != B.MISSING for g in guesses)
    style = (
        _style(campaign, table, style_judges)
        if len(table)
        else {"features": list(STYLE_FEATURES), "rule": STYLE_RULE, "fits": {}, "judges_computed": True}
    )
    if not style_judges:
        style["note"] = STYLE_JUDGES_WITHHELD.format(n=max_judges)
    if not answered:
        return {**base, "overall": None, "by_kind": {}, "by_system": {}, "by_annotator": {}, "verdicts_by_guess": None, "style": style}
    originals = [g for g in guesses if g.kind == "original"]
    by_kind = {kind: [g for g in guesses if g.kind == kind] for kind in KINDS}
    return {
        **base,
        "overall": _blinding_dict(B.blinding(originals, rounds=rounds, seed=seed)),
        "by_kind": {k: _blinding_dict(B.blinding(v, rounds=rounds, seed=seed)) for k, v in by_kind.items() if v},
        "by_system": {k: _blinding_dict(v) for k, v in B.blinding_by(originals, lambda g: g.system, rounds=rounds, seed=seed).items()},
        "by_annotator": {k: _blinding_dict(v) for k, v in B.blinding_by(originals, lambda g: g.rater, rounds=rounds, seed=seed).items()},
        "verdicts_by_guess": _verdicts(table, guesses, reference, rounds, seed),
        "style": style,
    }


# --- tables ----------------------------------------------------------------------------------------


def _bang_cell(entry: dict) -> str:
    return f"{nested(entry)}; {entry['dont_know']} don't know"


def _judge_groups(section: dict) -> list[tuple[str, dict]]:
    groups = []
    for name, judge in section.get("judges", {}).items():
        if judge["overall"]:
            groups.append((f"judge {name}", judge["overall"]))
        groups += [(f"judge {name}, {kind} pairs", entry) for kind, entry in judge["by_kind"].items()]
        groups += [(f"judge {name}, system {system}", entry) for system, entry in judge["by_system"].items()]
    return groups


def blinding_tables(report: dict) -> dict[str, Table]:
    section = report.get("blinding")
    headers = [
        "Group",
        "Bang, reference first [95% CI] (n)",
        "Bang, reference second [95% CI] (n)",
        "James [95% CI] (n)",
        "Guesses",
        "Don't know",
        "Missing",
    ]
    numeric = [False, True, True, True, True, True, True]
    title = "Blinding: what the annotators and judges could tell (the guess question)"
    out = {}
    humans = section is not None and bool(section.get("overall"))
    judges = [] if section is None else _judge_groups(section)
    if not humans and not judges:
        why = (
            "not in this report"
            if section is None
            else "no answers to the guess question" + ("" if section["asked"] else " (the campaign does not ask it)")
        )
        out["blinding"] = Table("blinding", title, headers, [], numeric, "", why)
        out["verdicts_by_guess"] = Table(
            "verdicts_by_guess", "Verdicts by guess", ["Rater", "Figure", "Category"], [], [False] * 3, "", why
        )
    else:
        groups = []
        if humans:
            groups += [("All (original assignments)", section["overall"])]
            groups += [(f"{kind} assignments", entry) for kind, entry in section["by_kind"].items() if kind != "original"]
            groups += [(f"system {name}", entry) for name, entry in section["by_system"].items()]
            groups += [(f"annotator {name}", entry) for name, entry in section["by_annotator"].items()]
        groups += judges
        rows = [
            [name, _bang_cell(e["bang"]["first"]), _bang_cell(e["bang"]["second"]), nested(e["james"]), str(e["james"]["guesses"]),
             str(e["james"]["dont_know"]), str(e["james"]["missing"])]
            for name, e in groups
        ]  # fmt: skip
        note = f"{section['bang_rule']}. {section['james_rule']}. {section['ci_rule']}."
        if judges:
            note += f" {section['judges_rule'].capitalize()}."
        if not humans:
            note += " No annotator answered the guess question" + ("." if section["asked"] else " (the campaign does not ask it).")
        out["blinding"] = Table("blinding", title, headers, rows, numeric, note)
        out["verdicts_by_guess"] = _verdicts_table(section)
    out["style_control"] = _style_table(section)
    return out


def _verdicts_table(section: dict) -> Table:
    headers = [
        "Rater",
        "Figure",
        "Category",
        "Right [95% CI] (n)",
        "Wrong [95% CI] (n)",
        "Don't know [95% CI] (n)",
        "Right − don't know [95% CI]",
        "Note",
    ]
    rows = []
    verdicts = section["verdicts_by_guess"]
    notes = []
    if verdicts is not None:
        for category, split in verdicts[HUMANS].items():
            rows.append(["humans", "reference win rate", category, *_split_cells(split)])
        for judge, categories in verdicts["judges"].items():
            for category, figures in categories.items():
                rows.append([judge, "PAR", category, *_split_cells(figures["par"])])
                rows.append([judge, "kappa", category, *_split_cells(figures["kappa"])])
        notes.append(
            "Human labels grouped by their assignment's answer to the guess question (right, wrong, don't know; "
            f"{verdicts['n_labels_without_answer']:,} labels without an answer left out). The reference's win rate counts a tie as "
            "one half; a judge's PAR and Cohen's kappa are against those labels, the judge's two orders merged (inconsistent: tie)."
        )
    own = {name: judge["verdicts_by_guess"] for name, judge in section.get("judges", {}).items() if judge["verdicts_by_guess"]}
    for judge, figures in own.items():
        for category, split in figures["reference_win_rate"].items():
            rows.append([judge, "reference win rate, by its own guess", category, *_split_cells(split)])
        for category, split in figures["agreement"].items():
            rows.append([judge, "PAR, by its own guess", category, *_split_cells(split["par"])])
            rows.append([judge, "kappa, by its own guess", category, *_split_cells(split["kappa"])])
    if own:
        without = sum(figures["n_verdicts_without_answer"] for figures in own.values())
        notes.append(
            '"By its own guess": the judge\'s verdicts grouped by its answer to the guess question in the same order '
            f"({without:,} verdicts without an answer left out): the reference's win rate in its verdicts, and its PAR and kappa "
            "against the human labels, each order's verdict compared on its own."
        )
    notes.append(f'Note: "{G.DIFFERS}" when the 95% CI of right minus don\'t know excludes 0.')
    return Table("verdicts_by_guess", "Verdicts by guess: do verdicts differ when annotators recognise the reference?", headers, rows,
                 [False, False, False, True, True, True, True, False], " ".join(notes))  # fmt: skip


def _split_cells(split: dict) -> list[str]:
    by = split["by_guess"]
    return [
        nested(by["right"]),
        nested(by["wrong"]),
        nested(by["dont_know"]),
        nested(split["right_minus_dont_know"]),
        split["note"] or DASH,
    ]


def _coefficient(entry: dict) -> str:
    lo, hi = entry["ci"]
    return f"{entry['value']:.2f} [{lo:.2f}, {hi:.2f}]" + (" *" if entry["excludes_zero"] else "")


def _style_table(section: dict | None) -> Table:
    headers = [
        "Rater",
        "Category",
        *(f"{f.replace('_', ' ')} [95% CI]" for f in STYLE_FEATURES),
        "n (pairs)",
        "Ranking with style",
        "Ranking without",
    ]
    numeric = [False, False, *(True for _ in STYLE_FEATURES), True, False, False]
    title = "Style control: Bradley–Terry with style covariates, per criterion category"
    if section is None:
        return Table("style_control", title, headers, [], numeric, "", "not in this report")
    rows = []
    for rater, fits in section["style"]["fits"].items():
        for category, fit in fits.items():
            rows.append([
                rater, category, *(_coefficient(fit["coefficients"][f]) for f in STYLE_FEATURES),
                f"{fit['n']:,} ({fit['n_pairs']:,})" + ("" if fit["converged"] else " not converged"),
                " > ".join(fit["ranking"]), " > ".join(fit["ranking_without_style"]),
            ])  # fmt: skip
    note = (
        (f"{section['style']['note'].capitalize()}. " if section["style"].get("note") else "")
        + f"{section['style']['rule'].capitalize()}. *: the CI excludes 0. Not converged: a system always or never wins "
        "(its strength grows without bound), so that row's figures are not estimates."
    )
    return Table("style_control", title, headers, rows, numeric, note)
