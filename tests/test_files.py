"""common.files: writes that readers see whole or not at all."""

import os
import stat

import pytest

from common.files import atomic_files, write_atomically


def test_it_writes_a_file_readable_like_any_other(tmp_path):
    target = tmp_path / "report.md"
    write_atomically(target, "ünïcode\n")
    assert target.read_text(encoding="utf-8") == "ünïcode\n"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


def test_it_leaves_the_old_files_and_no_side_files_when_writing_fails(tmp_path):
    first, second = tmp_path / "labels.csv", tmp_path / "labels.overall.csv"
    first.write_text("old labels")
    second.write_text("old overall")
    with pytest.raises(RuntimeError), atomic_files(first, second) as (a, b):
        a.write("new labels")
        b.write("half")
        raise RuntimeError("disk full")
    assert (first.read_text(), second.read_text()) == ("old labels", "old overall")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.csv", "labels.overall.csv"]


def test_it_renames_every_file_once_all_are_written(tmp_path):
    paths = [tmp_path / f"part{i}.jsonl" for i in range(3)]
    with atomic_files(*paths) as streams:
        for i, stream in enumerate(streams):
            stream.write(f"{i}\n")
            assert not paths[i].exists()
    assert [p.read_text() for p in paths] == ["0\n", "1\n", "2\n"]
