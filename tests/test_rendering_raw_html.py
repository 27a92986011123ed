"""annotate.rendering: raw HTML in article markdown is shown as text, never dropped or run."""

import re
from collections import Counter
from html.parser import HTMLParser

import pytest

from annotate.models import Article
from annotate.rendering import KEPT_RAW_TAGS, plain_text, render, render_html
from tests.helpers import article, run, write_wlc

# Prose that talks about markup, as articles on web technology or typography do.
MENTIONS = {
    "script": "Browsers run a <script> element as soon as they parse it, unlike the prose that follows here.",
    "style": "Authors put rules in a <style> block; the words after it must still be read by annotators.",
    "textarea": "A <textarea> lets visitors type several lines, and the remaining sentence stays visible.",
    "title": "The <title> of a page shows in the tab, and this clause about tabs must survive.",
    "iframe": "An <iframe> embeds one document in another, which this closing remark explains.",
    "noscript": "Fallback content sits in <noscript> for readers without scripts, as this ending notes.",
    "comparison": "The inequality a<b and c>d holds for the sample, and nothing between the signs vanishes.",
}


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))


def elements(html: str) -> list[tuple[str, list]]:
    parser = _Elements()
    parser.feed(html)
    parser.close()
    return parser.tags


def words(text: str) -> Counter:
    return Counter(re.findall(r"\w+", text))


def assert_inert(html: str) -> None:
    for tag, attrs in elements(html):
        assert tag not in {"script", "style", "textarea", "title", "iframe", "noscript", "a", "img", "svg"}, tag
        for name, _ in attrs:
            assert (tag, name) == ("ol", "start") or (re.fullmatch(r"h[1-6]", tag) and name == "id"), (tag, name)


@pytest.mark.parametrize("key", sorted(MENTIONS))
def test_it_renders_prose_that_mentions_markup_in_full(key):
    source = MENTIONS[key]
    markdown = f"# Markup\n\n{source}\n\nA second paragraph closes the article.\n"
    html = render_html(markdown)
    missing = words(markdown.replace("#", "")) - words(plain_text(html))
    assert not missing, (missing, html)
    assert "A second paragraph closes the article." in html
    assert_inert(html)


def test_it_keeps_every_word_when_all_the_mentions_share_one_article():
    markdown = "# Markup\n\n" + "\n\n".join(MENTIONS.values()) + "\n\n## Later\n\nThe last section is *still* here.\n"
    rendered = render(markdown)
    assert not words(markdown.replace("#", "").replace("*", "")) - words(plain_text(rendered.html))
    assert '<h2 id="sec-2">Later</h2>' in rendered.html and "<em>still</em>" in rendered.html
    assert_inert(rendered.html)


def test_it_shows_a_tag_at_the_start_of_a_line_as_text_without_swallowing_the_rest():
    # "<script" opening a line would start an HTML block running to the end of the document.
    markdown = "# T\n\n<script>\n\n## Section\n\nMore *words*.\n\n<textarea>\nend\n"
    html = render_html(markdown)
    assert "<p>&lt;script&gt;</p>" in html
    assert '<h2 id="sec-2">Section</h2>' in html and "<em>words</em>" in html
    assert "<p>&lt;textarea&gt;</p>\n<p>end</p>" in html


def test_it_escapes_hostile_markup_instead_of_running_it():
    markdown = (
        '# T\n\nSee <img src="x.png" onerror="steal()"> and <a href="javascript:go()">this</a> '
        'or <span style="color:red" onclick="go()">that</span>.\n'
    )
    rendered = render(markdown)
    assert_inert(rendered.html)
    assert "onerror" in plain_text(rendered.html)  # visible as words, not as an attribute
    assert rendered.as_text == ("<img>", "<a>", "</a>", "<span>", "</span>")


def test_it_keeps_bare_harmless_tags_as_markup():
    html = render_html("# T\n\nH<sub>2</sub>O, 10<SUP>6</SUP>, a<br/>b, <b>bold</b>, <i>it</i>, <small>fine</small>.\n")
    for fragment in ("<sub>2</sub>", "<sup>6</sup>", "a<br>b", "<b>bold</b>", "<i>it</i>", "<small>fine</small>"):
        assert fragment in html, (fragment, html)
    assert {"sup", "sub", "br", "b", "i", "small"} <= KEPT_RAW_TAGS


def test_it_shows_kept_tags_with_attributes_or_unmatched_as_text():
    rendered = render('# T\n\n<sup class="x">1</sup> and a stray </sub> here.\n')
    assert rendered.html.count("<sup") == 0 and "<sub" not in rendered.html
    assert "&lt;/sub&gt; here" in rendered.html
    assert rendered.as_text == ("<sup>", "</sup>", "</sub>")


def test_it_leaves_code_alone():
    html = render_html("# T\n\nUse `<sup>` or:\n\n```\n<script>x()</script>\n```\n")
    assert "<code>&lt;sup&gt;</code>" in html
    assert "<pre><code>&lt;script&gt;x()&lt;/script&gt;\n</code></pre>" in html


def test_it_drops_angle_bracket_links_and_says_so():
    rendered = render("# T\n\nSee <https://example.org/page> for more.\n")
    assert "example" not in rendered.html and "See  for more." in rendered.html
    assert rendered.dropped == {"URL": 1}
    assert rendered.describe() == "dropped at rendering: 1 URL"


def test_it_describes_what_it_showed_as_text():
    rendered = render("# T\n\nA <script> tag, a <!-- note --> and </script>.\n")
    assert rendered.describe() == "3 raw HTML tags shown as text (<script>, <!-- -->, </script>)"
    assert render("# T\n\nPlain prose.\n").describe() == ""


def test_it_never_reuses_a_character_of_the_article_as_its_placeholder():
    markdown = "# T\n\nPrivate \ue000 and \ue001 characters next to a <b and c> comparison.\n"
    text = plain_text(render_html(markdown))
    assert "\ue000" in text and "\ue001" in text and "<b and c>" in text


@pytest.mark.django_db
def test_it_reports_raw_html_shown_as_text_per_file_at_import(tmp_path):
    systems = {"agent_a": {"Red_Fox": article("Red Fox", "Foxes avoid a <script> of hunters, then <b>rest</b>.")}}
    result = run("import_wlc", str(write_wlc(tmp_path, systems=systems)), "--quiet-progress")
    assert result.code == 0, result.err
    note = [line for line in result.out.splitlines() if "Red_Fox.md" in line]
    assert len(note) == 1, result.out
    assert note[0].startswith("note: ") and note[0].endswith("Red_Fox.md: 1 raw HTML tag shown as text (<script>)"), note
    stored = Article.objects.get(system__key="agent_a")
    assert "then <b>rest</b>." in stored.html and "&lt;script&gt; of hunters" in stored.html


@pytest.mark.django_db
def test_it_says_nothing_about_articles_rendered_without_changes(tmp_path):
    result = run("import_wlc", str(write_wlc(tmp_path)), "--quiet-progress")
    assert result.code == 0, result.err
    assert "shown as text" not in result.out and "dropped at rendering" not in result.out


@pytest.mark.django_db
def test_it_reports_raw_html_for_json_lines_imports_too(tmp_path):
    path = tmp_path / "articles.jsonl"
    path.write_text('{"topic": "Glass", "system": "bot", "markdown": "# Glass\\n\\nIt is <iframe> thin."}\n', encoding="utf-8")
    result = run("import_articles", str(path), "--quiet-progress")
    assert result.code == 0, result.err
    assert "1 raw HTML tag shown as text (<iframe>)" in result.out
