"""The capacity planner: simulated developers typing against an endpoint (`lsp-assist capacity`)."""
