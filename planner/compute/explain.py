""""Why is this 6?": an output's formula and the values it used, down to the inputs.

:func:`explain` walks the formula graph from one column: each computed column shows its formula
(rendered from the same definition the numbers come from) and the value of every column it
reads, recursively; inputs, model figures and GPU figures end the walk. A derived input (bits
from a dtype, an engine's default) asked for itself shows its own formula the same way. The
tree is data, so the CLI prints it and the UI shows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from planner.compute.graph import FormulaGraph
from planner.compute.outputs import GPU_COLUMNS, column_label, figure_columns, format_value
from planner.compute.symbolic import infix, symbolic
from planner.core.errors import PlannerError


@dataclass(slots=True)
class ExplainNode:
    """One column in an explanation: its value and, for a computed column, its formula."""

    name: str
    label: str
    value: Any
    shown: str
    source: str
    """'formula', 'input', 'model', 'gpu' or 'repeat' (explained above)."""
    formula: str = ""
    children: list[ExplainNode] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Plain nested dict (for --json)."""
        value = self.value.item() if hasattr(self.value, "item") else self.value
        return {"name": self.name, "label": self.label, "value": value, "shown": self.shown,
                "source": self.source, "formula": self.formula,
                "inputs": [c.as_dict() for c in self.children]}


def _source(name: str, graph: FormulaGraph) -> str:
    if name in graph.formulas:
        return "formula"
    if name in figure_columns():
        return "model"
    if name in GPU_COLUMNS:
        return "gpu"
    return "input"


def explain(graph: FormulaGraph, values: Mapping[str, Any], column: str, *,
            depth: int = 8, sources: Mapping[str, str] | None = None) -> ExplainNode:
    """The explanation tree of ``column`` given every column's value (``graph.compute``);
    ``sources`` names where an input or figure came from when not the usual place (a
    calibration profile's fitted parameter)."""
    if column not in values:
        known = sorted(set(graph.formulas) | set(values))
        raise PlannerError(f"unknown column {column!r}; columns are {', '.join(known)}")
    seen: set[str] = set()

    def node(name: str, level: int) -> ExplainNode:
        value = values[name]
        label, _unit = column_label(name)
        shown = format_value(name, value.item() if hasattr(value, "item") else value)
        source = _source(name, graph)
        if source != "formula" and sources and name in sources:
            source = sources[name]
        # a derived input (kv_bits from kv_dtype, the engine and the GPU) is a leaf inside a
        # tree, but asked for itself it shows its own formula
        derived = level == 0 and source == "input" and name in graph.derived
        if source != "formula" and not derived:
            return ExplainNode(name, label, value, shown, source)
        if name in seen:
            return ExplainNode(name, label, value, shown, "repeat")
        seen.add(name)
        formula = infix(symbolic(graph.derived[name] if derived else graph.formulas[name]))
        children = ([node(d, level + 1) for d in graph.deps[name]] if level < depth else [])
        return ExplainNode(name, label, value, shown, "formula", formula, children)

    return node(column, 0)


def render_text(root: ExplainNode) -> str:
    """The tree as indented text, one column per line, formulas under their column."""
    lines: list[str] = []

    def walk(n: ExplainNode, prefix: str, last: bool, top: bool) -> None:
        branch = "" if top else ("└─ " if last else "├─ ")
        tag = {"input": "  [input]", "model": "  [model]", "gpu": "  [GPU]",
               "repeat": "  [explained above]"}.get(
                   n.source, f"  [{n.source}]" if n.source != "formula" else "")
        lines.append(f"{prefix}{branch}{n.name} = {n.shown}{tag}")
        child_prefix = prefix + ("" if top else ("   " if last else "│  "))
        if n.formula:
            bar = "│  " if n.children else "   "
            lines.append(f"{child_prefix}{bar}= {n.formula}")
        for i, c in enumerate(n.children):
            walk(c, child_prefix, i == len(n.children) - 1, False)

    walk(root, "", True, True)
    return "\n".join(lines)
