"""``GET /api/v1/jobs/{job}/evaluated``: a job's attributes evaluated for people (the web page
shows RequestDisk as a size), scoped as every job route, and never a private attribute."""

from __future__ import annotations

from cedar.classad_wire import ClassAd
from tests.http_api.conftest import Api
from tests.http_api.test_api import submit


def _plant(api: Api, job: str, text: str) -> None:
    """Attributes in the job's cluster ad as the mock schedd holds it."""
    queue = api.pool.pool.schedd.queue
    cluster = int(job.split(".")[0])
    with queue.lock:
        ad = queue.clusters[cluster]
        queue.clusters[cluster] = ClassAd.from_raw_text(ad.print_old() + text)


def test_expressions_are_evaluated_in_the_jobs_ad(api: Api) -> None:
    [job] = submit(api.alice)
    _plant(api, job, "Base = 10\nTwice = Base * 2\nPicky = MAX({ 1024, Base * 1.25 }) * 1024\n")
    answer = api.alice.get(f"/api/v1/jobs/{job}/evaluated", params={"attrs": "Twice,Picky,Nope"})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"Twice": 20, "Picky": 1048576, "Nope": None}
    # the raw ad still carries the expression
    raw = api.alice.get(f"/api/v1/jobs/{job}").json()
    assert raw["Twice"] == "/Expr(Base * 2)/"


def test_private_attributes_stay_private(api: Api) -> None:
    [job] = submit(api.alice)
    _plant(api, job, 'ClaimId = "s3cr3t"\nLeak = ClaimId\nLeakSize = size(ClaimId)\n')
    shown = api.alice.get(
        f"/api/v1/jobs/{job}/evaluated", params={"attrs": "ClaimId,Leak,LeakSize"}
    ).json()
    assert shown == {"ClaimId": "<REDACTED>", "Leak": None, "LeakSize": None}


def test_scoped_and_bounded(api: Api) -> None:
    [job] = submit(api.alice)
    assert (
        api.bob.get(f"/api/v1/jobs/{job}/evaluated", params={"attrs": "Owner"}).status_code == 404
    )
    assert (
        api.alice.get(f"/api/v1/jobs/{job}/evaluated", params={"attrs": "a b"}).status_code == 400
    )
    many = ",".join(f"A{i}" for i in range(65))
    assert api.alice.get(f"/api/v1/jobs/{job}/evaluated", params={"attrs": many}).status_code == 400


def test_a_job_in_the_history_is_evaluated_too(api: Api) -> None:
    [job] = submit(api.alice)
    assert api.alice.delete(f"/api/v1/jobs/{job}").status_code == 200
    answer = api.alice.get(f"/api/v1/jobs/{job}/evaluated", params={"attrs": "RequestDisk"})
    assert answer.status_code == 200, answer.text
    assert isinstance(answer.json()["RequestDisk"], (int, float))
