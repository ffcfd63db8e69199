"""The clients, written once as Trio code: the source of truth for both APIs.

Every module here is rewritten into a blocking twin in :mod:`cedar.commands._sync` by
``tools/unasync.py`` (``async def`` -> ``def``, ``await x`` -> ``x``, ``AsyncSchedd`` ->
``Schedd``, ``run_command_async`` -> ``run_command``, ...); the twins are checked in and a test
fails when they are stale.  To add a client method: write it here (async), run
``python tools/unasync.py``, commit both.  Never edit :mod:`cedar.commands._sync` by hand.
What does no I/O (request builders, protocol coroutines, result types) belongs in the plain
modules (:mod:`cedar.commands.collector`, :mod:`cedar.commands.schedd`, ...), not here.
"""
