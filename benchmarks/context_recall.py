"""Model-free quality of the context: identifier recall of a deleted line, in-file and cross-file.

On code no one here wrote, fetched by this script at pinned versions and cached in the
gitignored `benchmarks/.corpora/` (a corpus it cannot fetch is skipped with the reason):
packages of the Python standard library, `rich` from PyPI, the JDK's own
`java.util.concurrent` (an installed JDK's `src.zip`), Go standard-library packages
(Debian's `golang-1.19-src`), the TypeScript sources of `rxjs` and the JavaScript of
`express` and `mocha`, LevelDB's C++ (in `leveldown`'s `deps/`) and tree-sitter's C
runtime (in `tree-sitter`'s `vendor/`) from npm, and the Rust crate `clap` (Debian's
`librust-clap-dev`). For seeded positions: blank out one line (keeping its indentation,
the cursor after it), build the context at a fixed character budget, and measure the
fraction of the deleted line's identifiers that appear anywhere in what would be sent.

A package is a directory (Python, Java, Go: the files of a Go package see each other
without imports) or a whole source tree (an npm package's `src/` or `lib/`, a C/C++
library, a crate's `src/`: their files import each other across directories).

Two strata per corpus:

- **random**: any code line (not docstrings or comments). In-file recall: the engine
  without other files (today's local context) and with the package's other files both
  open as tabs and in the workspace index.
- **cross-file**: lines that use a name defined in another file of the same package and
  nowhere else in the current file (in its code, not inside a string or comment, not on
  an import line; each language's builtins, prelude and keywords left out: `LANGS`).
  Scored on those names (cross-file recall) with the defining file (a) open as a tab
  (plus two other sibling files, no index) and (b) only in the workspace index (a real
  `WorkspaceIndex` of the package, no tabs).

Each row is printed next to the same-size prefix-only and 75/25 windows and the
whole-package oracle, and a summary line per corpus ends the run. Each cross-file name
that missed the prompt is counted by why: its defining file was not chosen, chosen but
not ranked before the deadline, chosen with nothing of it kept, or kept with that name
left out (the budget or the ranking). Build
times are for a document whose tree is already up to date (the typing path: the server
parses incrementally on didChange). `--then REV` also builds the random lines' prompts
with the engine of an older commit (benchmarks/recall_then.py), local only and with the
same 3 tabs: the issue's "in-file recall not lower than today" in one run (today = 09c8c15,
the tree the cross-file issue was filed against).

    .venv/bin/python -m benchmarks.context_recall [--positions 150] [--budget 4000] [--then REV]
        [--corpus stdlib --corpus pypi:rich==13.9.4 --corpus jdk:java/util/concurrent
         --corpus go --corpus npm:rxjs@7.8.1 --corpus npm:express@4.21.2
         --corpus npm:mocha@10.8.2 --corpus npm:leveldown@6.1.1
         --corpus npm:tree-sitter@0.21.1 --corpus crate:librust-clap-dev=4.0.32-1]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import percentile
from benchmarks.recall_then import ThenEngine
from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.crossfile import identifiers
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor, PromptContext
from lsp_assist.languages import index_language, registry
from lsp_assist.structure.outline import outline_from_text
from lsp_assist.structure.symbols import SymbolIndex, parse_text
from lsp_assist.workspace.index import WorkspaceIndex, build_symbol_index

STDLIB_PACKAGES = (
    "json",
    "email",
    "http",
    "asyncio",
    "logging",
    "concurrent/futures",
    "importlib",
    "xml/etree",
    "urllib",
    "unittest",
    "multiprocessing",
    "sqlite3",
    "tomllib",
    "zoneinfo",
    "wsgiref",
    "html",
    "dbm",
    "curses",
)
CORPUS_DIR = Path(__file__).resolve().parent / ".corpora"  # gitignored
# Names every Python file can use without another file (builtins and the methods of
# builtin types: `", ".join` is not a cross-file need even if a sibling defines `join`).
BUILTIN_NAMES = frozenset(
    n
    for obj in (__builtins__, str, bytes, list, dict, set, tuple, int, float, object, BaseException)
    for n in (obj.keys() if isinstance(obj, dict) else dir(obj))
)


def _read_dir(root: str, ext: str = ".py") -> dict[str, str]:
    files: dict[str, str] = {}
    for name in sorted(os.listdir(root)):
        if name.endswith(ext):
            path = os.path.join(root, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                files[path] = f.read()
    return files


def load_stdlib() -> dict[str, dict[str, str]]:
    lib = sysconfig.get_paths()["stdlib"]
    out: dict[str, dict[str, str]] = {}
    for pkg in STDLIB_PACKAGES:
        root = os.path.join(lib, pkg)
        if os.path.isdir(root):
            files = _read_dir(root)
            if len(files) >= 2:
                out[pkg] = files
    return out


def load_pypi(spec: str) -> dict[str, dict[str, str]]:
    """Download one wheel with pip (no dependencies), unpack it here, one package per directory."""
    target = CORPUS_DIR / spec.replace("==", "-")
    if not target.is_dir():
        wheels = CORPUS_DIR / "wheels"
        wheels.mkdir(parents=True, exist_ok=True)
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q"]
        _fetch([*pip, "-d", str(wheels), spec], f"PyPI package {spec}", wheels)
        name = spec.split("==")[0].replace("-", "_").lower()
        wheel = next(p for p in sorted(wheels.glob("*.whl")) if p.name.lower().startswith(name))
        with zipfile.ZipFile(wheel) as z:
            z.extractall(target)
    out: dict[str, dict[str, str]] = {}
    for dirpath, dirnames, _ in os.walk(target):
        dirnames[:] = sorted(d for d in dirnames if not d.endswith(".dist-info") and d != "__pycache__")
        files = _read_dir(dirpath)
        if len(files) >= 2:
            out[os.path.relpath(dirpath, target)] = files
    return out


def load_jdk(package: str) -> dict[str, dict[str, str]]:
    """One package of the JDK's own sources (`lib/src.zip` of an installed JDK)."""
    zips = sorted(Path("/usr/lib/jvm").glob("*/lib/src.zip"))
    target = CORPUS_DIR / ("jdk-" + package.replace("/", "."))
    if not target.is_dir():
        if not zips:
            raise Unavailable("no JDK src.zip under /usr/lib/jvm (install a JDK with sources)")
        prefix = f"java.base/{package}/"
        with zipfile.ZipFile(zips[0]) as z:
            for name in z.namelist():
                if name.startswith(prefix) and name.endswith(".java") and "/" not in name[len(prefix) :]:
                    z.extract(name, target)
    root = target / "java.base" / package
    return {package: _read_dir(str(root), ".java")}


