"""The Python package has no import cycles, counting imports inside functions too: a module
imported lazily still depends on what it imports."""

from __future__ import annotations

import ast
from pathlib import Path

import bufsim

ROOT = Path(bufsim.__file__).parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, modules: set[str]) -> set[str]:
    """The bufsim modules `path` imports anywhere in its text (`from bufsim import x` names the
    module bufsim.x when there is one, else the package)."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        out.update(n for n in names if n in modules and n != here)
    return out


def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in ROOT.rglob("*.py")}
    known = set(files) | {module_name(p) for p in ROOT.rglob("*.pyi")}  # the native bufsim._core
    return {m: imports(p, known) for m, p in files.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n) :] + [n]
            if n not in state and (c := visit(n)):
                return c
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state and (c := visit(m)):
            return c
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_imports_itself_back():
    edges = graph()
    # The package's __init__ re-exports the API; submodules import each other, never the package.
    assert "bufsim.api" in edges["bufsim"] and "bufsim.cli" in edges["bufsim.__main__"]
    assert all("bufsim" not in deps for m, deps in edges.items() if m != "bufsim"), [
        m for m, deps in edges.items() if "bufsim" in deps
    ]
    cycle = find_cycle({m: d for m, d in edges.items() if m != "bufsim"})
    assert cycle is None, " -> ".join(cycle)


def test_bufsim_run_loads_no_module_it_does_not_need(tmp_path):
    """Start-up: `bufsim run` on a one-request trace must not load typing, dataclasses (and the
    inspect module it pulls in), shutil or threading; together they were half of its
    instructions. A deterministic guard, where a start-up time would depend on the machine."""
    import subprocess
    import sys

    trace = tmp_path / "one.csv"
    trace.write_text("op,file,offset,size\nR,a,0,4096\n")
    probe = (
        "import sys, io, contextlib\n"
        "from bufsim.cli import main\n"
        f"sys.argv = ['bufsim', 'run', {str(trace)!r}, '-p', 'lru', '-c', '16blocks']\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main() == 0\n"
        "print(' '.join(m for m in ('typing', 'dataclasses', 'inspect', 'shutil', 'threading') if m in sys.modules))\n"
    )
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "", f"bufsim run loaded {p.stdout.strip()}"
