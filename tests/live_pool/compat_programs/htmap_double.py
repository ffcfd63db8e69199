"""htmap 0.6.1 (the old ``htcondor`` API): ``map(double, range(3))`` on the pool.

Usage: ``htmap_double.py HTMAP_DIR``; prints the result list as JSON on the last line.  The
functions run on the execute side with the Python that submitted them (``getenv``, delivery
method ``assume``): the venv must be usable by the job's user.
"""

import json
import os
import sys

import htmap

htmap.settings["HTMAP_DIR"] = sys.argv[1]
htmap.settings["DELIVERY_METHOD"] = "assume"
for sub in ("tags", "maps", "removed", ".removed-tags", ".removed-maps"):
    os.makedirs(os.path.join(sys.argv[1], sub), exist_ok=True)


def double(x):
    return 2 * x


options = htmap.MapOptions(request_memory="64MB", request_disk="10MB", getenv="True")
result = htmap.map(double, range(3), map_options=options)
values = list(result.iter(timeout=240))
result.remove()
print(json.dumps(values))
