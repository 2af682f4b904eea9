"""The workspace index (cross-file definitions of files that are not open) and warmup."""
