"""Reading rule documents safely: the core's tables in ``seed_data/`` and a campaign's rule
packs go through the same reader (issue 22: the core is "pack 0"). Safe against hostile
files: no YAML tags or aliases (a "billion laughs" bomb expands through them), a depth cap,
a key given twice refused (plain YAML would keep the last one silently). Every problem names
the path in the document (``agendas[2].xp_per_tally``) and its line."""

from __future__ import annotations

import re
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
    column: int | None = None  # where a YAML form is refused, the column too (issue 47)

    def sentence(self) -> str:
        where = self.path or "the pack"
        col = f", column {self.column}" if self.column else ""
        at = f" (line {self.line}{col})" if self.line else ""
        return f"{where}{at}: {self.message}"


class DocumentError(ValueError):
    def __init__(self, problems: Sequence[Problem]) -> None:
        super().__init__("; ".join(p.sentence() for p in problems))
        self.problems = tuple(problems)


def read(text: str, what: str, max_depth: int) -> tuple[Any, yaml.Node]:
    """The document as plain Python values, and its node tree (for the lines of later
    problems). ``what`` says what the top level must be, when it is not a mapping."""
    root = compose(text, what, max_depth)
    return plain(root, max_depth), root


def compose(text: str, what: str, max_depth: int = 64) -> yaml.Node:
    """The document's node tree, refused while it is read as soon as it nests deeper than
    ``max_depth`` (a few hundred bytes of ``[[[[`` would otherwise exhaust the stack)."""
    loader = None
    try:
        loader = _StrictLoader(text)  # its reader refuses unprintable characters at once
        loader.max_depth = max_depth
        node = loader.get_single_node()
    except _Refused as error:
        raise DocumentError([Problem(error.path, error.line, error.what, error.column)]) from None
    except yaml.MarkedYAMLError as error:
        line = error.problem_mark.line + 1 if error.problem_mark else None
        raise DocumentError([Problem("", line, f"not valid YAML: {error.problem}")]) from None
    except yaml.YAMLError as error:
        raise DocumentError([Problem("", None, f"not valid YAML: {error}")]) from None
    except UnicodeDecodeError:
        raise DocumentError([Problem("", None, "not UTF-8 text")]) from None
    finally:
        if loader is not None:
            loader.dispose()
    if not isinstance(node, yaml.MappingNode):
        raise DocumentError([Problem("", 1, what)])
    return node


class _Refused(yaml.YAMLError):
    """Something the reader refuses while composing, with the path it was met at."""

    def __init__(self, path: str, line: int, what: str, column: int | None = None) -> None:
        super().__init__(what)
        self.path, self.line, self.what, self.column = path, line, what, column


# YAML 1.2's core schema (issue 47): PyYAML reads YAML 1.1, where ``on``, ``Yes`` and ``off``
# are booleans, ``010`` is 8, ``0x1F`` is 31, ``1:30`` is 90 and ``2024-01-01`` a date. Here
# only ``true``/``false`` are booleans, ``null``/``~`` null, numbers are numbers; the rest is
# text, and a plain number that YAML 1.1 and 1.2 tools read differently is refused.
_CORE_RESOLVERS: list[tuple[str, str, str]] = [
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", "~nN"),
    ("tag:yaml.org,2002:int", r"^[-+]?[0-9]+$", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
    ("tag:yaml.org,2002:merge", r"^(?:<<)$", "<"),
]
# Numbers YAML 1.1 reads otherwise than 1.2: a leading zero (octal), 0x/0o/0b, underscores,
# sexagesimal (1:30 is 90 in YAML 1.1).
_AMBIGUOUS_NUMBER = re.compile(
    r"^[-+]?(?:0[0-9_]+|0[xXoObB][0-9a-fA-F_]*|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?"
    r"|[0-9][0-9]*_[0-9_]*(?:\.[0-9_]*)?)$"
)


class _StrictLoader(yaml.SafeLoader):
    """Safe YAML without what a hostile file uses: no aliases, no tags, and no nesting
    beyond ``max_depth``, refused while composing (each level of PyYAML's composer is a few
    Python frames: deep nesting would end in a RecursionError); plain scalars resolved by
    YAML 1.2's core schema. It keeps the path it is at, so each refusal names it."""

    max_depth = 64
    yaml_implicit_resolvers = {}  # noqa: RUF012 (PyYAML reads it on the class)

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.at: list[str] = []

    def compose_node(self, parent: Any, index: Any) -> Any:
        path = self.at[-1] if self.at else ""
        if parent is not None:
            if isinstance(index, int):
                path = f"{path}[{index}]"
            elif isinstance(index, yaml.ScalarNode):
                path = join(path, str(index.value))
        event = self.peek_event()  # type: ignore[no-untyped-call]
        mark = int(event.start_mark.line) + 1
        if self.check_event(yaml.AliasEvent):
            raise _Refused(path, mark, "anchors and aliases (*name) are not allowed")
        _check_form(event, path, mark)
        if len(self.at) > self.max_depth:
            raise _Refused(path, mark, f"nested more than {self.max_depth} deep")
        self.at.append(path)
        try:
            return super().compose_node(parent, index)
        finally:
            self.at.pop()

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        # The scanner reads ahead of the composer (up to 1,024 characters of possible keys,
        # each flow level checked per token): a deep ``[[[[`` is refused as it is scanned.
        if self.flow_level >= self.max_depth:
            path = self.at[-1] if self.at else ""
            line = int(self.get_mark().line) + 1
            raise _Refused(path, line, f"nested more than {self.max_depth} deep")
        super().fetch_flow_collection_start(TokenClass)


for _tag, _pattern, _first in _CORE_RESOLVERS:
    _StrictLoader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first) or [None])
