"""Blindness audit: could an annotator tell the reference article from a generated one by its looks?

Pure logic, no Django: surface features measured on what annotators are shown
(``annotate.blindness_features``: words, headings, phrases, and the presentation features
paragraph length, bold, italic, lists, tables and heading depth), and how well a simple classifier
guesses "reference" from those features alone. A high guessability means the campaign is not
blind in practice, whatever the interface hides. The report's tables are ``annotate.blindness_format``.

Guessability is the out-of-fold *balanced* accuracy (the mean of the share of reference articles
called reference and the share of generated ones called generated: 0.5 is chance whatever the mix)
of a logistic regression on the standardized features, with cross-validation grouped by topic so
that no topic has articles on both sides of a split. Its 95% interval comes from resampling topics
(the articles of a topic are not independent of each other). Fewer than `MIN_TOPICS` topics: no figure.

Each feature's per-system effect is its AUC for that system's articles against the reference's on
the same topics (``SystemRow.effects``). The report is computed as the campaign shows the articles
(``neutral_emphasis``: bold and italic as plain text, or as written), and gives guessability both
ways (``guessability_by_emphasis``), so that a paper can say what annotators saw and what the
option changed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from statistics import mean, median

from annotate.blindness_features import EMPHASIS_KEYS, FEATURE_KEYS, FEATURES, Feature, features_of

__all__ = [
    "AS_WRITTEN",
    "BlindnessReport",
    "FEATURES",
    "FEATURE_KEYS",
    "Guessability",
    "MIN_TOPICS",
    "NEUTRAL",
    "Sample",
    "Separation",
    "SystemRow",
    "blindness_report",
    "features_of",
    "guessability",
    "label_of",
    "launch_warning",
    "separation",
]

MIN_TOPICS = 4
MAX_FOLDS = 5
BOOTSTRAP_ROUNDS = 2000
# A feature whose area under the ROC curve is this far from 0.5 gives an article away on its own often enough to name.
GIVEAWAY_AUC_DISTANCE = 0.25
# The two ways a campaign can show emphasis, as keys of BlindnessReport.guessability_by_emphasis.
AS_WRITTEN, NEUTRAL = "as_written", "neutral"
# The presentations `guessability_by_options` measures: as written, each neutral option alone, both.
OPTIONS = (AS_WRITTEN, "neutral_emphasis", "neutral_headings", "both")


# --- the statistics -----------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One displayed article: its topic (the cross-validation group), system and text."""

    topic: str
    system: str
    is_reference: bool
    markdown: str


@dataclass
class Guessability:
    """Out-of-fold balanced accuracy with a 95% interval, or the reason there is none."""

    n_articles: int
    n_topics: int
    accuracy: float | None = None
    low: float | None = None
    high: float | None = None
    reason: str = ""

    @property
    def text(self) -> str:
        if self.accuracy is None:
            return self.reason
        return f"{self.accuracy:.0%} (95% CI {self.low:.0%}–{self.high:.0%})"


@dataclass
class Separation:
    """How well one feature alone separates reference from generated articles.

    `auc` is the probability that a random reference article scores higher than a random generated
    one (0.5: no help; near 0 or 1: a giveaway). `coefficient` is the classifier's weight on the
    standardized feature, fitted on every article (positive: pushes towards "reference").
    """

    key: str
    label: str
    auc: float | None
    coefficient: float | None = None

    @property
    def strength(self) -> float:
        return 0.0 if self.auc is None else abs(self.auc - 0.5)

    @property
    def direction(self) -> str:
        if self.auc is None or self.strength < 0.05:
            return "about the same"
        return "higher in the reference" if self.auc > 0.5 else "lower in the reference"


@dataclass
class SystemRow:
    key: str
    is_reference: bool
    n_articles: int
    means: dict[str, float]
    # Share of the system's articles where the feature is not zero.
    any_share: dict[str, float]
    length_ratio: float | None  # median over topics of words / the reference's words
    guessability: Guessability | None = None  # this system against the reference
    giveaways: list[Separation] = field(default_factory=list)
    # Features no reference article shows at all (on this system's topics), with the share of this
    # system's articles that show them: rare, so weak as an AUC, but certain whenever they appear.
    tells: dict[str, float] = field(default_factory=dict)
    # Per feature, its effect for this system: the AUC of the reference's articles against this
    # system's on the same topics (0.5: none; near 0 or 1: it alone tells them apart).
    effects: dict[str, float | None] = field(default_factory=dict)

    @property
    def tells_text(self) -> list[str]:
        return [f"{label_of(key)} {share:.0%}" for key, share in self.tells.items()]


