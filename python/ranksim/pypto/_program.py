"""The class form of a PyPTO program, run eagerly: ``@pl.program`` classes of ``@pl.function``
methods.

``@pl.function(type=..., level=..., role=...)`` marks a method with the level it runs at (see
``kind_of``); ``@pl.program`` makes the class a :class:`Program` whose functions call each
other through ``self`` exactly as the ``@pl.jit`` forms do (``_jit.JITFunction``): a host
orchestrator records dispatches, an orchestration function lists InCore calls, an InCore
function is a kernel. ``ir.compile(Program, ...)`` binds it to a platform and devices.

PyPTO's parser turns ``with pl.at(...):`` bodies into outlined functions and ``pl.cond`` into a
``while`` condition. ranksim does the same on the function's source (``_rewrite``), so a body
runs later, as its own task or dispatch, with the values its names had when the ``with``
statement was reached; the rewritten code keeps the user's file and line numbers.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap

from .._errors import BadArgument
from . import _types as T
from ._jit import JITFunction

# ---- levels --------------------------------------------------------------------------------


def kind_of(type_, level, role):
    """The executor's level of a function: ``host`` (HOST orchestrator), ``sub`` (HOST
    sub-worker), ``orch`` (a chip's orchestration) or ``incore`` (a kernel on a core)."""
    if level is T.Level.HOST or level is T.Level.GLOBAL or str(level).startswith("Level.CLUSTER"):
        return "sub" if role in (T.Role.SubWorker, T.Role.Worker) else "host"
    if level in (T.Level.CHIP, T.Level.CHIP_DIE):
        return "orch"
    if level in (T.Level.CORE_GROUP, T.Level.AIV, T.Level.AIC):
        return "incore"
    if type_ in (T.FunctionType.InCore, T.FunctionType.AIC, T.FunctionType.AIV, T.FunctionType.Group, T.FunctionType.Spmd):
        return "incore"
    return "orch"


class FunctionSpec:
    """What ``@pl.function`` gives a class body: the function and where it runs. A
    ``@pl.program`` turns each into a bound :class:`~ranksim.pypto._jit.JITFunction`."""

    def __init__(self, fn, type_, level, role, attrs):
        if not callable(fn):
            raise TypeError(f"@pl.function decorates a function, got {fn!r}")
        for v, enum, what in ((type_, T.FunctionType, "type"), (level, T.Level, "level"), (role, T.Role, "role")):
            if v is not None and not isinstance(v, enum):
                raise TypeError(f"@pl.function({what}={v!r}): expected a pl.{enum.__name__} member")
        self.fn, self.type, self.level, self.role, self.attrs = fn, type_, level, role, dict(attrs or {})
        self.kind = kind_of(type_, level, role)
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __repr__(self):
        return f"<@pl.function {self.__name__} ({self.kind})>"

    def __call__(self, *args, **kwargs):
        raise BadArgument(
            f"@pl.function {self.__name__} is called outside a @pl.program class: put it in a "
            f"`@pl.program` class and compile the class with `ir.compile(Program, platform=..., distributed_config=...)`"
        )


def function(func=None, *, type=T.FunctionType.Opaque, level=None, role=None, attrs=None, auto_scope=True, strict_ssa=False, external_source=None):  # noqa: A002
    """``@pl.function`` / ``@pl.function(type=..., level=..., role=...)``: a method of a
    ``@pl.program`` class. ``external_source`` (a hand-written C++ kernel) cannot run on
    ranksim and is refused."""
    if external_source is not None:
        raise BadArgument(
            f"@pl.function(external_source={external_source!r}): a hand-written C++ kernel cannot run on ranksim; "
            f"write the kernel in PyPTO's language"
        )

    def wrap(f):
        return FunctionSpec(f, type, level, role, attrs)

    return wrap if func is None else wrap(func)


# ---- programs ------------------------------------------------------------------------------


class Program:
    """A ``@pl.program`` class: its functions by name, bound to one instance of the class,
    and its entry point (the HOST orchestrator, or the single chip-level function a program
    without one runs on rank 0)."""

    def __init__(self, cls):
        self.name = cls.__name__
        self.cls = cls
        self.__doc__ = cls.__doc__
        inst = cls.__new__(cls)
        self.instance = inst
        self.functions = {}
        for name, spec in _class_specs(cls):
            jf = _bind(spec, inst)
            inst.__dict__[name] = jf
            self.functions[name] = jf
        if not self.functions:
            raise BadArgument(f"@pl.program {self.name}: the class has no @pl.function method")
        hosts = [f for f in self.functions.values() if f.level == "host"]
        if len(hosts) > 1:
            names = ", ".join(f.__name__ for f in hosts)
            raise BadArgument(f"@pl.program {self.name}: {len(hosts)} HOST orchestrators ({names}); a program has one")
        self.entry = hosts[0] if hosts else self._single_device_entry()

    def _single_device_entry(self):
        tops = self.orchestrations()
        return tops[0] if tops else [f for f in self.functions.values() if f.level == "incore"][0]

    def orchestrations(self):
        """The chip-level functions no other function calls: a program without a HOST
        orchestrator runs one of them (PyPTO's L2 programs, one or several orchestrations)."""
        orch = [f for f in self.functions.values() if f.level == "orch"]
        called = {n for f in self.functions.values() for n in _called_names(f)}
        return [f for f in orch if f.__name__ not in called] or orch[:1]

    def _compiled_for(self, config, output_dir):
        """The program bound to `config` (a RunConfig), as ``ir.compile`` returns it: its HOST
        orchestrator, or its chip-level entry run on rank 0; a program of several
        orchestrations gets one sub-program per orchestration."""
        from .ir.distributed_compiled_program import DistributedCompiledProgram

        if self.entry.level == "host":
            compiled = DistributedCompiledProgram(self.entry, (), config)
            orchs = {}
        else:
            tops = self.orchestrations() or [self.entry]
            orchs = {f.__name__: f for f in tops}
            compiled = DistributedCompiledProgram(tops[0]._on_rank0(), (), config)
        compiled.program = self
        compiled.output_dir_requested = output_dir
        compiled._orchs = orchs
        if len(orchs) > 1:
            compiled._subs = {}
            for name, f in orchs.items():
                sub = DistributedCompiledProgram(f._on_rank0(), (), config)
                sub.program, sub._orchs, sub.name = self, {name: f}, name
                sub.output_dir_requested = None
                sub._parent = compiled
                compiled._subs[name] = sub
        return compiled

    def __repr__(self):
        return f"<@pl.program {self.name}: {', '.join(self.functions)}>"

    def get_function(self, name):
        return self.functions.get(name)

    def __getattr__(self, name):
        fns = self.__dict__.get("functions", {})
        if name in fns:
            return fns[name]
        raise AttributeError(f"@pl.program {self.__dict__.get('name', '?')} has no function `{name}`")


def program(cls=None, *, strict_ssa=False):
    """``@pl.program``: a class of ``@pl.function`` methods as one program (see module docs)."""

    def wrap(c):
        if not isinstance(c, type):
            raise TypeError(f"@pl.program decorates a class, got {c!r}")
        return Program(c)

    return wrap if cls is None else wrap(cls)


def _class_specs(cls):
    seen = set()
    for klass in reversed(cls.__mro__):
        for name, v in vars(klass).items():
            if isinstance(v, FunctionSpec):
                seen.add(name)
    for name in sorted(seen, key=lambda n: _lineno(getattr(cls, n).fn)):
        yield name, getattr(cls, name)


def _lineno(fn):
    code = getattr(fn, "__code__", None)
    return code.co_firstlineno if code else 0


def _called_names(jf):
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(jf.__wrapped__)))
    except (OSError, TypeError, SyntaxError):
        return set()
    return {
        n.func.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) and n.func.value.id == "self"
    }


