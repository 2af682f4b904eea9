"""The composition root: the runtime is built in named steps, one module each.

`configuration` resolves what was loaded (model roles, tiers, the cache directory);
`governance` builds the data boundary and limits; `providers` the model behind each
tier; `telemetry` the statistics and OpenTelemetry export; `pipeline` the completion
engine and the next-edit model. `context` holds what lives as long as the process
(documents, indexes, histories) and is built once. Each step takes typed inputs and
returns a frozen bundle; `lsp_assist.server.Runtime` runs them in order and is the facade
the protocol handlers call. What listens to the parts (the editor's notifications) is
held in one `Listeners` object (`listeners`) that every rebuilt part is given.

Beside the steps, what the facade delegates to: `editor_feed` (the editor's
definitions), `idle` (prefill on edit pauses, re-warming after idle spells), `warming`
(connections, model loads, endpoint checks) and `teardown` (closing replaced parts).
"""
