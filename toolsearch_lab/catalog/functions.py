"""Python functions → tools: a JSON Schema from the type hints, descriptions from the docstring.

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Any``, ``Literal[...]``, ``Enum``
subclasses, ``list[X]`` / ``set[X]`` / ``tuple[X, ...]``, ``dict`` / ``dict[str, X]``, ``Optional[X]`` /
``X | None`` (nullable and not required), other unions (``anyOf``), dataclasses and ``TypedDict`` (nested
object schemas) and ``Annotated[X, "description"]``. A parameter with a default is not required.

Docstrings in Google style (``Args:``) and NumPy style (``Parameters`` + dashes) are read, plus Sphinx
``:param x:`` lines. The text before the first section is the tool description; each documented parameter
gets its description. Anything else raises :class:`SchemaFromFunctionError` naming the function and the
parameter, because a schema that silently says "any value" teaches the model nothing.

The model sends JSON, so a function that takes an ``Enum`` or a dataclass would get a plain string or dict.
For those functions ``Tool.function`` is a thin wrapper that converts the JSON arguments to the annotated
types first (``wrapper.__wrapped__`` is the original); plain functions are kept as they are.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import functools
import inspect
import math
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin

from toolsearch_lab.catalog.docstrings import ParsedDocstring, parse_docstring
from toolsearch_lab.model import Tool

__all__ = ["SchemaFromFunctionError", "parse_docstring", "schema_from_function", "tool", "tool_from_function"]

_NONE_TYPE = type(None)
_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


class SchemaFromFunctionError(TypeError):
    """A function cannot be described as a tool; the message names the function and the parameter."""


# ---------------------------------------------------------------------------------------------------------
# Annotations → JSON Schema


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def _json_scalar_type(values: list[Any]) -> dict[str, Any]:
    kinds = {
        ("boolean" if isinstance(v, bool) else _SCALARS.get(type(v)) or ("null" if v is None else "?"))
        for v in values
    }
    if "?" in kinds:
        raise ValueError(f"values must be str, int, float, bool or None, got {values!r:.80}")
    if kinds == {"integer", "number"}:
        kinds = {"number"}
    return {"type": kinds.pop()} if len(kinds) == 1 else {}


class _SchemaBuilder:
    def __init__(self, where: str) -> None:
        self.where = where  # "function 'f', parameter 'x'" for error messages
        self._stack: list[Any] = []  # classes being expanded, to refuse recursive types clearly

    def fail(self, what: str) -> SchemaFromFunctionError:
        return SchemaFromFunctionError(f"{self.where}: {what}")

    def schema(self, tp: Any) -> dict[str, Any]:
        origin, args = get_origin(tp), get_args(tp)
        if origin is typing.Annotated:
            inner = self.schema(args[0])
            texts = [a for a in args[1:] if isinstance(a, str)]
            return {**inner, "description": texts[0]} if texts else inner
        if origin in (Union, types.UnionType):
            return self._union(args)
        found = self._scalar(tp, origin, args)
        if found is None:
            found = self._container(tp, origin, args)
        if found is None:
            found = self._record(tp)
        if found is None:
            raise self.fail(
                f"unsupported type annotation {_type_name(tp)} (supported: str, int, float, bool, "
                "Literal, Enum, list, set, tuple[X, ...], dict[str, X], Optional/Union, dataclass, "
                "TypedDict, Any)"
            )
        return found

    def _scalar(self, tp: Any, origin: Any, args: tuple[Any, ...]) -> dict[str, Any] | None:
        """Any, None, str/int/float/bool, Literal and Enum; None for other types."""
        if tp is Any:
            return {}
        if tp is None or tp is _NONE_TYPE:
            return {"type": "null"}
        if tp in _SCALARS:
            return {"type": _SCALARS[tp]}
        if origin is Literal:
            try:
                return {**_json_scalar_type(list(args)), "enum": list(args)}
            except ValueError as exc:
                raise self.fail(f"Literal {exc}") from None
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            values = [m.value for m in tp]
            try:
                return {**_json_scalar_type(values), "enum": values}
            except ValueError as exc:
                raise self.fail(f"Enum {tp.__name__} {exc}") from None
        return None

    def _container(self, tp: Any, origin: Any, args: tuple[Any, ...]) -> dict[str, Any] | None:
        """list/set/frozenset/Sequence, tuple[X, ...] and dict[str, X]; None for other types."""
        if tp in (list, set, frozenset) or origin in (list, set, frozenset, collections.abc.Sequence):
            out: dict[str, Any] = {"type": "array"}
            if args:
                out["items"] = self.schema(args[0])
            if tp in (set, frozenset) or origin in (set, frozenset):
                out["uniqueItems"] = True
            return out
        if tp is tuple or origin is tuple:
            if not args:
                return {"type": "array"}
            if len(args) == 2 and args[1] is Ellipsis:
                return {"type": "array", "items": self.schema(args[0])}
            raise self.fail(
                f"fixed-length tuple {_type_name(tp)} is not supported; use list[X] or tuple[X, ...]"
            )
        if tp is dict or origin is dict:
            if args and args[0] is not str:
                raise self.fail(f"{_type_name(tp)}: JSON object keys are strings, use dict[str, ...]")
            out = {"type": "object"}
            if args:
                out["additionalProperties"] = self.schema(args[1])
            return out
        return None

    def _record(self, tp: Any) -> dict[str, Any] | None:
        """A dataclass or TypedDict as an object schema; None for other types."""
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            fields = dataclasses.fields(tp)
            required = [
                f.name
                for f in fields
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            ]
            return self._object(tp, {f.name: f for f in fields}, required=required)
        if _is_typeddict(tp):
            hints = _hints(tp, self)
            return self._object(tp, hints, required=[k for k in hints if k in tp.__required_keys__])
        return None

    def _union(self, args: tuple[Any, ...]) -> dict[str, Any]:
        non_null = [a for a in args if a is not _NONE_TYPE]
        nullable = len(non_null) < len(args)
        if len(non_null) == 1:
            inner = self.schema(non_null[0])
            if not nullable:
                return inner
            kind = inner.get("type")
            if isinstance(kind, str) and set(inner) <= {
                "type",
                "items",
                "additionalProperties",
                "description",
            }:
                return {**inner, "type": [kind, "null"]}
            if "enum" in inner and isinstance(kind, str):
                return {**inner, "type": [kind, "null"], "enum": [*inner["enum"], None]}
            return {"anyOf": [inner, {"type": "null"}]}
        options = [self.schema(a) for a in non_null]
        if nullable:
            options.append({"type": "null"})
        return {"anyOf": options}

    def _object(self, cls: type, fields: dict[str, Any], required: list[str]) -> dict[str, Any]:
        if cls in self._stack:
            raise self.fail(f"recursive type {cls.__name__} is not supported")
        self._stack.append(cls)
        try:
            hints = _hints(cls, self)
            docs = parse_docstring(cls.__doc__ if cls.__doc__ and not _is_auto_doc(cls) else None)
            properties = {}
            for name in fields:
                prop = self.schema(hints[name])
                if name in docs.params and "description" not in prop:
                    prop["description"] = docs.params[name]
                properties[name] = prop
        finally:
            self._stack.pop()
        out: dict[str, Any] = {"type": "object"}
        if docs.description:
            out["description"] = docs.description
        out["properties"] = properties
        if required:
            out["required"] = required
        return out


def _is_auto_doc(cls: type) -> bool:
    # dataclasses write "Name(field: type, ...)" as __doc__ when there is none: not a description.
    return dataclasses.is_dataclass(cls) and (cls.__doc__ or "").startswith(f"{cls.__name__}(")


def _type_name(tp: Any) -> str:
    # Generic aliases (dict[int, str]) pass isinstance(tp, type) on 3.10, so test for parameters first.
    if get_origin(tp) is None and isinstance(tp, type):
        return tp.__name__
    return repr(tp).replace("typing.", "")


def _hints(obj: Any, builder: _SchemaBuilder | None = None) -> dict[str, Any]:
    try:
        return typing.get_type_hints(obj, include_extras=True)
    except (
        NameError,
        TypeError,
        AttributeError,
        SyntaxError,
    ) as exc:  # e.g. a forward ref that does not resolve
        where = builder.where if builder else repr(obj)
        raise SchemaFromFunctionError(
            f"{where}: cannot resolve type hints of {_type_name(obj)}: {exc}"
        ) from None


# ---------------------------------------------------------------------------------------------------------
# Functions → schema, Tool


def _function_name(func: Callable[..., Any]) -> str:
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)


def _json_default(value: Any) -> tuple[bool, Any]:
    """(usable, value) of a default as JSON: enums become their value; anything not JSON-like is left out,
    NaN and ±Infinity included (JSON has no such numbers): the parameter stays optional and the function's
    own default applies when the model leaves it out."""
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, float) and not math.isfinite(value):
        return False, None
    if value is None or isinstance(value, (str, int, float, bool)):
        return True, value
    if isinstance(value, (list, tuple)) and all(_json_default(v)[0] for v in value):
        return True, [_json_default(v)[1] for v in value]
    return False, None


def schema_from_function(func: Callable[..., Any]) -> dict[str, Any]:
    """The ``parameters`` JSON Schema of ``func`` (an object with one property per parameter)."""
    return _analyse(func)[0]


def _analyse(func: Callable[..., Any]) -> tuple[dict[str, Any], ParsedDocstring, dict[str, Any]]:
    fname = _function_name(func)
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise SchemaFromFunctionError(f"function {fname!r}: no inspectable signature ({exc})") from None
    hints = _hints(func, _SchemaBuilder(f"function {fname!r}"))
    docs = parse_docstring(inspect.getdoc(func))
    properties: dict[str, dict[str, Any]] = {}
    required: list[str] = []
    annotations: dict[str, Any] = {}
    for name, param in signature.parameters.items():
        where = f"function {fname!r}, parameter {name!r}"
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise SchemaFromFunctionError(f"{where}: *args/**kwargs cannot be described as JSON arguments")
        if param.kind is param.POSITIONAL_ONLY:
            raise SchemaFromFunctionError(
                f"{where}: positional-only; tools are called with keyword arguments"
            )
        if name not in hints:
            raise SchemaFromFunctionError(f"{where}: missing type annotation (add one, e.g. '{name}: str')")
        tp = hints[name]
        annotations[name] = tp
        prop = _SchemaBuilder(where).schema(tp)
        if name in docs.params and "description" not in prop:
            prop = {**prop, "description": docs.params[name]}
        has_default = param.default is not param.empty
        if has_default:
            ok, value = _json_default(param.default)
            if ok:
                prop["default"] = value
        elif not _is_optional(tp):
            required.append(name)
        properties[name] = prop
    unknown = [p for p in docs.params if p not in signature.parameters]
    if unknown:
        raise SchemaFromFunctionError(
            f"function {fname!r}: docstring documents {', '.join(map(repr, unknown))}, which "
            f"{'is not a parameter' if len(unknown) == 1 else 'are not parameters'} (stale docstring?)"
        )
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema, docs, annotations


def _is_optional(tp: Any) -> bool:
    if get_origin(tp) is typing.Annotated:
        return _is_optional(get_args(tp)[0])
    return tp is Any or (get_origin(tp) in (Union, types.UnionType) and _NONE_TYPE in get_args(tp))


def _needs_conversion(tp: Any) -> bool:
    origin, args = get_origin(tp), get_args(tp)
    if origin is typing.Annotated:
        return _needs_conversion(args[0])
    if isinstance(tp, type) and (issubclass(tp, enum.Enum) or dataclasses.is_dataclass(tp)):
        return True
    if tp in (set, frozenset, tuple) or origin in (set, frozenset, tuple):
        return True
    return any(_needs_conversion(a) for a in args if a is not Ellipsis)


def _convert(value: Any, tp: Any) -> Any:
    """JSON value → the annotated Python type (Enum members, dataclass instances, sets, tuples)."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is typing.Annotated:
        return _convert(value, args[0])
    if value is None:
        return None
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(value)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) and isinstance(value, dict):
        hints = typing.get_type_hints(tp, include_extras=True)
        return tp(**{k: _convert(v, hints.get(k, Any)) for k, v in value.items()})
    if origin in (Union, types.UnionType):
        for option in args:
            if option is _NONE_TYPE:
                continue
            try:
                return _convert(value, option)
            except (TypeError, ValueError):
                continue
        return value
    if isinstance(value, list):
        item_tp = args[0] if args else Any
        items = [_convert(v, item_tp) for v in value]
        if tp in (set, frozenset) or origin in (set, frozenset):
            return (origin or tp)(items)
        if tp is tuple or origin is tuple:
            return tuple(items)
        return items
    if isinstance(value, dict) and (origin is dict) and len(args) == 2:
        return {k: _convert(v, args[1]) for k, v in value.items()}
    return value


