"""The streamable HTTP transport: the app, its guard, hot path, bearer tokens, streams and
workers.
"""
