"""The realistic path of the calibration benchmark: real commands, a real SQLite file, the report end to end.

    .venv/bin/python bench/calibration.py --realistic [--topics 86] [--runs 3] [--rounds N] [--seed 0]
        [--keep DIR | --reuse DIR] [--profile]

(`bench/calibration_realistic.py` takes the same options.) Everything is
seeded (numpy Generator) and written to a temporary directory, removed at the
end unless `--keep DIR`:

1. a benchmark of 86 topics x 11 systems (`wikipedia` + 10, several with dotted
   keys such as `gpt-4.1`), markdown articles whose length is drawn per system
   and per topic, imported with `import_articles`; a 39-criterion set in 3
   categories (Well-written 21, Broad in coverage 8, Neutral 10) imported with
   `import_criteria`;
2. `create_campaign` with reference pairs: 86 x 10 = 860 pairs;
3. a labels CSV in the long format of `export_labels`: 3 annotators on every
   (pair, criterion), 100,620 labels, copying a latent truth (system quality,
   pair noise, a little length) at 82/77/72%; 3 judges with one verdict per item
   (33,540 each, in one order chosen per pair): two LLM-like judges of different
   accuracy, position and length bias and price, and the deterministic
   `longer-wins` (the article with more words wins), imported with
   `import_labels` (timed);
4. `calibration_report --format json` in a subprocess, timed end to end (Python
   and Django start-up and the database read included), `--runs` times; the
   median is the figure, with the best beside it, and the peak resident memory
   is the largest of the runs (`os.wait4` rusage of the child).

Baseline (the same mix measured before optimizing: 100,152 human labels + 3 x
33,384 verdicts): 18.2 s and 430 MB. Targets: <= 10 s and <= 1 GB on 2 cores.

`--keep DIR` generates into DIR and keeps it; `--reuse DIR` skips generation
and import and only times the report on DIR's database. `--profile` then runs
the report once in this process under cProfile (Django set up beforehand) and
prints the 25 entries of largest cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import csv
import io
import json
import os
import pstats
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.helpers import LABEL_HEADER as EXPORT_LABEL_HEADER  # noqa: E402

BASELINE_SECONDS, BASELINE_MB = 18.2, 430
TARGET_SECONDS, TARGET_MB = 10.0, 1024
DATABASE, MANIFEST = "bench.sqlite3", "bench.json"
CAMPAIGN, BENCHMARK, CRITERIA_KEY = "realistic-bench", "realistic-wlc", "realistic-39"
REFERENCE = "wikipedia"

# key, quality in Elo points against wikipedia, mean words of its articles
SYSTEMS = (
    (REFERENCE, 0.0, 2600),
    ("gemini-2.5-pro", -25.0, 2900),
    ("gpt-4.1", -30.0, 2100),
    ("claude-3.7-sonnet", -40.0, 2300),
    ("storm", -60.0, 2000),
    ("deepseek-v3", -70.0, 1800),
    ("o3-mini", -80.0, 1100),
    ("qwen2.5-72b", -90.0, 1500),
    ("mistral-large-2411", -110.0, 1300),
    ("llama-3.1-70b", -120.0, 1200),
    ("direct-llm", -160.0, 800),
)
ANNOTATORS = (("alice", 0.82), ("bilal", 0.77), ("chen", 0.72))
# name, model, P(copies the latent verdict), P(first shown | not copying), P(longer | not copying),
# USD per million prompt / completion tokens
LLM_JUDGES = (
    ("gpt-4.1-mini", "openai/gpt-4.1-mini", 0.72, 0.35, 0.35, 0.40, 1.60),
    ("qwen2.5-7b-instruct", "qwen/qwen2.5-7b-instruct", 0.52, 0.45, 0.30, 0.04, 0.10),
)
LENGTH_JUDGE = ("longer-wins", "word-count")
P_TIE = 0.12
A_WINS, B_WINS, TIE_CODE = 0, 1, 2

CATEGORIES = (
    ("well_written", "Well-written", (
        ("lead_summary", "The lead section summarises the article's most important points."),
        ("clear_prose", "The prose is clear and easy to follow."),
        ("grammar", "Sentences are grammatical."),
        ("spelling", "Words are spelled correctly and consistently."),
        ("paragraph_flow", "Each paragraph develops one idea and leads to the next."),
        ("section_structure", "Sections divide the subject in a sensible way."),
        ("descriptive_headings", "Headings say what their section is about."),
        ("consistent_tense", "Tense is used consistently."),
        ("concise", "The article says things once and without padding."),
        ("no_jargon", "Technical terms are avoided where plain words would do."),
        ("defines_terms", "Necessary technical terms are explained."),
        ("logical_order", "Material is presented in a logical order."),
        ("transitions", "Transitions connect sections and paragraphs."),
        ("no_repetition", "Points are not repeated across sections."),
        ("lists_used_well", "Lists are used only where prose would not do."),
        ("readable_tables", "Tables are readable and labelled."),
        ("encyclopedic_tone", "The tone is that of an encyclopedia."),
        ("no_peacock_terms", "There are no peacock terms praising the subject."),
        ("no_weasel_words", "There are no weasel words hiding who holds a view."),
        ("consistent_style", "Dates, numbers and names follow one style."),
        ("accessible", "A general reader can understand the article."),
    )),
    ("broad_coverage", "Broad in coverage", (
        ("main_aspects", "The main aspects of the topic are addressed."),
        ("history", "The history of the subject is covered where relevant."),
        ("context", "The subject is placed in its wider context."),
        ("significance", "The article explains why the subject matters."),
        ("current_state", "The current state of the subject is described."),
        ("notable_examples", "Notable examples or cases are given."),
        ("stays_on_topic", "The article stays on topic without unnecessary detail."),
        ("balanced_depth", "Each aspect gets depth in proportion to its importance."),
    )),
    ("neutral", "Neutral", (
        ("balanced_viewpoints", "Significant viewpoints are represented fairly."),
        ("no_promotion", "The article does not promote the subject."),
        ("due_weight", "Minor views are not given undue weight."),
        ("attributed_opinions", "Opinions are attributed to those who hold them."),
        ("no_editorializing", "The article does not editorialise."),
        ("neutral_wording", "Wording is neutral rather than loaded."),
        ("fair_controversies", "Controversies are described fairly."),
        ("no_advocacy", "The article does not argue for a position."),
        ("impartial_tone", "The tone is impartial throughout."),
        ("disagreement_explained", "Where sources disagree, the disagreement is explained."),
    )),
)  # fmt: skip
HEADINGS = (
    "Overview", "History", "Background", "Origins", "Development", "Design", "Geography", "Economy",
    "Culture", "Reception", "Legacy", "Later years", "Impact", "Organisation", "Operations", "Influence",
)  # fmt: skip
TOPIC_KINDS = ("River", "Treaty", "Festival", "Bridge", "Dynasty", "Observatory", "Railway", "Cathedral", "Expedition", "Reform")
SYLLABLES = ("ka", "lo", "mer", "vi", "tan", "so", "rel", "quin", "da", "bor", "ni", "sel", "ur", "pa", "gha", "te", "wil", "om")
RATIONALES = (
    "{w} explains this more clearly and with better structure.",
    "{w} is more complete on this point.",
    "{w} reads better; the other one is repetitive here.",
    "On balance {w} handles this criterion better.",
)
TIE_RATIONALES = ("Both articles are about equally good here.", "No real difference on this criterion.")
# export_labels' columns and annotator_removed (the tests' copy of the contract), then JUDGE_COLUMNS.
LABEL_HEADER = (
    *EXPORT_LABEL_HEADER,
    "model", "prompt_tokens", "completion_tokens", "cost_usd", "latency_ms", "position", "call_id", "error",
)  # fmt: skip


# --------------------------------------------------------------------------
# generation
# --------------------------------------------------------------------------


def count_words(text: str) -> int:
    """Words as `annotate.cleaning.count_words` counts them: tokens holding a letter or digit."""
    return sum(1 for token in text.split() if any(c.isalnum() for c in token))


def topic_titles(rng: np.random.Generator, n: int) -> list[str]:
    titles: list[str] = []
    while len(titles) < n:
        word = "".join(rng.choice(SYLLABLES, int(rng.integers(2, 4)))).title()
        title = f"{word} {rng.choice(TOPIC_KINDS)}"
        if title not in titles:
            titles.append(title)
    return titles


def article_markdown(rng: np.random.Generator, title: str, vocabulary: np.ndarray, n_words: int) -> str:
    """`# title`, then `##` sections of 150-400 words in paragraphs of sentences, about `n_words` words in all."""
    words = vocabulary[rng.integers(0, len(vocabulary), n_words)]
    parts, at = [f"# {title}"], 0
    headings = rng.permutation(HEADINGS)
    section = 0
    while at < n_words:
        parts.append(f"## {headings[section % len(headings)]}")
        section += 1
        end = min(n_words, at + int(rng.integers(150, 400)))
        while at < end:
            para_end = min(end, at + int(rng.integers(50, 130)))
            sentences = []
            while at < para_end:
                stop = min(para_end, at + int(rng.integers(8, 22)))
                chunk = words[at:stop]
                sentences.append(" ".join(chunk).capitalize() + ".")
                at = stop
            parts.append(" ".join(sentences))
    return "\n\n".join(parts) + "\n"


def benchmark_write(rng: np.random.Generator, n_topics: int, folder: Path) -> tuple[list[str], np.ndarray, int]:
    """Writes articles.jsonl; returns (topic titles, words[topic, system] as written, markdown bytes)."""
    vocabulary = np.array(["".join(rng.choice(SYLLABLES, int(rng.integers(1, 4)))) for _ in range(3000)])
    titles = topic_titles(rng, n_topics)
    mean_words = np.array([s[2] for s in SYSTEMS], dtype=float)
    # Some topics are longer for every system; each article varies around its system's mean.
    topic_factor = rng.lognormal(0.0, 0.25, n_topics)[:, None]
    target = np.maximum(150, (mean_words[None, :] * topic_factor * rng.lognormal(0.0, 0.3, (n_topics, len(SYSTEMS))))).astype(int)
    words = np.zeros_like(target)
    size = 0
    with open(folder / "articles.jsonl", "w", encoding="utf-8") as out:
        for t, title in enumerate(titles):
            for s, (key, *_) in enumerate(SYSTEMS):
                markdown = article_markdown(rng, title, vocabulary, int(target[t, s]))
                words[t, s] = count_words(markdown)
                line = json.dumps(
                    {"topic": title, "system": key, "markdown": markdown, **({"reference": True} if key == REFERENCE else {})}
                )
                size += len(markdown.encode())
                out.write(line + "\n")
    return titles, words, size


def criteria_write(path: Path) -> list[tuple[str, int]]:
    """Writes the criteria file; returns (criterion key, category index) in order."""
    data = {
        "name": "Realistic benchmark criteria",
        "description": "39 criteria in three categories, written for the benchmark.",
        "categories": [
            {"id": cat_id, "name": name, "criteria": [{"id": key, "text": text} for key, text in criteria]}
            for cat_id, name, criteria in CATEGORIES
        ],
    }
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return [(key, c) for c, (_, _, criteria) in enumerate(CATEGORIES) for key, _ in criteria]


def stamp(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def labels_write(
    rng: np.random.Generator, path: Path, titles: list[str], words: np.ndarray, criteria: list[tuple[str, int]]
) -> dict[str, int]:
    """Writes the labels CSV (humans, then judges); returns the number of rows per rater."""
    n_topics, n_sys, n_crit = len(titles), len(SYSTEMS), len(criteria)
    others = np.arange(1, n_sys)
    # Pairs as create_campaign makes them: wikipedia (A) against each other system (B), topic by topic.
    pair_topic = np.repeat(np.arange(n_topics), len(others))
    pair_b = np.tile(others, n_topics)
    n_pairs = len(pair_topic)
    words_a, words_b = words[pair_topic, 0], words[pair_topic, pair_b]
    longer = np.where(words_a > words_b, A_WINS, np.where(words_b > words_a, B_WINS, TIE_CODE))

    # Latent truth per (pair, criterion): quality of B against A per criterion, pair noise, a little length.
    quality = np.array([s[1] for s in SYSTEMS])[:, None] + rng.normal(0, 25, (n_sys, n_crit))
    quality[0] = 0.0
    d = (quality[pair_b] + rng.normal(0, 80, n_pairs)[:, None] + rng.normal(0, 60, (n_pairs, n_crit))
         + 35 * np.log2(words_b / words_a)[:, None])  # fmt: skip
    p_b = 1 / (1 + 10 ** (-d / 400))
    truth = np.where(rng.random(d.shape) < P_TIE, TIE_CODE, np.where(rng.random(d.shape) < p_b, B_WINS, A_WINS))

    system_keys = [s[0] for s in SYSTEMS]
    crit_keys = [k for k, _ in criteria]
    crit_cat = np.array([c for _, c in criteria])
    start = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
    counts: dict[str, int] = {}

    def winner_key(code: int, p: int) -> str:
        return REFERENCE if code == A_WINS else system_keys[pair_b[p]] if code == B_WINS else "tie"

    with open(path, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(LABEL_HEADER)
        for r, (username, accuracy) in enumerate(ANNOTATORS):
            copies = rng.random(truth.shape) < accuracy
            outcome = np.where(copies, truth, rng.integers(0, 3, truth.shape))
            a_first = rng.random(n_pairs) < 0.5
            templates = rng.integers(0, len(RATIONALES), truth.shape)
            for p in range(n_pairs):
                a, b = REFERENCE, system_keys[pair_b[p]]
                left, right = (a, b) if a_first[p] else (b, a)
                opened = start + timedelta(minutes=int(p * 7 + r * 3))
                for c in range(n_crit):
                    code = int(outcome[p, c])
                    w = winner_key(code, p)
                    reason = TIE_RATIONALES[templates[p, c] % 2] if code == TIE_CODE else RATIONALES[templates[p, c]].format(w=w)
                    writer.writerow((CAMPAIGN, titles[pair_topic[p]], crit_keys[c], "human", username, left, right, w, reason,
                                     stamp(opened), stamp(opened + timedelta(seconds=25 * (c + 1))), "false") + ("",) * 8)  # fmt: skip
            counts[username] = truth.size

        call_id = 0
        judges = [*LLM_JUDGES, (*LENGTH_JUDGE, None, 0.0, 0.0, 0.0, 0.0)]
        for name, model, q, pos, lng, price_in, price_out in judges:
            a_first = rng.random(n_pairs) < 0.5
            first = np.where(a_first, A_WINS, B_WINS)[:, None]
            if q is None:  # the deterministic baseline: the longer article wins
                verdict = np.broadcast_to(longer[:, None], truth.shape)
            else:
                w = rng.random(truth.shape)
                noise = np.where(w < pos, first, np.where(w < pos + lng, longer[:, None], rng.integers(0, 3, truth.shape)))
                verdict = np.where(rng.random(truth.shape) < q, truth, noise)
            for p in range(n_pairs):
                a, b = REFERENCE, system_keys[pair_b[p]]
                left, right = (a, b) if a_first[p] else (b, a)
                when = start + timedelta(days=10, seconds=int(p * 40))
                calls = {}
                for c in range(n_crit):
                    code = int(verdict[p, c])
                    w = winner_key(code, p)
                    position = "" if code == TIE_CODE else "1" if w == left else "2"
                    if q is None:
                        call = ("", "", "", "", "")
                        reason = f"{w} has more words." if code != TIE_CODE else "Both have as many words."
                    else:
                        category = int(crit_cat[c])
                        if category not in calls:  # one call per (judge, pair, order, category) unit
                            call_id += 1
                            in_category = int((crit_cat == category).sum())
                            prompt = int(1.35 * (words_a[p] + words_b[p])) + 500 + 60 * in_category
                            completion = 55 * in_category
                            cost = (prompt * price_in + completion * price_out) / 1e6
                            latency = int(rng.lognormal(np.log(2500), 0.4))
                            calls[category] = (prompt, completion, f"{cost:.8f}", latency, call_id)
                        call = calls[category]
                        reason = TIE_RATIONALES[c % 2] if code == TIE_CODE else RATIONALES[c % len(RATIONALES)].format(w=w)
                    writer.writerow((CAMPAIGN, titles[pair_topic[p]], crit_keys[c], "judge", name, left, right, w, reason,
                                     "", stamp(when), "", model, call[0], call[1], call[2], call[3], position, call[4], ""))  # fmt: skip
            counts[name] = truth.size
    return counts


# --------------------------------------------------------------------------
# running the project's commands
# --------------------------------------------------------------------------


def django_env(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["DATABASE_URL"] = f"sqlite:///{folder / DATABASE}"
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    env["DEBUG"] = "0"  # as in production: Django records no statements
    env.setdefault("SECRET_KEY", "bench-only-not-secret")
    return env


def measured(args: list[str], env: dict[str, str]) -> tuple[float, float, int, str, str]:
    """Runs `manage.py args` to its end: (seconds, peak resident MB of the child, exit code, stdout, stderr)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return elapsed, usage.ru_maxrss / 1024, child.returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace")


