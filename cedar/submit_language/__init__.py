"""The submit description language and its translation to job ClassAds (spec 06 §4–§5).

:class:`Submit` holds a submit description (text or a mapping, like ``htcondor2.Submit``);
:meth:`Submit.build` turns it into the cluster ad and per-proc ads that the queue-management
transaction sends (spec 05 §4.7).  Values are ClassAd expression text in wire ("old") syntax,
re-printed through :mod:`cedar.classad_wire` so they are byte-identical to what
``condor_submit`` sends.  Multiple ``queue`` statements are processed top to bottom as
``condor_submit`` does.

The package: :mod:`.description` (commands, ``if``/``include``), :mod:`.queue` (``queue``
statements and items), :mod:`.encodings` (value encodings), :mod:`.jobad` (settings, the result,
running the queue statements) and one job's ad: :mod:`.builder` (the commands in order) over
:mod:`.parts` (shared state), :mod:`.transfer`, :mod:`.universes` and :mod:`.requirements`.
Macros and lines use the reader shared with the configuration (:mod:`cedar.config.macros`).
"""

from __future__ import annotations

from cedar.submit_language.description import Submit
from cedar.submit_language.errors import SubmitError
from cedar.submit_language.jobad import JobAds
from cedar.submit_language.queue import QueueSpec, parse_queue
from cedar.submit_language.settings import SubmitSettings

__all__ = [
    "JobAds",
    "QueueSpec",
    "Submit",
    "SubmitError",
    "SubmitSettings",
    "parse_queue",
]