class Unavailable(Exception):
    """A corpus this machine cannot fetch or find (the run skips it and says why)."""


def _fetch(cmd: list[str], what: str, cwd: Path) -> None:
    try:
        subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        err = getattr(exc, "stderr", None) or str(exc)
        raise Unavailable(f"{what}: {' '.join(cmd)} failed: {err.strip().splitlines()[-1:]}") from exc


def _cached(target: Path, fill: Callable[[Path], None]) -> Path:
    """`target`, filled once by `fill(tmp)` into a temporary folder renamed at the end
    (an interrupted fetch leaves no half corpus behind)."""
    if not target.is_dir():
        CORPUS_DIR.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=CORPUS_DIR, prefix=".tmp-") as tmp:
            fill(Path(tmp))
            os.replace(Path(tmp) / "out", target)
    return target


def _deb(spec: str, tmp: Path) -> Path:
    """`PACKAGE=VERSION` of Debian's archive (pinned), downloaded and unpacked under `tmp`."""
    pkg, _, version = spec.partition("=")
    if not version:
        raise SystemExit(f"pin the Debian package's version: {spec!r} (PACKAGE=VERSION)")
    _fetch(["apt-get", "download", "-q", f"{pkg}={version}"], f"Debian package {spec}", tmp)
    deb = next(tmp.glob("*.deb"))
    _fetch(["dpkg-deb", "-x", str(deb), "root"], f"unpacking {deb.name}", tmp)
    return tmp / "root"


# Go packages of the standard library's sources (Debian's golang-1.19-src, pinned):
# files of one directory are one package and see each other's names without imports.
GO_DEB = "golang-1.19-src=1.19.8-2"
GO_PACKAGES = (
    "net/http",
    "go/ast",
    "go/parser",
    "go/printer",
    "go/build",
    "text/template",
    "text/template/parse",
    "encoding/json",
    "archive/tar",
    "archive/zip",
    "compress/flate",
    "image/png",
    "database/sql",
    "crypto/tls",
)


def load_go(spec: str = GO_DEB) -> dict[str, dict[str, str]]:
    """The Go packages above, from Debian's Go source package (no `_test.go` files)."""
    target = CORPUS_DIR / ("deb-" + spec.replace("=", "-"))

    def fill(tmp: Path) -> None:
        root = _deb(spec, tmp)
        src = next(root.glob("usr/share/go-*/src"))
        for pkg in GO_PACKAGES:
            (tmp / "out" / pkg).mkdir(parents=True)
            for f in sorted((src / pkg).glob("*.go")):
                if not f.name.endswith("_test.go"):
                    shutil.copy(f, tmp / "out" / pkg / f.name)

    _cached(target, fill)
    return {pkg: _read_dir(str(target / pkg), ".go") for pkg in GO_PACKAGES if (target / pkg).is_dir()}


def _tree(root: Path, ext: str | tuple[str, ...], skip: Callable[[str], bool]) -> dict[str, str]:
    """Every `ext` file under `root` (sorted, `skip`ped names left out) as one package."""
    files: dict[str, str] = {}
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not skip(d))
        for name in sorted(names):
            if name.endswith(ext) and not skip(name):
                with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as f:
                    files[os.path.join(dirpath, name)] = f.read()
    return files


def load_crate(spec: str) -> dict[str, dict[str, str]]:
    """A Rust crate's `src/` from Debian's `librust-*-dev` package (`PACKAGE=VERSION`).

    One crate is one package: its modules reach each other through `crate::`/`super::`
    paths, across directories (generated tables and doc-only `_` modules left out)."""
    target = CORPUS_DIR / ("deb-" + spec.replace("=", "-"))

    def fill(tmp: Path) -> None:
        root = _deb(spec, tmp)
        src = next(root.glob("usr/share/cargo/registry/*/src"))
        shutil.copytree(src, tmp / "out" / "src")

    _cached(target, fill)
    name = spec.split("=")[0].removeprefix("librust-").removesuffix("-dev")
    skip = re.compile(r"^(_|unicode_tables$|tests?$|benches$)").search
    return {name: _tree(target / "src", ".rs", lambda n: bool(skip(n)))}