_StrictLoader.yaml_implicit_resolvers.setdefault("", []).append(
    ("tag:yaml.org,2002:null", re.compile(r"^$"))
)


def _check_form(event: Any, path: str, mark: int) -> None:
    """A tag written in the file (``!!str``, ``!!int``, ``!custom``) and a plain number that
    YAML 1.1 and 1.2 read differently are refused, with their line and column."""
    column = int(event.start_mark.column) + 1
    tag = getattr(event, "tag", None)
    if tag not in (None, "!"):
        shown = f"!!{tag.removeprefix(_CORE)}" if tag.startswith(_CORE) else tag
        raise _Refused(
            path, mark, f"a YAML tag ({shown}) is not allowed: write the value itself", column
        )
    if (
        isinstance(event, yaml.ScalarEvent)
        and event.style is None
        and _AMBIGUOUS_NUMBER.match(event.value)
    ):
        raise _Refused(
            path,
            mark,
            f"{event.value} is read as another number by some YAML tools (a leading zero, "
            "0x, 0o, 0b, an underscore or a colon): write a plain whole number such as 10, "
            "or quote it if it is text",
            column,
        )


_PLAIN_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:seq",
    "tag:yaml.org,2002:map",
}
_STR = "tag:yaml.org,2002:str"
_CORE = "tag:yaml.org,2002:"
_MERGE = "tag:yaml.org,2002:merge"
MAX_NUMBER = 30  # characters of a number: far above any count a document needs
# Control characters have no place in a name or a summary (NUL breaks PostgreSQL's text,
# ESC drives terminals); tabs and line breaks are text.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def plain(node: yaml.Node, max_depth: int, depth: int = 0, path: str = "") -> Any:
    """The node as plain Python values, refusing depth and tags a document never needs."""
    if depth > max_depth:
        raise DocumentError([Problem(path, line(node), f"nested more than {max_depth} deep")])
    if node.tag not in _PLAIN_TAGS:
        raise DocumentError([Problem(path, line(node), f"the YAML tag {node.tag} is not allowed")])
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key, value in node.value:
            name = _key(key, path)
            if name in out:
                raise DocumentError([Problem(join(path, name), line(key), "given twice")])
            out[name] = plain(value, max_depth, depth + 1, join(path, name))
        return out
    if isinstance(node, yaml.SequenceNode):
        return [plain(v, max_depth, depth + 1, f"{path}[{n}]") for n, v in enumerate(node.value)]
    return _scalar(node, path)


def _key(key: yaml.Node, path: str) -> str:
    """A mapping's key: plain text, never null, a number, a list or a tag."""
    if key.tag == _MERGE:
        what = "merge keys (<<) are not allowed"
    elif not isinstance(key, yaml.ScalarNode):
        what = "a key must be text, not a list or a mapping"
    elif key.tag not in _PLAIN_TAGS:
        what = f"the YAML tag {key.tag} is not allowed"
    elif key.tag != _STR:
        what = f"a key must be text, not {str(key.value) or 'null'} (quote it)"
    else:
        name = str(key.value)
        if _CONTROL.search(name):
            raise DocumentError([Problem(path, line(key), "a key holds a control character")])
        return name
    raise DocumentError([Problem(path, line(key), what)])


_CONSTRUCTOR = yaml.constructor.SafeConstructor()


def _scalar(node: yaml.Node, path: str) -> Any:
    if node.tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float") and (
        len(str(node.value)) > MAX_NUMBER
    ):
        raise DocumentError(
            [Problem(path, line(node), f"a number is at most {MAX_NUMBER} characters long")]
        )
    value = _CONSTRUCTOR.construct_object(node, deep=True)
    if isinstance(value, str) and _CONTROL.search(value):
        raise DocumentError(
            [Problem(path, line(node), "control characters (NUL, ESC...) are not allowed")]
        )
    return value


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


_PART = re.compile(r"\[(\d+)\]|\.?([^.\[]+)")


def located(
    problems: Sequence[Problem], root: yaml.Node, *, columns: bool = False
) -> list[Problem]:
    """``problems`` found after reading (against the rulebook), each given the line its
    path is at in the document whose node tree is ``root`` (and its column with
    ``columns``)."""
    out = []
    for problem in problems:
        if problem.line is not None or not problem.path:
            out.append(problem)
            continue
        loc: list[Any] = [int(m[1]) if m[1] else m[2] for m in _PART.finditer(problem.path) if m[0]]
        node = _node_of(root, loc)
        column = int(node.start_mark.column) + 1 if columns else None
        out.append(Problem(problem.path, line(node), problem.message, column))
    return out


def _line_of(root: yaml.Node, loc: Sequence[Any]) -> int | None:
    return line(_node_of(root, loc))


def _node_of(root: yaml.Node, loc: Sequence[Any]) -> yaml.Node:
    """The node at ``loc``, or the deepest one found on the way."""
    node: yaml.Node = root
    for part in loc:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            found = [v for k, v in node.value if str(k.value) == part]
            if not found:
                return node
            node = found[0]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return node
            node = node.value[part]
        else:
            break
    return node
