"""`python -m lsp_assist` runs the CLI."""

from lsp_assist.cli.main import main

raise SystemExit(main())
