"""annotate.rendering: sanitized HTML and table of contents (no Django)."""

import re
import time

from annotate.cleaning import clean_article
from annotate.rendering import render_html, toc_from_html

ARTICLE = """# Bridge

Intro with **bold**, *italic*, ~~struck~~ and `code`.

## History

| Year | Event | Crew |
|:-----|:-----:|-----:|
| 1934 | Launched | 44 |
| 1942 | Rescues | 75 |

### Early years

- one
- two

1. first
2. second

> A quote.

## Legacy

Text with H<sub>2</sub>O and 10<sup>6</sup>.

---

```python
print("hi")
```
"""

HOSTILE = """# Title

<script>alert("x")</script>
<img src="x" onerror="alert(1)">
<a href="javascript:alert(1)">click me</a>
<p onclick="alert(1)" style="color:red" class="c">styled</p>
<iframe src="https://evil.example"></iframe>
<style>body { display: none }</style>
<svg onload="alert(1)"><circle r="1"/></svg>

[a link](https://example.com/page) and [js](javascript:alert(1)) and [data](data:text/html;base64,AAAA).
![an image](https://example.com/i.png) and ![local](i.png) and <https://example.com/auto>.
A bare https://example.com/bare and www.example.com/www and HTTP://EXAMPLE.COM/UPPER.
[ref link][r]

[r]: https://example.com/ref

<h2 id="evil" onmouseover="alert(1)">Raw heading</h2>
"""


def test_it_renders_tables():
    html = render_html(ARTICLE)
    assert "<table>" in html and "<thead>" in html and "<tbody>" in html
    assert re.search(r"<th>Year</th>\s*<th>Event</th>\s*<th>Crew</th>", html)
    assert re.search(r"<td>1934</td>\s*<td>Launched</td>\s*<td>44</td>", html)


def test_it_drops_table_alignment_styles():
    html = render_html(ARTICLE)
    assert "style" not in html and "align" not in html


def test_it_renders_the_allowed_inline_and_block_markup():
    html = render_html(ARTICLE)
    for fragment in (
        "<strong>bold</strong>",
        "<em>italic</em>",
        "<del>struck</del>",
        "<code>code</code>",
        "<ul>",
        "<ol>",
        "<li>one</li>",
        "<blockquote>",
        "<hr>",
        "<pre><code>",
        "<sub>2</sub>",
        "<sup>6</sup>",
    ):
        assert fragment in html, fragment


def test_it_numbers_headings_in_document_order():
    html = render_html(ARTICLE)
    assert re.findall(r"<h(\d) id=\"(sec-\d+)\">", html) == [
        ("1", "sec-1"),
        ("2", "sec-2"),
        ("3", "sec-3"),
        ("2", "sec-4"),
    ]
    assert '<h2 id="sec-2">History</h2>' in html


def test_it_gives_headings_ids_independent_of_their_text():
    one = render_html("# A\n\n## Early life\n\nx\n\n## Career\n\ny")
    two = render_html("# B\n\n## Something else entirely\n\nx\n\n## Another\n\ny")
    ids = lambda html: re.findall(r'id="([^"]+)"', html)  # noqa: E731
    assert ids(one) == ids(two) == ["sec-1", "sec-2", "sec-3"]


def test_it_returns_a_table_of_contents_matching_the_ids():
    toc = toc_from_html(render_html(ARTICLE))
    assert toc == [(2, "History", "sec-2"), (3, "Early years", "sec-3"), (2, "Legacy", "sec-4")]
    html = render_html(ARTICLE)
    for level, text, anchor in toc:
        assert f'<h{level} id="{anchor}">{text}</h{level}>' in html


def test_it_gives_plain_text_in_the_table_of_contents():
    toc = toc_from_html(render_html("# T\n\n## The *Fancy* & `odd` [part](https://x.example)\n\ntext"))
    assert toc == [(2, "The Fancy & odd part", "sec-2")]


def test_it_returns_an_empty_table_of_contents_without_sections():
    assert toc_from_html(render_html("# Only a title\n\nAnd prose.")) == []


