"""Blindness audit: could an annotator tell the reference article from a generated one by its looks?

Pure logic, no Django: surface features measured on the markdown annotators are shown, and how
well a simple classifier guesses "reference" from those features alone. A high guessability means
the campaign is not blind in practice, whatever the interface hides.

The features (per article, from `display_markdown`) are deliberately few and visible at a glance:

- ``words``: words (whitespace-separated tokens). The system table reports it as the median, over
  topics, of the ratio to the reference article of the same topic.
- ``headings``: section headings of level 2 and below (the `# Title` line every article has is left out).
- ``numbered_headings``: headings whose text starts with a section number: "## 1. History", "### 2.3 Legacy"
  (a year is not a section number: "## 2007 season" is not counted).
- ``self_reference``: phrases in which the text talks about itself (`SELF_REFERENCE`).
- ``wikipedia``: mentions of Wikipedia.
- ``source_talk``: phrases about the sources it was given (`SOURCE_TALK`).
- ``tables``: markdown tables (counted by their `|---|` separator rows).
- ``bullet_share``: share of the body's non-blank lines (headings and table rows left out) that are list items.
- ``bold_per_1k``: **bold** spans per 1,000 words.
- ``sentence_words``: mean words per sentence in prose lines (not headings, lists or tables).

Guessability is the out-of-fold *balanced* accuracy (the mean of the share of reference articles
called reference and the share of generated ones called generated: 0.5 is chance whatever the mix)
of a logistic regression on the standardized features, with cross-validation grouped by topic so
that no topic has articles on both sides of a split. Its 95% interval comes from resampling topics
(the articles of a topic are not independent of each other). Fewer than `MIN_TOPICS` topics: no figure.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from statistics import mean, median

MIN_TOPICS = 4
MAX_FOLDS = 5
BOOTSTRAP_ROUNDS = 2000
# A feature whose area under the ROC curve is this far from 0.5 gives an article away on its own often enough to name.
GIVEAWAY_AUC_DISTANCE = 0.25

# Lower-case phrases; matched on word boundaries, case-insensitive. Small on purpose: each must be a
# phrase a reader would notice and that an encyclopedia article rarely uses.
SELF_REFERENCE = (
    "this article",
    "this report",
    "this section",
    "this overview",
    "this analysis",
    "this document",
    "this essay",
    "in this article we",
    "as discussed above",
    "as mentioned above",
    "as noted above",
    "as discussed earlier",
    "as mentioned earlier",
    "discussed below",
)
SOURCE_TALK = (
    "provided sources",
    "sources provided",
    "the given sources",
    "the available sources",
    "according to the sources",
    "based on the sources",
    "the sources do not",
    "the sources don't",
    "the sources indicate",
    "the sources suggest",
)


@dataclass(frozen=True)
class Feature:
    key: str
    label: str
    help: str
    # Rare tells (a phrase, a numbered heading) read best as the share of articles that show one at all.
    rare: bool = False


FEATURES = (
    Feature("words", "Words", "words in the displayed text"),
    Feature("headings", "Headings", "headings below the title"),
    Feature(
        "numbered_headings",
        "Numbered headings",
        'headings starting with a section number ("## 1. History")',
        rare=True,
    ),
    Feature(
        "self_reference",
        "Self-reference",
        'phrases such as "this article", "as discussed above"',
        rare=True,
    ),
    Feature("wikipedia", "Mentions of Wikipedia", "the word Wikipedia", rare=True),
    Feature(
        "source_talk",
        "Talk of the sources",
        'phrases such as "the provided sources", "according to the sources"',
        rare=True,
    ),
    Feature("tables", "Tables", "markdown tables"),
    Feature(
        "bullet_share", "Bullet-list share", "share of body lines that are list items"
    ),
    Feature("bold_per_1k", "Bold per 1,000 words", "**bold** spans per 1,000 words"),
    Feature("sentence_words", "Words per sentence", "mean sentence length in prose"),
)
FEATURE_KEYS = tuple(f.key for f in FEATURES)

# Line kinds of the displayed (already normalized) markdown. They are not the
# patterns of annotate.markdown_lines, and differ from them on purpose or in ways
# that would change the features if merged:
# - a heading needs a space after its hashes and no indentation (normalized
#   headings are always "## Text"), and loses closing hashes without a space
#   before them; markdown_lines.atx accepts a bare "##" and up to three spaces;
# - a section number needs a dot or a parenthesis: a bare year is not one ("## 2007
#   season"), where the cleaner's heading key (cleaning.sections.KEY_NUMBERING_RE)
#   drops a bare number ("8 References");
# - a list item needs text after its marker (an empty "-" is not a bullet);
# - a table row starts and ends with "|"; a separator row may be one cell with
#   only its opening pipe ("|---"), which markdown_lines.ALIGN_ROW_RE refuses.
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# "1.", "1)", "2.3", "2.3.1." or "IV." then a space; a bare number is not one, so "## 2007 season" and "#### 1945" are not.
_NUMBERED = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3})+\.?|\d{1,3}[.)]|[IVXLC]{1,6}\.)\s")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_SEPARATOR = re.compile(
    r"^(?=.*\|)\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$"
)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_WIKIPEDIA = re.compile(r"\bwikipedia\b", re.IGNORECASE)


def _phrases(phrases: tuple[str, ...]) -> re.Pattern:
    # Longest first, so "in this article we" is counted once rather than also as "this article".
    ordered = sorted(phrases, key=len, reverse=True)
    return re.compile(
        r"\b(?:"
        + "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in ordered)
        + r")\b",
        re.IGNORECASE,
    )


_SELF_REFERENCE = _phrases(SELF_REFERENCE)
_SOURCE_TALK = _phrases(SOURCE_TALK)


def features_of(markdown: str) -> dict[str, float]:
    """The surface features of one article's displayed markdown (see the module docstring)."""
    lines = markdown.splitlines()
    words = len(markdown.split())
    headings = 0
    numbered = 0
    tables = 0
    body_lines = 0
    list_lines = 0
    prose: list[str] = []
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        heading = _HEADING.match(line)
        if heading:
            if len(heading.group(1)) >= 2:
                headings += 1
                numbered += bool(_NUMBERED.match(heading.group(2) + " "))
            continue
        if (
            _TABLE_SEPARATOR.match(line)
            and index > 0
            and _TABLE_ROW.match(lines[index - 1])
        ):
            tables += 1
        if _TABLE_ROW.match(line) or _TABLE_SEPARATOR.match(line):
            continue
        body_lines += 1
        if _LIST_ITEM.match(line):
            list_lines += 1
        else:
            prose.append(line.strip())
    sentences = [
        s for paragraph in prose for s in _SENTENCE_END.split(paragraph) if s.split()
    ]
    return {
        "words": float(words),
        "headings": float(headings),
        "numbered_headings": float(numbered),
        "self_reference": float(len(_SELF_REFERENCE.findall(markdown))),
        "wikipedia": float(len(_WIKIPEDIA.findall(markdown))),
        "source_talk": float(len(_SOURCE_TALK.findall(markdown))),
        "tables": float(tables),
        "bullet_share": list_lines / body_lines if body_lines else 0.0,
        "bold_per_1k": 1000 * len(_BOLD.findall(markdown)) / words if words else 0.0,
        "sentence_words": mean(len(s.split()) for s in sentences) if sentences else 0.0,
    }


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

    @property
    def tells_text(self) -> list[str]:
        return [f"{_label(key)} {share:.0%}" for key, share in self.tells.items()]


