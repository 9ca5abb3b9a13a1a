"""Type hints and docstrings → tool JSON Schema; @tool; ToolCatalog.from_functions."""

# Optional[...] and Union[...] are spelled out on purpose: users write them, so they are tested.
# ruff: noqa: UP007, UP045

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Optional, TypedDict, Union

import pytest

from toolsearch_lab.catalog.container import ToolCatalog, tool
from toolsearch_lab.catalog.functions import (
    SchemaFromFunctionError,
    parse_docstring,
    schema_from_function,
    tool_from_function,
)


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


@dataclass
class Point:
    """A point on a map.

    Attributes:
        lat: Latitude in degrees.
        lon: Longitude in degrees.
    """

    lat: float
    lon: float
    label: str = ""
    tags: list[str] = field(default_factory=list)


@dataclass
class TreeNode:
    """A node."""

    children: list[TreeNode]


class Filters(TypedDict, total=False):
    max_price: int
    city: str


def test_scalars_defaults_and_required():
    def f(name: str, count: int, ratio: float, flag: bool, limit: int = 10):
        """Do f."""

    assert schema_from_function(f) == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean"},
            "limit": {"type": "integer", "default": 10},
        },
        "required": ["name", "count", "ratio", "flag"],
    }


def test_optional_is_nullable_and_not_required():
    def f(a: Optional[str], b: int | None = None, c: Union[list[int], None] = None):
        """F."""

    schema = schema_from_function(f)
    assert schema["properties"] == {
        "a": {"type": ["string", "null"]},
        "b": {"type": ["integer", "null"], "default": None},
        "c": {"type": ["array", "null"], "items": {"type": "integer"}, "default": None},
    }
    assert "required" not in schema


