"""The core (model, analysis, sim, report) never imports Qt: checked on the source and at run time."""

import ast
import pathlib
import subprocess
import sys

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "dgxstudio"
CORE = ("model", "analysis", "sim", "report")
FORBIDDEN = ("PySide6", "pyqtgraph", "PyQt5", "PyQt6", "shiboken6")


def _imports(path: pathlib.Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module


def test_core_sources_do_not_import_qt():
    offenders = []
    for sub in CORE:
        for path in (PACKAGE / sub).rglob("*.py"):
            for lineno, module in _imports(path):
                if module.split(".")[0] in FORBIDDEN:
                    # The PDF writer is the one place report/ may use Qt (DEVELOPERS.md).
                    if sub == "report" and path.stem.startswith("pdf"):
                        continue
                    offenders.append(f"{path.relative_to(PACKAGE)}:{lineno} imports {module}")
    assert not offenders, "\n".join(offenders)


def test_core_runtime_does_not_load_qt():
    code = (
        "import sys, pkgutil, importlib\n"
        "import dgxstudio\n"
        f"for sub in {CORE[:3]!r}:\n"
        "    pkg = importlib.import_module('dgxstudio.' + sub)\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        importlib.import_module(m.name)\n"
        "import dgxstudio.cli\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}]\n"
        "print(bad); sys.exit(1 if bad else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
