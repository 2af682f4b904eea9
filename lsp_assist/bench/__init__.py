"""`lsp-assist bench`: the standard latency scenarios played against any language server.

A loopback model (`model.py`, OpenAI- and Tabby-compatible, 127.0.0.1 only) answers every
server in the run; an LSP client over stdio (`client.py`) plays the scenarios
(`scenarios.py`) against each server started from its recipe (`recipes.py`); the figures
(`figures.py`) split each answer at the model, and `table.py` prints them side by side with
the model's own floor. `run.py` ties them together. docs/bench.md says what each figure means.
"""
