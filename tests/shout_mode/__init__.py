"""A toy mode, `Shout` (answers in capitals), laid out as CONTRIBUTING.md's "Adding a mode" says:
its engine, its command and its roles in its own package, found through one registry line
(tests/test_adding_a_mode.py adds it). Nothing outside this package knows it."""
