"""Imports bound what they build before building it (issue 35): a rating scale's points, a header's
width and a line's length have stated limits, and a file past one is refused with `file:line`, never
with a traceback or gigabytes of memory. The property test reads hostile files in a child process
whose address space is capped (resource.RLIMIT_AS), so a regression fails the test, not the machine."""

import csv
import multiprocessing
import resource
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interchange import LABEL_COLUMNS
from interchange.formats import MAX_HEADER, MAX_LINE, LabelsFileError, rows_read
from interchange.responses import response_read
from tests.helpers import run
from tests.test_import_one_article import COLUMNS, mixed_rows, one, write_csv

# What a child may allocate beyond what it inherits: far above what a bounded read needs (a few MB),
# far below what an unbounded one takes (a billion-point scale: about 18 GB).
HEADROOM = 256 << 20


def _vm_size() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))


def _capped(conn, task, args) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_vm_size() + HEADROOM, resource.RLIM_INFINITY))
    try:
        conn.send(("ok", task(*args)))
    except MemoryError:
        conn.send(("memory", "MemoryError"))
    except (LabelsFileError, ValueError) as exc:
        conn.send(("refused", str(exc)))
    except Exception as exc:
        conn.send(("crash", f"{type(exc).__name__}: {exc}"))


def under_memory_cap(task, *args) -> tuple[str, str]:
    """Runs task(*args) in a forked child capped at HEADROOM of new memory: ("ok" | "refused" | "memory" | "crash", detail)."""
    parent, child = multiprocessing.get_context("fork").Pipe()
    process = multiprocessing.get_context("fork").Process(target=_capped, args=(child, task, args))
    process.start()
    process.join(120)
    if process.is_alive():
        process.kill()
        return "crash", "timed out"
    return parent.recv() if parent.poll() else ("crash", f"died with exit code {process.exitcode}")


def read_all(path: str) -> int:
    """Reads a labels file as the import does (every row, every response cell); the rows read."""
    found = rows_read(Path(path), columns=LABEL_COLUMNS)
    problems = [message for _, message in found.problems]
    for _, values in found.rows:
        if values.get("response"):
            try:
                response_read(values["response"])
            except ValueError as exc:
                problems.append(str(exc))
    return found.n_rows


@pytest.mark.django_db
def test_it_refuses_a_billion_point_scale_on_its_line(tmp_path):
    rows = [{**row, "response": "rating 1-1000000000"} if row.get("response", "").startswith("rating") else row for row in mixed_rows()]
    assert run("create_campaign", "--name", "arena", "--labels-only", "--allow-tie").code == 0

    result = run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "in.csv", rows)))

    assert result.code != 0 and "Traceback" not in result.err
    assert "in.csv:3:" in result.out + result.err and "a rating scale has 2 to 11 points, not 1,000,000,000" in result.out + result.err


@pytest.mark.django_db
def test_it_refuses_a_header_field_over_128_kb_with_file_and_line(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text(",".join(COLUMNS) + "," + "h" * 200_000 + "\n" + "x\n", encoding="utf-8")
    assert run("create_campaign", "--name", "arena", "--labels-only").code == 0

    result = run("import_labels", "--campaign", "arena", str(path))

    assert result.code != 0 and "Traceback" not in result.err
    assert f"wide.csv:1: the header is longer than {MAX_HEADER:,} characters" in result.err


@pytest.mark.django_db
@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_it_refuses_a_line_over_the_limit_with_file_and_line(tmp_path, suffix):
    path = tmp_path / f"long.{suffix}"
    if suffix == "csv":
        path.write_text(",".join(COLUMNS) + "\n" + "x" * (MAX_LINE + 10) + "\n", encoding="utf-8")
    else:
        path.write_text('{"topic": "' + "x" * (MAX_LINE + 10) + '"}\n', encoding="utf-8")
    assert run("create_campaign", "--name", "arena", "--labels-only").code == 0

    result = run("import_labels", "--campaign", "arena", str(path))

    assert result.code != 0 and "Traceback" not in result.err
    line = 2 if suffix == "csv" else 1
    assert f"long.{suffix}:{line}: the line is longer than {MAX_LINE:,} characters" in result.err


def hostile_file(path, *, header_field: int, cell: str, line_padding: int):
    """A labels file with an extra header column of `header_field` characters, a rating row whose
    response cell is `cell`, and a row whose rationale is `line_padding` characters long."""
    extra = ["h" * header_field] if header_field else []
    rows = [one("Fridges", "gpt-4o", "clarity", "ann_1", "4", cell), one("Towers", "gpt-4o", "clarity", "ann_1", "4", "rating 1-5")]
    rows[1]["rationale"] = "r" * line_padding
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*COLUMNS, *extra])
        for row in rows:
            writer.writerow([row.get(column, "") for column in COLUMNS] + [""] * len(extra))
    return path


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    header_field=st.integers(min_value=0, max_value=3_000_000),
    highest=st.integers(min_value=-(10**12), max_value=10**12),
    cell_padding=st.integers(min_value=0, max_value=200_000),
    line_padding=st.integers(min_value=0, max_value=3_000_000),
)
def test_it_reads_hostile_headers_and_response_cells_within_a_memory_cap(tmp_path, header_field, highest, cell_padding, line_padding):
    path = hostile_file(tmp_path / "hostile.csv", header_field=header_field, cell=f"rating 1-{highest}" + " " * cell_padding,
                        line_padding=line_padding)  # fmt: skip

    outcome, detail = under_memory_cap(read_all, str(path))

    assert outcome in ("ok", "refused"), detail
    if outcome == "refused":
        assert "hostile.csv:" in detail, detail
