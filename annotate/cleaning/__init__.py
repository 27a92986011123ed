"""Turn raw article markdown into the text annotators are shown.

Pure Python, no Django. Two steps, applied identically to both articles of a pair
(``clean_article`` = ``normalize_article(strip_citations(md), title)``). The one
difference: ``is_reference=True`` (the human-written article) turns off the
source-commentary rule below, which only agents' articles need.

``strip_citations``
    Removes every trace of sourcing (inline citation markers, URLs, link targets,
    images, footnotes, reference sections, fetch metadata) while keeping all prose,
    lists, tables and headings.
``normalize_article``
    Gives both articles the same skeleton so that nothing but content tells them
    apart: one ``# Title`` first line, sections from ``##`` down, ATX headings only.

strip_citations: rules and judgement calls
------------------------------------------
* Inline markers removed: ``[1]``, ``[1, 2]``, ``[1-3]``/``[1–3]``, ``[1][2]``,
  comma/semicolon separated runs ``[4], [5]`` (separators go too), ``[1, p. 4]``,
  ``[1†source]``, ``[^note]``, ``【…】``, ``<sup>`` holding a number, a letter or a
  bracket (kept after ``10`` or a unit: ``10<sup>6</sup>``, ``km<sup>2</sup>``),
  ``[citation needed]``-style maintenance tags, ``[Source 3]``, and the broken
  ``[[1]), [26]]`` wrapper one agent emits.
* A bracketed number is a citation only with 1-3 digits: ``[1939]`` (4+ digits) is
  kept as prose, since a bracketed year (or ``[2009] ACHPR 102``, a neutral case
  citation that is prose) is far likelier than a 1000th source. Other bracketed
  text (``[sic]``, ``[...]``, ``[the]``, ``[a]``, task boxes ``[ ]``) is kept.
* Links ``[text](url)`` keep ``text`` (a link whose text is itself a URL vanishes);
  ``[3](url)`` and images ``![alt](url)`` are dropped; bare, parenthesised,
  angle-bracket and scheme-mangled (``httpswww.…``) URLs are dropped; reference
  link definitions ``[label]: url`` are dropped and ``[text][label]`` keeps ``text``.
* Code (fenced blocks and inline code spans) is never modified.
* Reference sections: a heading (ATX ``#``-``######``, setext, a line that is only
  bold/italic text, or a ``Label:`` / bare ``References`` line after a blank line)
  whose text, ignoring markup, numbering (``8.``), a trailing ``(…)``, case and
  colons, is made only of reference names -- References, Reference, Reference list,
  Sources, Source, Source list, Sources cited, Works cited, Cited works, Citations,
  Notes, Footnotes, Endnotes, External links, Further reading, Links, Bibliography --
  joined by ``and``/``&``/``,``/``/``. The section runs up to the next heading of
  the same or a higher level that is not itself a reference section. So a trailing
  run of such sections goes to the end of the article, a ``Notes`` section followed
  by ``## History`` drops only itself, and a ``### Sources`` sub-section ends at the
  next ``##``/``###``. Pseudo-headings (bold line, ``Label:``) count as level 7,
  below ``######``, and their section also ends at the first long prose paragraph
  (30+ words, no URL), since nothing else marks where it ends. Headings that merely
  contain such a word (``Selected bibliography``, ``Historical sources``) are
  content and stay. A heading that *begins* with a reference name and says more
  (``External links and metadata``) is a reference section only when it opens
  the trailing run of reference sections and its own body holds URLs or ``[N]``
  entries.
* A reference-named ATX/setext section whose body is prose is content, whatever
  its heading: a Wikipedia ``## Sources`` with ``### Written`` / ``#### Campaign``
  over paragraphs on the primary accounts stays, sub-sections included. Prose
  means: no URL, no list item, table row or ``[N]``/``[^N]`` entry anywhere in the
  section, at least one paragraph of 30+ words, and fewer than half its lines
  with bibliographic cues (ISBN, DOI, ``pp. 4``, ``(1990).``, Retrieved). Trade-offs:
  a section mixing a prose paragraph with a list of works goes whole; a list of
  plain unmarked entries with one 30-word annotated entry would stay.
* Every block under a reference heading is classified (``blocks``: a small
  scored classifier with named features and thresholds; docs/how-to/cleaning-source-blocks.md):
  a citation entry (URL or domain, identifier, access note, format or language
  tag, outlet, date, quoted or italic title, author list, entry number, ...) or
  an agent's note (about the task: creating or saving the article, the rubric,
  the sources provided, the user; or about the text's own sources) goes; content
  (a table of data, a timeline, a discography, prose about the subject) stays,
  with the headings above it; a heading left empty goes. Each decision is
  logged (``cleaning_decisions``). Trade-off: an unmarked entry with fewer
  features than the threshold (a title and a year alone) stays.
* Agents' notes at the ends (agents only): a whole paragraph before the first
  section or after the last content that speaks to the user about the task goes,
  with a list after its colon and a rule beside it (``notes.drop_agent_notes``).
  Self-reference inside the prose stays (the blindness audit measures it).
* Source commentary (agents only, ``is_reference=False``): a section goes when its
  heading is about sourcing (source(s), sourcing, verification, methodology,
  citation(s), research notes/coverage/workflow/methods, "how this article was
  ..."), it sits in the trailing run (every later heading of its level or higher
  is a reference section or more commentary), it has an earlier sibling heading
  (so a title such as ``# Source guide to X`` is never one), and its body talks
  about the article or the act of checking sources ("this article/report",
  consulted, verified, corroborated, cross-checked, accessed, retrieved, cited)
  or its heading names the article itself. A prose ``## Sources`` written by an
  agent about its own sourcing ("This report draws on ...") goes by the same body
  test. Trade-offs: commentary in the middle of an article stays (content
  sections such as ``## Sources of the river`` or ``### Historical sources`` are
  far likelier there); a trailing content section about documents ("## Later
  maps and photographs" corroborating a site) goes if its heading says
  "sources"; the reference article is never judged by this rule, since its
  historiography uses the same words ("cited", "corroborated").
* ``Bibliography`` is ambiguous (sources, or the subject's own works): it is removed
  only when its body is empty or holds a URL or ``[N]``/footnote entries; a plain
  list of works stays.
* A trailing block of lines that are only reference entries (``[12] …``,
  ``1. … https://…``, a lone URL, ``- [title](url)``) goes even without a heading,
  with a bare reference-name line (``Sources:``) just above it. Anywhere, a line
  ``[N] … URL`` is a reference entry and goes.
* Fetch metadata: ``URL Source:`` and ``Markdown Content:`` lines anywhere; ``Title:``,
  ``Published Time:``, ``Description:``, ``Author:``, ``Source:`` only in the block of
  such lines that opens the file.
* Caption residue: a line or list item (under 80 characters), or a table row with
  one filled cell, that holds only a source label -- Source, Sources, Source(s),
  Data source, Ref./Refs, Reference(s), Citation(s), any case -- with nothing
  after it but note numbers, punctuation and emphasis markers goes, whether a
  citation was stripped from it (``*Source: [4](url)*``, ``Sources: [3], [4]``)
  or it came bare (``Source: 5``, ``| Source: |  |  |``). The label needs a colon,
  a number or emphasis around it: a bare ``Sources`` line may be a list word (and
  after a blank line it is a reference heading, above). ``Source: the 1911
  census ...`` has words and stays; so does a header row named ``Source:``.
* Tables (``| a | b |`` rows of equal width after an alignment row): a column
  headed Ref./Ref/Refs/Reference(s)/Source(s)/Citation(s)/Cite/Note(s) whose body
  cells are all empty once citations are stripped goes, header and alignment
  cell included (never the only column). In a column where two or more cells
  start with the same capitalised name said twice -- one to three capitalised
  words, with "and"/"of"/"the"/... between them, then only the end of the cell
  or ``(``/``[``/``,``/``;`` -- the doubled name is said once ("Albania Albania",
  "Antigua and Barbuda Antigua and Barbuda", "Taiwan Taiwan (Republic of
  China)"): a flag's alt text scraped before the name. Trade-off: a lone doubled
  cell (a real "Walla Walla") stays, and so would a lone flag; a name that goes
  on ("Moo Moo Meadows") stays; prose and list items are never touched.
* Tidying where something was removed: no double space, no space before
  ``.,;:!?)`` or at a line start, nor before emphasis that closes a line or a
  clause (``*Source: the log [3]*`` becomes ``*Source: the log*``), ``()`` left
  empty goes, and a line, list item or table row left without words (or with
  only a short label such as ``- Website:``) goes. A removed marker between a
  sentence end (``.!?``, maybe with a closing quote or parenthesis) and a capital
  letter leaves one space (``it.[3]It was`` becomes ``it. It was``); text where
  no marker was (``U.S.``, ``3.5``, ``e.g.Smith``) is never touched.
  Globally: ``word .`` becomes ``word.``, trailing spaces go, runs of blank
  lines collapse to one blank line, leading/trailing blank lines go. Lines are never
  joined or split; table pipes and alignment rows are left alone but where a
  whole column goes (above).

normalize_article: rules
------------------------
* ``\r\n``/``\r`` become ``\n``, trailing whitespace goes, one trailing newline.
* Title: ``title`` with ``_`` read as spaces. If the first line is an H1 (whatever
  its spelling, e.g. ``# Arne_Furumark``) or a heading spelling the title, it is
  replaced; else an H1 spelling the title elsewhere is removed; then ``# Title`` is
  put first.
* Setext headings become ATX; bold (not italic: titles of works) wrapping a whole
  heading and trailing colons go; empty headings go; every heading gets a blank
  line before and after.
* All headings but the title shift so that the shallowest becomes ``##``, keeping
  relative depth, capped at ``######`` (``# Early life`` / ``## Childhood`` become
  ``## Early life`` / ``### Childhood``).

Where the rules live
--------------------
``protect`` (code kept out of every rule, placeholders), ``sections`` (reference
and source-commentary sections, metadata and entry lines), ``inline`` (markers,
URLs, links, images and the tidying where they were), ``residue`` (caption
residue), ``tables`` (source columns, doubled flag names), ``strip`` (the order
of the passes), ``normalize`` (``normalize_article``), ``words`` (``count_words``). Markdown line syntax shared
with the removal audit is in ``annotate.markdown_lines``.
"""

from __future__ import annotations

from annotate.cleaning.blocks import Decision
from annotate.cleaning.normalize import normalize_article
from annotate.cleaning.strip import strip_citations
from annotate.cleaning.words import count_words

__all__ = ["Decision", "clean_article", "cleaning_decisions", "count_words", "normalize_article", "strip_citations"]


def clean_article(markdown: str, title: str, *, is_reference: bool = False) -> str:
    """The displayed article: citations stripped, then normalized."""
    return normalize_article(strip_citations(markdown, is_reference=is_reference), title)


def cleaning_decisions(markdown: str, *, is_reference: bool = False) -> list[Decision]:
    """Why each block under a source heading went or stayed, and each agent's note
    removed at the article's start or end (``blocks.Decision``), in the order the
    cleaner met them."""
    log: list[Decision] = []
    strip_citations(markdown, is_reference=is_reference, log=log)
    return log
