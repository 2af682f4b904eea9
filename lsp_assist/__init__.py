"""lsp-assist: a low-latency LLM inline-completion language server."""

__version__ = "0.1.0"
