"""Next-edit suggestions: the edit history, the predictors and the service the LSP handler calls."""
