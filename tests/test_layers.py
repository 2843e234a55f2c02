"""Imports go one way: every module of arraygrad sits in a layer and imports only from its
own layer or those below (docs/architecture.md). The imports are read with `ast`, not run.

A function-local import may go upward only where the cycle is inherent, and then says why
in a `# cycle: ...` comment on its line. No import circle may span two folders.
"""
import ast
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parent.parent / "src" / "arraygrad"

# module (or package) prefix -> layer; the longest matching prefix decides
LAYERS = {
    "arraygrad.dtypes": 0, "arraygrad._format": 0, "arraygrad._device": 0,
    "arraygrad.backends": 0, "arraygrad.utils._pytree": 0, "arraygrad.core.grad_mode": 0,
    "arraygrad.core": 1, "arraygrad._tensor": 1, "arraygrad._generator": 1,
    "arraygrad._legacy": 1,
    "arraygrad.autograd.graph": 2, "arraygrad.autograd.views": 2,
    "arraygrad.autograd.inplace": 2, "arraygrad.autograd.eager": 2,
    "arraygrad.autograd.engine": 2, "arraygrad.autograd.function": 2,
    "arraygrad.autograd.function_checks": 2, "arraygrad.autograd.anomaly_mode": 2,
    "arraygrad.ops": 3,
    "arraygrad._tensor_methods": 4,
    "arraygrad.func": 5,
    "arraygrad.autograd": 6,
    "arraygrad": 7,
}
NAMES = ["L0 dtypes/_format/_device/backends/_pytree/grad mode", "L1 _tensor/core",
         "L2 autograd machinery", "L3 ops", "L4 _tensor_methods", "L5 func",
         "L6 autograd facade", "L7 nn/optim/package"]


def _modules():
    mods = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = ("arraygrad",) + path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def layer_of(mod):
    best = max((p for p in LAYERS if mod == p or mod.startswith(p + ".")), key=len)
    return LAYERS[best]


def _imports(mod, path, mods):
    """(target module, line, function-local, has a cycle comment) per arraygrad import."""
    src = path.read_text()
    lines = src.splitlines()
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    found = []

    def visit(body, local):
        # imports are statements: walk statement bodies only (functions, classes, if/try/with)
        for child in body:
            names = []
            if isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[:len(base) - child.level + 1]
                    base = ".".join(base + ([child.module] if child.module else []))
                else:
                    base = child.module or ""
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                         for a in child.names]
            elif isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            for name in names:
                if name == "arraygrad" or name.startswith("arraygrad."):
                    while name not in mods:
                        name = name.rpartition(".")[0]
                    found.append((name, child.lineno, local,
                                  "# cycle:" in lines[child.lineno - 1]))
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                sub = getattr(child, field, None)
                if isinstance(sub, list):
                    visit(sub, inner)
    visit(ast.parse(src).body, False)
    return found


MODS = _modules()
IMPORTS = {m: _imports(m, p, MODS) for m, p in MODS.items()}


def test_every_module_has_a_layer():
    assert "arraygrad.core.dispatch" in MODS and "arraygrad.autograd.eager" in MODS
    assert layer_of("arraygrad.core.dispatch") == 1
    assert layer_of("arraygrad.autograd.functional") == 6
    assert layer_of("arraygrad.nn.functional") == 7


def test_imports_go_down():
    upward = []
    for mod, imports in IMPORTS.items():
        for target, line, local, reason in imports:
            if layer_of(target) > layer_of(mod) and not (local and reason):
                how = "function-local, without a '# cycle:' reason" if local else "module-level"
                upward.append(f"{MODS[mod].relative_to(SRC)}:{line}: {mod} "
                              f"({NAMES[layer_of(mod)]}) imports {target} "
                              f"({NAMES[layer_of(target)]}), {how}")
    assert not upward, "imports against the layers:\n" + "\n".join(upward)


def _folder(mod):
    path = MODS[mod]
    return path.parent if path.name != "__init__.py" else path.parent.parent


def test_no_import_circle_across_folders():
    """Tarjan's strongly connected components of the import graph (imports that say
    `# cycle:` excepted); a component must stay inside one folder."""
    graph = {m: sorted({t for t, _, _, reason in imps if not reason and t != m})
             for m, imps in IMPORTS.items()}
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        comp.append(m)
                        if m == node:
                            break
                    comps.append(comp)
    across = [sorted(c) for c in comps if len({_folder(m) for m in c}) > 1]
    assert not across, "import circles across folders: " + "; ".join(
        " <-> ".join(c) for c in across)


@pytest.mark.parametrize("mod", ["arraygrad.core.dispatch", "arraygrad._tensor"])
def test_core_knows_no_level_code(mod):
    """The dispatcher and Tensor import nothing above L1, not even function-locally."""
    above = [t for t, _, _, _ in IMPORTS[mod] if layer_of(t) > 1]
    assert not above, f"{mod} imports {above}"


def test_ops_reach_arrays_through_the_backend():
    """The backend seam: no module under ops/ imports NumPy (impls compute with their `xp`,
    helpers with `backend_of(array).xp` or the backend's extras)."""
    found = []
    for mod, path in MODS.items():
        if not mod.startswith("arraygrad.ops"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            found += [f"{path.relative_to(SRC)}:{node.lineno}: imports {n}" for n in names
                      if n == "numpy" or n.startswith("numpy.")]
    assert not found, "NumPy imported in ops/:\n" + "\n".join(found)