def tool_from_function(
    func: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    category: str | None = None,
) -> Tool:
    """A :class:`Tool` for ``func``: name = ``func.__name__`` (or ``name``), description = docstring text
    before its first section (or ``description``), parameters from the signature. Functions decorated with
    :func:`tool` return their attached Tool (overrides given here still win)."""
    attached = getattr(func, "__tool__", None)
    if isinstance(attached, Tool) and name is None and description is None and category is None:
        return attached
    fname = _function_name(func)
    schema, docs, annotations = _analyse(func)
    text = description if description is not None else docs.description
    if not text:
        raise SchemaFromFunctionError(
            f"function {fname!r}: no description; write a docstring or pass description="
        )
    callable_ = func
    if any(_needs_conversion(tp) for tp in annotations.values()):

        @functools.wraps(func)
        def callable_(**kwargs: Any) -> Any:
            return func(
                **{k: _convert(v, annotations[k]) if k in annotations else v for k, v in kwargs.items()}
            )

    tool_name = name if name is not None else getattr(func, "__name__", fname)
    try:
        return Tool(tool_name, text, schema, category, callable_)
    except ValueError as exc:
        raise SchemaFromFunctionError(f"function {fname!r}: {exc}") from None


def tool(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    category: str | None = None,
) -> Any:
    """Decorator: ``@tool`` or ``@tool(name=..., description=..., category=...)``. The function stays an
    ordinary callable; its :class:`Tool` is ``func.__tool__`` (what ``ToolCatalog.from_functions`` uses).
    Errors surface at decoration time, next to the function that caused them."""

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        f.__tool__ = tool_from_function(f, name=name, description=description, category=category)  # type: ignore[attr-defined]
        return f

    return decorate(func) if func is not None else decorate
