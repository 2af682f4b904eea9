"""`lsp-assist context FILE:LINE:COL`: print exactly what would be sent for a completion there.

Each part of the prompt is listed with why it was included and its size (each other
file's outline with why that file was chosen: imported, same package, open, defines a
name the function uses, same directory), then the rendered prompt for the tier's
template. Positions are 1-based, as compilers print them. The file's directory is
indexed as the server's workspace index would be (`--index DIR` for another root,
`--no-index` for none); `--with FILE` adds open tabs; `--definitions FILE.json` adds
definitions as the editor's language server would send them (`lspAssist/definitions`).
It also says which workspace folder's layer governs the file (`--workspace DIR`, once per
folder; default: the indexed root) and whether that excludes it.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lsp_assist.cli.positions import language_of, parse_location
from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.editor_definitions import REASON as EDITOR
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor, PromptContext, Snippet


def add_parser(sub: Any) -> None:
    p = sub.add_parser("context", help="show the prompt that would be sent at FILE:LINE:COL")
    p.add_argument("location", type=parse_location, metavar="FILE:LINE:COL")
    p.add_argument("--tier", default="fast", choices=("fast", "quality", "backup"))
    p.add_argument("--json", action="store_true", help="one JSON object instead of text")
    p.add_argument("--budget", type=int, default=None, help="prompt budget in characters")
    p.add_argument(
        "--with",
        dest="others",
        action="append",
        default=[],
        metavar="FILE",
        help="treat FILE as another open document (cross-file context); repeatable",
    )
    p.add_argument(
        "--index", default=None, metavar="DIR", help="workspace root to index (default: the file's directory)"
    )
    p.add_argument("--no-index", action="store_true", help="no workspace index (open tabs only)")
    p.add_argument(
        "--workspace",
        type=Path,
        action="append",
        default=None,
        metavar="DIR",
        help="a workspace folder, for which layer governs the file (repeatable; default: the indexed root)",
    )
    p.add_argument(
        "--definitions",
        default=None,
        metavar="FILE.json",
        help="definitions as the editor's language server would send them (lspAssist/definitions"
        " entries: a list, or the notification's params)",
    )
    p.set_defaults(run=run)


def _index_of(root: Path) -> Any:
    """The workspace index of `root`, built the way the server builds it (small limits: a person waits)."""
    from lsp_assist.workspace.index import WorkspaceIndex, build_symbol_index

    idx = WorkspaceIndex(str(root), None, max_files=3000, time_budget_s=5.0)
    idx.refresh()
    return build_symbol_index([idx])


def _tier_settings(tier: str, root: Path) -> tuple[int, str, str]:
    """(budget chars, fim template, model) of a tier from the merged configuration."""
    try:
        from lsp_assist.config.loader import load_config

        cfg = load_config([root]).config
        t = cfg.tier(tier)
        return t.context_chars, t.fim_template, t.model
    except Exception:  # a broken config file must not hide the prompt
        from lsp_assist.config.schema import Config

        t = Config().tier(tier)
        return t.context_chars, t.fim_template, t.model


def _governance(path: Path, roots: list[Path]) -> tuple[str, str | None]:
    """Which folder's layer governs `path`, and why it is excluded (None: it is not)."""
    try:
        from lsp_assist.config.loader import ConfigLayers
        from lsp_assist.governance.folders import boundary_for, governed_by

        layers = ConfigLayers()
        layers.load_files(roots)
        boundary = boundary_for(
            layers.build().config.governance, layers.folder_layers(roots), [str(r) for r in roots]
        )
        where = str(path.resolve())
        return governed_by(boundary, where), boundary.excluded(where)
    except Exception as exc:  # a broken config file must not hide the prompt
        return f"unknown ({type(exc).__name__})", None


def _render(ctx: PromptContext, template: str, model: str) -> dict[str, Any]:
    try:
        from lsp_assist.context.templates import render_completion
    except ImportError:
        return {"template": None, "prompt": ctx.prefix, "suffix": ctx.suffix, "stop": list(ctx.stop)}
    r = render_completion(ctx, template, model)
    return {"template": template, "prompt": r.prompt, "suffix": r.suffix, "stop": list(r.stop)}


def _why(engine: ContextEngine, snip: Snippet) -> str | None:
    if snip.reason == EDITOR:
        return "from the editor's language server (lspAssist/definitions)"
    return engine.last_gathered.why.get(snip.path) if engine.last_gathered else None


def _load_definitions(engine: ContextEngine, file: Path, uri: str) -> None:
    """Editor definitions from a JSON file, as if the editor had sent them for this file."""
    from lsp_assist.context.editor_definitions import load_definition_files, parse_notification

    data = json.loads(file.read_text(encoding="utf-8"))
    if isinstance(data, list):
        data = {"uri": uri, "version": 0, "definitions": data}
    elif isinstance(data, dict):
        data = {**data, "uri": uri, "version": 0}
    _, _, defs, bad = parse_notification(data)
    engine.editor_definitions.update(uri, 0, defs)
    # As the server does: the files they point into that the index lacks are outlined.
    wanted = engine.editor_files.wanted(engine.symbols, engine.editor_definitions.current(uri, 0))
    engine.editor_files.add(engine.symbols, load_definition_files(wanted), lambda _path: False)
    if bad:
        print(f"lsp-assist context: --definitions: {bad} malformed entries ignored", file=sys.stderr)


