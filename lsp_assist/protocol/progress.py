"""`$/progress` work-done progress: begun when the client supports it, silent otherwise."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)


class WorkDone:
    """Work-done progress when the client supports it; silent otherwise."""

    def __init__(self, ls: LanguageServer, token: str, title: str) -> None:
        self.ls = ls
        self.token = token
        self.title = title
        self.enabled = False

    async def begin(self) -> None:
        caps = self.ls.client_capabilities
        if not (caps and caps.window and caps.window.work_done_progress):
            return
        try:
            await asyncio.wait_for(self.ls.work_done_progress.create_async(self.token), timeout=2.0)
            self.ls.work_done_progress.begin(self.token, types.WorkDoneProgressBegin(title=self.title))
            self.enabled = True
        except Exception as exc:
            log.debug("progress unavailable: %s", exc)

    def report(self, message: str, percentage: int | None = None) -> None:
        if self.enabled:
            self.ls.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message, percentage=percentage)
            )

    def end(self, message: str) -> None:
        if self.enabled:
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            self.enabled = False
