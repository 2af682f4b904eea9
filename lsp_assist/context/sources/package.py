"""The package prior's names line (Java, Go): the package's top-level names that the files
most like this one spell and no outline shows (`context/package_prior.py` computes the prior).

Its characters are reserved from the cross-file budget before the outlines are ranked
(`reserve`), and the line is filled after them with the names they did not show (`offer`).
"""

from __future__ import annotations

import os

from lsp_assist.context.package_prior import PACKAGE_REASON, PackagePrior, package_line
from lsp_assist.domain import Snippet
from lsp_assist.languages import line_comment, tuning_for

# The names line: those whose prior is at least this, within `tuning.package_share` of the
# cross-file budget.
PACKAGE_MIN_SCORE = 0.1


class PackageNames:
    """The package-prior source."""

    name = "package prior"

    @staticmethod
    def reserve(package: PackagePrior, known: frozenset[str], budget: int) -> int:
        """What the line would take before the outlines (`known`: names the file already has)."""
        share = int(budget * tuning_for(package.language).package_share)
        first, _names = package_line(package, known, share, line_comment(package.language), PACKAGE_MIN_SCORE)
        return len(first)

    @staticmethod
    def offer(package: PackagePrior, known: frozenset[str], budget: int) -> tuple[Snippet, str] | None:
        """The line within `budget` (names in `known`, the file's and the outlines', left
        out) and why it was sent; None when no name is left."""
        line, names = package_line(package, known, budget, line_comment(package.language), PACKAGE_MIN_SCORE)
        if not names:
            return None
        key = package.directory + os.sep
        near = ", ".join(os.path.basename(p) for p, _sim, _names in package.neighbours[:3])
        why = (
            f"names of this package (visible without an import) that the files most like this one"
            f" spell ({near}...), this file not: {len(names)} names"
        )
        return Snippet(path=key, text=line, score=0.0, reason=PACKAGE_REASON), why