@dataclass
class BlindnessReport:
    n_articles: int
    n_topics: int
    guessability: Guessability
    separation: list[Separation]
    systems: list[SystemRow]
    features: tuple[Feature, ...] = FEATURES

    def as_dict(self) -> dict:
        data = asdict(self)
        data["guessability"]["text"] = self.guessability.text
        for row, system in zip(data["systems"], self.systems):
            if system.guessability is not None:
                row["guessability"]["text"] = system.guessability.text
            row["giveaways"] = [s.key for s in system.giveaways]
        for item, sep in zip(data["separation"], self.separation):
            item["direction"] = sep.direction
        return data


def _matrix(samples: list[Sample]):
    import numpy as np

    table = [features_of(s.markdown) for s in samples]
    x = np.array([[row[k] for k in FEATURE_KEYS] for row in table], dtype=float)
    # Length spans orders of magnitude: compare it on a log scale, as a reader does ("twice as long").
    x[:, FEATURE_KEYS.index("words")] = np.log1p(x[:, FEATURE_KEYS.index("words")])
    y = np.array([s.is_reference for s in samples], dtype=int)
    return table, x, y


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
        result.reason = (
            f"not enough topics ({len(topics)}; at least {MIN_TOPICS} needed)"
        )
        return result
    if y.min() == y.max():
        result.reason = (
            "no reference article" if y.max() == 0 else "no generated article"
        )
        return result
    groups = np.asarray(groups)
    predicted = np.zeros_like(y)
    for train, test in GroupKFold(n_splits=min(MAX_FOLDS, len(topics))).split(
        x, y, groups
    ):
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
    draws = np.random.default_rng(seed).multinomial(
        len(topics), [1 / len(topics)] * len(topics), size=BOOTSTRAP_ROUNDS
    )
    sums = draws @ counts
    usable = (sums[:, 1] > 0) & (sums[:, 3] > 0)
    scores = _balanced_accuracy(
        sums[usable, 0], sums[usable, 1], sums[usable, 2], sums[usable, 3]
    )
    result.low, result.high = (float(q) for q in np.quantile(scores, [0.025, 0.975]))
    return result