def manage(args: list[str], env: dict[str, str], what: str) -> tuple[float, float, str]:
    """`measured`, stopping the benchmark with the command's output when it fails; (seconds, MB, stdout)."""
    seconds, mb, code, out, err = measured(args, env)
    if code != 0:
        sys.exit(f"{what} failed (exit {code}):\n{out[-3000:]}\n{err[-3000:]}")
    if err.strip():
        print("    " + err.strip().replace("\n", "\n    "))
    return seconds, mb, out


def words_as_stored(folder: Path, titles: list[str], words: np.ndarray) -> int:
    """How many articles the database counts exactly as many words as were generated."""
    with sqlite3.connect(folder / DATABASE) as db:
        stored = dict(
            ((title, key), n)
            for title, key, n in db.execute(
                "SELECT t.title, s.key, a.word_count FROM annotate_article a "
                "JOIN annotate_topic t ON t.id = a.topic_id JOIN annotate_system s ON s.id = a.system_id"
            )
        )
    return sum(stored.get((title, key)) == words[t, s] for t, title in enumerate(titles) for s, (key, *_) in enumerate(SYSTEMS))


def generate_and_import(folder: Path, n_topics: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    env = django_env(folder)
    t = time.perf_counter()
    titles, words, size = benchmark_write(rng, n_topics, folder)
    criteria = criteria_write(folder / f"{CRITERIA_KEY}.json")
    counts = labels_write(rng, folder / "labels.csv", titles, words, criteria)
    n_human = sum(counts[u] for u, _ in ANNOTATORS)
    n_judge = {name: counts[name] for name in counts if name not in dict(ANNOTATORS)}
    labels_mb = (folder / "labels.csv").stat().st_size / 1_048_576
    print(f"generated {n_topics} topics x {len(SYSTEMS)} systems ({size / 1_048_576:.1f} MB markdown), "
          f"{len(criteria)} criteria, labels.csv {labels_mb:.1f} MB: {n_human:,} human labels + "
          + " + ".join(f"{n:,} {name}" for name, n in n_judge.items()) + f" in {time.perf_counter() - t:.1f} s")  # fmt: skip

    seconds, _, _ = manage(["migrate", "--verbosity", "0"], env, "migrate")
    print(f"  migrate                 {seconds:6.1f} s")
    seconds, _, _ = manage(
        ["import_articles", str(folder / "articles.jsonl"), "--benchmark", BENCHMARK, "--quiet-progress"], env, "import_articles"
    )
    print(f"  import_articles         {seconds:6.1f} s  ({size / 1_048_576 / seconds:.1f} MB/s of markdown, start-up included)")
    same = words_as_stored(folder, titles, words)
    print(f"    word counts stored as generated: {same} of {len(titles) * len(SYSTEMS)} articles")
    seconds, _, _ = manage(["import_criteria", str(folder / f"{CRITERIA_KEY}.json"), "--key", CRITERIA_KEY], env, "import_criteria")
    print(f"  import_criteria         {seconds:6.1f} s")
    systems = ",".join(s[0] for s in SYSTEMS)
    seconds, _, out = manage(
        ["create_campaign", "--name", CAMPAIGN, "--criteria", CRITERIA_KEY, "--systems", systems, "--pairs", "reference",
         "--overlap", "3", "--allow-tie", "--no-rationale", "--benchmark", BENCHMARK],
        env, "create_campaign",
    )  # fmt: skip
    print(f"  create_campaign         {seconds:6.1f} s  {out.strip()}")
    seconds, mb, out = manage(["import_labels", "--campaign", CAMPAIGN, str(folder / "labels.csv")], env, "import_labels")
    rows = n_human + sum(n_judge.values())
    print(f"  import_labels           {seconds:6.1f} s  ({rows / seconds:,.0f} rows/s, peak {mb:.0f} MB)")
    print("    " + out.strip().replace("\n", "\n    "))
    manifest = {"campaign": CAMPAIGN, "seed": seed, "topics": n_topics, "human_labels": n_human, "verdicts": n_judge,
                "import_labels_seconds": round(seconds, 2)}  # fmt: skip
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


# --------------------------------------------------------------------------
# timing the report
# --------------------------------------------------------------------------


def report_args(rounds: int | None, out: Path) -> list[str]:
    args = ["calibration_report", "--campaign", CAMPAIGN, "--format", "json", "--out", str(out)]
    return args + ([] if rounds is None else ["--rounds", str(rounds)])


def degenerate_rounds(report: dict) -> str:
    """Per rater, the Bradley-Terry bootstrap rounds that needed regularizing (key renamed in newer reports)."""
    parts = []
    for rater, meta in (report.get("bradley_terry_meta") or {}).items():
        if not meta:
            continue
        n = meta.get("rounds_degenerate", meta.get("rounds_regularized"))
        if n is not None:
            missing = ", ".join(meta.get("not_estimable") or ())
            parts.append(f"{rater} {n}" + (f" (no finite score for {missing})" if missing else ""))
    return ", ".join(parts)


def time_report(folder: Path, rounds: int | None, runs: int) -> None:
    env = django_env(folder)
    out = folder / "report.json"
    # The fixed part: Python, Django, system checks and the report's imports, stopped at the campaign lookup.
    floor, floor_mb, code, _, err = measured(["calibration_report", "--campaign", "no-such-campaign"], env)
    if "No campaign named" not in err:
        sys.exit(f"calibration_report on a missing campaign: exit {code}, expected its error:\n{err[-3000:]}")
    print(f"  start-up floor (the command on a missing campaign): {floor:.2f} s, peak {floor_mb:.0f} MB")
    times, peaks = [], []
    load = os.getloadavg()[0]
    for run in range(1, runs + 1):
        seconds, mb, code, _, err = measured(report_args(rounds, out), env)
        if code != 0:
            sys.exit(f"calibration_report failed (exit {code}):\n{err[-3000:]}")
        times.append(seconds)
        peaks.append(mb)
        print(f"  run {run}: {seconds:.2f} s, peak {mb:.0f} MB")
    report = json.loads(out.read_text(encoding="utf-8"))
    humans = report["humans"]
    print(f"report: {humans['n_labels']:,} human labels ({humans['n_annotators']} annotators, {humans['n_items']:,} items), "
          f"{report['n_pairs']} pairs, {report['parameters']['rounds']:,} bootstrap rounds; "
          f"annotators agree {humans['par_all_pairs']} (all pairs), alpha {humans['krippendorff_alpha']}")  # fmt: skip
    for judge in report["judges"]:
        print(f"  {judge['name']:20s} {judge['n_verdicts']:,} verdicts, PAR {judge['par']}, prefers longer {judge['prefers_longer']}")
    degenerate = degenerate_rounds(report)
    if degenerate:
        print(f"  Bradley-Terry bootstrap rounds regularized/degenerate: {degenerate}")
    median, best, peak = statistics.median(times), min(times), max(peaks)
    print(f"load average before timing was {load:.2f} on {os.cpu_count()} CPUs (other work on the machine slows every figure)")
    print(f"calibration_report end to end: {median:.1f} s median of {runs} (best {best:.1f} s) "
          f"({median / BASELINE_SECONDS:.2f}x of {BASELINE_SECONDS} s; target <= {TARGET_SECONDS:g} s) "
          f"peak {peak:.0f} MB ({peak / BASELINE_MB:.2f}x of {BASELINE_MB} MB; target <= {TARGET_MB} MB)")  # fmt: skip


def profile_report(folder: Path, rounds: int | None) -> None:
    """The report once in this process under cProfile; Django start-up is outside the profile."""
    os.environ.update(django_env(folder))
    import django

    django.setup()
    from django.core.management import call_command

    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.runcall(call_command, *report_args(rounds, folder / "report-profile.json"), stderr=io.StringIO())
    print(f"\nprofile: calibration_report in-process {time.perf_counter() - started:.1f} s under cProfile; top 25 by cumulative time")
    pstats.Stats(profiler).strip_dirs().sort_stats("cumulative").print_stats(25)


# --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=86)
    parser.add_argument("--runs", type=int, default=3, help="timed report runs; the median is reported")
    parser.add_argument("--rounds", type=int, help="bootstrap rounds (default: the command's, 1000)")
    parser.add_argument("--seed", type=int, default=0)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--keep", type=Path, metavar="DIR", help="generate into DIR and keep it")
    where.add_argument("--reuse", type=Path, metavar="DIR", help="time the report on a database kept with --keep")
    parser.add_argument("--profile", action="store_true", help="also run the report in-process under cProfile")
    args = parser.parse_args(argv)

    if args.reuse:
        folder = args.reuse.resolve()
        if not (folder / MANIFEST).is_file() or not (folder / DATABASE).is_file():
            sys.exit(f"{folder}: no {MANIFEST} and {DATABASE} there; make one with --keep {args.reuse}")
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        print(f"reusing {folder}: {manifest['human_labels']:,} human labels + "
              + " + ".join(f"{n:,} {name}" for name, n in manifest["verdicts"].items())
              + f" (import_labels took {manifest['import_labels_seconds']} s)")  # fmt: skip
    elif args.keep:
        folder = args.keep.resolve()
        if folder.is_relative_to(ROOT):
            sys.exit(f"{folder} is inside the repository; keep the generated data elsewhere")
        if folder.exists() and any(folder.iterdir()):
            sys.exit(f"{folder} is not empty; use --reuse {args.keep} to time its report")
        folder.mkdir(parents=True, exist_ok=True)
    else:
        folder = Path(tempfile.mkdtemp(prefix="bench-calibration-realistic-"))
    try:
        if not args.reuse:
            generate_and_import(folder, args.topics, args.seed)
        print(f"calibration_report ({os.cpu_count()} CPUs), {args.runs} runs in subprocesses:")
        time_report(folder, args.rounds, args.runs)
        if args.profile:
            profile_report(folder, args.rounds)
    finally:
        if not (args.keep or args.reuse):
            shutil.rmtree(folder, ignore_errors=True)
        elif args.keep:
            print(f"kept in {folder}: time again with --reuse {folder}")


if __name__ == "__main__":
    main()
