"""Build step 4, telemetry: the request statistics and the OpenTelemetry export.

The statistics outlive every rebuild (only their budget follows the configuration). The
exporter is rebuilt only when its own settings change (its endpoint, the business line,
the environment); the one it replaces flushes in a thread of its own. Either way it is
hooked to the new governance's model calls and to the statistics.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from lsp_assist.composition.configuration import Resolved
from lsp_assist.governance.guard import Governance
from lsp_assist.telemetry import otel
from lsp_assist.telemetry.stats import STATS_FILE, StatsCollector
from lsp_assist.telemetry.usage import cost_of


class Governed(Protocol):
    @property
    def governance(self) -> Governance | None: ...


@dataclass(frozen=True)
class TelemetryParts:
    stats: StatsCollector
    telemetry: otel.Telemetry | None
    key: str  # the exporter's settings: equal keys, the exporter is kept
    errors: list[str]


def build_telemetry(
    resolved: Resolved, gov: Governance, previous: TelemetryParts | None, host: Governed
) -> TelemetryParts:
    """Statistics and export for `resolved`, keeping what `previous` built where its
    settings did not change; a call's cost is priced by `host`'s governance of the moment."""
    config = resolved.config
    if previous is None:
        stats = StatsCollector(config.budget, resolved.cache_dir / STATS_FILE)
    else:
        stats = previous.stats
        stats.budget = config.budget
    team = gov.team
    business_line = team.settings.business_line if team is not None else config.team.business_line
    environment = str(gov.settings.environment)
    key = repr((config.telemetry, business_line, environment))
    telemetry = previous.telemetry if previous is not None else None
    errors: list[str] = []
    if previous is None or key != previous.key:
        if telemetry is not None:
            threading.Thread(target=telemetry.shutdown, name="otel-shutdown", daemon=True).start()

        def price(record: Mapping[str, object]) -> float:
            now = host.governance
            return cost_of(record, now.settings.prices) if now is not None else 0.0

        telemetry, errors = otel.build_telemetry(
            config.telemetry, business_line=business_line, environment=environment, cost_of=price
        )
    if telemetry is not None:
        gov.call_observers.append(telemetry.observe_call)
    stats.observers = [] if telemetry is None else [telemetry.observe_request]
    return TelemetryParts(stats, telemetry, key, errors)


async def close_telemetry(parts: TelemetryParts) -> TelemetryParts:
    """Flush the statistics and what the exporter has queued (bounded by its timeouts, off
    the loop); returns the parts without the exporter."""
    if parts.telemetry is not None:
        await asyncio.to_thread(parts.telemetry.shutdown)
    parts.stats.flush()
    return dataclasses.replace(parts, telemetry=None)
