"""What an article looks like when shown, per system: paragraphs, emphasis, and how guessable the reference is.

    python bench/article_looks.py [../shared/wlc-sample]

Imports the benchmark sample (when present) and the demo into a fresh SQLite database
(set DATABASE_URL to use another), creates a campaign of the reference against every
other system on each, and prints:

* per system, the median over its articles of the longest paragraph (words): in the file
  as written (the longest line of prose of the displayed markdown), as the page showed it
  before this release (CommonMark joins lines of a paragraph) and as it shows it now (a
  new line of prose starts a paragraph); the ratio shown now / as written;
* per system, bold and italic runs per 1,000 words on the page (mean over articles, and
  pooled over all its words);
* guessability (balanced accuracy with its 95% CI, n articles and topics) with emphasis
  as written and with neutral emphasis, from the blindness audit itself;
* the time rendering takes with and without the paragraph rule, and the ratio.
"""

import argparse
import io
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from statistics import mean, median

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import SAMPLE, django_on_scratch_database  # noqa: E402  (bench/ is on sys.path)

_PROSE_LINE = re.compile(r"[ ]{0,3}(?:[-*+][ \t]|\d{1,9}[.)][ \t]|[>|#`~]|$)")


def _longest_line_as_written(markdown: str) -> int:
    """Words of the longest line of prose (not a heading, list item, quote, table row or fence)."""
    lengths = [len(line.split()) for line in markdown.splitlines() if not _PROSE_LINE.match(line)]
    return max(lengths, default=0)


def _longest(paragraphs: list[str]) -> int:
    return max((len(p.split()) for p in paragraphs), default=0)


def paragraph_table(campaign) -> None:
    from annotate.blindness_selectors import campaign_blindness_samples
    from annotate.rendering import prose_paragraphs, render_html

    rows = defaultdict(lambda: ([], [], []))
    for sample in campaign_blindness_samples(campaign=campaign):
        written, before, after = rows[sample.system + (" (ref)" if sample.is_reference else "")]
        written.append(_longest_line_as_written(sample.markdown))
        before.append(_longest(prose_paragraphs(render_html(sample.markdown, paragraph_per_line=False))))
        after.append(_longest(prose_paragraphs(render_html(sample.markdown))))
    print("Longest paragraph per article, words (median over the system's articles):")
    print(f"  {'system':<24} {'n':>3} {'as written':>11} {'shown before':>13} {'shown now':>10} {'now/written':>12}")
    for system in sorted(rows, key=lambda k: (not k.endswith("(ref)"), k)):
        written, before, after = rows[system]
        w, b, a = median(written), median(before), median(after)
        print(f"  {system:<24} {len(written):>3} {w:>11.0f} {b:>13.0f} {a:>10.0f} {a / w if w else 0:>12.2f}")


def emphasis_table(campaign) -> None:
    from annotate.blindness_selectors import campaign_blindness_samples
    from annotate.rendering import render_html

    per_system = defaultdict(list)
    for sample in campaign_blindness_samples(campaign=campaign):
        html = render_html(sample.markdown)
        words = len(sample.markdown.split())
        bold = len(re.findall(r"<(?:strong|b)>", html))
        italic = len(re.findall(r"<(?:em|i)>", html))
        per_system[sample.system + (" (ref)" if sample.is_reference else "")].append((words, bold, italic))
    print("Bold and italic runs per 1,000 words on the page (mean over articles; pooled over all words):")
    print(f"  {'system':<24} {'n':>3} {'bold mean':>10} {'bold pooled':>12} {'italic mean':>12} {'italic pooled':>14}")
    generated = []
    for system in sorted(per_system, key=lambda k: (not k.endswith("(ref)"), k)):
        items = per_system[system]
        if not system.endswith("(ref)"):
            generated += items
        _emphasis_row(system, items)
    if generated:
        _emphasis_row("all generated", generated)


def _emphasis_row(name: str, items: list[tuple[int, int, int]]) -> None:
    total = sum(w for w, _, _ in items)
    bold_mean = mean(1000 * b / w for w, b, _ in items if w)
    italic_mean = mean(1000 * i / w for w, _, i in items if w)
    bold_pooled = 1000 * sum(b for _, b, _ in items) / total
    italic_pooled = 1000 * sum(i for _, _, i in items) / total
    print(f"  {name:<24} {len(items):>3} {bold_mean:>10.2f} {bold_pooled:>12.2f} {italic_mean:>12.2f} {italic_pooled:>14.2f}")


def guessability_lines(campaign) -> None:
    from annotate.blindness import AS_WRITTEN, NEUTRAL
    from annotate.blindness_selectors import campaign_blindness

    report = campaign_blindness(campaign=campaign)
    for way, label in ((AS_WRITTEN, "emphasis as written"), (NEUTRAL, "neutral emphasis")):
        g = report.guessability_by_emphasis[way]
        print(f"Guessability with {label}: {g.text}, n = {g.n_articles} articles on {g.n_topics} topics")
    leading = ", ".join(f"{s.label} (AUC {s.auc:.2f})" for s in report.separation[:3])
    print(f"Leading features ({'neutral' if report.neutral_emphasis else 'as written'}): {leading}")


def render_timing(campaign) -> None:
    from annotate.blindness_selectors import campaign_blindness_samples
    from annotate.rendering import render_html

    texts = [s.markdown for s in campaign_blindness_samples(campaign=campaign)]
    size = sum(len(t.encode()) for t in texts) / 1e6
    best = {}
    for flag in (False, True):
        best[flag] = min(_time(lambda: [render_html(t, paragraph_per_line=flag) for t in texts]) for _ in range(5))
    print(
        f"Rendering {len(texts)} articles ({size:.2f} MB): {best[False] * 1000:.0f} ms joined as CommonMark, "
        f"{best[True] * 1000:.0f} ms with a paragraph per line (ratio {best[True] / best[False]:.2f})"
    )


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sample", nargs="?", type=Path, default=SAMPLE)
    args = parser.parse_args()
    django_on_scratch_database("article-looks", debug=False)
    from django.core.management import call_command

    from annotate.models import Campaign, System
    from annotate.services.campaigns import campaign_create

    targets = []
    if (args.sample / "data").is_dir():
        call_command("import_wlc", str(args.sample), "--quiet-progress", stdout=io.StringIO(), stderr=io.StringIO())
        from annotate.models import CriterionSet

        keys = list(System.objects.exclude(key="wikipedia").order_by("key").values_list("key", flat=True))
        sample = campaign_create(
            name="sample", criterion_set=CriterionSet.objects.get(key="wiki_writing_criteria"), systems=["wikipedia", *keys]
        )
        targets.append((f"the sample ({args.sample})", sample))
    else:
        print(f"{args.sample} has no data/ folder: the demo only")
    call_command("load_demo", stdout=io.StringIO())
    targets.append(("the demo (load_demo)", Campaign.objects.get(name="Demo campaign")))
    for name, campaign in targets:
        print(f"\n=== {name}: campaign '{campaign.name}', {campaign.pairs.count()} pairs ===")
        paragraph_table(campaign)
        emphasis_table(campaign)
        guessability_lines(campaign)
        render_timing(campaign)


if __name__ == "__main__":
    main()
