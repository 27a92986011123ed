"""A command whose reader stops early (`manage.py ... --out - | head`) ends quietly, as a Unix tool
does: no traceback, the exit status a shell gives a process stopped by a closed pipe."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WRITE_A_LOT = "import sys\nfor i in range(300000): sys.stdout.write('line of text number %d\\n' % i)"


def test_it_stops_quietly_when_the_reader_of_its_output_goes_away(tmp_path):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "DEBUG": "1"}
    process = subprocess.Popen(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", WRITE_A_LOT],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout.read(10) == b"line of te"
    process.stdout.close()  # the reader goes away, as head does
    _, err = process.communicate(timeout=60)
    assert process.returncode == 141, err.decode()
    assert b"Traceback" not in err and b"BrokenPipeError" not in err