def load_npm(spec: str) -> dict[str, dict[str, str]]:
    """An npm package (`NAME@VERSION`) that ships its sources: TypeScript in `src/` (rxjs),
    else JavaScript in `lib/` (express).

    The whole tree is one package: its files import each other across directories
    (`../Observable`, `./router`), so that is where a file's cross-file names are defined."""
    target = CORPUS_DIR / ("npm-" + spec.replace("@", "-").replace("/", "-"))

    def fill(tmp: Path) -> None:
        _fetch(["npm", "pack", "--silent", spec], f"npm package {spec}", tmp)
        tgz = next(tmp.glob("*.tgz"))
        with tarfile.open(tgz) as t:
            members = [m for m in t.getmembers() if m.isfile() and m.name.startswith(NPM_SOURCES)]
            t.extractall(tmp, members=members, filter="data")
        os.replace(tmp / "package", tmp / "out")

    _cached(target, fill)
    skip = re.compile(r"(\.d\.ts|\.(spec|test)\.[jt]s)$|^(__tests__|test)$").search
    for folder, ext in (("src", ".ts"), ("lib", ".js")):
        files = _tree(target / folder, ext, lambda n: bool(skip(n)))
        if len(files) >= 2:
            return {spec: files}
    # A native addon's C or C++ library, its sources and headers as one tree (leveldown:
    # LevelDB in deps/; tree-sitter: its C runtime in vendor/; no tests, generated tables).
    native_skip = re.compile(r"(_test|_bench)\.cc$|^(issues|win|benchmarks|doc|unicode|wasm)$").search
    roots = [*sorted((target / "deps").glob("*/*-[0-9]*")), *sorted((target / "vendor").glob("*/lib"))]
    for root in roots:
        exts = (".cc", ".h") if next(root.rglob("*.cc"), None) else (".c", ".h")  # one language
        files = _tree(root, exts, lambda n: bool(native_skip(n)))
        if len(files) >= 2:
            return {f"{spec}:{root.relative_to(target)}": files}
    raise Unavailable(f"npm package {spec} ships no .ts in src/, .js in lib/ nor C/C++ in deps/, vendor/")


NPM_SOURCES = ("package/src/", "package/lib/", "package/deps/", "package/vendor/")


LANG_OF_EXT = {
    ".py": "python",
    ".java": "java",
    ".go": "go",
    ".ts": "typescript",
    ".js": "javascript",
    ".rs": "rust",
    ".cc": "cpp",
    ".c": "c",
}  # `.h` takes the language of the sources it comes with
IMPORT_PREFIXES = ("import ", "from ", "package ")
# java.lang is visible everywhere: its common names are not cross-file needs either.
JAVA_LANG = frozenset(
    """String Object Integer Long Boolean Character Math System Thread Runnable Override
    Exception RuntimeException IllegalArgumentException IllegalStateException
    NullPointerException UnsupportedOperationException Class Iterable Comparable
    equals hashCode toString getClass length charAt valueOf compareTo clone wait notify
    notifyAll size get set add put remove contains isEmpty iterator next hasNext""".split()
)
# Go's universe block (predeclared types, constants, functions; `Error` of `error`) and keywords.
GO_UNIVERSE = frozenset(
    """bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune
    string uint uint8 uint16 uint32 uint64 uintptr any comparable true false iota nil append
    cap clear close complex copy delete imag len make max min new panic print println real
    recover Error break case chan const continue default defer else fallthrough for func go
    goto if import interface map package range return select struct switch type var""".split()
)
# TypeScript: keywords, the ES/TS globals and utility types, and the methods of the builtin
# types (Array, String, Object, Promise, Map, Set: `xs.map(f)` is not rxjs's `map`).
TS_GLOBALS = frozenset(
    """abstract as async await break case catch class const continue debugger declare default
    delete do else enum export extends false finally for from function if implements import in
    infer instanceof interface is keyof let namespace never new null of override private
    protected public readonly return satisfies static super switch this throw true try type
    typeof undefined unique unknown var void while with yield any bigint boolean number object
    string symbol Array ArrayLike Boolean Date Error TypeError RangeError Function JSON Map Math
    Number Object Promise PromiseLike Readonly ReadonlyArray Record Partial Required Pick Omit
    Exclude Extract NonNullable ReturnType Parameters InstanceType Set String Symbol WeakMap
    WeakSet Iterable Iterator AsyncIterable AsyncIterator IterableIterator RegExp BigInt
    globalThis console setTimeout clearTimeout setInterval clearInterval queueMicrotask
    parseInt parseFloat isNaN isFinite NaN Infinity arguments length push pop shift unshift
    slice splice indexOf lastIndexOf includes forEach map filter reduce reduceRight concat join
    some every find findIndex sort reverse fill flat flatMap keys values entries has get set
    delete clear size add then catch finally call apply bind toString valueOf hasOwnProperty
    prototype constructor message stack split replace trim substring startsWith endsWith
    toLowerCase toUpperCase charAt charCodeAt padStart repeat match test exec log warn now
    floor ceil round abs max min random isArray from assign freeze create defineProperty
    getPrototypeOf stringify parse resolve reject all race iterator asyncIterator""".split()
)
# JavaScript (CommonJS/Node): the same, less TypeScript's types, plus Node's module globals.
JS_GLOBALS = TS_GLOBALS | frozenset(
    """require module exports __dirname __filename process Buffer setImmediate window document
    navigator on once emit off removeListener write end pipe""".split()
)
# C and C++: keywords, the C and C++ standard library names every file includes, and the
# members of std's containers and strings (`s.size()` is not a sibling's `size`).
CPP_STD = frozenset(
    """alignas auto bool break case catch char class const constexpr const_cast continue
    default delete do double dynamic_cast else enum explicit extern false float for friend
    goto if inline int long mutable namespace new noexcept nullptr operator private protected
    public register reinterpret_cast return short signed sizeof static static_assert
    static_cast struct switch template this throw true try typedef typename union unsigned
    using virtual void volatile while override final NULL std string vector map set
    unordered_map unique_ptr shared_ptr make_shared make_unique pair size_t ssize_t ptrdiff_t
    uintptr_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t memcpy
    memcmp memmove memset strlen strcmp strncmp malloc free abort assert fprintf snprintf
    printf stderr stdout errno size data push_back pop_back begin end empty clear resize
    reserve append c_str substr find insert erase first second swap length min max move""".split()
)
# Rust: keywords, the prelude (types, traits, variants), std's macros, primitive types and
# the common methods of prelude types (`opt.map(f)`, `v.len()`).
RUST_PRELUDE = frozenset(
    """as async await break const continue crate dyn else enum extern false fn for if impl in
    let loop match mod move mut pub ref return self Self static struct super trait true type
    unsafe use where while Option Some None Result Ok Err Vec String Box ToString ToOwned Into
    From TryFrom TryInto Iterator IntoIterator DoubleEndedIterator ExactSizeIterator Extend
    Default Clone Copy Debug Display PartialEq Eq PartialOrd Ord Hash Send Sync Sized Unpin
    Drop Fn FnMut FnOnce AsRef AsMut println print eprintln eprint format write writeln vec
    assert assert_eq assert_ne debug_assert debug_assert_eq panic unreachable unimplemented
    todo matches cfg derive u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64 bool
    char str unwrap expect unwrap_or unwrap_or_else unwrap_or_default map map_err and_then
    ok_or ok_or_else is_some is_none is_ok is_err ok err as_ref as_mut as_deref take clone
    to_string to_owned into iter iter_mut into_iter collect len is_empty push pop insert
    remove get get_mut contains extend first last as_str as_bytes chars bytes split trim
    starts_with ends_with find filter fold any all count enumerate zip rev next cloned copied
    skip chain fmt eq cmp partial_cmp hash default drop borrow borrow_mut with_capacity
    capacity truncate clear sort sort_by join lines parse Item ident expr ty tt pat literal
    vis lifetime""".split()
)
# One-line string literals (blanked before a line's names are read); Python's also serves Java.
_STRINGS = re.compile(r"""[rbuRBUfF]{0,2}(\"\"\"|'''|"|')(?:\\.|(?!\1).)*\1""")
_C_STRINGS = re.compile(r"""(["`])(?:\\.|(?!\1).)*\1|'(?:\\.|[^\\'])'""")  # Rust/Go: 'c' only
_TS_STRINGS = re.compile(r"""(["'`])(?:\\.|(?!\1).)*\1""")