def _bind(spec, inst):
    """The spec's function (rewritten when it has ``pl.at`` scopes or ``pl.while_`` loops),
    bound to the program's instance unless it takes no ``self`` (a sub-worker callback)."""
    fn = rewrite(spec.fn)
    params = list(inspect.signature(spec.fn).parameters.values())
    takes_self = bool(params) and params[0].name == "self"
    bound = functools.partial(fn, inst) if takes_self else fn
    jf = JITFunction(bound, spec.kind, source=spec.fn, skip_first=takes_self)
    jf.spec = spec
    return jf


# ---- source rewriting: pl.at bodies and pl.while_ conditions -------------------------------


def rewrite(fn):
    """`fn` with every ``with pl.at(...)`` body outlined and every ``pl.cond(c)`` at the head
    of a ``pl.while_`` loop turned into ``if not c: break``; `fn` itself when it has neither
    (or its source cannot be read)."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return fn
    src = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return fn
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)) or not _needs_rewrite(fdef):
        return fn
    ast.increment_lineno(tree, first - 1)
    fdef.decorator_list = []
    local = _local_names(fdef)
    _Outline(local).visit(fdef)
    ast.fix_missing_locations(tree)
    ns = dict(fn.__globals__)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            ns[name] = cell.cell_contents
        except ValueError:
            pass
    code = compile(tree, fn.__code__.co_filename, "exec")
    exec(code, ns)  # noqa: S102 - the user's own function, rewritten
    new = ns[fdef.name]
    new.__defaults__, new.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    new.__annotations__ = dict(getattr(fn, "__annotations__", {}))
    new.__qualname__ = fn.__qualname__
    return new


def _is_call_to(node, attr):
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == attr


def _needs_rewrite(fdef):
    for n in ast.walk(fdef):
        if isinstance(n, ast.With) and any(_is_call_to(i.context_expr, "at") for i in n.items):
            return True
        if isinstance(n, ast.For) and _is_call_to(n.iter, "while_"):
            return True
    return False


def _targets(node):
    """Names bound by an assignment target."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for e in node.elts for n in _targets(e)]
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    return []


