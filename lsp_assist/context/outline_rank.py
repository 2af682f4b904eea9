"""Another file's outline entries for the code at the cursor: scored, picked, rendered.

Per request, cheap, no parsing: the outlines are ready (`structure/outline.py`). Each
entry gets a score from the score table (`context/scores.py`, `rank_entries`); the ones
chosen are rendered as whole signature lines or as names on one comment line per
container (`OutlinePick`), in file order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lsp_assist.context.scores import SCORES, ScoreTable
from lsp_assist.languages import line_comment
from lsp_assist.structure.outline import RULES, FileOutline, OutlineEntry, tail_words

INDENT = "    "


@dataclass(frozen=True)
class Relevance:
    """What the code at the cursor says about which names it needs."""

    used: frozenset[str] = frozenset()  # names the enclosing function (or nearby code) uses
    imported: frozenset[str] = frozenset()  # names this file imports by name from that file
    mentioned: frozenset[str] = frozenset()  # every name the current file already spells
    near: frozenset[str] = frozenset()  # names of the rows around the cursor (not its own row)
    module_import: bool = False  # this file imports that file as a module (`from . import m`)
    module_used: bool = False  # ... and the enclosing function uses that module's name
    families: frozenset[str] = frozenset()  # `family_of` the names this file spells
    typed: frozenset[str] = frozenset()  # types of the names the code uses (`used_types`)
    near_words: frozenset[str] = frozenset()  # lower-case words of the names near the cursor


def rank_entries(outline: FileOutline, rel: Relevance, table: ScoreTable = SCORES) -> list[float]:
    """A score per entry (0 = not worth its characters), by `table`.

    Names the current file never spells are what a next line may need and nothing local
    shows; among them, members of the classes the code at the cursor uses come first,
    then of the classes this file imports or spells, then top-level names. A name the
    file imports or the enclosing function uses is worth its signature (the arguments).
    A name the file spells elsewhere is already visible to the model, or close to it.
    """
    entries = outline.entries
    scores = [0.0] * len(entries)
    hidden = outline.hidden()
    families = outline.families() if rel.families else ()
    parents = outline.parents()
    groups = _Groups(outline, rel, table)
    grammar = RULES.get(outline.language)
    mangled = grammar is not None and grammar.name_mangling
    for i, e in enumerate(entries):
        if i in hidden:
            continue  # `private`: another file cannot use it
        s = _standing(e, parents[i], rel, table, groups)
        s = _by_spelling(e.name, parents[i], rel, s, (table, mangled))
        if families and s > table.mentioned and families[i] in rel.families:
            s *= table.family
        if rel.near_words and s > table.mentioned:
            tail = tail_words(e.name)
            if tail and 2 * len(tail & rel.near_words) >= len(tail):
                s *= table.near_words
        scores[i] = s
    return scores


class _Groups:
    """Per declaration group: what the code at the cursor says of it (computed once)."""

    def __init__(self, outline: FileOutline, rel: Relevance, table: ScoreTable) -> None:
        self.names = outline.group_names()
        self.types = outline.group_types() if self.names else {}
        self.rel = rel
        self.table = table
        self.scores: dict[int, float] = {}

    def score(self, group: int) -> float:
        g = self.scores.get(group)
        if g is None:
            rel, table = self.rel, self.table
            g = _owner_score(self.names[group], rel, table, 0.0)
            if g < table.used_owner and (self.types[group] & rel.used or self.types[group] & rel.typed):
                g = table.used_owner  # a value of the type the code holds or spells
            self.scores[group] = g
        return g


def _standing(
    e: OutlineEntry, parent: str | None, rel: Relevance, table: ScoreTable, groups: _Groups
) -> float:
    """The entry's score by its own name, else by its container's standing."""
    name = e.name
    if name in rel.imported:
        return table.imported
    if name in rel.used:
        return table.used
    if name in rel.mentioned:
        return table.mentioned
    if parent is None:  # `module.name` is how a module import is used: its top level
        s = table.module_used if rel.module_used else table.module if rel.module_import else table.top_level
        if e.group >= 0:  # a value of an enumeration the code at the cursor uses
            s = max(s, groups.score(e.group))
        return s
    return _owner_score(frozenset((parent,)), rel, table, table.member, typed=True)


def _owner_score(
    owner: frozenset[str], rel: Relevance, table: ScoreTable, otherwise: float, typed: bool = False
) -> float:
    """A member's score by its container's names (a class's; a group's values): the one
    ladder for class members and declaration groups (`typed`: a type the code holds counts
    as used)."""
    if owner & rel.near:
        return table.near_owner
    if owner & rel.used or (typed and owner & rel.typed):
        return table.used_owner
    if owner & rel.imported:
        return table.imported_owner
    if owner & rel.mentioned:
        return table.mentioned_owner
    return otherwise


def _by_spelling(
    name: str, parent: str | None, rel: Relevance, s: float, rules: tuple[ScoreTable, bool]
) -> float:
    """`s` after what the name's spelling says (`rules`: the table, and whether the grammar
    mangles `__x` members)."""
    table, mangled = rules
    if name.startswith("__") and name.endswith("__"):
        if name != "__init__" or parent not in rel.used | rel.imported | rel.near:
            return 0.0  # called or read by syntax, not by name (`__init__`: for its arguments)
        return s
    if name.startswith("__") and parent is not None and mangled:
        return 0.0  # `self.__x` is `_Owner__x` outside its class: no other file spells `__x`
    if name.startswith("_"):
        return s * table.private  # private helpers: used, but less often than the public names
    return s


# The names line under a container shown whole, and at top level: `# a,b`, unlabelled (a
# label such as "also:" costs its characters on every line and tells the model nothing).
ALSO = " "
# Between the names of one line: no space (`# Task: get_coro,get_name`). The same names
# in 7% fewer characters (a token either way: "," then the name), so more of them fit.
NAMES_SEP = ","


def visible_here(outline: FileOutline, i: int, rel: Relevance) -> bool:
    """A name the current file already spells, or one called by syntax (`__init__`): as a
    bare name it adds nothing; only its signature (the arguments, the type) is worth
    characters."""
    name = outline.entries[i].name
    if name.startswith("__") and name.endswith("__"):
        return True
    return name in rel.mentioned or name in rel.used or name in rel.imported


def entry_cost(outline: FileOutline, i: int) -> int:
    e = outline.entries[i]
    return len(INDENT) * e.depth + len(e.text) + 1


class OutlinePick:
    """The entries of one outline chosen so far: some as their whole line (a signature),
    the rest as names on one line per container, `# Owner: a,b,c` (or `# a,b`
    under a container shown whole, and at top level). Names are what a next line needs
    most; a signature costs five names, a class header for two member names costs more
    than the names. Costs are exact: `text()` has `cost` characters."""

    def __init__(self, outline: FileOutline) -> None:
        self.outline = outline
        self.full: set[int] = set()
        self.groups: dict[int, list[int]] = {}  # owner -> its members picked as names
        self._short: set[int] = set()
        self.cost = 0
        self._comment = line_comment(outline.language)

    @property
    def short(self) -> set[int]:
        return set(self._short)

    def _anchor(self, owner: int, full: set[int]) -> tuple[int, str]:
        """Depth and label of the names line of `owner`'s members ("" = an unlabelled `# a,b` line)."""
        entries = self.outline.entries
        if owner < 0:
            return 0, ""
        if owner in full:
            return entries[owner].depth + 1, ""
        names: list[str] = []
        j = owner
        while j >= 0 and j not in full:
            names.append(entries[j].name)
            j = entries[j].owner
        return (entries[j].depth + 1 if j >= 0 else 0), ".".join(reversed(names))

    def _prefix_len(self, owner: int, full: set[int]) -> int:
        depth, label = self._anchor(owner, full)
        head = len(self._comment) + 1 + len(label) + 2 if label else len(self._comment) + len(ALSO)
        return len(INDENT) * depth + head

    def _total(self, full: set[int], groups: dict[int, list[int]]) -> int:
        entries = self.outline.entries
        lines = len(full) + len(groups)
        if not lines:
            return 0
        chars = sum(len(INDENT) * entries[k].depth + len(entries[k].text) for k in full)
        for owner, group in groups.items():
            chars += self._prefix_len(owner, full) + sum(len(entries[k].name) for k in group)
            chars += len(NAMES_SEP) * (len(group) - 1)
        return chars + lines - 1

    def _promoted(self, i: int) -> tuple[set[int], dict[int, list[int]]]:
        """`full` and `groups` once entry `i` and its containers are shown whole."""
        entries = self.outline.entries
        full = set(self.full)
        groups = {o: list(g) for o, g in self.groups.items()}
        j = i
        while j >= 0 and j not in full:
            full.add(j)
            group = groups.get(entries[j].owner)
            if group is not None and j in group:
                group.remove(j)
                if not group:
                    del groups[entries[j].owner]
            j = entries[j].owner
        return full, groups

    def cost_full(self, i: int) -> int:
        if i in self.full:
            return 0
        full, groups = self._promoted(i)
        return self._total(full, groups) - self.cost

    def cost_short(self, i: int) -> int:
        if i in self.full or i in self._short:
            return 0
        e = self.outline.entries[i]
        if e.owner in self.groups:
            return len(e.name) + len(NAMES_SEP)  # ",name"
        return self._prefix_len(e.owner, self.full) + len(e.name) + (1 if self.cost else 0)

    def add_full(self, i: int) -> None:
        if i in self.full:
            return
        self.full, self.groups = self._promoted(i)
        self._short = {k for g in self.groups.values() for k in g}
        self.cost = self._total(self.full, self.groups)

    def add_short(self, i: int) -> None:
        cost = self.cost_short(i)
        if cost == 0:
            return
        self.cost += cost
        self.groups.setdefault(self.outline.entries[i].owner, []).append(i)
        self._short.add(i)

    def __len__(self) -> int:
        return len(self.full) + len(self._short)

    def text(self) -> str:
        entries = self.outline.entries
        full = self.full
        # Under each entry shown whole (or the top level, -1): its members shown whole and
        # the names lines of containers not shown whole, in file order; its unlabelled names line last.
        kids: dict[int, list[tuple[int, bool]]] = {}
        for k in full:
            kids.setdefault(entries[k].owner, []).append((k, False))
        for owner in self.groups:
            if owner >= 0 and owner not in full:
                j = owner
                while j >= 0 and j not in full:
                    j = entries[j].owner
                kids.setdefault(j, []).append((owner, True))
        lines: list[str] = []

        def names(owner: int) -> str:
            return NAMES_SEP.join(entries[k].name for k in sorted(self.groups[owner]))

        def emit(anchor: int) -> None:
            for k, is_group in sorted(kids.get(anchor, ())):
                if is_group:
                    depth, label = self._anchor(k, full)
                    lines.append(f"{INDENT * depth}{self._comment} {label}: {names(k)}")
                else:
                    lines.append(INDENT * entries[k].depth + entries[k].text)
                    emit(k)
            if anchor in self.groups:
                depth = entries[anchor].depth + 1 if anchor >= 0 else 0
                lines.append(INDENT * depth + self._comment + ALSO + names(anchor))

        emit(-1)
        return "\n".join(lines)


def render(outline: FileOutline, picked: Iterable[int]) -> str:
    """The picked entries (and their containers' headers) as whole lines, in file order."""
    pick = OutlinePick(outline)
    for i in picked:
        pick.add_full(i)
    return pick.text()