@dataclass(frozen=True)
class LangRules:
    """How the cross-file stratum reads one language: small, reviewable data."""

    comment: str  # line comment
    strings: re.Pattern[str]
    ambient: frozenset[str]  # names every file sees without another file of the package
    #: statements whose rows name modules, not needs (those without a `body` or a
    #: `declaration`: `export class X` is a definition, `export { a } from "./b"` an import)
    import_nodes: frozenset[str] = frozenset()
    prose_strings: frozenset[str] = frozenset({"string"})  # string nodes over lines are prose
    qualified_by_import: bool = False  # Go: `fmt.Println` is the imported package's name


LANGS: dict[str, LangRules] = {
    "python": LangRules("#", _STRINGS, BUILTIN_NAMES),
    "java": LangRules("//", _STRINGS, JAVA_LANG),
    "go": LangRules(
        "//",
        _C_STRINGS,
        GO_UNIVERSE,
        frozenset({"import_declaration", "package_clause"}),
        frozenset({"raw_string_literal", "interpreted_string_literal"}),
        qualified_by_import=True,
    ),
    "typescript": LangRules(
        "//",
        _TS_STRINGS,
        TS_GLOBALS,
        frozenset({"import_statement", "export_statement"}),
        frozenset({"string", "template_string"}),
    ),
    "javascript": LangRules(
        "//",
        _TS_STRINGS,
        JS_GLOBALS,
        frozenset({"import_statement", "export_statement"}),
        frozenset({"string", "template_string"}),
    ),
    "cpp": LangRules(
        "//",
        _C_STRINGS,
        CPP_STD,
        frozenset({"preproc_include"}),
        frozenset({"raw_string_literal", "concatenated_string"}),
    ),
    "c": LangRules(
        "//", _C_STRINGS, CPP_STD, frozenset({"preproc_include"}), frozenset({"concatenated_string"})
    ),
    "rust": LangRules(
        "//",
        _C_STRINGS,
        RUST_PRELUDE,
        frozenset({"use_declaration", "extern_crate_declaration", "mod_item"}),
        frozenset({"string_literal", "raw_string_literal"}),
    ),
}
_QUALIFIED = re.compile(r"\b([A-Za-z_]\w*)\s*\.\s*([A-Za-z_]\w*)")
_GO_IMPORT = re.compile(r'^\s*(?:import\s+)?(?:([A-Za-z_]\w*|\.)\s+)?"([^"]+)"', re.M)


def code_identifiers(line: str, language: str = "python") -> set[str]:
    """Identifiers of a line outside its string literals and comment (names it uses)."""
    rules = LANGS[language]
    code = rules.strings.sub(" ", line)
    return identifiers(code.split(rules.comment, 1)[0])