def _local_names(fdef):
    names = {a.arg for a in fdef.args.args + fdef.args.kwonlyargs + fdef.args.posonlyargs}
    for extra in (fdef.args.vararg, fdef.args.kwarg):
        if extra is not None:
            names.add(extra.arg)
    for n in ast.walk(fdef):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
    return names


def _loads(body):
    out = []
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in out:
                out.append(n.id)
    return out


def _stored_in(body):
    """Names assigned at the top level of `body` (and in its loops and ifs, not in nested
    functions), in order."""
    out = []

    def walk(stmts):
        for s in stmts:
            if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for t in s.targets if isinstance(s, ast.Assign) else [s.target]:
                    out.extend(n for n in _targets(t) if n not in out)
            elif isinstance(s, (ast.For, ast.AsyncFor)):
                out.extend(n for n in _targets(s.target) if n not in out)
                walk(s.body)
                walk(s.orelse)
            elif isinstance(s, (ast.If, ast.While)):
                walk(s.body)
                walk(s.orelse)
            elif isinstance(s, ast.With):
                for i in s.items:
                    if i.optional_vars is not None:
                        out.extend(n for n in _targets(i.optional_vars) if n not in out)
                walk(s.body)

    walk(body)
    return out


_WRITES = {"store": 2, "assemble": 0}


def _aliases(body):
    """For ``x = pl.store(t, offs, dst)`` / ``x = pl.assemble(dst, ...)`` at the top level of
    `body`: ``{"x": "dst"}``, the tensor the name is known to be before the body runs."""
    out = {}
    for s in body:
        if isinstance(s, (ast.Assign, ast.AnnAssign)) and isinstance(s.value, ast.Call):
            call = s.value
            func = call.func
            attr = func.attr if isinstance(func, ast.Attribute) else None
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if attr in _WRITES and len(targets) == 1 and isinstance(targets[0], ast.Name):
                k = _WRITES[attr]
                arg = call.args[k] if len(call.args) > k else None
                for kw in call.keywords:
                    if kw.arg in ("output_tensor", "target", "dst", "out"):
                        arg = kw.value
                if isinstance(arg, ast.Name):
                    out[targets[0].id] = arg.id
    return out


