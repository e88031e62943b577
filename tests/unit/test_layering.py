"""The tiers of docs/ARCHITECTURE.md: the import contracts hold, catch a wrong-way import, and bind __main__ too."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
# What the program may reach: the checks, the landscape, the previous outputs and the provider registry.
MAIN_IMPORTS = {
    "pulumi",
    "functools",
    "components.checks",
    "components.stacks",
    "components.layers.landscape",
    "components.outputs",
    "components.providers.registry",
    "components.registration",
}


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports run on the tree at `root` with arbor's contracts."""
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(root / "pyproject.toml")],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )


def _copy(tmp_path: Path) -> Path:
    """A copy of the components package and the contracts."""
    shutil.copytree(ROOT / "components", tmp_path / "components", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def test_the_tree_keeps_every_contract() -> None:
    """GIVEN arbor's tree WHEN its imports are linted THEN every contract is kept."""
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 3 kept, 0 broken." in result.stdout


@pytest.mark.parametrize(
    ("module", "wrong", "named"),
    [
        ("render/api.py", "from components.layers import shoot", "components.render.api -> components.layers.shoot"),
        (
            "layers/seed.py",
            "from components.layers import garden",
            "components.layers.seed -> components.layers.garden",
        ),
        ("plan/planner.py", "import pulumi", "components.plan.planner -> pulumi"),
        ("spec/cidrs.py", "from components import bundles", "components.spec.cidrs -> components.bundles"),
    ],
)
def test_a_wrong_way_import_fails_with_its_name(tmp_path: Path, module: str, wrong: str, named: str) -> None:
    """GIVEN one import against the tiers WHEN the copy is linted THEN it fails, naming that import."""
    root = _copy(tmp_path)
    path = root / "components" / module
    path.write_text(path.read_text() + f"\n{wrong}  # noqa\n")
    result = _lint_imports(root)
    assert result.returncode != 0
    assert named in result.stdout


def test_a_new_top_level_module_must_join_a_tier(tmp_path: Path) -> None:
    """GIVEN a module outside every tier WHEN linted THEN the exhaustive contract names it."""
    root = _copy(tmp_path)
    (root / "components" / "stray.py").write_text('"""A module no tier lists."""\n')
    result = _lint_imports(root)
    assert result.returncode != 0
    assert "components.stray" in result.stdout


def test_main_reaches_only_checks_landscape_outputs_and_registry() -> None:
    """GIVEN __main__.py WHEN its imports are read THEN it uses only the program-level entry points."""
    tree = ast.parse((ROOT / "__main__.py").read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module == "components":
            imported |= {f"components.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(str(node.module))
    assert imported <= MAIN_IMPORTS, imported - MAIN_IMPORTS


def test_modules_and_functions_stay_small() -> None:
    """GIVEN components/ WHEN measured THEN no module is over 400 lines and no function over 60 (the issue's bound)."""
    too_long = []
    for path in sorted((ROOT / "components").rglob("*.py")):
        text = path.read_text()
        if (lines := len(text.splitlines())) > 400:
            too_long.append(f"{path.relative_to(ROOT)}: {lines} lines")
        functions = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        for node in functions:
            if (length := (node.end_lineno or 0) - node.lineno + 1) > 60:
                too_long.append(f"{path.relative_to(ROOT)}: {node.name} is {length} lines")
    assert too_long == []