def go_import_names(text: str) -> frozenset[str]:
    """The names a Go file's imports bind (`http` for "net/http", or the alias)."""
    head = text[: text.find("\nfunc ")] if "\nfunc " in text else text
    out = {m.group(1) or m.group(2).rsplit("/", 1)[-1] for m in _GO_IMPORT.finditer(head)}
    return frozenset(out - {".", "_"})


def prose_rows(text: str, language: str = "python") -> set[int]:
    """Rows inside strings or comments that span lines (docstrings, javadoc): prose."""
    return _special_rows(text, language)[0]


def _special_rows(text: str, language: str) -> tuple[set[int], set[int]]:
    """(prose rows, import rows) of one file, from its tree."""
    parsed = parse_text(text, language)
    prose: set[int] = set()
    imports: set[int] = set()
    if parsed is None:
        return prose, imports
    rules = LANGS[language]
    stack = [parsed[0].root_node]
    while stack:
        node = stack.pop()
        start, end = node.start_point.row, node.end_point.row
        if node.type in rules.prose_strings or "comment" in node.type:
            if end > start:
                prose.update(range(start, end + 1))
            continue
        if (
            node.type in rules.import_nodes
            and node.child_by_field_name("body") is None
            and node.child_by_field_name("declaration") is None
        ):
            imports.update(range(start, end + 1))
            continue
        stack.extend(node.children)
    return prose, imports


def recall(wanted: set[str], text: str) -> float:
    return len(wanted & identifiers(text)) / len(wanted)


def prompt_text(ctx: PromptContext) -> str:
    return "\n".join([ctx.prefix, ctx.suffix, *(s.text for s in ctx.snippets)])


@dataclass
class Position:
    pkg: str
    path: str
    row: int
    wanted: set[str]  # identifiers scored
    defining: list[str] = field(default_factory=list)  # other files defining the wanted names


@dataclass
class Corpus:
    name: str
    packages: dict[str, dict[str, str]]
    language: str = "python"
    defined: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)  # pkg -> path -> names

    def __post_init__(self) -> None:
        for pkg, files in self.packages.items():
            # Every definition (the engine's outlines stop at MAX_ENTRIES; the truth does not),
            # each file read with the grammar the index reads it with (a C header as C++: with
            # C's, tree-sitter's subtree.h was one parse error and its names never counted).
            self.defined[pkg] = {
                p: outline_from_text(t, index_language(self.language, p), p, limit=1 << 30).names()
                for p, t in files.items()
            }


SPLITS = ("all", "tuning", "validation")


def half_of(path: str) -> str:
    """The held-out half a file's lines belong to: "tuning" or "validation", by a stable hash
    of its directory and file name (the same on every machine and at every seed). Every file
    stays context for the other half's cursors; only where the cursor is differs."""
    key = f"{os.path.basename(os.path.dirname(path))}/{os.path.basename(path)}"
    return SPLITS[1 + hashlib.sha1(key.encode()).digest()[0] % 2]


def pick_positions(
    corpus: Corpus, n: int, rng: random.Random, split: str = "all"
) -> tuple[list[Position], list[Position]]:
    randoms: list[Position] = []
    crosses: list[Position] = []
    for pkg, files in corpus.packages.items():
        for path, text in files.items():
            if split != "all" and half_of(path) != split:
                continue
            rules = LANGS[corpus.language]
            prose, imports = _special_rows(text, corpus.language)
            ambient = rules.ambient
            # Go: `fmt.Println` names a member of an imported package, not of a sibling file.
            quals = go_import_names(text) if rules.qualified_by_import else frozenset()
            lines = text.split("\n")
            per_line = [identifiers(x) for x in lines]
            counts: dict[str, int] = {}
            for ids in per_line:
                for t in ids:
                    counts[t] = counts.get(t, 0) + 1
            own = corpus.defined[pkg][path]
            others = {p: names for p, names in corpus.defined[pkg].items() if p != path}
            for i, line in enumerate(lines):
                s = line.strip()
                if not s or i in prose or s.startswith("#") or len(per_line[i]) < 2:
                    continue
                randoms.append(Position(pkg, path, i, per_line[i]))
                if s.startswith(IMPORT_PREFIXES) or s.startswith(("/*", "*", "//")) or i in imports:
                    continue  # an import line names its module: a different question
                qualified = {m[1] for m in _QUALIFIED.findall(line) if m[0] in quals} if quals else set()
                cross = {
                    t
                    for t in code_identifiers(line, corpus.language)
                    if counts[t] == 1 and t not in own and t not in ambient and t not in qualified
                }
                defining = sorted(p for p, names in others.items() if cross & names)
                cross = {t for t in cross if any(t in others[p] for p in defining)}
                if cross and defining:
                    crosses.append(Position(pkg, path, i, cross, defining))
    return (
        sorted(rng.sample(randoms, min(n, len(randoms))), key=lambda p: (p.pkg, p.path, p.row)),
        sorted(rng.sample(crosses, min(n, len(crosses))), key=lambda p: (p.pkg, p.path, p.row)),
    )


def blank(text: str, row: int) -> tuple[str, Cursor, str, str]:
    lines = text.split("\n")
    deleted = lines[row]
    indent = deleted[: len(deleted) - len(deleted.lstrip())]
    lines[row] = indent
    new = "\n".join(lines)
    offset = sum(len(x) + 1 for x in lines[:row]) + len(indent)
    return new, Cursor(row, len(indent)), new[:offset], new[offset:]