def _written(body):
    """Names of tensors a scope body writes (the target of ``pl.store`` / ``pl.assemble`` /
    ``pl.write``), for its task's in/out tags."""
    out = []
    for n in ast.walk(ast.Module(body=list(body), type_ignores=[])):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            k = {"store": 2, "assemble": 0, "write": 0}.get(n.func.attr)
            if k is None:
                continue
            arg = n.args[k] if len(n.args) > k else None
            for kw in n.keywords:
                if kw.arg in ("output_tensor", "target", "dst", "tensor"):
                    arg = kw.value
            if isinstance(arg, ast.Name) and arg.id not in out:
                out.append(arg.id)
    return out


class _Outline(ast.NodeTransformer):
    """Outlines ``with pl.at(...)`` bodies (innermost first) and lowers ``pl.cond``."""

    def __init__(self, local):
        self.local = local
        self.count = 0

    def visit_For(self, node):
        self.generic_visit(node)
        if _is_call_to(node.iter, "while_") and node.body:
            head = node.body[0]
            if isinstance(head, ast.Expr) and _is_call_to(head.value, "cond") and head.value.args:
                test = ast.UnaryOp(op=ast.Not(), operand=head.value.args[0])
                node.body[0] = ast.copy_location(ast.If(test=test, body=[ast.copy_location(ast.Break(), head)], orelse=[]), head)
        return node

    def visit_With(self, node):
        self.generic_visit(node)
        if len(node.items) != 1 or not _is_call_to(node.items[0].context_expr, "at"):
            return node
        item = node.items[0]
        self.count += 1
        name = f"__pl_at_{node.lineno}_{self.count}"
        params = [n for n in _loads(node.body) if n in self.local]
        bound_as = set(_targets(item.optional_vars)) if item.optional_vars is not None else set()
        stored = [n for n in _stored_in(node.body) if n not in bound_as]
        body = list(node.body) + [
            ast.copy_location(ast.Return(value=ast.Call(func=ast.Name(id="locals", ctx=ast.Load()), args=[], keywords=[])), node.body[-1])
        ]
        extra = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
        fdef = ast.FunctionDef(
            name=name,
            args=ast.arguments(
                posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                defaults=[ast.Constant(value=None) for _ in params],
            ),
            body=body,
            decorator_list=[],
            returns=None,
            **extra,
        )
        ast.copy_location(fdef, node)
        meta = ast.Dict(
            keys=[ast.Constant(value=k) for k in ("aliases", "writes", "line")],
            values=[
                ast.Constant(value=tuple(_aliases(node.body).items())),
                ast.Constant(value=tuple(_written(node.body))),
                ast.Constant(value=node.lineno),
            ],
        )
        run = ast.Call(
            func=ast.Attribute(value=item.context_expr, attr="_run", ctx=ast.Load()),
            args=[ast.Name(id=name, ctx=ast.Load()), ast.Call(func=ast.Name(id="locals", ctx=ast.Load()), args=[], keywords=[]), meta],
            keywords=[],
        )
        res = f"__pl_at_r{self.count}"
        out = [fdef, ast.Assign(targets=[ast.Name(id=res, ctx=ast.Store())], value=run)]
        if item.optional_vars is not None:
            out.append(ast.Assign(targets=[item.optional_vars], value=ast.Attribute(value=ast.Name(id=res, ctx=ast.Load()), attr="task_id", ctx=ast.Load())))
        for n in stored:
            get = ast.Call(
                func=ast.Attribute(value=ast.Name(id=res, ctx=ast.Load()), attr="value", ctx=ast.Load()),
                args=[ast.Constant(value=n)],
                keywords=[],
            )
            out.append(ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store())], value=get))
        return [ast.copy_location(s, node) for s in out]
