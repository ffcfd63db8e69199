"""The one job-id grammar: how ``C`` and ``C.P`` are read, printed and turned into a constraint.

Every command line, API route, tool and client call that takes a job id goes through here, so
``01.2`` means job 1.2 everywhere and ``1.2x`` is an id nowhere.  Two readings, observed with
HTCondor 25.13.2's own tools (docs/ARCHITECTURE.md, "Job ids"):

- **strict** (condor_rm, condor_hold, condor_release, condor_qedit, the bindings, the APIs):
  the whole text is ``DIGITS`` or ``DIGITS.DIGITS`` (ASCII digits, leading zeros allowed, no
  sign, no blank);  anything else is not a job id (the tools then take it as a user name).
- **lenient** (condor_q's restriction list): also blanks before the id, a ``+`` sign, and a
  cluster written ``C.`` or ``C.-N`` (an empty or negative proc names the whole cluster).

Where HTCondor wraps a number past 32 bits into another job id (``4294967395`` is cluster 99
to condor_rm), cedar refuses it instead: a cluster or proc is at most ``2**31 - 1``.

Sits just above :mod:`cedar.classad_wire`, whose constraint rule builds the id constraints as
parsed trees, never by pasting user text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cedar.classad_wire.expr import AttrRef, Binary, Expr, Literal, Paren
from cedar.classad_wire.unparse import unparse
from cedar.errors import InvalidArgument
from cedar.record import Record

__all__ = [
    "MAX_NUMBER",
    "PROC_ID_PATTERN",
    "JobId",
    "format_job_id",
    "ids_constraint",
    "ids_constraint_text",
    "match_job_id",
    "parse_job_id",
]

#: The largest cluster or proc number (HTCondor keeps them in a C ``int``).
MAX_NUMBER = 2**31 - 1
#: The ``cluster.proc`` shape as a JSON-schema / pydantic pattern (the API's one job shape).
PROC_ID_PATTERN = r"^[0-9]+\.[0-9]+$"

# ASCII digits only: ``\d`` would also take ``１`` (a fullwidth one), which condor does not.
_STRICT = re.compile(r"([0-9]+)(?:\.([0-9]+))?")
_LENIENT = re.compile(r"[ \t\n\v\f\r]*\+?([0-9]+)(?:\.(?:(-?)([0-9]+))?)?")


class JobId(Record, frozen=True):
    """One job (``cluster.proc``) or a whole cluster (``proc is None``); ordered by cluster,
    then proc (a cluster and a job of it do not compare, as tuples with None)."""

    __slots__ = ("cluster", "proc")
    cluster: int
    proc: int | None

    def __init__(self, cluster: int, proc: int | None = None) -> None:
        object.__setattr__(self, "cluster", cluster)
        object.__setattr__(self, "proc", proc)
        self._check()

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, JobId):
            return NotImplemented
        return (self.cluster, self.proc) < (other.cluster, other.proc)

    def __le__(self, other: object) -> bool:
        if not isinstance(other, JobId):
            return NotImplemented
        return (self.cluster, self.proc) <= (other.cluster, other.proc)

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, JobId):
            return NotImplemented
        return (self.cluster, self.proc) > (other.cluster, other.proc)

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, JobId):
            return NotImplemented
        return (self.cluster, self.proc) >= (other.cluster, other.proc)

    def _check(self) -> None:
        for name, number in (("cluster", self.cluster), ("proc", self.proc)):
            if number is None and name == "proc":
                continue
            if (
                not isinstance(number, int)
                or isinstance(number, bool)
                or not 0 <= number <= MAX_NUMBER
            ):
                raise InvalidArgument(f"{name} {number!r} is not a number from 0 to {MAX_NUMBER}")

    def __str__(self) -> str:
        return format_job_id(self.cluster, self.proc)

    @property
    def is_cluster(self) -> bool:
        """Whether this names every job of a cluster (``C``), not one job (``C.P``)."""
        return self.proc is None

    def constraint(self) -> Expr:
        """``ClusterId == C`` or ``ClusterId == C && ProcId == P``, as a tree."""
        cluster = Binary("==", AttrRef("ClusterId"), Literal(self.cluster))
        if self.proc is None:
            return cluster
        return Binary("&&", cluster, Binary("==", AttrRef("ProcId"), Literal(self.proc)))


def format_job_id(cluster: int, proc: int | None = None) -> str:
    """``C.P`` (or ``C`` for a whole cluster): how condor prints a job id."""
    return str(cluster) if proc is None else f"{cluster}.{proc}"


def match_job_id(text: str, *, lenient: bool = False) -> JobId | None:
    """The job id ``text`` spells, or ``None`` when it is not of the job-id shape (a user name,
    a constraint, ...).  ``lenient`` reads condor_q's restriction list (see the module).

    Raises :class:`~cedar.errors.InvalidArgument` for an id-shaped text whose number is out of
    range, which condor would silently wrap into another job.
    """
    if not isinstance(text, str):
        return None  # (any length is fine: one linear match, numbers checked by length first)
    if not lenient:
        strict = _STRICT.fullmatch(text)
        if strict is None:
            return None
        cluster_text, proc_text = strict.group(1), strict.group(2)
    else:
        loose = _LENIENT.fullmatch(text)
        if loose is None:
            return None
        cluster_text, negative, proc_text = loose.group(1), loose.group(2), loose.group(3)
        if negative and int(proc_text) != 0:
            proc_text = None  # C.-N: the whole cluster, as condor_q reads it
    cluster = _number(cluster_text, text)
    proc = None if proc_text is None else _number(proc_text, text)
    return JobId(cluster, proc)


def parse_job_id(text: str, *, lenient: bool = False, need_proc: bool = False) -> JobId:
    """The job id ``text`` spells (see :func:`match_job_id`); ``need_proc`` refuses a bare
    cluster.  Raises :class:`~cedar.errors.InvalidArgument` (naming at most 40 characters of the
    text) when it is not one."""
    job = match_job_id(text, lenient=lenient)
    if job is None or (need_proc and job.proc is None):
        shape = "cluster.proc" if need_proc else "cluster or cluster.proc"
        raise InvalidArgument(f"{_shown(text)} is not a job id ({shape})")
    return job


def ids_constraint(ids: Iterable[JobId]) -> Expr | None:
    """Every given job or cluster, ORed as a tree (each alternative parenthesised when there are
    several); ``None`` for no ids."""
    alternatives = [job.constraint() for job in ids]
    if len(alternatives) < 2:
        return alternatives[0] if alternatives else None
    combined: Expr = Paren(alternatives[0])
    for node in alternatives[1:]:
        combined = Binary("||", combined, Paren(node))
    return combined


def ids_constraint_text(ids: Iterable[JobId]) -> str | None:
    """:func:`ids_constraint` in the old syntax the daemons read, or ``None``."""
    combined = ids_constraint(ids)
    return None if combined is None else unparse(combined, old=True)


def _number(digits: str, text: str) -> int:
    significant = digits.lstrip("0") or "0"  # condor reads 007 as 7
    if len(significant) > 10 or int(significant) > MAX_NUMBER:
        raise InvalidArgument(f"{_shown(text)}: a job id number is at most {MAX_NUMBER}")
    return int(significant)


def _shown(text: object) -> str:
    if not isinstance(text, str):
        return f"{type(text).__name__} value"
    return repr(text[:40]) + ("..." if len(text) > 40 else "")