@dataclass
class BlindnessReport:
    n_articles: int
    n_topics: int
    guessability: Guessability
    separation: list[Separation]
    systems: list[SystemRow]
    features: tuple[Feature, ...] = FEATURES
    # How the articles were measured: as a campaign with neutral emphasis shows them (bold and
    # italic as plain text), or as written.
    neutral_emphasis: bool = False
    # Overall guessability both ways, AS_WRITTEN and NEUTRAL; one of them is `guessability`.
    guessability_by_emphasis: dict[str, Guessability] = field(default_factory=dict)
    # Measured as a campaign with neutral headings shows them (`rendering.headings_neutral`).
    neutral_headings: bool = False
    # Overall guessability under each presentation (`OPTIONS`: as written, neutral emphasis, neutral
    # headings, both); one of them is `guessability`.
    guessability_by_options: dict[str, Guessability] = field(default_factory=dict)

    def as_dict(self) -> dict:
        data = asdict(self)
        data["guessability"]["text"] = self.guessability.text
        for way, value in self.guessability_by_emphasis.items():
            data["guessability_by_emphasis"][way]["text"] = value.text
        for way, value in self.guessability_by_options.items():
            data["guessability_by_options"][way]["text"] = value.text
        for row, system in zip(data["systems"], self.systems):
            if system.guessability is not None:
                row["guessability"]["text"] = system.guessability.text
            row["giveaways"] = [s.key for s in system.giveaways]
        for item, sep in zip(data["separation"], self.separation):
            item["direction"] = sep.direction
        return data


def _matrix(samples: list[Sample], *, neutral_headings: bool = False):
    import numpy as np

    table = [features_of(s.markdown, neutral_headings=neutral_headings) for s in samples]
    x = np.array([[row[k] for k in FEATURE_KEYS] for row in table], dtype=float)
    # Length spans orders of magnitude: compare it on a log scale, as a reader does ("twice as long").
    x[:, FEATURE_KEYS.index("words")] = np.log1p(x[:, FEATURE_KEYS.index("words")])
    y = np.array([s.is_reference for s in samples], dtype=int)
    return table, x, y


def _neutral(x):
    """The feature matrix of the articles as neutral emphasis shows them.

    It drops exactly the bold and italic tags, so every other feature stays the same:
    ``features_of(..., neutral_emphasis=True)`` gives this without measuring twice.
    """
    neutral = x.copy()
    for key in EMPHASIS_KEYS:
        neutral[:, FEATURE_KEYS.index(key)] = 0.0
    return neutral


def _model():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    # liblinear: a few hundred articles and ten features fit in a millisecond, where lbfgs takes tens.
    return make_pipeline(
        StandardScaler(),
        LogisticRegression(class_weight="balanced", solver="liblinear"),
    )


def _balanced_accuracy(hits_ref, n_ref, hits_gen, n_gen):
    return (hits_ref / n_ref + hits_gen / n_gen) / 2