def test_it_never_lets_scripts_or_event_handlers_through():
    # Raw HTML is shown as text (escaped), so words like "onerror" may be read, never run.
    html = render_html(HOSTILE)
    lowered = html.lower()
    for needle in ("<script", "<iframe", "<svg", "<style", "<img", "<a ", "<p ", '<h2 id="evil'):
        assert needle not in lowered, needle
    tags = re.findall(r"<[^>]*>", lowered)
    assert not [t for t in tags if re.search(r"\s(?:on\w+|class|style|href|src|id=\"evil)", t)], tags


def test_it_never_outputs_a_url():
    html = render_html(HOSTILE)
    lowered = html.lower()
    for needle in ("http", "www.", "data:", "example.com"):
        assert needle not in lowered, needle
    assert not re.search(r"<[^>]*\b(?:href|src)\s*=", lowered)


def test_it_keeps_the_text_of_links_and_drops_images():
    html = render_html(HOSTILE)
    assert "a link and js and data" in html
    assert "ref link" in html
    assert "an image" not in html and "local" not in html
    assert "click me" in html and "styled" in html


def test_it_shows_raw_html_headings_as_text_and_numbers_only_markdown_ones():
    html = render_html(HOSTILE)
    assert '&lt;h2 id="evil" onmouseover="alert(1)"&gt;Raw heading&lt;/h2&gt;' in html
    assert re.findall(r"<h\d[^>]*>", html) == ['<h1 id="sec-1">']
    assert toc_from_html(render_html(HOSTILE)) == []


def test_it_escapes_text_that_looks_like_markup():
    html = render_html("# T\n\nIf a < b and b > c then 5 > 3 & so on.")
    assert "a &lt; b and b &gt; c" in html
    assert "&amp; so on" in html


def test_it_keeps_the_start_of_a_resumed_ordered_list():
    html = render_html("1. one\n2. two\n\nA paragraph.\n\n3. three")
    assert '<ol start="3">' in html


def test_it_renders_deterministically():
    assert render_html(ARTICLE) == render_html(ARTICLE)


def test_it_renders_a_cleaned_article_without_any_url():
    agent = (
        "Title: x\n\n# Bridge_X\n\nOpened [1] in 1932 (https://example.com/a), see [site](https://s.example).\n\n"
        "## References\n\n[1] https://example.com/a\n"
    )
    html = render_html(clean_article(agent, "Bridge X"))
    assert html.startswith('<h1 id="sec-1">Bridge X</h1>')
    assert "http" not in html and "href" not in html and "[1]" not in html
    assert "<p>Opened in 1932, see site.</p>" in html


def test_it_renders_every_sample_article_without_urls_and_with_consistent_ids(sample_path):
    data = sample_path / "data"
    files = sorted(data.glob("*/test_data/*/md_data/*.md")) + sorted(data.glob("*/wiki_data/cleaned_data/article/*.md"))
    assert len(files) == 140, f"expected 20 Wikipedia + 6x20 system articles under {data}, found {len(files)}"
    for path in files:
        shown = clean_article(path.read_text(encoding="utf-8"), path.stem.replace("_", " "))
        html = render_html(shown)
        # Attributes, not words: one article mentions the HREF forecast model.
        assert not re.search(r"\b(?:href|src)\s*=|https?:|www\.", html, re.I), path
        ids = re.findall(r'<h[1-6] id="(sec-\d+)">', html)
        assert ids == [f"sec-{i}" for i in range(1, len(ids) + 1)], path
        assert len(ids) == len(re.findall(r"<h[1-6]", html)), path
        assert all(anchor in ids for _, _, anchor in toc_from_html(render_html(shown))), path


def test_it_renders_a_large_article_without_blowing_up():
    # A guard against pathological slowness (minutes), not a speed measurement: see bench/clean_only.py.
    paragraph = (
        "The cutter patrolled the coast from 1934 onwards, and in the spring of 1942 it rescued the crews of "
        "several tankers torpedoed off the Outer Banks. Its crew of **44** was later raised to *75*, and it "
        "stayed in service until 1963, when it was decommissioned and sold for scrap to a company in Texas.\n\n"
    )
    block = "## Section\n\n" + paragraph * 6 + "| Year | Crew |\n|---|---|\n| 1934 | 44 |\n| 1942 | 75 |\n\n"
    text = "# Big\n\n" + block * (1_000_000 // len(block))
    start = time.perf_counter()
    html = render_html(text)
    assert time.perf_counter() - start < 10.0
    assert html.count("<table>") == 1_000_000 // len(block)
