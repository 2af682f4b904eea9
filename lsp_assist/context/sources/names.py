"""The file's names line (`# in this file: a,b,c`) and the reading of the names a file spells.

The line carries the names the file spells on the most code rows that nothing else in the
prompt shows, most used first: ~8 characters a name, where the far prefix and suffix bring
about one new name per 30-40 characters. The same read gives the cross-file step the set of
names the file already spells (what outlines leave out) and their name families.

The read happens off the request: at didOpen, and again a slice of rows per edit once the
set is stale (`FileNames.advance`, the didChange hook); a request only reads what is there
(the first read of a file never opened goes on over its first requests).
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field

from lsp_assist.context.crossfile import IDENT, names_that_fit
from lsp_assist.context.lexicon import Lexicon
from lsp_assist.documents.store import Document
from lsp_assist.structure.outline import families_of, family_of

MENTION_REACH = 20_000  # rows of the current file read for "names this file spells"
MENTION_STALE_EDITS = 60  # edits before that set is read again
MENTION_STALE_LINES = 10
MENTION_DOCS = 4
MENTION_SLICE = 512  # rows read per request (a first read) or per edit (a re-read)
NAMES_SHARE = 0.08  # of the budget: room for a file's names without starving the window
NAMES_MIN_BUDGET = 1000  # below this the contiguous window matters more
NAMES_GIVE_BACK = 40  # a line this much shorter than its share gives the rest back to the file
NAMES_HEAD = "in this file: "
NAMES_MIN_ROWS = 2  # a name spelled on one row only (a PEM block's words) is never listed
_COMMENT_START = ("#", "//", "/*", "*", "--", ";")


@dataclass
class Mentions:
    """The names one document spells, read in slices of rows until whole (`names`)."""

    doc: Document
    version: int
    lines: int
    next_row: int = 0
    partial: set[str] = field(default_factory=set)
    names: frozenset[str] | None = None
    # The name families of `partial`, read with each slice (see `_read_slice`), and of `names`.
    partial_families: set[str] = field(default_factory=set)
    families: frozenset[str] = frozenset()
    counts: Counter[str] = field(default_factory=Counter)  # code rows (not comments) per name
    ranked: tuple[str, ...] = ()  # by those counts, most first (ties by name)
    # A re-read of a stale set, a slice per edit (`advance`): until it is whole the
    # previous `names` and `ranked` stand; it started at this version and line count.
    rereading: bool = False
    read_version: int = 0
    read_lines: int = 0


class FileNames:
    """Names each recent document spells, by document object (a prefetch's one-off
    document does not evict the open one's)."""

    def __init__(self, lexicon: Lexicon) -> None:
        self.lexicon = lexicon
        self.mentions: OrderedDict[int, Mentions] = OrderedDict()

    def ready(self, doc: Document) -> bool:
        m = self.mentions.get(id(doc))
        return m is not None and m.doc is doc and m.names is not None

    def none_listed(self, doc: Document) -> bool:
        """Whether the file's names were read and none is spelled on enough code rows to be
        listed: no names line (one not read yet is expected to have one, so the first and
        the later requests of a file lay out its rows alike)."""
        return self.ready(doc) and not self.mentions[id(doc)].ranked

    def ranked(self, doc: Document, deadline: float) -> tuple[str, ...] | None:
        """The names the file spells on code rows, most rows first (the `mentioned` read)."""
        if self.mentioned(doc, deadline) is None:
            return None
        return self.mentions[id(doc)].ranked

    def families(self, doc: Document, mentioned: frozenset[str]) -> frozenset[str]:
        """The name families the file spells, read with its names a slice at a time (at
        didOpen and in the didChange hook), never all at once by a request: a 10,000-line
        file spells ~5,000 names, ~7 ms of `family_of` when one request did them all."""
        m = self.mentions.get(id(doc))
        if m is not None and m.doc is doc and m.names is mentioned:
            return m.families
        return families_of(mentioned)

    def mentioned(self, doc: Document, deadline: float) -> frozenset[str] | None:
        """Every name the file spells. Reading a 10,000-line file costs milliseconds, so
        the set is kept for the same document object until it is `MENTION_STALE_EDITS`
        edits or `MENTION_STALE_LINES` lines away: names typed since are not in it, which
        also keeps the cross-file text stable while a line is being typed. A stale set is
        read again a slice per edit (`advance`, the didChange hook), never by a request:
        the old one stands until the new one is whole. The first read of a big file (one
        never opened) stops at the deadline and goes on at the next request (None until
        it is whole)."""
        m = self.mentions.get(id(doc))
        if m is not None and m.doc is not doc:
            m = None  # an id reused by a new object
        if m is not None and m.names is not None:
            self.mentions.move_to_end(id(doc))
            if not m.rereading and _stale(m, doc):
                _start_reread(m, doc)
            return m.names
        if m is None:
            m = Mentions(doc, doc.version, doc.line_count)
        self.mentions[id(doc)] = m
        self.mentions.move_to_end(id(doc))
        while len(self.mentions) > MENTION_DOCS:
            self.mentions.popitem(last=False)
        while not self._read_slice(m, doc):
            if time.perf_counter() > deadline:
                return None
        return m.names

    def advance(self, doc: Document) -> None:
        """On an edit: a stale names set starts or goes on being read again, one slice."""
        m = self.mentions.get(id(doc))
        if m is None or m.doc is not doc or m.names is None:
            return
        if not m.rereading:
            if not _stale(m, doc):
                return
            _start_reread(m, doc)
        self._read_slice(m, doc)

    def _read_slice(self, m: Mentions, doc: Document) -> bool:
        """Read the next `MENTION_SLICE` rows into `m`; True once the read is whole (then
        its names and ranking replace the previous ones)."""
        idents = self.lexicon.line
        end = min(doc.line_count, MENTION_REACH)
        stop = min(end, m.next_row + MENTION_SLICE)
        counts = m.counts
        partial, partial_families = m.partial, m.partial_families
        for text in doc.lines(m.next_row, stop):
            got = idents(text)
            if not got <= partial:
                partial_families.update(family_of(n) for n in got - partial)
                partial |= got
            if got and not text.lstrip().startswith(_COMMENT_START):
                quoted = "'" in text or '"' in text or "`" in text
                counts.update(self.lexicon.code(text) if quoted else got)
        m.next_row = stop
        if stop < end:
            return False
        _finish_read(m, doc)
        return True


def _stale(m: Mentions, doc: Document) -> bool:
    return not (
        0 <= doc.version - m.version <= MENTION_STALE_EDITS
        and abs(doc.line_count - m.lines) <= MENTION_STALE_LINES
    )


def _start_reread(m: Mentions, doc: Document) -> None:
    m.rereading, m.next_row, m.partial, m.counts = True, 0, set(), Counter()
    m.partial_families = set()
    m.read_version, m.read_lines = doc.version, doc.line_count


def _finish_read(m: Mentions, doc: Document) -> None:
    """A whole read: its names, families and ranking replace the previous ones."""
    m.names = frozenset(m.partial)
    m.families = frozenset(f for f in m.partial_families if f)
    m.partial, m.partial_families = set(), set()
    kept = [n for n, c in m.counts.items() if c >= NAMES_MIN_ROWS]
    m.ranked = tuple(sorted(kept, key=lambda n: (-m.counts[n], n)))
    m.counts = Counter()
    if m.rereading:  # staleness counts from where the read started
        m.version, m.lines, m.rereading = m.read_version, m.read_lines, False
    else:
        m.version, m.lines = doc.version, doc.line_count


class NamesLine:
    """The names line source: the file's most used names nothing else in the prompt shows."""

    name = "names"

    def __init__(self, lexicon: Lexicon) -> None:
        self.lexicon = lexicon

    def text(
        self,
        ranked: tuple[str, ...],
        shown_rows: list[frozenset[str]],
        shown_text: str,
        head: str,
        limit: int,
    ) -> str:
        """`head` and the most used names of `ranked` that neither the kept rows (the names
        of each: `shown_rows`) nor `shown_text` spell, within `limit` characters (with its
        newline); "" when none."""
        cost = len(head) + 1
        if limit <= cost:
            return ""
        shown = set(IDENT.findall(shown_text))
        shown.update(*shown_rows)
        out = names_that_fit((n for n in ranked if n not in shown), limit - cost, ",")
        return head + ",".join(out) + "\n" if out else ""
