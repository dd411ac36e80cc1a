"""Reading rule documents safely: the core's tables in ``seed_data/`` and a campaign's rule
packs go through the same reader (issue 22: the core is "pack 0"). Safe against hostile
files: no YAML tags or aliases (a "billion laughs" bomb expands through them), a depth cap,
a key given twice refused (plain YAML would keep the last one silently). Every problem names
the path in the document (``agendas[2].xp_per_tally``) and its line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError


@dataclass(frozen=True)
class Problem:
    """One reason a document is refused: where (``agendas[2].xp_per_tally``), the line in
    the file when known, and what is wrong."""

    path: str
    line: int | None
    message: str

    def sentence(self) -> str:
        where = f"{self.path} (line {self.line})" if self.line else self.path or "the pack"
        return f"{where}: {self.message}"


class DocumentError(ValueError):
    def __init__(self, problems: Sequence[Problem]) -> None:
        super().__init__("; ".join(p.sentence() for p in problems))
        self.problems = tuple(problems)


def read(text: str, what: str, max_depth: int) -> tuple[Any, yaml.Node]:
    """The document as plain Python values, and its node tree (for the lines of later
    problems). ``what`` says what the top level must be, when it is not a mapping."""
    root = compose(text, what)
    return plain(root, max_depth), root


def compose(text: str, what: str) -> yaml.Node:
    try:
        node = yaml.compose(text, Loader=_StrictLoader)
    except yaml.MarkedYAMLError as error:
        line = error.problem_mark.line + 1 if error.problem_mark else None
        raise DocumentError([Problem("", line, f"not valid YAML: {error.problem}")]) from None
    except yaml.YAMLError as error:
        raise DocumentError([Problem("", None, f"not valid YAML: {error}")]) from None
    except UnicodeDecodeError:
        raise DocumentError([Problem("", None, "not UTF-8 text")]) from None
    if not isinstance(node, yaml.MappingNode):
        raise DocumentError([Problem("", 1, what)])
    return node


class _StrictLoader(yaml.SafeLoader):
    """Safe YAML without what a hostile file uses: no aliases and no tags beyond the plain
    types."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.MarkedYAMLError(
                problem="anchors and aliases (*name) are not allowed in a rule pack",
                problem_mark=event.start_mark,
            )
        return super().compose_node(parent, index)


_PLAIN_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:seq",
    "tag:yaml.org,2002:map",
}


def plain(node: yaml.Node, max_depth: int, depth: int = 0, path: str = "") -> Any:
    """The node as plain Python values, refusing depth and tags a document never needs."""
    if depth > max_depth:
        raise DocumentError([Problem(path, line(node), f"nested more than {max_depth} deep")])
    if node.tag not in _PLAIN_TAGS:
        raise DocumentError([Problem(path, line(node), f"the YAML tag {node.tag} is not allowed")])
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key, value in node.value:
            name = str(_scalar(key))
            if name in out:
                raise DocumentError([Problem(join(path, name), line(key), "given twice")])
            out[name] = plain(value, max_depth, depth + 1, join(path, name))
        return out
    if isinstance(node, yaml.SequenceNode):
        return [plain(v, max_depth, depth + 1, f"{path}[{n}]") for n, v in enumerate(node.value)]
    return _scalar(node)


_CONSTRUCTOR = yaml.constructor.SafeConstructor()


def _scalar(node: yaml.Node) -> Any:
    return _CONSTRUCTOR.construct_object(node, deep=True)


def line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def problems_of(
    error: ValidationError, root: yaml.Node, skip: frozenset[str] = frozenset(), prefix: str = ""
) -> list[Problem]:
    """pydantic's errors (the first ten) as problems with paths and lines. ``skip``: the
    names pydantic puts in a location for a union's member (``effects[0].add_xp.amount``);
    ``prefix``: where the validated part sits in the document."""
    return [_problem(e, root, skip, prefix) for e in error.errors()[:10]]


def _problem(error: Any, root: yaml.Node, skip: frozenset[str], prefix: str) -> Problem:
    loc = [p for p in error["loc"] if not (isinstance(p, str) and (p in skip or _a_type(p)))]
    return problem_at(root, loc, str(error["msg"]), prefix)


def _a_type(part: str) -> bool:
    """pydantic names the member of a plain union it tried (``constrained-int``,
    ``dict[constrained-str,constrained-int]``): never a key of the document."""
    return part.startswith("constrained-") or "[" in part or part in {"int", "str", "bool"}


def problem_at(root: yaml.Node, loc: Sequence[Any], message: str, prefix: str = "") -> Problem:
    """A problem at ``loc`` (keys and indexes) of the document whose node tree is ``root``."""
    path = prefix
    for part in loc:
        path = f"{path}[{part}]" if isinstance(part, int) else join(path, str(part))
    return Problem(path, _line_of(root, loc), message.removeprefix("Value error, "))


def _line_of(root: yaml.Node, loc: Sequence[Any]) -> int | None:
    node: yaml.Node = root
    for part in loc:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            found = [v for k, v in node.value if str(k.value) == part]
            if not found:
                return line(node)
            node = found[0]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return line(node)
            node = node.value[part]
        else:
            break
    return line(node)
