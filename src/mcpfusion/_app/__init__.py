"""The app (``Fusion``) and ``tools/call``: the middleware chain, the lifespan and the shipped
middleware.
"""