#: Which workspace index `package_index` builds: "memory" (`workspace/index.py`, the JSON
#: index held whole in memory, as before issue 27) or "store" (the on-disk SQLite store the
#: server reads since; `prompt_digest.py --index both` proves the prompts equal).
INDEX_KIND = {"kind": "memory"}
_STORES: list[str] = []


def package_index(corpus: Corpus, pkg: str, cache: dict[str, SymbolIndex]) -> SymbolIndex:
    """The workspace index of one package directory, built by the real indexer."""
    kind = INDEX_KIND["kind"]
    got = cache.get(pkg if kind == "memory" else f"{kind}:{pkg}")
    if got is None:
        files = corpus.packages[pkg]
        root = os.path.commonpath([os.path.dirname(p) for p in files])
        idx = WorkspaceIndex(root, None, max_files=5000)
        if kind == "store":
            got = cache[f"{kind}:{pkg}"] = _store_index(root, files)
            return got
        idx.refresh()
        # Only this package's files: subpackages are their own packages here (a Rust
        # crate's or a TypeScript package's tree is one package).
        idx.records = {p: r for p, r in idx.records.items() if p in files}
        got = cache[pkg] = build_symbol_index([idx])
    return got


def _store_index(root: str, files: dict[str, str]) -> SymbolIndex:
    """The same files (the scan's rules, then this package's) in an on-disk store."""
    import atexit

    from lsp_assist.workspace.indexer import BuildOptions, build
    from lsp_assist.workspace.scanner import ScanLimits, scan
    from lsp_assist.workspace.store import Store
    from lsp_assist.workspace.stored_symbols import StoredSymbolIndex

    if not _STORES:
        _STORES.append(tempfile.mkdtemp(prefix="recall-stores-"))
        atexit.register(shutil.rmtree, _STORES[0], True)
    db = Path(_STORES[0]) / f"{len(os.listdir(_STORES[0]))}.sqlite3"
    wanted = sorted(e.path for e in scan(root, limits=ScanLimits(max_files=5000)).files if e.path in files)
    build(BuildOptions(root=root, db=str(db), paths=wanted, boundary=False, workers=1))
    return StoredSymbolIndex([Store(db, root)])


@dataclass(frozen=True)
class Run:
    """What one run measures: positions per stratum, the budget, the seed, the half."""

    positions: int = 150
    budget: int = 4000
    seed: int = 1
    split: str = "all"
    # The build deadline of every measured build (the server's is 10 ms, with the work the
    # debounce does ahead); `--deadline-ms inf` takes the machine's speed out of what is
    # built (a refactor's before/after then compares the code only).
    deadline_ms: float = 15.0


