"""Micro-benchmark: cleaning (strip_citations + normalize_article) and rendering
throughput on the benchmark sample, without Django or a database.

    .venv/bin/python bench/clean_only.py [SAMPLE_DIR] [--repeat N]

SAMPLE_DIR defaults to ../shared/wlc-sample next to the repository. Prints MB,
seconds and MB/s (MB = 10**6 bytes of UTF-8 markdown) for each stage; the best of
N rounds (default 5) is reported to smooth out noise.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from annotate.cleaning import normalize_article, strip_citations  # noqa: E402
from annotate.rendering import render_html  # noqa: E402


def load(sample: Path) -> list[tuple[str, str]]:
    data = sample / "data"
    files = sorted(data.glob("*/wiki_data/cleaned_data/article/*.md")) + sorted(data.glob("*/test_data/*/md_data/*.md"))
    return [(p.stem.replace("_", " "), p.read_text(encoding="utf-8")) for p in files]


def best_of(repeat: int, fn) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sample", nargs="?", default=str(REPO.parent / "shared" / "wlc-sample"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    articles = load(Path(args.sample))
    if not articles:
        sys.exit(f"no markdown files under {args.sample}")
    raw_mb = sum(len(text.encode("utf-8")) for _, text in articles) / 1e6

    cleaned: list[str] = []

    def clean_all() -> None:
        cleaned[:] = [normalize_article(strip_citations(text), title) for title, text in articles]

    def strip_all() -> None:
        for _, text in articles:
            strip_citations(text)

    def render_all() -> None:
        for text in cleaned:
            render_html(text)

    t_strip = best_of(args.repeat, strip_all)
    t_clean = best_of(args.repeat, clean_all)
    clean_mb = sum(len(text.encode("utf-8")) for text in cleaned) / 1e6
    t_render = best_of(args.repeat, render_all)

    print(f"{len(articles)} articles, best of {args.repeat} rounds")
    print(f"{'stage':28s} {'MB':>8s} {'seconds':>9s} {'MB/s':>8s}")
    for name, mb, seconds in (
        ("strip_citations", raw_mb, t_strip),
        ("strip + normalize", raw_mb, t_clean),
        ("render_html (cleaned md)", clean_mb, t_render),
        ("strip + normalize + render", raw_mb, t_clean + t_render),
    ):
        print(f"{name:28s} {mb:8.3f} {seconds:9.4f} {mb / seconds:8.1f}")


if __name__ == "__main__":
    main()
