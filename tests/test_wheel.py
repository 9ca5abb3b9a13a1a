"""The built wheel, installed into a fresh virtual environment with no repository on the path, gives a working
UI and CLI: what `pip install toolsearch-lab` gives a user in their own Jupyter.

Offline by construction: the wheel is installed with ``--no-deps --no-index`` and the fresh environment finds
the dependencies through a plain path entry to this environment's site-packages. A plain entry does not run
the ``.pth`` files there, so the editable install of this checkout stays invisible and ``toolsearch_lab``
can only come from the wheel (asserted below).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

UI_SCRIPT = """
import json
import toolsearch_lab
from toolsearch_lab.ui import IterationStepper
stepper = IterationStepper(scenario="spring-demo")
print(json.dumps({"file": toolsearch_lab.__file__, "version": toolsearch_lab.__version__,
                  "widget": type(stepper.widget).__name__}))
"""


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (
        f"{cmd} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    )
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    work = tmp_path_factory.mktemp("wheel")
    dist = work / "dist"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
            str(REPO),
        ],
        work,
        env,
    )
    wheels = list(dist.glob("toolsearch_lab-*.whl"))
    assert len(wheels) == 1, f"expected one wheel in {dist}, found {wheels}"
    target = work / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(target)
    python = target / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheels[0])], work, env)
    purelib = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], work, env
    )
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(purelib.stdout.strip(), "zz_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    return wheels[0], {
        **env,
        "PATH": f"{target / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        "MPLBACKEND": "Agg",
    }


def test_wheel_declares_the_widgets_as_default_dependencies(installed):
    wheel, _ = installed
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        requires = [
            line.split(":", 1)[1].strip()
            for line in archive.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]
        names = archive.namelist()
    default = {
        r.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower()
        for r in requires
        if "extra" not in r
    }
    assert {"ipywidgets", "plotly", "anywidget"} <= default, (
        f"widget packages missing from defaults: {requires}"
    )
    assert any(
        r.startswith("jupyterlab") and "extra == " in r and "lab" in r.split(";")[1] for r in requires
    ), requires
    for folder in ("scenarios", "agent", "examples"):  # the scenarios, the agent's glossary, tool examples
        assert any(n.startswith(f"toolsearch_lab/_data/{folder}/") for n in names), (
            f"shipped data/{folder} missing from the wheel"
        )


def test_ui_imports_and_a_stepper_builds_from_the_wheel(installed, tmp_path):
    _, env = installed
    out = _run(["python", "-c", UI_SCRIPT], tmp_path, env)
    info = json.loads(out.stdout.strip().splitlines()[-1])
    assert "venv" in info["file"] and str(REPO) not in info["file"], info
    assert info["widget"] in {"VBox", "Box", "HBox", "Tab", "GridBox"}, info


def test_demo_runs_from_another_folder(installed, tmp_path):
    _, env = installed
    out = _run(["toolsearch-lab", "demo", "--scenario", "github", "--json"], tmp_path, env)
    report = json.loads(out.stdout)
    assert report["scenario"] == "github" and report["finished"] is True, report
    assert report["grade"]["success"] is True, report["grade"]


def test_a_missing_widget_package_names_what_to_install(tmp_path):
    """Where ipywidgets cannot be found, importing the UI says which command fixes it."""
    script = (
        "import importlib.util\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda n, *a: None if n == 'ipywidgets' else real(n, *a)\n"
        "try:\n"
        "    import toolsearch_lab.ui\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert "ipywidgets" in out.stdout and "pip install toolsearch-lab" in out.stdout, out.stdout + out.stderr