@dataclass(frozen=True)
class _Shown:
    """What `context` found at the position, ready to print."""

    ctx: PromptContext
    engine: ContextEngine
    tier: str
    budget: int
    rendered: dict[str, Any]
    governed: str
    excluded: str | None


def _open_others(names: list[str]) -> list[Document]:
    """The `--with` files as open documents (an unreadable one is skipped)."""
    others: list[Document] = []
    for other in names:
        op = Path(other)
        try:
            otext = op.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        others.append(Document(op.resolve().as_uri(), language_of(op), 0, otext, str(op.resolve())))
    return others


def _engine(args: argparse.Namespace, path: Path, others: list[Document]) -> ContextEngine:
    """A context engine over the workspace index (unless `--no-index`) and the open tabs."""
    symbols = None
    if not args.no_index:
        root = Path(args.index) if args.index else path.resolve().parent
        symbols = _index_of(root)
    engine = ContextEngine(symbol_index=symbols)
    for o in others:
        engine.index_document(o)  # as didOpen does
    return engine


def run(args: argparse.Namespace) -> int:
    path, line, col = args.location
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        print(f"lsp-assist context: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    budget, template, model = _tier_settings(args.tier, path.resolve().parent)
    if args.budget is not None:
        budget = max(0, args.budget)
    others = _open_others(args.others)
    engine = _engine(args, path, others)
    uri = path.resolve().as_uri()
    if args.definitions:
        try:
            _load_definitions(engine, Path(args.definitions), uri)
        except (OSError, ValueError) as exc:
            print(f"lsp-assist context: --definitions: {exc}", file=sys.stderr)
            return 2
    doc = Document(uri, language_of(path), 0, text, str(path.resolve()) if not args.no_index else str(path))
    ctx = engine.build(
        doc,
        Cursor(line, col),
        budget,
        others=others,
        deadline_ms=1000.0,  # a person is waiting, not a keystroke: take the time
    )
    rendered = _render(ctx, template, model)
    folders = args.workspace or [Path(args.index) if args.index else path.resolve().parent]
    governed, excluded = _governance(path, [f.resolve() for f in folders])
    shown = _Shown(ctx, engine, args.tier, budget, rendered, governed, excluded)
    if args.json:
        _print_json(shown)
    else:
        _print_text(shown)
    return 0


def _print_json(shown: _Shown) -> None:
    ctx, engine = shown.ctx, shown.engine
    out = {
        "path": ctx.path,
        "language": ctx.language,
        "tier": shown.tier,
        "budget": shown.budget,
        "size": ctx.size,
        "mode": ctx.mode,
        "max_tokens": ctx.max_tokens,
        "stop": list(ctx.stop),
        "parts": [asdict(p) for p in ctx.parts],
        "snippets": [{**asdict(s), "why": _why(engine, s)} for s in ctx.snippets],
        "prefix": ctx.prefix,
        "suffix": ctx.suffix,
        "rendered": shown.rendered,
        "governed_by": shown.governed,
        "excluded": shown.excluded,
    }
    print(json.dumps(out, ensure_ascii=False, indent=2))


def _print_text(shown: _Shown) -> None:
    ctx, engine, rendered = shown.ctx, shown.engine, shown.rendered
    print(f"# {ctx.path} ({ctx.language}) tier={shown.tier} budget={shown.budget} chars, used {ctx.size}")
    print(f"# mode={ctx.mode} max_tokens={ctx.max_tokens} stop={list(ctx.stop)!r}")
    print(f"# governed by: {shown.governed}")
    if shown.excluded:
        print(f"# EXCLUDED from models: {shown.excluded} (the server sends nothing for this file)")
    print("# parts:")
    for p in ctx.parts:
        print(f"#   {p.label:<22} {p.chars:>6} chars  {p.reason}")
    why = engine.last_gathered.why if engine.last_gathered is not None else {}
    for s in ctx.snippets:
        print(f"#   snippet ({s.reason}) {s.path}: {len(s.text)} chars, weight {s.score}")
        if s.reason == EDITOR:
            print(f"#       {_why(engine, s)}")
        elif s.path in why:
            print(f"#       chosen because: {why[s.path]}")
    print(f"# ---- rendered prompt (template {rendered['template']}) ----")
    print(rendered["prompt"])
    if rendered["suffix"] is not None:
        print("# ---- suffix (sent as its own field) ----")
        print(rendered["suffix"])
    print(f"# ---- stop: {rendered['stop']!r}")
