"""Post-processing of streamed model output: when to stop reading, and what to insert."""

from lsp_assist.pipeline.postprocess.clean import Cleaned, clean, process
from lsp_assist.pipeline.postprocess.stream import StreamAssembler

__all__ = ["Cleaned", "StreamAssembler", "clean", "process"]
