"""The import graph of the dgarray package, read from its source (ast).

Run as a script (``python3 tests/_import_graph.py``) it prints the package's
modules, the edges between them (module-level and function-local imports
apart), the import cycles (strongly connected components of more than one
module) and every function-local import.  tests/test_import_graph.py fails on
any cycle among module-level imports: the package's modules import downward.
"""
import ast
import os
import sys

PACKAGE = "dgarray"
# the package's C extensions (built from src/, absent from a clean checkout):
# leaves of the graph
EXTENSIONS = ("_core", "_cuda")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "python",
                    PACKAGE)


def _modules(root):
    """{module name: source path} for the package's .py files ('__init__' for
    the package itself)."""
    out = dict.fromkeys(EXTENSIONS)
    for name in sorted(os.listdir(root)):
        if name.endswith(".py"):
            out[name[:-3]] = os.path.join(root, name)
    return out


def _targets(node, here, modules):
    """The package's modules an import statement names (a `from . import x`
    that is no module names the package, __init__)."""
    if isinstance(node, ast.Import):
        out = []
        for alias in node.names:
            parts = alias.name.split(".")
            if parts[0] == PACKAGE:
                out.append(parts[1] if len(parts) > 1 and parts[1] in modules else "__init__")
        return out
    if node.level == 0:
        parts = (node.module or "").split(".")
        if parts[0] != PACKAGE:
            return []
        base = parts[1:]
    elif node.level == 1:
        base = node.module.split(".") if node.module else []
    else:
        return []  # beyond the package
    if base:
        return [base[0] if base[0] in modules else "__init__"]
    return [a.name if a.name in modules else "__init__" for a in node.names]


def _walk(tree):
    """(node, local) for every import statement; local: inside a function."""
    stack = [(tree, False)]
    while stack:
        node, local = stack.pop()
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                ast.Lambda))
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, local
            stack.append((child, inner))


def import_graph(root=ROOT):
    """(modules, module_edges, local_imports): module_edges {module: set of
    modules it imports at module level}; local_imports [(module, line,
    targets)] for every statement inside a function that imports package
    modules."""
    modules = _modules(root)
    edges = {m: set() for m in modules}
    local = []
    for mod, path in modules.items():
        if path is None:
            continue
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node, is_local in _walk(tree):
            targets = sorted(set(_targets(node, mod, modules)) - {mod})
            if is_local and targets:
                local.append((mod, node.lineno, tuple(targets)))
            elif not is_local:
                edges[mod].update(targets)
    return modules, edges, sorted(local)


def cycles(edges):
    """The strongly connected components of more than one module (Tarjan's
    algorithm), each a sorted list; sorted."""
    index, low, on, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def main():
    modules, edges, local = import_graph()
    both = {m: set(e) for m, e in edges.items()}
    for mod, _, targets in local:
        both[mod].update(targets)
    print(f"{sum(p is not None for p in modules.values())} modules in python/{PACKAGE} "
          f"(and the extensions {', '.join(EXTENSIONS)})")
    for m in sorted(m for m in edges if modules[m] is not None):
        print(f"  {m}: {', '.join(sorted(edges[m])) or '-'}")
    mc, ac = cycles(edges), cycles(both)
    print(f"cycles among module-level imports: {len(mc)}")
    for c in mc:
        print("  " + " <-> ".join(c))
    print(f"cycles counting function-local imports too: {len(ac)}")
    for c in ac:
        print(f"  {len(c)} modules: " + ", ".join(c))
    print(f"function-local imports of package modules: {len(local)}")
    for mod, line, targets in local:
        print(f"  {mod}.py:{line} -> {', '.join(targets)}")
    return 1 if mc else 0


if __name__ == "__main__":
    sys.exit(main())
