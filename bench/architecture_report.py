"""Measure how SAM's apps depend on each other; write bench/results/architecture.json.

The figures docs/architecture.md reports: import cycles between the project's modules,
imports that point up the layers, model labels and table names a module names of another
app, function-local imports of the project's own modules, and the largest modules.

    python bench/architecture_report.py [--out PATH]

It reads the tree it sits in, so it measures an older checkout too (run that checkout's copy,
or point --root at it).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import grimp

HERE = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "samsite", "governance", "memories", "retrieval", "prd")
APPS = ("governance", "memories", "retrieval", "prd")
# Lowest first. A module of one layer may import its own and those before it. The ground sat
# inside samsite (samsite.core, samsite.api, …) before it became the top-level `core`; both
# spellings are listed so that the report measures either tree.
LAYERS = (
    ("core", "samsite.core", "samsite.api", "samsite.embedded_db", "samsite.embedded_backend"),
    ("governance",),
    ("memories",),
    ("retrieval",),
    ("prd",),
    ("samsite",),  # the wiring: urls, wsgi, asgi, gunicorn_conf, management commands
)


def layer_of(module: str) -> int:
    best, depth = len(LAYERS) - 1, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = index, len(prefix)
    return best


# Long lists of words or patterns, not logic: left out of the size limits.
DATA_MODULES = ("governance.redaction.name_lexicon", "governance.redaction.public_names")
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 600


def source_files(root: Path) -> list[Path]:
    return sorted(p for package in PACKAGES if (root / package).is_dir()
                  for p in (root / package).rglob("*.py") if "migrations" not in p.parts)


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def models_by_app(root: Path) -> dict[str, str]:
    """{model label or db table: the Python package that defines it}, from Django itself."""
    sys.path.insert(0, str(root))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "samsite.settings.base")
    import django
    from django.apps import apps

    django.setup()
    owners: dict[str, str] = {}
    for model in apps.get_models():
        # The app, not the sub-package: memories.entities' models belong to memories.
        package = model._meta.app_config.name
        if not package.startswith(PACKAGES):
            continue
        owners[model._meta.label_lower] = package
        owners[model._meta.db_table] = package
        for field in model._meta.local_many_to_many:
            owners[field.remote_field.through._meta.db_table] = package
    return owners


def owning_package(module: str, owners: dict[str, str]) -> str:
    """The model-defining package a module belongs to (the longest prefix)."""
    candidates = [p for p in set(owners.values()) if module == p or module.startswith(p + ".")]
    return max(candidates, key=len) if candidates else module.split(".")[0]


def strings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def foreign_names(path: Path, module: str, owners: dict[str, str]) -> tuple[list[str], list[str]]:
    """(labels, tables) of other packages' models that this module's code names."""
    tree = ast.parse(path.read_text())
    own = owning_package(module, owners)
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and n.body and isinstance(n.body[0], ast.Expr)
                  and isinstance(n.body[0].value, ast.Constant)}
    labels, tables = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "get_model" and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                name = first.value.lower()
                if len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                    name = f"{name}.{str(node.args[1].value).lower()}"
                package = owners.get(name) or next((p for k, p in owners.items()
                                                    if k.startswith(name + ".")), None)
                if package and package != own:
                    labels.append(f"{module}:{node.lineno} get_model({first.value!r}, …)")
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in docstrings:
            continue
        text = node.value
        if owners.get(text.lower()) not in (None, own) and "." in text:
            labels.append(f"{module}:{node.lineno} {text!r}")
        for word in set(_words(text)):
            package = owners.get(word)
            if package and package != own and "." not in word and "_" in word:
                tables.append(f"{module}:{node.lineno} {word}")
    return labels, tables


def _words(text: str) -> list[str]:
    word, out = [], []
    for char in text + " ":
        if char.isalnum() or char == "_":
            word.append(char)
        elif word:
            out.append("".join(word))
            word = []
    return out


def function_local_imports(path: Path, module: str, *, in_ready: bool = False) -> list[str]:
    """Imports of the project's own modules inside functions: those in an AppConfig.ready()
    (where Django wants them: models cannot be imported before the registry is ready), or,
    with in_ready False, everywhere else."""
    tree = ast.parse(path.read_text())
    found = []
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if (func.name == "ready" and path.name == "apps.py") != in_ready:
            continue
        for node in ast.walk(func):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                targets = ["." * node.level + (node.module or "")]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            found += [f"{module}:{node.lineno} {t}" for t in targets
                      if t.startswith(".") or t.split(".")[0] in PACKAGES]
    return sorted(set(found))


def long_functions(path: Path, module: str) -> list[dict[str, object]]:
    """Functions (methods too) longer than MAX_FUNCTION_LINES, decorators and docstring included."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines = (node.end_lineno or node.lineno) - start + 1
            if lines > MAX_FUNCTION_LINES:
                found.append({"function": f"{module}.{node.name}", "lines": lines})
    return found


