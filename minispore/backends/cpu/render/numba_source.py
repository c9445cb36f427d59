"""The numba renderer: a traced loop definition as the Python source of one @njit kernel.

`module(definition, **params)` traces the definition, writes the module below and loads it
through codegen.module_for (named by the source's hash, on disk beside numba's cached machine
code, so a later process loads the compiled kernel instead of compiling it):

    def kernel(<inputs>):            # arrays of the definition's ranks
        <out> = np.empty(<shape>, <like>.dtype)     # each output
        <scratch> = np.empty((<n>,), np.float64)    # each scratch buffer
        <statements>
        return <outputs>

Extents are the arrays' shapes read at run time (`x.shape[1]`), so one compiled kernel serves
every shape (numba specialises it per dtype and rank). Expressions render as codegen.render
renders scalar_expr: Python operators, transcendentals through codegen's table (vecmath's
vexp, vlog, ...), `where` as a conditional expression; `maximum` is numba's max. A scalar
argument follows the input arrays and is read as `np.<dtype>(name)` (its declared type whatever
the caller passes); `libm(name, x)` is `math.<name>(x)` (numba calls the C library); an output
of a declared dtype is allocated with it. A `fail_if` raises
IndexError(FAIL_TAG, site, value) from the kernel (numba's exception with run-time arguments);
`checked(kernel, sites)` turns it into the IndexError of the site's IndexCheck.
"""
from __future__ import annotations

from ....core import scalar_expr as E
from ..loops.builder import Assign, Definition, Fail, Loop, Program, Store
from ..loops.builder import When

_DECO = '@njit(cache=True, error_model="numpy", nogil=True)\n'
_modules: dict = {}
FAIL_TAG = "loop check"          # the first argument of a Fail's IndexError


def expr(ex: E.Expr) -> str:
    """numba source of expression `ex`."""
    from ..codegen import render_operator
    op, a = ex.op, ex.args
    if op in ("var", "index"):
        return ex.name
    if op == "dim":
        return f"{a[0].name}.shape[{a[1]}]"
    if op == "load":
        return f"{a[0].name}[{', '.join(expr(i) for i in a[1])}]"
    if op == "const":
        v = a[0]
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            return "np.nan" if v != v else ("np.inf" if v > 0 else "(-np.inf)")
        return repr(v)
    if op == "cast":
        return f"np.{a[1]}({expr(a[0])})"
    if op == "max":
        return f"max({expr(a[0])}, {expr(a[1])})"
    if op == "within":
        return f"(0 <= {expr(a[0])} < {expr(a[1])})"
    if op == "like":
        return f"{a[1].name}.dtype.type({expr(a[0])})" if a[1].role != "scratch" else \
            f"np.{a[1].dtype or 'float64'}({expr(a[0])})"
    if op == "template":
        return _template(*a)
    if op == "scalar":
        return f"np.{a[1]}({a[0]})"
    if op == "libm":
        return f"math.{a[0]}({expr(a[1])})"
    src = render_operator(op, a, expr)
    if src is None:
        raise NotImplementedError(f"numba loop renderer: no rendering for {op!r}")
    return src


def _template(tmpl: E.Expr, args: tuple, compute: str, dtype: str) -> str:
    """A scalar_expr template over builder values as codegen.render renders an elementwise
    kernel's body (its constants `DT(c)` with DT the compute dtype), rounded to `dtype`."""
    from ..codegen import render
    names = [expr(x) for x in args]

    def typed(ex):                     # each non-bool constant: an argument np.<compute>(c)
        if ex.op == "const" and not isinstance(ex.args[0], bool):
            v = ex.args[0]
            lit = repr(v) if not isinstance(v, float) or v == v and abs(v) != float("inf") \
                else "np.nan" if v != v else "np.inf" if v > 0 else "(-np.inf)"
            names.append(f"np.{compute}({lit})")
            return E.arg(len(names) - 1)
        if ex.op == "arg":
            return ex
        return E.Expr(ex.op, *[typed(x) if isinstance(x, E.Expr) else x for x in ex.args])
    return f"np.{dtype}({render(typed(tmpl), names)})"


def _statements(body: list, ind: int, lines: list) -> None:
    pad = "    " * ind
    for st in body:
        if isinstance(st, Loop):
            bounds = expr(st.extent) if st.start is None and st.step == 1 else \
                f"{expr(st.start) if st.start is not None else 0}, {expr(st.extent)}, {st.step}"
            lines.append(f"{pad}for {st.index.name} in range({bounds}):")
            _statements(st.body, ind + 1, lines)
            if not st.body:
                lines.append(f"{pad}    pass")
        elif isinstance(st, Assign):
            lines.append(f"{pad}{st.var.name} = {expr(st.value)}")
        elif isinstance(st, When):
            lines.append(f"{pad}if {expr(st.cond)}:")
            _statements(st.body, ind + 1, lines)
            if not st.body:
                lines.append(f"{pad}    pass")
        elif isinstance(st, Store):
            lines.append(f"{pad}{st.buf.name}[{', '.join(expr(i) for i in st.index)}] = "
                         f"{expr(st.value)}")
        elif isinstance(st, Fail):
            lines.append(f"{pad}if {expr(st.cond)}:")
            lines.append(f"{pad}    raise IndexError({FAIL_TAG!r}, {st.site!r}, "
                         f"np.int64({expr(st.value)}))")
        else:
            raise TypeError(f"numba loop renderer: unknown statement {st!r}")


def _shape(shape) -> str:
    return "(" + "".join(f"{expr(s)}, " for s in shape) + ")"


def source(prog: Program) -> str:
    """The module source of traced program `prog` (see the module docstring)."""
    from ..codegen import header_imports
    lines = [f"# generated by minispore.backends.cpu.render.numba_source from "
             f"{prog.definition.name}{prog.params or ''}: do not edit",
             header_imports(), f"DEFINITION = {prog.definition.name!r}", "", "",
             _DECO + f"def kernel({', '.join(b.name for b in prog.inputs + prog.scalars)}):"]
    for o in prog.outputs:
        kind = f"np.{o.dtype}" if o.dtype is not None else f"{o.like.name}.dtype"
        lines.append(f"    {o.name} = np.empty({_shape(o.shape)}, {kind})")
    for s in prog.scratch:
        lines.append(f"    {s.name} = np.empty({_shape(s.shape)}, np.{s.dtype or 'float64'})")
    _statements(prog.body, 1, lines)
    outs = ", ".join(o.name for o in prog.outputs)
    lines.append(f"    return {outs}")
    return "\n".join(lines) + "\n"


def module(definition: Definition, **params):
    """The loaded module of `definition` traced with `params`: `.kernel` is the @njit kernel,
    `.DEFINITION` the definition's name, `.SOURCE` its source; built once per process (counted in
    definition.renders['numba'])."""
    key = (definition.name, tuple(sorted(params.items())))
    mod = _modules.get(key)
    if mod is None:
        from ..codegen import module_for
        prog = definition.trace(**params)
        src = source(prog)
        mod = module_for("loops_" + definition.fn.__name__, src)
        mod.SOURCE = src
        definition.renders["numba"] += 1
        _modules[key] = mod
    return mod


def checked(kernel, sites: dict):
    """`kernel` (a rendering with Fail statements) as a function that raises the IndexError of
    the failed check: sites[site].error(value), site an IndexCheck (core/index_check.py)."""
    def run(*args):
        try:
            return kernel(*args)
        except IndexError as err:
            if len(err.args) != 3 or err.args[0] != FAIL_TAG:
                raise
            raise sites[err.args[1]].error(err.args[2]) from None
    return run