def guessability(x, y, groups, *, seed: int = 0) -> Guessability:
    """Grouped cross-validated balanced accuracy of telling y=1 (reference) from y=0, with a topic bootstrap CI."""
    import numpy as np
    from sklearn.model_selection import GroupKFold

    topics = sorted(set(groups))
    result = Guessability(n_articles=len(y), n_topics=len(topics))
    if len(topics) < MIN_TOPICS:
        result.reason = f"not enough topics ({len(topics)}; at least {MIN_TOPICS} needed)"
        return result
    if y.min() == y.max():
        result.reason = "no reference article" if y.max() == 0 else "no generated article"
        return result
    groups = np.asarray(groups)
    predicted = np.zeros_like(y)
    for train, test in GroupKFold(n_splits=min(MAX_FOLDS, len(topics))).split(x, y, groups):
        if y[train].min() == y[train].max():
            # One class to learn from: all that can be said.
            predicted[test] = y[train][0]
            continue
        predicted[test] = _model().fit(x[train], y[train]).predict(x[test])
    # Per topic: reference hits, reference articles, generated hits, generated articles.
    index = {topic: i for i, topic in enumerate(topics)}
    counts = np.zeros((len(topics), 4))
    for topic, truth, guess in zip(groups, y, predicted):
        row = counts[index[topic]]
        row[0 if truth else 2] += truth == guess
        row[1 if truth else 3] += 1
    total = counts.sum(axis=0)
    result.accuracy = float(_balanced_accuracy(*total))
    draws = np.random.default_rng(seed).multinomial(len(topics), [1 / len(topics)] * len(topics), size=BOOTSTRAP_ROUNDS)
    sums = draws @ counts
    usable = (sums[:, 1] > 0) & (sums[:, 3] > 0)
    scores = _balanced_accuracy(sums[usable, 0], sums[usable, 1], sums[usable, 2], sums[usable, 3])
    result.low, result.high = (float(q) for q in np.quantile(scores, [0.025, 0.975]))
    return result


