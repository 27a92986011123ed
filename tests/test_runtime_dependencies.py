"""`make demo` and `make serve` install the runtime dependencies only (Makefile, pyproject.toml): no module
the site or a command imports may need a dev extra. The check imports every application module in a
fresh interpreter in which the dev extras' packages cannot be imported."""

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ("annotate", "calibration", "common", "config", "judges", "protocols")
# Distribution names of the dev extra whose import name differs from the distribution's.
IMPORT_NAMES = {"pytest-django": "pytest_django", "ppi-python": "ppi_py", "import-linter": "importlinter", "crowd-kit": "crowdkit"}

PROBE = """
import importlib, importlib.abc, os, pkgutil, sys
blocked = set(sys.argv[1].split(","))

class DevOnly(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ImportError(f"{name} is a dev-only dependency")
        return None

sys.meta_path.insert(0, DevOnly())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django
django.setup()
count = 0
for app in sys.argv[2].split(","):
    package = importlib.import_module(app)
    for info in pkgutil.walk_packages(package.__path__, app + "."):
        if ".migrations." in info.name or info.name.endswith(".migrations"):
            continue
        importlib.import_module(info.name)
        count += 1
print(count)
"""


def dev_import_names() -> list[str]:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    names = []
    for requirement in extras:
        dist = requirement.split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip()
        names.append(IMPORT_NAMES.get(dist, dist.replace("-", "_")))
    return names


def test_it_imports_every_application_module_without_the_dev_extras():
    blocked = dev_import_names()
    assert {"pytest", "statsmodels", "crowdkit", "hypothesis"} <= set(blocked)
    env = {"SECRET_KEY": "test-only-not-secret", "DEBUG": "0", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, ",".join(blocked), ",".join(APPS)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert int(out.stdout.strip()) > 100  # every module was reached, not an empty walk


def test_it_refuses_a_dev_package_in_the_probe():
    # The probe can fail: a module that imports a dev-only package is caught.
    env = {"SECRET_KEY": "test-only-not-secret", "DEBUG": "0", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", PROBE, "json", "common"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode != 0
    assert "json is a dev-only dependency" in out.stderr