def run_corpus(corpus: Corpus, run: Run, then: ThenEngine | None = None) -> dict[str, float]:
    n, b, seed = run.positions, run.budget, run.seed
    rng = random.Random(seed)
    randoms, crosses = pick_positions(corpus, n, rng, run.split)
    docs = {
        pkg: {p: Document("file://" + p, corpus.language, 1, t, p) for p, t in files.items()}
        for pkg, files in corpus.packages.items()
    }
    indexes: dict[str, SymbolIndex] = {}
    misses: dict[str, dict[str, int]] = {}
    scores: dict[str, list[float]] = {}
    sizes: dict[str, list[int]] = {}
    times: dict[str, list[float]] = {}

    def add(key: str, v: float) -> None:
        scores.setdefault(key, []).append(v)

    def build(
        key: str, engine: ContextEngine, pos: Position, text: str, cursor: Cursor, others: list[Document]
    ) -> PromptContext:
        doc = Document("file://" + pos.path, corpus.language, 2, text, pos.path)
        doc.tree()  # the typing path: the tree is current when the request arrives
        for o in others:
            engine.index_document(o)  # as didOpen does: tabs are outlined when opened
        if engine is not local:
            engine.index_document(doc)  # the current file was opened too (its names read then)
        t0 = time.perf_counter()
        ctx = engine.build(doc, cursor, b, others=others, deadline_ms=run.deadline_ms)
        times.setdefault(key, []).append((time.perf_counter() - t0) * 1000)
        assert ctx.size <= b, (ctx.size, b)
        sizes.setdefault(key, []).append(ctx.size)
        return ctx

    local = ContextEngine()
    for pos in randoms:
        text, cursor, before, after = blank(corpus.packages[pos.pkg][pos.path], pos.row)
        siblings = [d for p, d in docs[pos.pkg].items() if p != pos.path]
        add("random: prefix-only window", recall(pos.wanted, before[-b:]))
        add(
            "random: 75/25 window",
            recall(pos.wanted, before[-(b * 3 // 4) :] + "\n" + after[: b - b * 3 // 4]),
        )
        ctx = build("random: local only", local, pos, text, cursor, [])
        add("random: engine, local only (today's in-file)", recall(pos.wanted, prompt_text(ctx)))
        full = ContextEngine(symbol_index=_copy(package_index(corpus, pos.pkg, indexes)))
        tabs = _tabs(siblings, [], rng, 3)
        ctx = build("random: cross-file", full, pos, text, cursor, tabs)
        add("random: engine + 3 tabs + index", recall(pos.wanted, prompt_text(ctx)))
        if then is not None:  # the same lines and tabs through the engine at an older commit
            args = (corpus.language, pos.path, text, cursor.line, cursor.character, b)
            add(f"random: engine at {then.rev}, local only", recall(pos.wanted, then.prompt(*args, [])))
            pairs = [(d.path, d.text) for d in tabs]
            add(f"random: engine at {then.rev} + 3 tabs", recall(pos.wanted, then.prompt(*args, pairs)))
        add(
            "random: oracle, whole package",
            recall(pos.wanted, "\n".join([text, *(d.text for d in siblings)])),
        )
    for pos in crosses:
        text, cursor, before, after = blank(corpus.packages[pos.pkg][pos.path], pos.row)
        siblings = [d for p, d in docs[pos.pkg].items() if p != pos.path]
        add("cross: prefix-only window", recall(pos.wanted, before[-b:]))
        add(
            "cross: 75/25 window",
            recall(pos.wanted, before[-(b * 3 // 4) :] + "\n" + after[: b - b * 3 // 4]),
        )
        ctx = build("cross: local only", local, pos, text, cursor, [])
        add("cross: engine, local only", recall(pos.wanted, prompt_text(ctx)))
        tabs = _tabs(siblings, pos.defining, rng, 3)
        eng = ContextEngine()
        ctx = build("cross: (a) tab", eng, pos, text, cursor, tabs)
        add("cross: (a) defining file open as a tab", recall(pos.wanted, prompt_text(ctx)))
        _why_missed(misses.setdefault("(a) tab", {}), corpus, pos, ctx, eng)
        eng = ContextEngine(symbol_index=_copy(package_index(corpus, pos.pkg, indexes)))
        ctx = build("cross: (b) index", eng, pos, text, cursor, [])
        add("cross: (b) only in the workspace index", recall(pos.wanted, prompt_text(ctx)))
        _why_missed(misses.setdefault("(b) index", {}), corpus, pos, ctx, eng)
        add(
            "cross: oracle, whole package", recall(pos.wanted, "\n".join([text, *(d.text for d in siblings)]))
        )
    n_files = sum(len(f) for f in corpus.packages.values())
    print(
        f"\n== corpus {corpus.name}: {len(corpus.packages)} packages, {n_files} files; "
        f"{len(randoms)} random + {len(crosses)} cross-file positions, seed {seed}, budget {b} chars"
        + ("" if run.split == "all" else f", {run.split} half")
    )
    print(f"{'context':<48} {'recall':>7}")
    for name, xs in scores.items():
        print(f"{name:<48} {statistics.mean(xs):>7.1%}")
    print(f"{'build (tree current)':<26} {'mean size':>9} {'median ms':>10} {'p95 ms':>8} {'max ms':>8}")
    for key, ms in times.items():
        print(
            f"{key:<26} {statistics.mean(sizes[key]):>9.0f} {statistics.median(ms):>10.2f} "
            f"{percentile(ms, 95):>8.2f} {max(ms):>8.2f}"
        )
    print("why a cross-file name missed the prompt (names, not positions):")
    for key, counts in misses.items():
        total = sum(counts.values())
        print(f"  {key}: {total} missed" + "".join(f"; {k} {v}" for k, v in sorted(counts.items())))
    return {k: statistics.mean(v) for k, v in scores.items()}


def _why_missed(
    out: dict[str, int], corpus: Corpus, pos: Position, ctx: PromptContext, eng: ContextEngine
) -> None:
    """Per missed name: was its defining file not chosen, chosen but not ranked before the
    deadline, or ranked with the name left out (the budget or the ranking)?"""
    got = eng.last_gathered
    kept = identifiers(prompt_text(ctx))
    for name in sorted(pos.wanted - kept):
        files = [p for p in pos.defining if name in corpus.defined[pos.pkg][p]]
        if got is None:
            why = "no cross-file step"
        elif not any(p in got.candidates for p in files):
            why = "file not chosen"
        elif not any(p in got.candidates[: got.ranked] for p in files):
            why = "file chosen, not ranked (deadline)"
        elif any(s.path in files for s in ctx.snippets):
            why = "file kept, name left out"
        else:
            why = "file chosen, nothing of it kept"
        out[why] = out.get(why, 0) + 1


def _copy(index: SymbolIndex) -> SymbolIndex:
    """A fresh index with the same files (each engine adds the blanked document to its own)."""
    from lsp_assist.workspace.stored_symbols import StoredSymbolIndex

    if isinstance(index, StoredSymbolIndex):
        return StoredSymbolIndex(index.stores)  # the same store, an empty memory layer
    out = SymbolIndex()
    for p in index.paths():
        out.set_symbols(
            p, index.symbols(p), index.version(p), index.outline(p), index.refs(p), index.imports(p)
        )
    return out


def _tabs(siblings: list[Document], defining: list[str], rng: random.Random, n: int) -> list[Document]:
    """The defining files plus other siblings, `n` tabs in all (a seeded, stable choice)."""
    chosen = [d for d in siblings if d.path in defining][:n]
    rest = [d for d in siblings if d.path not in defining]
    rng.shuffle(rest)
    return chosen + rest[: max(0, n - len(chosen))]


DEFAULT_CORPORA = (
    "stdlib",
    "pypi:rich==13.9.4",
    "jdk:java/util/concurrent",
    "go",
    "npm:rxjs@7.8.1",
    "npm:express@4.21.2",
    "npm:mocha@10.8.2",
    "npm:leveldown@6.1.1",
    "npm:tree-sitter@0.21.1",
    "crate:librust-clap-dev=4.0.32-1",
)
LOADERS: dict[str, Callable[[str], dict[str, dict[str, str]]]] = {
    "pypi": load_pypi,
    "jdk": load_jdk,
    "npm": load_npm,
    "crate": load_crate,
    "go": load_go,
}


def _language_of(packages: dict[str, dict[str, str]]) -> str:
    exts = {os.path.splitext(p)[1] for files in packages.values() for p in files} - {".h"}
    langs = {LANG_OF_EXT[e] for e in exts if e in LANG_OF_EXT}
    if len(langs) != 1:
        raise SystemExit(f"one language per corpus, got {sorted(langs) or sorted(exts)}")
    return langs.pop()


SUMMARY = (  # column header, row of run_corpus
    ("in: 75/25", "random: 75/25 window"),
    ("local", "random: engine, local only (today's in-file)"),
    ("+tabs+index", "random: engine + 3 tabs + index"),
    ("oracle", "random: oracle, whole package"),
    ("cross: 75/25", "cross: 75/25 window"),
    ("local", "cross: engine, local only"),
    ("(a) tab", "cross: (a) defining file open as a tab"),
    ("(b) index", "cross: (b) only in the workspace index"),
)


def print_summary(
    rows: list[tuple[str, str, dict[str, float]]], columns: tuple[tuple[str, str], ...] = SUMMARY
) -> None:
    """One line per corpus: its language, in-file recall without and with other files, and
    cross-file recall from a tab and from the index (next to the 75/25 window and the oracle)."""
    if not rows:
        return
    width = max(len(name) for name, _, _ in rows)
    print("\n== summary per corpus and language (recall; in: random lines, cross: cross-file names)")
    print(f"{'corpus':<{width}} {'language':<10}" + "".join(f" {h:>{len(h)}}" for h, _ in columns))
    for name, language, result in rows:
        cells = "".join(
            f" {result[key]:>{len(h)}.1%}" if key in result else f" {'-':>{len(h)}}" for h, key in columns
        )
        print(f"{name:<{width}} {language:<10}" + cells)


def corpus_loaders(specs: Sequence[str]) -> dict[str, Callable[[], dict[str, dict[str, str]]]]:
    """A loader per `--corpus` spec (stdlib, go, or KIND:ARG of `LOADERS`), in order."""
    loaders: dict[str, Callable[[], dict[str, dict[str, str]]]] = {}
    for spec in specs:
        kind, _, arg = spec.partition(":")
        if spec == "stdlib":
            loaders[spec] = load_stdlib
        elif kind in LOADERS and arg:
            loaders[spec] = lambda f=LOADERS[kind], a=arg: f(a)  # type: ignore[misc]
        elif spec == "go":
            loaders[spec] = load_go
        else:
            raise SystemExit(f"unknown corpus {spec!r} (stdlib, go, or one of {', '.join(LOADERS)}:...)")
    return loaders


def apply_tuning(spec: str) -> None:
    """`c.max_candidates=5`: replace one value of a profile's CrossFileTuning in the registry
    (every lookup goes through `registry.profile`), for trying a value without an edit."""
    target, _, value = spec.partition("=")
    lang, _, name = target.partition(".")
    prof = registry.profile(lang)
    fields = {f.name: f for f in dataclasses.fields(prof.tuning)} if prof is not None else {}
    if prof is None or name not in fields or not value:
        raise SystemExit(f"--tune {spec!r}: want LANG.FIELD=VALUE, FIELD one of {', '.join(fields) or '?'}")
    old = getattr(prof.tuning, name)
    new: Any = value.lower() in ("1", "true", "yes") if isinstance(old, bool) else type(old)(value)
    tuned = dataclasses.replace(prof, tuning=dataclasses.replace(prof.tuning, **{name: new}))
    registry._BY_NAME[prof.name] = tuned
    print(f"tuning: {prof.name}.{name} = {new!r} (profile's value {old!r})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--positions", type=int, default=150, help="per stratum per corpus")
    ap.add_argument("--budget", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--corpus",
        action="append",
        default=None,
        help="stdlib | go | pypi:NAME==VERSION | jdk:PACKAGE | npm:NAME@VERSION | crate:DEBIAN=VERSION",
    )
    ap.add_argument(
        "--then",
        metavar="REV",
        help="also score the random lines with the engine at an older commit (in-file recall then vs now)",
    )
    ap.add_argument(
        "--split",
        choices=SPLITS,
        default="all",
        help="cursors only in the tuning or the validation half of each corpus's files (half_of)",
    )
    ap.add_argument(
        "--tune",
        action="append",
        default=[],
        metavar="LANG.FIELD=VALUE",
        help="override one CrossFileTuning value of a language's profile for this run",
    )
    ap.add_argument("--deadline-ms", type=float, default=Run.deadline_ms, help="build deadline (default 15)")
    args = ap.parse_args()
    for spec in args.tune:
        apply_tuning(spec)
    t0 = time.perf_counter()
    then = ThenEngine(args.then, CORPUS_DIR) if args.then else None
    loaders = corpus_loaders(args.corpus or DEFAULT_CORPORA)
    summary: list[tuple[str, str, dict[str, float]]] = []
    for name, load in loaders.items():
        try:
            packages = load()
        except Unavailable as exc:
            print(f"\n== corpus {name}: skipped, {exc}")
            continue
        language = _language_of(packages)
        run = Run(args.positions, args.budget, args.seed, args.split, args.deadline_ms)
        result = run_corpus(Corpus(name, packages, language), run, then)
        summary.append((name, language, result))
    if then is not None:
        then.close()
    columns = SUMMARY
    if then is not None:  # today's engine next to the current one, in-file
        columns = (
            *SUMMARY[:3],
            (f"{then.rev}:local", f"random: engine at {then.rev}, local only"),
            (f"{then.rev}:+tabs", f"random: engine at {then.rev} + 3 tabs"),
            *SUMMARY[3:],
        )
    print_summary(summary, columns)
    print(f"\ntotal run {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