def _auc(y, scores) -> float:
    """Area under the ROC curve of `scores` for y=1, ties counted half (the Mann-Whitney U over n1 * n0)."""
    from scipy.stats import rankdata

    ranks = rankdata(scores)
    positives = int(y.sum())
    negatives = len(y) - positives
    return float((ranks[y == 1].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def separation(x, y) -> list[Separation]:
    """Per feature: univariate AUC and the classifier's standardized coefficient, strongest first."""
    both = y.min() != y.max()
    coefficients = _model().fit(x, y)[-1].coef_[0] if both else [None] * len(FEATURES)
    rows = [
        Separation(
            key=feature.key,
            label=feature.label,
            auc=_auc(y, x[:, i]) if both else None,
            coefficient=None if coefficients[i] is None else float(coefficients[i]),
        )
        for i, feature in enumerate(FEATURES)
    ]
    # Ties (two features that each separate perfectly) go to the one the classifier leans on more.
    return sorted(rows, key=lambda s: (-s.strength, -abs(s.coefficient or 0.0)))


def blindness_report(
    samples: list[Sample], *, seed: int = 0, neutral_emphasis: bool = False, neutral_headings: bool = False, per_system: bool = True
) -> BlindnessReport:
    """The audit of a set of displayed articles: features per system, overall and per-system guessability.

    ``neutral_emphasis``: measure the articles as a campaign with that option shows them; the
    overall guessability is also given the other way (``guessability_by_emphasis``).
    ``per_system=False`` leaves out each system's guessability, effects, giveaways and tells
    (the overall figures, which a launch warning needs, in a third of the time).
    """
    import numpy as np

    if not samples:
        nothing = Guessability(0, 0, reason="no articles")
        return BlindnessReport(
            0, 0, nothing, separation=[], systems=[], neutral_emphasis=neutral_emphasis,
            guessability_by_emphasis={AS_WRITTEN: nothing, NEUTRAL: nothing},
        )  # fmt: skip
    table, written, y = _matrix(samples)
    headings_table, headings_x, _ = _matrix(samples, neutral_headings=True)
    if neutral_headings:
        table, written_shown = headings_table, headings_x
    else:
        written_shown = written
    x = written_shown
    if neutral_emphasis:
        x = _neutral(written_shown)
        table = [{**row, **dict.fromkeys(EMPHASIS_KEYS, 0.0)} for row in table]
    groups = [s.topic for s in samples]
    reference_words = {s.topic: row["words"] for s, row in zip(samples, table) if s.is_reference}
    systems: dict[str, list[int]] = {}
    for i, s in enumerate(samples):
        systems.setdefault(s.system, []).append(i)
    reference_keys = {s.system for s in samples if s.is_reference}

    rows = []
    for key in sorted(systems, key=lambda k: (k not in reference_keys, k)):
        members = systems[key]
        ratios = [table[i]["words"] / reference_words[samples[i].topic] for i in members if reference_words.get(samples[i].topic)]
        row = SystemRow(
            key=key,
            is_reference=key in reference_keys,
            n_articles=len(members),
            means={k: mean(table[i][k] for i in members) for k in FEATURE_KEYS},
            any_share={k: mean(table[i][k] > 0 for i in members) for k in FEATURE_KEYS},
            length_ratio=median(ratios) if ratios else None,
        )
        if per_system and not row.is_reference and reference_words:
            own_topics = {samples[i].topic for i in members}
            chosen = members + [i for i, s in enumerate(samples) if s.is_reference and s.topic in own_topics]
            chosen.sort()
            pick = np.array(chosen)
            row.guessability = guessability(x[pick], y[pick], [groups[i] for i in chosen], seed=seed)
            separated = separation(x[pick], y[pick])
            row.giveaways = [s for s in separated if s.strength >= GIVEAWAY_AUC_DISTANCE]
            row.effects = {k: next(s.auc for s in separated if s.key == k) for k in FEATURE_KEYS}
            references = [i for i in chosen if samples[i].is_reference]
            row.tells = {k: row.any_share[k] for k in FEATURE_KEYS if row.any_share[k] > 0 and not any(table[i][k] for i in references)}
        rows.append(row)

    by_options = {
        AS_WRITTEN: guessability(written, y, groups, seed=seed),
        "neutral_emphasis": guessability(_neutral(written), y, groups, seed=seed),
        "neutral_headings": guessability(headings_x, y, groups, seed=seed),
        "both": guessability(_neutral(headings_x), y, groups, seed=seed),
    }
    shown = by_options[
        {(False, False): AS_WRITTEN, (True, False): "neutral_emphasis", (False, True): "neutral_headings", (True, True): "both"}[
            (neutral_emphasis, neutral_headings)
        ]
    ]
    # Emphasis as written and neutral, under the campaign's headings.
    if neutral_headings:
        by_emphasis = {AS_WRITTEN: by_options["neutral_headings"], NEUTRAL: by_options["both"]}
    else:
        by_emphasis = {AS_WRITTEN: by_options[AS_WRITTEN], NEUTRAL: by_options["neutral_emphasis"]}
    return BlindnessReport(
        n_articles=len(samples),
        n_topics=len(set(groups)),
        guessability=shown,
        separation=separation(x, y),
        systems=rows,
        neutral_emphasis=neutral_emphasis,
        guessability_by_emphasis=by_emphasis,
        neutral_headings=neutral_headings,
        guessability_by_options=by_options,
    )


def label_of(key: str) -> str:
    return next(f.label for f in FEATURES if f.key == key)


# Before launch, the campaign page warns when the lower end of guessability's interval is above this.
WARN_LOW = 0.60


def launch_warning(report: BlindnessReport, *, leading: int = 3) -> str:
    """The warning for a campaign about to start whose reference can be told by its looks, or ""."""
    g = report.guessability
    if g.low is None or g.low <= WARN_LOW:
        return ""
    features = ", ".join(f"{s.label} ({s.direction}, AUC {s.auc:.2f})" for s in report.separation[:leading])
    way = "neutral emphasis" if report.neutral_emphasis else "emphasis as written"
    other = report.guessability_by_emphasis[AS_WRITTEN if report.neutral_emphasis else NEUTRAL]
    tells = "; ".join(f"{s.label} ({s.direction}, AUC {s.auc:.2f})" for key in TELLS for s in report.separation if s.key == key)
    options = report.guessability_by_options
    both = f" With neutral emphasis and neutral headings both on: {options['both'].text}." if "both" in options else ""
    return (
        f"Annotators could tell the reference by its looks: guessability {g.text} with {way}"
        f"{', neutral headings' if report.neutral_headings else ''} "
        f"(n = {g.n_articles} articles on {g.n_topics} topics; the lower bound is above {WARN_LOW:.0%}). "
        f"Leading features: {features}. With {'emphasis as written' if report.neutral_emphasis else 'neutral emphasis'}: {other.text}."
        f"{both} The tells that cannot be hidden by an option: {tells}."
    )


# Named in every launch warning: heading case, numbering, list density and the length ratio.
TELLS = ("title_case_headings", "numbered_headings", "bullet_share", "words")
