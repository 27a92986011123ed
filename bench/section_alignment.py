"""The section map's alignment (issue 37) on the benchmark sample: its self-check and its reach.

    python bench/section_alignment.py [../shared/wlc-sample]

Imports the sample into a fresh SQLite database (the articles as the page shows them: cleaned,
rendered), then:

- self-check, for every reference article: the article against a copy of itself with its sections
  shuffled and every heading replaced by "Part k"; the share of sections whose counterpart is
  their own copy (target: at least 95% on every article);
- per pair (the reference against each generated article of its topic): the share of sections
  of both articles that have a counterpart, and the time to compute and store one alignment.
"""

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import django_on_scratch_database, load_sample_or_demo  # noqa: E402  (bench/ is on sys.path)

TARGET = 0.95


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, nargs="?", default=ROOT.parent / "shared" / "wlc-sample")
    args = parser.parse_args()
    django_on_scratch_database("section-alignment", debug=False)

    from annotate.alignment import Section, align, sections_of
    from annotate.models import Article
    from annotate.services.alignments import section_alignment_ensure

    source, _ = load_sample_or_demo(args.path)
    articles = list(Article.objects.select_related("system", "topic").order_by("topic__title", "system__key"))
    references = [a for a in articles if a.system.is_reference]
    print(f"{len(articles)} articles from {source}; {len(references)} reference articles\n")

    print("self-check: each reference article against a copy, sections shuffled, headings replaced")
    worst = 1.0
    for article in references:
        sections = sections_of(article.html)
        order = list(range(len(sections)))
        random.Random(article.pk).shuffle(order)
        copy = [Section(f"x{k}", f"Part {k}", sections[i].text) for k, i in enumerate(order)]
        result = align(sections, copy)
        found = sum(m is not None and order[m] == i for i, m in enumerate(result.first_to_second))
        share = found / len(sections) if sections else 1.0
        worst = min(worst, share)
        print(f"  {article.topic.title[:48]:48} {found:3} / {len(sections):3} sections  {share:6.1%}")
    print(f"  worst article: {worst:.1%} | target >= {TARGET:.0%} on every article: {'met' if worst >= TARGET else 'NOT met'}\n")

    print("pairs: the reference against each generated article of its topic")
    shares, seconds = [], []
    for reference in references:
        for generated in (a for a in articles if a.topic_id == reference.topic_id and not a.system.is_reference):
            started = time.perf_counter()
            stored = section_alignment_ensure(first=reference, second=generated)
            seconds.append(time.perf_counter() - started)
            matched = sum(m is not None for m in stored.first_to_second) + sum(m is not None for m in stored.second_to_first)
            total = len(stored.first_to_second) + len(stored.second_to_first)
            shares.append(matched / total if total else 0.0)
    if not shares:
        sys.exit("no topic has a reference and a generated article")
    ordered = sorted(shares)
    print(
        f"  share of sections (both articles) with a counterpart, per pair: median {statistics.median(shares):.0%}, "
        f"min {ordered[0]:.0%}, quartiles {ordered[len(ordered) // 4]:.0%}-{ordered[3 * len(ordered) // 4]:.0%}, n = {len(shares)} pairs"
    )
    print(
        f"  time to compute and store one alignment: median {statistics.median(seconds) * 1000:.0f} ms, "
        f"max {max(seconds) * 1000:.0f} ms (once per two articles; every later page reads it)"
    )


if __name__ == "__main__":
    main()
