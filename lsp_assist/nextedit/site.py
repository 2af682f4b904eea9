"""Where a token sits in the syntax tree: the facts the rule predictor weighs.

For the user's edit and for each place the old text still occurs, `place_of` answers the
questions the issue's scope rules ask: is it in a string or a comment; what kind of node is
it and in what role (a plain name, the name after `obj.`, a keyword argument's name, the
callee of a call); through which receiver is an attribute reached, and in which class when
that receiver is a method's first parameter (`self.x`); the callee of the call whose
arguments hold it; the function around it; whether it binds the name (a parameter, an
assignment target, a definition's name, an import). Node types come from the shared sets in
`tokens.py` and `languages/syntax.py`, never from a language's name.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from lsp_assist.nextedit.tokens import FUNCTION_TYPES, MEMBER_TYPES, PARAMETER_LIST_TYPES, Syntax

#: Call nodes across the grammars, and the field naming their callee.
CALL_TYPES = frozenset(
    {"call", "call_expression", "method_invocation", "invocation_expression", "new_expression"}
)
#: Argument lists of calls.
ARGUMENT_TYPES = frozenset({"argument_list", "arguments"})
#: Class-like nodes: the scope of `self.x` / `this.x`.
CLASS_TYPES = frozenset(
    {
        "class_definition",
        "class_declaration",
        "class_body",
        "class",
        "impl_item",
        "struct_item",
        "interface_declaration",
    }
)
#: Nodes whose `left` (or `name`) child binds a name: assignments, loops, declarations.
_BINDING_PARENTS = frozenset(
    {
        "assignment",
        "augmented_assignment",
        "for_statement",
        "for_in_clause",
        "variable_declarator",
        "short_var_declaration",
        "let_declaration",
        "as_pattern_target",
        "with_item",
    }
)
#: Import nodes: a name inside one is bound by it.
_IMPORT_TYPES = frozenset(
    {"import_statement", "import_from_statement", "aliased_import", "import_specifier", "import_clause"}
)


@dataclass(frozen=True)
class Place:
    """What the tree says about one span (`literal` None: no tree, or not decidable)."""

    literal: bool | None = None
    kind: str | None = None  # the node type when the span is exactly one named node
    role: str = "plain"  # plain | member | keyword | callee
    receiver: str | None = None  # `obj` in `obj.name` (member role)
    owner: tuple[int, int] | None = None  # the class of `self.x`, when the receiver is `self`
    callee: str | None = None  # the call whose arguments hold the span, by its callee's text
    function: tuple[int, int] | None = None  # the innermost function's span
    binding: bool = False  # the span is a name being bound here
    frame: tuple[str, ...] = ()  # node types of the statement-level nodes around the span, inside out


def _text(syntax: Syntax, node: Node) -> str:
    return syntax.text[syntax.char(node.start_byte) : syntax.char(node.end_byte)]


def _span(syntax: Syntax, node: Node) -> tuple[int, int]:
    return syntax.char(node.start_byte), syntax.char(node.end_byte)


def _enclosing(node: Node | None, types: frozenset[str]) -> Node | None:
    while node is not None and node.type not in types:
        node = node.parent
    return node


def _callee(syntax: Syntax, node: Node | None) -> str | None:
    """The callee text of the nearest call whose argument list holds `node`."""
    while node is not None:
        if node.type in ARGUMENT_TYPES and node.parent is not None and node.parent.type in CALL_TYPES:
            fn = node.parent.child_by_field_name("function") or node.parent.child_by_field_name("name")
            return _text(syntax, fn) if fn is not None else None
        node = node.parent
    return None


def _is_binding(node: Node) -> bool:
    parent = node.parent
    if parent is None:
        return False
    nearest = _enclosing(node, PARAMETER_LIST_TYPES | FUNCTION_TYPES)
    if nearest is not None and nearest.type in PARAMETER_LIST_TYPES:
        # A parameter's name, not a part of its default value or its annotation.
        child, up = node, node.parent
        while up is not None and up != nearest:
            if up.type == "type" or child in (
                up.child_by_field_name("value"),
                up.child_by_field_name("type"),
            ):
                return False
            child, up = up, up.parent
        return True
    if parent.child_by_field_name("name") == node and parent.type != "keyword_argument":
        return True  # a definition's name (function, class, declarator)
    if parent.type in _BINDING_PARENTS and parent.child_by_field_name("left") == node:
        return True
    if parent.type == "as_pattern_target":
        return True  # `except E as e`, `with f() as fh`
    if parent.type in MEMBER_TYPES and parent.parent is not None and node != parent.named_children[0]:
        # `self.x = ...`: the attribute is defined here.
        up = parent.parent
        return up.type in _BINDING_PARENTS and up.child_by_field_name("left") == parent
    if parent.type in ("pattern_list", "tuple_pattern") and parent.parent is not None:
        return parent.parent.type in _BINDING_PARENTS
    return _enclosing(node, _IMPORT_TYPES) is not None


def _owner(syntax: Syntax, node: Node, receiver: Node) -> tuple[int, int] | None:
    """The class of `self.x`: the receiver is the first parameter of its method."""
    function = _enclosing(node, FUNCTION_TYPES)
    params = function.child_by_field_name("parameters") if function is not None else None
    first = params.named_children[0] if params is not None and params.named_child_count else None
    if first is None or _text(syntax, first) != _text(syntax, receiver):
        return None
    cls = _enclosing(function, CLASS_TYPES)
    return _span(syntax, cls) if cls is not None else None


def _frame(node: Node | None, start_byte: int, end_byte: int) -> tuple[str, ...]:
    """The types of the two nodes above the span (above its own node when it is one):
    `self.x: int = 0` and `def f(x: int)` differ here (assignment vs typed parameter)."""
    while node is not None and node.start_byte == start_byte and node.end_byte == end_byte:
        node = node.parent
    out: list[str] = []
    while node is not None and len(out) < 2:
        out.append(node.type)
        node = node.parent
    return tuple(out)


def place_of(syntax: Syntax | None, start: int, end: int) -> Place:
    """The tree's facts about text[start:end] (an empty `Place` without a tree)."""
    if syntax is None:
        return Place()
    node = syntax.node(start, end)
    kind = syntax.exact_kind(start, end)
    role = syntax.role(node) if kind is not None else "plain"
    receiver = owner = None
    if node is not None and kind is not None:
        parent = node.parent
        if role == "member" and parent is not None:
            obj = parent.child_by_field_name("object") or parent.child_by_field_name("operand")
            if obj is not None:
                receiver, owner = _text(syntax, obj), _owner(syntax, node, obj)
        elif (
            parent is not None
            and parent.type in CALL_TYPES
            and parent.child_by_field_name("function") == node
        ):
            role = "callee"
    # A function's own name lives in the scope around the function, not in its body.
    parent = node.parent if node is not None else None
    named = (
        parent is not None and parent.type in FUNCTION_TYPES and parent.child_by_field_name("name") == node
    )
    function = _enclosing(parent.parent if named and parent is not None else node, FUNCTION_TYPES)
    return Place(
        literal=syntax.in_literal(node),
        kind=kind,
        role=role,
        receiver=receiver,
        owner=owner,
        callee=_callee(syntax, node),
        function=_span(syntax, function) if function is not None else None,
        binding=node is not None and kind is not None and _is_binding(node),
        frame=_frame(node, syntax.byte(start), syntax.byte(end)),
    )
