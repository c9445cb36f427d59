"""nn.Cell and the containers CellList / SequentialCell (MindSpore's object model).

A Cell registers the Parameters and sub-Cells assigned to its attributes; assigning a sub-Cell
prefixes its parameters' names with the attribute name (`fc1.weight`), as MindSpore does. In
PYNATIVE_MODE calling a Cell runs `construct` eagerly; in GRAPH_MODE the call compiles the source
of `construct` to a graph (cached per input signature) and runs it; inside a graph being built, a
sub-Cell call is parsed and inlined. A Cell class with `jit_in_pynative = True` (the optimizers,
as MindSpore 2.x decorates their construct with @jit) is compiled in PYNATIVE_MODE too, unless a
gradient is being recorded through it. `set_train` sets `training` on the cell and its sub-Cells;
the compile cache keys on the flags of the Cells a graph called, so construct may branch on
`self.training`."""
from __future__ import annotations

from collections import OrderedDict

from ..core import context, custom_bprop, hooks
from ..core.cells import register_cell_class
from ..core.graph import compile as graph_compile
from ..core.graph.builder import GraphBuilder
from ..core.primitive import executor
from ..core.pynative import TAPE
from ..core.tensor import Parameter, ParameterTuple, Tensor


@register_cell_class
class Cell:
    """Base class of networks: define `construct`, call the cell."""

    jit_in_pynative = False

    def __init__(self, auto_prefix=True, flags=None):
        d = self.__dict__
        d["_params"] = OrderedDict()
        d["_param_tuples"] = OrderedDict()       # ParameterTuple attributes (MindSpore's too)
        d["_cells"] = OrderedDict()
        d["_auto_prefix"] = auto_prefix
        d["training"] = False
        d["requires_grad"] = False

    def __setattr__(self, name, value):
        if "_params" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}: call super().__init__() in __init__ "
                                 f"before assigning attribute {name!r}")
        params, cells = self._params, self._cells
        self.__dict__.get("_param_tuples", {}).pop(name, None)
        if isinstance(value, ParameterTuple):
            self._param_tuples[name] = value
            params.pop(name, None)
            cells.pop(name, None)
        elif isinstance(value, Parameter):
            if not value._user_named:
                value.name = name
                value._user_named = True
            params[name] = value
            cells.pop(name, None)
        elif isinstance(value, Cell):
            if self._auto_prefix:
                for _, p in value.parameters_and_names():
                    p.name = f"{name}.{p.name}"
            cells[name] = value
            params.pop(name, None)
        elif params.get(name) is not None and value is not None:
            # a Tensor assigned to a Parameter's name sets the Parameter's data, as MindSpore's
            # Cell does (the graph-mode parser makes it an Assign: core/graph/control.py)
            if not isinstance(value, Tensor):
                raise TypeError(f"Parameter '{name}' already exists in network, can not assign "
                                f"this type: '{type(value)}' as a parameter.")
            params[name].set_data(value)
            return
        else:
            params.pop(name, None)
            cells.pop(name, None)
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        self._params.pop(name, None)
        self.__dict__.get("_param_tuples", {}).pop(name, None)
        self._cells.pop(name, None)
        object.__delattr__(self, name)

    # -- running ------------------------------------------------------------------------------
    def construct(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define construct()")

    def __call__(self, *args, **kwargs):
        ex = executor.current
        if isinstance(ex, GraphBuilder):                 # a sub-Cell inside a graph: inline
            return ex.parser.call_cell(self, args, kwargs)
        hooked = "_ms_hooks" in self.__dict__ and hooks.cell_hooks(self) is not None
        if context._state["mode"] == context.GRAPH_MODE or (self.jit_in_pynative and
                                                             not TAPE.depth):
            if hooked:                                   # Parser.call_cell runs the hooks
                return graph_compile.run(_hooked_entry, (self,) + args, kwargs, key_obj=self,
                                         name=type(self).__name__)
            construct = type(self).construct
            if hasattr(construct, "__wrapped_jit__"):
                # an @ms.jit construct compiles itself, with the options it was given
                return construct(self, *args, **kwargs)
            return graph_compile.run(construct, (self,) + args, kwargs, key_obj=self,
                                     name=type(self).__name__)
        if hooked:
            return hooks.call(self, args, kwargs, self._construct_or_bprop)
        return self._construct_or_bprop(*args, **kwargs)

    def _construct_or_bprop(self, *args, **kwargs):
        if TAPE.depth and custom_bprop.has_bprop(self):   # a gradient through the Cell's bprop
            return custom_bprop.call(self, args, kwargs,
                                     lambda *a: self.construct(*a, **kwargs))
        return self.construct(*args, **kwargs)

    # -- hooks (core/hooks.py) --------------------------------------------------------------
    def register_forward_pre_hook(self, hook_fn, *, prepend=False, with_kwargs=False):
        """hook_fn(cell, args) (with_kwargs: hook_fn(cell, args, kwargs)) before construct;
        its result, if not None, replaces the inputs. Returns a handle with remove()."""
        return hooks.register(self, "forward_pre", hook_fn, prepend, with_kwargs)

    def register_forward_hook(self, hook_fn, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """hook_fn(cell, args, output) (with_kwargs: hook_fn(cell, args, kwargs, output))
        after construct; its result, if not None, replaces the output."""
        return hooks.register(self, "forward", hook_fn, prepend, with_kwargs, always_call)

    def register_backward_hook(self, hook_fn):
        """hook_fn(cell, grad_input, grad_output) once the gradients of the Cell's Tensor
        inputs are computed; its result, if not None, replaces grad_input."""
        return hooks.register(self, "backward", hook_fn)

    def register_backward_pre_hook(self, hook_fn):
        """hook_fn(cell, grad_output) before the Cell's backward; its result, if not None,
        replaces grad_output."""
        return hooks.register(self, "backward_pre", hook_fn)

    # -- introspection ------------------------------------------------------------------------
    def cells_and_names(self, cells=None, name_prefix=""):
        seen = set() if cells is None else cells
        if id(self) in seen:
            return
        seen.add(id(self))
        yield name_prefix, self
        for name, c in self._cells.items():
            if c is not None:
                yield from c.cells_and_names(seen, f"{name_prefix}.{name}" if name_prefix
                                             else name)

    def name_cells(self):
        return OrderedDict(self._cells)

    def cells(self):
        return list(self._cells.values())

    def parameters_and_names(self, name_prefix="", expand=True):
        """(attribute path, Parameter) for every distinct Parameter, depth first."""
        seen = set()
        cells = self.cells_and_names(name_prefix=name_prefix) if expand else [(name_prefix, self)]
        cells = list(cells)
        for cell_name, cell in cells:
            for pname, p in cell._params.items():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    yield (f"{cell_name}.{pname}" if cell_name else pname), p
        # ParameterTuple attributes last, so a Parameter a sub-Cell owns keeps that Cell's path
        for cell_name, cell in cells:
            for tname, tup in cell.__dict__.get("_param_tuples", {}).items():
                for i, p in enumerate(tup):
                    if id(p) not in seen:
                        seen.add(id(p))
                        path = f"{tname}.{i}"
                        yield (f"{cell_name}.{path}" if cell_name else path), p

    def get_parameters(self, expand=True):
        for _, p in self.parameters_and_names(expand=expand):
            yield p

    def trainable_params(self, recurse=True):
        return [p for p in self.get_parameters(recurse) if p.requires_grad]

    def untrainable_params(self, recurse=True):
        return [p for p in self.get_parameters(recurse) if not p.requires_grad]

    def insert_child_to_cell(self, child_name, child_cell):
        setattr(self, child_name, child_cell)

    def set_train(self, mode=True):
        for _, c in self.cells_and_names():
            c.__dict__["training"] = mode
        return self

    def set_grad(self, requires_grad=True):
        self.__dict__["requires_grad"] = requires_grad
        return self

    def extend_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra = self.extend_repr()
        if not self._cells:
            return f"{type(self).__name__}<{extra}>"
        lines = [f"{type(self).__name__}<{extra}"]
        for name, c in self._cells.items():
            sub = repr(c).replace("\n", "\n  ")
            lines.append(f"  ({name}): {sub}")
        return "\n".join(lines) + "\n  >"


class SequentialCell(Cell):
    """Cells run in order: `SequentialCell(c1, c2)`, `SequentialCell([c1, c2])` or an
    OrderedDict of named cells."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, c in args[0].items():
                setattr(self, name, _check_cell(c))
        else:
            for i, c in enumerate(args):
                setattr(self, str(i), _check_cell(c))

    def __getitem__(self, i):
        items = list(self._cells.values())
        if isinstance(i, slice):
            return SequentialCell(items[i])
        return items[i]

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells.values())

    def append(self, cell):
        setattr(self, str(len(self._cells)), _check_cell(cell))
        return self

    def construct(self, x):
        for c in self._cells.values():
            x = c(x)
        return x


class CellList(Cell):
    """A list of Cells registered as children '0', '1', ..."""

    def __init__(self, args=None):
        super().__init__()
        for c in args or ():
            self.append(c)

    def __getitem__(self, i):
        items = list(self._cells.values())
        if isinstance(i, slice):
            return CellList(items[i])
        return items[i]

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells.values())

    def append(self, cell):
        setattr(self, str(len(self._cells)), _check_cell(cell))
        return self

    def extend(self, cells):
        for c in cells:
            self.append(c)
        return self

    def insert(self, index, cell):
        items = list(self._cells.values())
        items.insert(index, _check_cell(cell))
        for k in list(self._cells):
            self.__delattr__(k)
        for i, c in enumerate(items):
            object.__setattr__(self, str(i), c)
            self._cells[str(i)] = c
        return self

    def construct(self, *inputs):
        raise NotImplementedError("CellList is a container: iterate over it in construct()")


def _hooked_entry(cell, *args, **kwargs):
    """A GRAPH_MODE call of a Cell with hooks: traced, so the parser's call_cell (which runs
    the hooks, parsed) is where the Cell is called."""
    return executor.current.parser.call_cell(cell, args, kwargs)


def _check_cell(c):
    if not isinstance(c, Cell):
        raise TypeError(f"expected a Cell, got {type(c).__name__}")
    return c
