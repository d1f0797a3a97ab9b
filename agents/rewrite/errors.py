"""What a rewrite raises when a stage cannot finish (seed 003, section 3.4 "状态报告")."""

from __future__ import annotations

from reqstudio.document_model import DocumentStructure


class RewriteStageError(RuntimeError):
    """A stage failed for good: `stage` names it, `reason` says why in plain words, `partial`
    holds the document as far as it got (None before the outline exists)."""

    def __init__(
        self,
        stage: str,
        reason: str,
        partial: DocumentStructure | None = None,
        section_id: str | None = None,
    ):
        where = f" (section {section_id})" if section_id else ""
        super().__init__(f"stage {stage} failed{where}: {reason}")
        self.stage = stage
        self.reason = reason
        self.partial = partial
        self.section_id = section_id