def _auc(y, scores) -> float:
    """Area under the ROC curve of `scores` for y=1, ties counted half (the Mann-Whitney U over n1 * n0)."""
    from scipy.stats import rankdata

    ranks = rankdata(scores)
    positives = int(y.sum())
    negatives = len(y) - positives
    return float(
        (ranks[y == 1].sum() - positives * (positives + 1) / 2)
        / (positives * negatives)
    )


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
    return sorted(rows, key=lambda s: -s.strength)


def blindness_report(samples: list[Sample], *, seed: int = 0) -> BlindnessReport:
    """The audit of a set of displayed articles: features per system, overall and per-system guessability."""
    import numpy as np

    if not samples:
        return BlindnessReport(
            0, 0, Guessability(0, 0, reason="no articles"), separation=[], systems=[]
        )
    table, x, y = _matrix(samples)
    groups = [s.topic for s in samples]
    reference_words = {
        s.topic: row["words"] for s, row in zip(samples, table) if s.is_reference
    }
    systems: dict[str, list[int]] = {}
    for i, s in enumerate(samples):
        systems.setdefault(s.system, []).append(i)
    reference_keys = {s.system for s in samples if s.is_reference}

    rows = []
    for key in sorted(systems, key=lambda k: (k not in reference_keys, k)):
        members = systems[key]
        ratios = [
            table[i]["words"] / reference_words[samples[i].topic]
            for i in members
            if reference_words.get(samples[i].topic)
        ]
        row = SystemRow(
            key=key,
            is_reference=key in reference_keys,
            n_articles=len(members),
            means={k: mean(table[i][k] for i in members) for k in FEATURE_KEYS},
            any_share={k: mean(table[i][k] > 0 for i in members) for k in FEATURE_KEYS},
            length_ratio=median(ratios) if ratios else None,
        )
        if not row.is_reference and reference_words:
            own_topics = {samples[i].topic for i in members}
            chosen = members + [
                i
                for i, s in enumerate(samples)
                if s.is_reference and s.topic in own_topics
            ]
            chosen.sort()
            pick = np.array(chosen)
            row.guessability = guessability(
                x[pick], y[pick], [groups[i] for i in chosen], seed=seed
            )
            row.giveaways = [
                s
                for s in separation(x[pick], y[pick])
                if s.strength >= GIVEAWAY_AUC_DISTANCE
            ]
            references = [i for i in chosen if samples[i].is_reference]
            row.tells = {
                k: row.any_share[k]
                for k in FEATURE_KEYS
                if row.any_share[k] > 0 and not any(table[i][k] for i in references)
            }
        rows.append(row)

    return BlindnessReport(
        n_articles=len(samples),
        n_topics=len(set(groups)),
        guessability=guessability(x, y, groups, seed=seed),
        separation=separation(x, y),
        systems=rows,
    )


