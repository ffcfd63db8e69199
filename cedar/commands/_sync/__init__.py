"""The blocking clients, generated from :mod:`cedar.commands._async` by ``tools/unasync.py``.

Do not edit these modules: edit the async source and run ``python tools/unasync.py``.
"""
