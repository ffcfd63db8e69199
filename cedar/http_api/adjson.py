"""The service core's ad mapping (:mod:`cedar.service_core.adjson`), under its old import path."""

from cedar.service_core import typed_values as typed_values
from cedar.service_core.adjson import ad_dict as ad_dict
from cedar.service_core.adjson import ad_json as ad_json
from cedar.service_core.adjson import ad_json_bytes as ad_json_bytes
from cedar.service_core.adjson import json_chunks as json_chunks
from cedar.service_core.adjson import json_lists as json_lists
from cedar.service_core.adjson import json_writers as json_writers
from cedar.service_core.adjson import primed as primed