# --- presentation -------------------------------------------------------------------


def _number(value: float | None, key: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if key == "bullet_share":
        return f"{value:.0%}"
    if key == "words":
        return f"{value:,.0f}"
    if abs(value) < 10:
        return f"{value:.2f}"
    return f"{value:.1f}" if abs(value) < 100 else f"{value:,.0f}"


def feature_rows(report: BlindnessReport) -> list[tuple[str, str, list[str]]]:
    """(label, explanation, one cell per system) for the systems table, shared by the page and the markdown."""
    systems = report.systems
    rows = [
        (
            "n articles",
            "articles of this system in the campaign's pairs, each once",
            [str(r.n_articles) for r in systems],
        ),
        (
            "Length ratio to reference (median)",
            "per topic, words over the reference's words",
            [_number(r.length_ratio) for r in systems],
        ),
    ]
    for feature in FEATURES:
        if feature.rare:
            rows.append(
                (
                    f"{feature.label} (% of articles with any)",
                    feature.help,
                    [f"{r.any_share[feature.key]:.0%}" for r in systems],
                )
            )
        else:
            rows.append(
                (
                    f"{feature.label} (mean)",
                    feature.help,
                    [_number(r.means[feature.key], feature.key) for r in systems],
                )
            )
    return rows


def _label(key: str) -> str:
    return next(f.label for f in FEATURES if f.key == key)


def report_markdown(report: BlindnessReport, *, title: str = "") -> str:
    """The report as markdown tables: systems in columns, features in rows, n on the first row."""
    out = []
    if title:
        out += [f"# Blindness audit: {title}", ""]
    g = report.guessability
    out += [
        (
            f"Guessability (reference vs generated, balanced accuracy, chance 50%): **{g.text}**, "
            f"n = {g.n_articles} articles on {g.n_topics} topics."
        ),
        "",
    ]
    if not report.systems:
        return "\n".join(out) + "\n"
    keys = [row.key + (" (ref)" if row.is_reference else "") for row in report.systems]
    out.append("| | " + " | ".join(keys) + " |")
    out.append("|---|" + "---:|" * len(keys))
    for label, _, cells in feature_rows(report):
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append(
        "| guessable vs reference | "
        + " | ".join(
            "" if r.guessability is None else r.guessability.text
            for r in report.systems
        )
        + " |"
    )
    out.append(
        "| giveaways (AUC) | "
        + " | ".join(
            ", ".join(f"{s.label} {s.auc:.2f}" for s in r.giveaways[:3])
            or ("" if r.is_reference else "none")
            for r in report.systems
        )
        + " |"
    )
    out.append(
        "| tells the reference never shows (% of articles) | "
        + " | ".join(", ".join(r.tells_text) for r in report.systems)
        + " |"
    )
    out += [
        "",
        "Features that separate most (all systems pooled; AUC: chance the reference scores higher; coefficient on standardized features):",
        "",
    ]
    out += ["| feature | AUC | coefficient | |", "|---|---:|---:|---|"]
    for s in report.separation:
        auc = "–" if s.auc is None else f"{s.auc:.2f}"
        out.append(f"| {s.label} | {auc} | {_number(s.coefficient)} | {s.direction} |")
    return "\n".join(out) + "\n"