def modules_at_top(root: Path) -> dict[str, int]:
    """Each app's Python modules directly in its folder (sub-packages count as one)."""
    counts = {}
    for app in APPS:
        folder = root / app
        files = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        packages = [p for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()
                    and p.name not in ("migrations", "management", "tests")]
        counts[app] = len(files) + len(packages)
    return counts


def package_arrows(graph: grimp.ImportGraph, modules: list[str]) -> list[str]:
    """Arrows between the top-level packages that point up the layers (site wiring on top)."""
    order = {"core": 0, "governance": 1, "memories": 2, "retrieval": 3, "prd": 4, "samsite": 5}
    arrows = set()
    for a in modules:
        for b in graph.find_modules_directly_imported_by(a):
            top_a, top_b = a.split(".")[0], b.split(".")[0]
            if top_b in order and top_a != top_b and order[top_b] > order[top_a]:
                arrows.add(f"{top_a} -> {top_b}")
    return sorted(arrows)


def cycles(graph: grimp.ImportGraph, modules: list[str]) -> list[list[str]]:
    """Strongly connected components (more than one module) of the import graph."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    inside = set(modules)
    sys.setrecursionlimit(10_000)

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.find_modules_directly_imported_by(node) & inside):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in modules:
        if module not in index:
            visit(module)
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE)
    parser.add_argument("--out", type=Path, default=HERE / "bench" / "results" / "architecture.json")
    args = parser.parse_args()
    root = args.root.resolve()
    owners = models_by_app(root)
    graph = grimp.build_graph(*(p for p in PACKAGES if (root / p).is_dir()), cache_dir=None)
    files = source_files(root)
    modules = sorted(m for m in graph.modules if m.split(".")[0] in PACKAGES and "migrations" not in m)
    upward = sorted(f"{a} -> {b}" for a in modules for b in graph.find_modules_directly_imported_by(a)
                    if b in modules and layer_of(b) > layer_of(a))
    labels: list[str] = []
    tables: list[str] = []
    local: list[str] = []
    in_ready: list[str] = []
    sizes = []
    long: list[dict[str, object]] = []
    for path in files:
        module = module_name(root, path)
        found_labels, found_tables = foreign_names(path, module, owners)
        labels += found_labels
        tables += found_tables
        local += function_local_imports(path, module)
        in_ready += function_local_imports(path, module, in_ready=True)
        sizes.append((len(path.read_text().splitlines()), module))
        long += long_functions(path, module)
    over = sorted(((n, m) for n, m in sizes if n > MAX_MODULE_LINES and m not in DATA_MODULES),
                  reverse=True)
    long.sort(key=lambda f: (-int(str(f["lines"])), str(f["function"])))
    arrows = package_arrows(graph, modules)
    found_cycles = cycles(graph, modules)
    result = {
        "cycles": len(found_cycles), "cycle_members": found_cycles,
        "upward_imports": len(upward), "upward_import_list": upward,
        "foreign_model_labels": len(labels), "foreign_model_label_list": labels,
        "foreign_tables_in_sql": len(tables), "foreign_table_list": tables,
        "function_local_project_imports": len(local), "function_local_import_list": local,
        "imports_in_app_ready": len(in_ready),
        "package_arrows_up": len(arrows), "package_arrow_up_list": arrows,
        "functions_over_80_lines": len(long), "long_function_list": long,
        "modules_over_600_lines": len(over),
        "module_over_600_list": [{"module": m, "lines": n} for n, m in over],
        "modules_at_top_of_app": modules_at_top(root),
        "largest_modules": [{"module": m, "lines": n} for n, m in sorted(sizes, reverse=True)
                            if m not in DATA_MODULES][:10],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for key in ("cycles", "upward_imports", "foreign_model_labels", "foreign_tables_in_sql",
                "function_local_project_imports", "imports_in_app_ready", "package_arrows_up",
                "functions_over_80_lines", "modules_over_600_lines"):
        print(f"{key}: {result[key]}")
    print("modules at the top of each app:", result["modules_at_top_of_app"])
    print("largest:", ", ".join(f"{m['module']} {m['lines']}" for m in result["largest_modules"][:3]))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
