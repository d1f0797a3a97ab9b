"""The Chainlit layer: turns engine events into messages and steps. Only this package and
app.py import Chainlit."""