def test_literal_enum_list_dict_union_any():
    def f(
        mode: Literal["fast", "slow"],
        unit: Unit,
        units: list[Unit],
        scores: dict[str, float],
        raw: dict,
        either: Union[int, str],
        anything: Any,
        nums: tuple[int, ...],
        ids: set[str],
    ):
        """F."""

    props = schema_from_function(f)["properties"]
    assert props["mode"] == {"type": "string", "enum": ["fast", "slow"]}
    assert props["unit"] == {"type": "string", "enum": ["celsius", "fahrenheit"]}
    assert props["units"] == {"type": "array", "items": {"type": "string", "enum": ["celsius", "fahrenheit"]}}
    assert props["scores"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert props["raw"] == {"type": "object"}
    assert props["either"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert props["anything"] == {}
    assert props["nums"] == {"type": "array", "items": {"type": "integer"}}
    assert props["ids"] == {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    assert schema_from_function(f)["required"] == [
        "mode",
        "unit",
        "units",
        "scores",
        "raw",
        "either",
        "nums",
        "ids",
    ]


def test_dataclass_and_typeddict_become_nested_objects():
    def f(where: Point, filters: Filters | None = None):
        """F."""

    props = schema_from_function(f)["properties"]
    assert props["where"] == {
        "type": "object",
        "description": "A point on a map.",
        "properties": {
            "lat": {"type": "number", "description": "Latitude in degrees."},
            "lon": {"type": "number", "description": "Longitude in degrees."},
            "label": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["lat", "lon"],
    }
    assert props["filters"] == {
        "anyOf": [
            {"type": "object", "properties": {"max_price": {"type": "integer"}, "city": {"type": "string"}}},
            {"type": "null"},
        ],
        "default": None,
    }


def test_annotated_description_and_enum_default():
    def f(unit: Annotated[Unit, "Which unit"] = Unit.FAHRENHEIT):
        """F."""

    assert schema_from_function(f)["properties"]["unit"] == {
        "type": "string",
        "enum": ["celsius", "fahrenheit"],
        "description": "Which unit",
        "default": "fahrenheit",
    }


GOOGLE = """Get the weather for a city.

    Uses the forecast service.

    Args:
        city (str): City name,
            for example Paris.
        days: Number of days.

    Returns:
        str: The forecast.
    """

NUMPY = """Get the weather for a city.

    Uses the forecast service.

    Parameters
    ----------
    city : str
        City name,
        for example Paris.
    days : int, optional
        Number of days.

    Returns
    -------
    str
        The forecast.
    """


@pytest.mark.parametrize("doc", [GOOGLE, NUMPY], ids=["google", "numpy"])
def test_docstring_styles(doc):
    parsed = parse_docstring(doc)
    assert parsed.description == "Get the weather for a city.\n\nUses the forecast service."
    assert parsed.params == {"city": "City name, for example Paris.", "days": "Number of days."}


def test_sphinx_params():
    parsed = parse_docstring("Summary.\n\n:param city: The city.\n:param int days: Days.\n:returns: text")
    assert parsed == parse_docstring.__globals__["ParsedDocstring"](
        "Summary.", {"city": "The city.", "days": "Days."}
    )


def test_tool_from_function_uses_docstring_and_keeps_the_callable():
    def get_weather(city: str, days: int = 1) -> str:
        """Get the weather for a city.

        Args:
            city: City name.
            days: Number of days.
        """
        return f"{city}:{days}"

    t = tool_from_function(get_weather, category="weather")
    assert (t.name, t.description, t.category) == ("get_weather", "Get the weather for a city.", "weather")
    assert t.parameters["properties"]["city"]["description"] == "City name."
    assert t.function is get_weather  # plain types: no wrapper
    assert t.function(city="Paris", days=2) == "Paris:2"


def test_wrapper_converts_json_arguments_to_enum_and_dataclass():
    def plot(where: Point, unit: Unit, marks: Optional[list[Point]] = None) -> str:
        """Plot a point."""
        assert isinstance(where, Point) and isinstance(unit, Unit)
        assert marks is None or all(isinstance(m, Point) for m in marks)
        return f"{where.lat},{where.lon} {unit.name} {len(marks or [])}"

    t = tool_from_function(plot)
    assert t.function.__wrapped__ is plot
    args = {"where": {"lat": 1.5, "lon": 2}, "unit": "celsius", "marks": [{"lat": 0, "lon": 0}]}
    assert t.function(**args) == "1.5,2 CELSIUS 1"


def test_decorator_keeps_function_callable_and_catalog_from_functions():
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @tool(name="multiply_numbers", category="math")
    def mul(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    def sub(a: int, b: int) -> int:
        """Subtract b from a."""
        return a - b

    assert add(2, 3) == 5
    catalog = ToolCatalog.from_functions(add, mul, sub)
    assert catalog.names == ["add", "multiply_numbers", "sub"]
    assert catalog.get("multiply_numbers").category == "math"
    assert catalog.get("multiply_numbers").function(a=3, b=4) == 12
    assert catalog.get("sub").function(a=3, b=4) == -1


class Opaque:
    pass


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: lambda x: x, r"parameter 'x': missing type annotation"),
        (
            lambda: _fn_with(Opaque),
            r"function '.*_fn_with.<locals>.f', parameter 'x': unsupported type annotation Opaque",
        ),
        (lambda: _fn_with(dict[int, str]), r"parameter 'x': dict\[int, str\]: JSON object keys are strings"),
        (lambda: _fn_with(tuple[int, str]), r"parameter 'x': fixed-length tuple"),
        (
            lambda: _fn_with(Literal[1.5j]),
            r"parameter 'x': Literal values must be str, int, float, bool or None",
        ),
    ],
)
def test_unsupported_annotations_name_function_and_parameter(make, message):
    with pytest.raises(SchemaFromFunctionError, match=message):
        tool_from_function(make())


def _fn_with(annotation):
    def f(x):
        """F."""

    f.__annotations__ = {"x": annotation}
    return f


def test_other_function_errors():
    def no_doc(a: int):
        pass

    def varargs(*a: int):
        """V."""

    def stale(a: int):
        """S.

        Args:
            a: A.
            b: gone.
        """

    @dataclass
    class Node:
        child: Optional[Node] = None

    def rec(n: Node):
        """R."""

    with pytest.raises(SchemaFromFunctionError, match=r"no_doc'.*no description; write a docstring"):
        tool_from_function(no_doc)
    with pytest.raises(SchemaFromFunctionError, match=r"parameter 'a': \*args/\*\*kwargs"):
        tool_from_function(varargs)
    with pytest.raises(SchemaFromFunctionError, match=r"docstring documents 'b', which is not a parameter"):
        tool_from_function(stale)
    with pytest.raises(SchemaFromFunctionError, match=r"cannot resolve type hints"):
        tool_from_function(rec)  # 'Node' is local to this test, so the string annotation cannot resolve

    def tree(root: TreeNode):
        """T."""

    with pytest.raises(
        SchemaFromFunctionError, match=r"function .*tree', parameter 'root': recursive type TreeNode"
    ):
        tool_from_function(tree)
    with pytest.raises(SchemaFromFunctionError, match=r"field 'name' must match"):
        tool_from_function(lambda: None, description="x")


@pytest.mark.skipif(sys.version_info < (3, 10), reason="X | Y syntax")
def test_pep604_union_without_future_import():
    ns: dict = {}
    exec("def f(a: int | str, b: str | None = None):\n    '''F.'''\n", ns)  # noqa: S102 (no future import)
    props = schema_from_function(ns["f"])["properties"]
    assert props["a"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert props["b"] == {"type": ["string", "null"], "default": None}
