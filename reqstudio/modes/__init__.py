"""Mode engines. None of them imports Chainlit: the same engine serves the browser, the CLI and tests."""
