"""Labels in long, tidy format: export rows, reading and writing label files, and the import.

Three files travel together, `<stem>.<ext>`, `<stem>.overall.<ext>` and
`<stem>.spans.<ext>`, as CSV or JSON Lines, with a fourth, `<stem>.steps.<ext>`, for a campaign
that shows the agents' steps:

* labels: one row per (pair, criterion, rater). Only labels that name a winner (or are "cannot judge")
  are exported, whatever the assignment's status (in progress, submitted or
  expired): a criterion the rater has not decided has no row. Judges' rows
  (`rater_kind` judge, `rater` the judge's name) follow the humans': one per
  (pair, criterion, order shown) the judge has finished, either a verdict or, for
  a unit in error, a row with an empty `winner_system` and the `error`. They fill
  the judge columns (`model`, the call's `prompt_tokens`, `completion_tokens`,
  `cost_usd`, `latency_ms` with its `call_id`, so that sums are taken over
  distinct calls, and `position`, "1"/"2" as shown, "" for a tie). These columns
  are written only when the export holds judge rows (human rows leave them
  empty), so a humans-only export keeps its thirteen columns; files without them
  are read as before. `annotator_removed` (after `saved_at`, true/false, empty
  for judges) flags labels whose rater was later removed from the campaign; the
  import ignores it, so files with or without it are read alike.
  `neutral_emphasis` (after it, true/false, empty for judges) says whether the
  campaign showed the annotators bold and italic as plain text; it is also the
  last column of the overall and spans files, and the import ignores it too.
* overall: one row per (pair, rater) that answered the overall question.
* spans: one row per marked passage; `criterion` (last before `neutral_emphasis`) names the
  criterion a passage is evidence for, empty for a free mark, and may be left out of a file.
  `step` (after `neutral_emphasis`, written when a passage is in an agent's step) numbers the step
  of `system`'s article it is in, from 1; its offsets then count the step's text.
* steps (`<stem>.steps.<ext>`, written for a campaign that shows the agents' steps): one row per
  (pair, rater, step voted), the step named by `system` and its number `step` (from 1), with its
  `kind`, the `vote` (up or down), the `comment` and `saved_at`. On import `kind`, `comment` and
  `saved_at` may be left out (a given `kind` must be the step's); votes replace the stored vote on
  the same step. Judges' votes (`run_judges --steps`) follow the annotators', with `rater_kind`
  judge (the column is written only then), the reason as `comment` and the pair the vote is kept on
  as left_system/right_system; they are imported as that judge's step units.
* calls (export only, `<stem>.calls.<ext>`, written when the campaign's judges made
  calls): every call, one row each, with its `status` (valid; invalid: answered
  but unusable, retried; failed: no answer), tokens, `cost_usd`, latency and error.
  Its `cost_usd` sums to the judges' spend; summing the label rows' `cost_usd`
  over distinct `call_id`s counts only the calls that produced a verdict.

`left_system` / `right_system` are the systems that rater saw as Article 1 /
Article 2, and every verdict names a system (or `tie` / `both_bad`, or
`cannot_judge` for a human answer without a winner), never a position. Times are ISO 8601 in UTC with a trailing `Z`, microseconds kept, so a
round trip gives back the same text. `started_at` is when the rater first opened
the pair (when they claimed it if they never opened it); imported work whose file
gave no start, or no save time, gives them back empty, never made up.

Files from elsewhere: only `topic`, `criterion`, `rater`, `left_system`,
`right_system` and `winner_system` are required (`formats.LABEL_OPTIONAL` may be
left out); a CSV may be separated by commas, semicolons, tabs or vertical bars
(the header tells). `order_known` false marks a human row whose display order is
unknown: `left_system`/`right_system` then only name the pair, the export writes
the column back, and position figures leave the row out. A labels-only campaign
whose rubric was made to grow (`placeholders.criterion_set_for_labels`) gets the
criteria its rows name. Rater names must be in Unicode normal form NFKC, as
usernames are stored: one that is not is reported on its lines, with the account
it would merge into.

Importing validates every row before writing anything, and writes in one
transaction: with any bad row nothing is imported, unless `skip_bad`. Each
(pair, rater) becomes a submitted assignment; the campaign's rationale rules are
not applied to imported work (external raters may not write rationales). Labels
and the overall answer are updated in place; spans are only added, a row equal
to a stored span counting as unchanged, so importing the same files twice
changes nothing. Judges' rows become the units of imported judges
(`judges.imports`).

CSV cells are written through `common.spreadsheet.cell_safe`: text a
spreadsheet would run as a formula (starting with =, +, -, @, tab or CR) gets a
leading `'`, which reading a CSV takes off again, so the round trip keeps the
text exactly. JSON Lines keep the raw text.

Modules, one job each:

- `formats`: the columns, times, file names, and reading and writing CSV / JSON Lines (no database);
- `export`: the rows of a campaign's labels, judges' verdicts, overall answers and spans (reads);
- `targets`: what import rows refer to (the campaign's catalogue, loaded once);
- `label_import`: the import of the three files (human labels here), and its report;
- `companions`: the overall and spans files of an import, checked and stored;
- `judge_rows`: judges' rows of a labels file, checked and stored as imported judge units.

The names callers need are re-exported here.
"""

from interchange.export import (
    call_rows,
    judge_label_rows,
    label_rows,
    overall_rows,
    span_rows,
    step_vote_rows,
)
from interchange.formats import (
    CALL_COLUMNS,
    DELIMITERS,
    EMPHASIS_COLUMN,
    FORMATS,
    JUDGE_COLUMNS,
    LABEL_COLUMNS,
    ORDER_COLUMN,
    OVERALL_COLUMNS,
    REMOVED_COLUMN,
    SPAN_COLUMNS,
    STEP_VOTE_COLUMNS,
    LabelsFileError,
    RowsFile,
    calls_path,
    companion_paths,
    format_of,
    rows_format,
    rows_read,
    steps_path,
)
from interchange.label_import import ImportReport, labels_import

__all__ = [
    "CALL_COLUMNS",
    "EMPHASIS_COLUMN",
    "DELIMITERS",
    "ORDER_COLUMN",
    "FORMATS",
    "JUDGE_COLUMNS",
    "LABEL_COLUMNS",
    "OVERALL_COLUMNS",
    "REMOVED_COLUMN",
    "SPAN_COLUMNS",
    "STEP_VOTE_COLUMNS",
    "ImportReport",
    "LabelsFileError",
    "RowsFile",
    "call_rows",
    "calls_path",
    "companion_paths",
    "format_of",
    "judge_label_rows",
    "label_rows",
    "labels_import",
    "overall_rows",
    "rows_format",
    "rows_read",
    "span_rows",
    "step_vote_rows",
    "steps_path",
]
