"""The collaborators the stages work with, built once per engine."""

from __future__ import annotations

from dataclasses import dataclass

from lsp_assist.config.schema import Config
from lsp_assist.documents.store import DocumentStore
from lsp_assist.pipeline.answers import AnswerStore
from lsp_assist.pipeline.launcher import StreamLauncher
from lsp_assist.pipeline.prefetch import Prefetcher
from lsp_assist.pipeline.prompt import PromptBuilder
from lsp_assist.pipeline.scheduler import Scheduler
from lsp_assist.pipeline.tiers import TierRunner


@dataclass(frozen=True)
class Services:
    config: Config
    store: DocumentStore
    scheduler: Scheduler
    prompts: PromptBuilder
    answers: AnswerStore
    launcher: StreamLauncher
    tiers: TierRunner
    prefetcher: Prefetcher
