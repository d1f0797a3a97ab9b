"""`python -m agents.rewrite --original-doc ... --clarifications ...` (seed 003, section 5.1)."""

from agents.rewrite.cli import main

raise SystemExit(main())
