"""A deterministic corpus of varied submit files for the ``condor_submit -dry-run`` comparison.

``generate(directory)`` writes the support files (an executable, inputs, a directory tree, an
item list, include files) and ≥ 300 submit files covering the language (issue 15 §2), plus the
captures' own ``*.sub`` files when ``../shared/captures`` is there, and returns their paths.
The same call always writes the same files (a seeded generator, no clock, no host names).

    python -m tests.submit_language.corpus DIR
"""

from __future__ import annotations

import itertools
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

SEED = 15
CAPTURES = Path(__file__).resolve().parents[3] / "shared" / "captures"

Family = Callable[[random.Random, int], str]

EXECUTABLES = ["job.sh", "/bin/echo", "bin/tool"]
ARGUMENTS = [
    "a b c",
    '"one two"',
    "\"it''s a 'b c'\"",
    "\"'it''s' here\"",
    "\"x ''y'' z\"",
    '"""quoted"" plain"',
    "$(Process) $(Cluster)",
    "-n $(Item)",
    '"-x $(Process)"',
    "",
]
ENVIRONMENTS = [
    "A=1;B=2",
    '"A=1 B=2"',
    "\"A='x y' B=it''s\"",
    "\"NAME='it''s' EMPTY=\"",
    "X=$(Process)",
    '"PATH=/bin:/usr/bin HOME=/tmp"',
]
MEMORY = [
    "128",
    "1G",
    "2048M",
    "1.5G",
    "512 MB",
    "ifThenElse(MemoryUsage =!= undefined, MemoryUsage * 2, 1024)",
    "MAX({1024, 2 * 512})",
    "$(undefined_memory_macro)",
    "$(mem:300)",
    "100 + 28",
    "undefined",
    "256, 512, 1024",
]
REQUIREMENTS = [
    'OpSys == "LINUX"',
    "Memory > 1024",
    "TARGET.HasFileTransfer",
    "HasFileTransfer && Memory > 10",
    '(TARGET.Arch == "X86_64") && (Disk > 100)',
    "MY.RequestMemory < 4096",
    'regexp("^slot1", Name)',
    "TARGET.HasEncryptExecuteDirectory",
]


def _basic(rng: random.Random, i: int) -> str:
    lines = [f"executable = {rng.choice(EXECUTABLES)}"]
    if rng.random() < 0.8:
        lines.append(f"arguments = {rng.choice(ARGUMENTS)}")
    if rng.random() < 0.5:
        lines.append(f"environment = {rng.choice(ENVIRONMENTS)}")
    if rng.random() < 0.4:
        lines.append("getenv = " + rng.choice(["true", "false", "HOME, PATH", "CEDAR_*"]))
    for cmd in ("output", "error", "log"):
        if rng.random() < 0.6:
            lines.append(f"{cmd} = {cmd}.$(Cluster).$(Process)")
    if rng.random() < 0.3:
        lines.append("input = stdin.txt")
    lines.append(f"queue {rng.choice(['', '1', '2', '3'])}".rstrip())
    return "\n".join(lines)


def _requests(rng: random.Random, i: int) -> str:
    lines = ["executable = job.sh", f"request_memory = {MEMORY[i % len(MEMORY)]}"]
    if rng.random() < 0.5:
        lines.append(f"request_disk = {rng.choice(['1G', '2048', '100 KB', '4GB', '10M'])}")
    if rng.random() < 0.5:
        lines.append(f"request_cpus = {rng.choice(['1', '2', '4', 'ifThenElse(true, 2, 1)'])}")
    if rng.random() < 0.3:
        lines.append("image_size = " + rng.choice(["1000", "2 MB", "3G"]))
    lines.append("queue")
    return "\n".join(lines)


def _requirements(rng: random.Random, i: int) -> str:
    lines = ["executable = job.sh", f"requirements = {REQUIREMENTS[i % len(REQUIREMENTS)]}"]
    if rng.random() < 0.5:
        lines.append("should_transfer_files = " + rng.choice(["YES", "NO", "IF_NEEDED"]))
    if rng.random() < 0.4:
        lines.append("rank = Memory")
    lines.append("queue")
    return "\n".join(lines)


def _gpus(rng: random.Random, i: int) -> str:
    lines = ["executable = job.sh", f"request_gpus = {rng.choice(['1', '2', '0'])}"]
    options = [
        "require_gpus = Capability >= 7.0",
        "require_gpus = GlobalMemoryMb > 8000",
        f"gpus_minimum_capability = {rng.choice(['7.5', '8'])}",
        f"gpus_minimum_memory = {rng.choice(['8000', '16G'])}",
        "gpus_minimum_runtime = 11.0",
        "gpus_maximum_capability = 9.0",
    ]
    lines += rng.sample(options, rng.randint(1, 3))
    lines.append("queue")
    return "\n".join(lines)


def _features(rng: random.Random, i: int) -> str:
    options = [
        f"checkpoint_exit_code = {rng.randint(1, 90)}",
        "preserve_relative_paths = true",
        "encrypt_execute_directory = " + rng.choice(["true", "false"]),
        "deferral_time = 1800000000",
        "deferral_window = 60",
        "deferral_prep_time = 30",
        "cron_minute = 0,30",
        "cron_hour = 1-5",
        "cron_day_of_month = 1",
        "cron_month = *",
        "cron_day_of_week = 1",
        "cron_window = 120",
        "cron_prep_time = 30",
        "concurrency_limits = DB, LIC:2",
        'concurrency_limits_expr = strcat("DB:", 2)',
        "job_machine_attrs = Machine, Cpus",
        "job_machine_attrs_history_length = 3",
        "priority = 5",
        "nice_user = true",
        "notification = " + rng.choice(["never", "always", "complete", "error"]),
        "notify_user = someone@example.org",
        "email_attributes = A, B",
        "max_retries = 3",
        "retry_until = ExitCode == 0",
        "success_exit_code = 2",
        "periodic_hold = JobStatus == 2 && time() - EnteredCurrentStatus > 60",
        "periodic_release = NumJobStarts < 3",
        "periodic_remove = false",
        "on_exit_hold = ExitCode != 0",
        "on_exit_remove = true",
        "job_batch_name = batch-" + str(i),
        "accounting_group = group_a",
        "accounting_group_user = someone",
        "hold = true",
        "keep_claim_idle = 30",
        "job_max_vacate_time = 20",
        "kill_sig = SIGUSR1",
        "want_graceful_removal = true",
        "allowed_execute_duration = 300",
        "allowed_job_duration = 400",
        "coresize = 0",
        "stream_output = true",
        "max_job_retirement_time = 60",
        "job_lease_duration = 100",
        "leave_in_queue = true",
        '+Custom = "value"',
        "MY.Other = 1 + 2",
        '+Project = "p$(Process)"',
    ]
    # Each option at least once (in turn), plus a few drawn at random.
    picked = [options[i % len(options)]]
    picked += [o for o in rng.sample(options, rng.randint(0, 3)) if o not in picked]
    lines = ["executable = job.sh", *picked]
    lines.append(f"queue {rng.choice(['', '2'])}".rstrip())
    return "\n".join(lines)


def _macros(rng: random.Random, i: int) -> str:
    name = rng.choice(["step", "row", "node", "item", "Step", "mystep"])
    options = [
        f"{name} = 5\narguments = $({name})",
        "base = /data/run/file.tar.gz\narguments = $Fn(base) $Fx(base) $Fp(base) $Fd(base)",
        "base = /data/run/file.tar.gz\narguments = $Fdb(base) $Fb(base) $Fnx(base)",
        'base = /data/run/file.tar.gz\n+Quoted = $Fq(base)\n+Parent = "$Fd(base)"',
        "base = file.txt\narguments = $Fp(base)x $Fd(base)x $Fdb(base)x $Fb(base)",
        "base = rel/dir/name.txt\narguments = $Fdn(base) $Fpn(base) $Fqn(base)",
        "v = abcdef\narguments = $SUBSTR(v, 2) $SUBSTR(v, -2) $SUBSTR(v, 1, 2) $SUBSTR(v, -100)",
        "list = a, b, c\narguments = $CHOICE(1, list) $CHOICE(Process, x, y, z)",
        "n = 7\narguments = $INT(n * 2) $REAL(n / 2) $EVAL(n + 1)",
        "arguments = $RANDOM_CHOICE(red, green, blue)\n"
        '+CorpusRandom_Args = "choice_red_green_blue"',
        'arguments = $RANDOM_INTEGER(1, 9)\n+CorpusRandom_Args = "int_1_9"',
        "x = 1\nif $(x)\n  arguments = yes\nelse\n  arguments = no\nendif",
        "if defined nothing_here\n  arguments = a\nelif version >= 9.0\n  arguments = b\nendif",
        "arguments = $ENV(HOME) $ENV(NOT_SET_ANYWHERE:dflt)",
        "a = $(b)\nb = value\narguments = $(a)",
        "arguments = $(DOLLAR)(x) $$(Memory)",
        "arguments = $BASENAME(/a/b/c.txt) $DIRNAME(/a/b/c.txt)",
        "file = in.txt\ninput = $(file)\narguments = $(file:none)",
        "arguments = $(Cluster).$(Process) $(ClusterId) $(ProcId) $(JobId)",
    ]
    lines = ["executable = job.sh", options[i % len(options)], "queue " + rng.choice(["", "2"])]
    return "\n".join(lines).rstrip()


def _transfer(rng: random.Random, i: int) -> str:
    lines = ["executable = job.sh"]
    lines.append("should_transfer_files = " + rng.choice(["YES", "IF_NEEDED", "NO", "yes"]))
    if rng.random() < 0.8:
        lines.append("when_to_transfer_output = " + rng.choice(["ON_EXIT", "ON_EXIT_OR_EVICT"]))
    inputs = rng.sample(["in.txt", "data", "data/", "data/a.bin", "bin/tool", "big.bin"], 2)
    if rng.random() < 0.8:
        lines.append("transfer_input_files = " + ", ".join(inputs))
    if rng.random() < 0.5:
        lines.append("transfer_output_files = out.txt, results")
    if rng.random() < 0.4:
        lines.append('transfer_output_remaps = "out.txt = res/out.$(Process).txt"')
    if rng.random() < 0.5:
        lines.append("input = " + rng.choice(["stdin.txt", "big.bin"]))
    for cmd in ("output", "error", "log"):
        if rng.random() < 0.6:
            lines.append(f"{cmd} = {rng.choice(['', 'logs/'])}{cmd}.$(Process)")
    if rng.random() < 0.3:
        lines.append("iwd = " + rng.choice(["data", "/tmp"]))
    if rng.random() < 0.3:
        lines.append("leave_in_queue = " + rng.choice(["true", "false", "JobStatus == 4"]))
    if rng.random() < 0.2:
        lines.append("transfer_executable = false")
    lines.append(f"queue {rng.choice(['', '2'])}".rstrip())
    return "\n".join(lines)


def _containers(rng: random.Random, i: int) -> str:
    image = rng.choice(
        ["docker://alpine:3", "image.sif", "/cvmfs/images/x.sif", "alpine", "oras://reg/x"]
    )
    universe = rng.choice(["container", "vanilla", "docker"])
    lines = [f"universe = {universe}"]
    if universe == "docker":
        lines.append(f"docker_image = {image.removeprefix('docker://')}")
    else:
        lines.append(f"container_image = {image}")
    if rng.random() < 0.5:
        lines.append("executable = job.sh")
    if rng.random() < 0.3:
        lines.append("transfer_container = false")
    lines.append("queue")
    return "\n".join(lines)


def _universes(rng: random.Random, i: int) -> str:
    options = [
        "universe = parallel\nexecutable = job.sh\nmachine_count = 4",
        "universe = java\nexecutable = Main.class\narguments = Main 1\njar_files = a.jar",
        "universe = java\nexecutable = Main.class\narguments = Main\njava_vm_args = -Xmx1g",
        "universe = grid\ngrid_resource = batch slurm\nexecutable = job.sh",
        "universe = grid\ngrid_resource = condor remote.example.org remote.example.org\n"
        "executable = job.sh",
        "universe = vm\nvm_type = kvm\nvm_memory = 512\nvm_disk = disk.img:vda:w\nexecutable = vm1",
        "universe = scheduler\nexecutable = job.sh",
        "universe = local\nexecutable = job.sh",
        "universe = vanilla\nexecutable = job.sh",
        "universe = 5\nexecutable = job.sh",
    ]
    return options[i % len(options)] + "\nqueue"


def _late(rng: random.Random, i: int) -> str:
    knob = rng.choice(["max_idle", "max_materialize", "materialize_max_idle"])
    body = [
        f"executable = job.sh\narguments = $(Process)\n{knob} = {rng.randint(1, 5)}\n"
        f"queue {rng.randint(2, 6)}",
        # the factory digest keeps per-job commands and the variables they use (issue 26)
        f"universe = vanilla\nexecutable = job.sh\ntag = run\nname = $(tag)_$(Process)\n"
        f"output = $(name).out\nrequest_memory = 1G\n{knob} = 2\nqueue 4",
        f"executable = job.sh\narguments = $(Process) $(x)\n{knob} = 3\n"
        "queue x from (\n  alpha\n  beta\n  gamma\n  delta\n)",
        f"executable = job.sh\narguments = $(a) $(b)\n{knob} = 2\nqueue 2 a, b from items2.txt",
        f"executable = job.sh\narguments = $(Item) $(Step)\n{knob} = 2\nqueue 2 in (a b)",
    ]
    return body[i % len(body)]


def _queues(rng: random.Random, i: int) -> str:
    options = [
        "queue 3",
        "queue name in (a, b, c)",
        "queue name in (\n  x\n  y\n)",
        "queue name from items.txt",
        "queue a, b from items2.txt",
        "queue name from (\n  p\n  q\n)",
        "queue name matching *.txt",
        "queue name matching files *.txt",
        "queue name matching dirs *",
        "queue 2 name in (a, b)",
        "queue name in [1:] (a, b, c)",
        "queue name in [::2] (a, b, c, d)",
        "queue name matching nothing-matches-*.zzz",
        "queue 0",
        "queue\nqueue 2",
        "queue name from seq 3 |",
        "queue $(Count:2)",
        "queue name in (a b\n  c\n)",
        "queue name, more from (p 1\n  q 2\n)",
        "queue name in (a b",
        "queue name in (a b\n  c d)",
    ]
    head = "executable = job.sh\narguments = $(name:none) $(Process) $(Step) $(Row)\n"
    return head + options[i % len(options)]


def _accept_reject(rng: random.Random, i: int) -> str:
    options = [
        'executable = job.sh\narguments = "unterminated\nqueue',
        'executable = job.sh\narguments = "a \'b"\nqueue',
        "executable = job.sh\narguments = a\narguments2 = b\nqueue",
        "executable = job.sh\nif true\narguments = a\nqueue",
        "executable = job.sh\ninclude : with-queue.inc",
        "executable = job.sh\ninclude : no-queue.inc\nqueue",
        "universe = container\nexecutable = job.sh\nqueue",
        "executable = job.sh\ntransfer_input_files = s3://bucket/key\nqueue",
        "executable = job.sh\narguments = $EVAL(undefined_macro_here)\nqueue",
        "executable = job.sh\ninclude : echo arguments = from_cmd |\nqueue",
        "executable = job.sh\n+1stAttr = 1\nqueue",
        "universe = vm\nexecutable = vm1\nqueue",
        "executable = missing-executable\nqueue",
        "executable = job.sh\nuniverse = standard\nqueue",
        "executable = job.sh\nuniverse = nosuch\nqueue",
        "executable = job.sh\nrequest_memory = 12 XB\nqueue",
        "executable = job.sh\nrequirements = (a\nqueue",
        "executable = job.sh\niwd = /no/such/dir\nqueue",
        "executable = job.sh\nqueue -1",
        "executable = job.sh\nnotification = sometimes\nqueue",
        "executable = job.sh\nelse\nqueue",
        "executable = job.sh\nhold = maybe\nqueue",
        "queue",
        "executable = job.sh\nqueue name from missing-items.txt",
        "universe = vm\nvm_type = kvm\nvm_memory = 64\nvm_networking = true\n"
        "vm_checkpoint = true\nexecutable = vm1\nqueue",
        "executable = job.sh\nenvironment = A=1\nenvironment2 = B=2\nqueue",
        'executable = job.sh\narguments = a\\"b\nqueue',
        "executable = job.sh\nhold = true\nqueue",
        "executable = job.sh\ntransfer_input_files = gs://bucket/key\nqueue",
        "executable = job.sh\nrequest_memory = MAX({1,2}), 300\nqueue",
    ]
    return options[i % len(options)]


def _more(rng: random.Random, i: int) -> str:
    """Less common commands, one per file in turn."""
    options = [
        "shell = echo hello | wc -c",
        "universe = docker\ndocker_image = alpine\ndocker_network_type = bridge",
        "universe = docker\ndocker_image = alpine\ndocker_network_type = host",
        "docker_image = alpine\ndocker_pull_policy = always",
        "encrypt_input_files = in.txt\ntransfer_input_files = in.txt",
        "dont_encrypt_output_files = out.txt\ntransfer_output_files = out.txt",
        "output_destination = https://example.org/out/",
        "transfer_input_files = file:///etc/hostname, HTTPS://example.org/x",
        'transfer_output_remaps = "a = https://example.org/a"\ntransfer_output_files = a',
        "when_to_transfer_output = ON_SUCCESS\nshould_transfer_files = YES",
        "should_transfer_files = False",  # issue 34: the booleans' words are YES/NO
        "should_transfer_files = true",
        "should_transfer_files = Never\nwhen_to_transfer_output = no",
        "should_transfer_files = ALWAYS\nwhen_to_transfer_output = True",
        "when_to_transfer_output = yes",
        "should_transfer_files = T",
        "allow_arguments_v1 = yes",  # refused even without arguments2
        "allow_environment_v1 = 1",
        "initialdir = data\nlog = job.log",
        "initialdir = sub$(Process)\nlog = rel.log\nqueue_dirs = 1",
        "getenv = HOME, !PATH",
        "getenv = *",
        "nice_user = true\naccounting_group = grp",
        "accounting_group_user = alice",
        'batch_name = "my batch $(Cluster)"',
        "description = a test job",
        "kill_sig = SIGKILL\nremove_kill_sig = SIGQUIT\nhold_kill_sig = SIGUSR2\n"
        "kill_sig_timeout = 5",
        'request_foo = 2\nrequest_Licenses = "abc"',
        "request_cpus = 2.5\nrequest_disk = 0",
        "request_memory = 1\nrequest_cpus = $(Process) + 1",
        "+Requirements = Memory > 5",
        'requirements = Arch == "INTEL" && OpSys == "WINDOWS"',
        "requirements = TARGET.Cpus > 2 && Disk > 10",
        "rank = Memory * 2\npreferences = KFlops",
        "log_xml = true\nlog = x.log",
        "dagman_log = dag.log",
        "cuda_version = 11.2\nrequest_gpus = 1",
        "universe = local\nrequest_memory = 2G",
        "universe = scheduler\nrequirements = Memory > 1",
        "transfer_output = false\noutput = o.txt\nstream_error = true\nerror = e.txt",
        "transfer_input = false\ninput = stdin.txt",
        "image_size = 1.5 M",
        "coresize = 4 * 2",
        "priority = 3 + 2",
        "jobset = myset",
        "notification = Error",
        "email_attributes = a b, c",
        'periodic_hold_reason = "too long"\nperiodic_hold_subcode = 7\nperiodic_vacate = false',
        'on_exit_hold_reason = "bad"\non_exit_hold_subcode = 3\non_exit_hold = ExitCode == 1',
        "max_retries = 2\nretry_until = 9\non_exit_remove = ExitCode == 5",
        "success_exit_code = 3",
        "transfer_checkpoint_files = ckpt\ncheckpoint_exit_code = 85",
        'environment = "A=\'x\'\' y\' B=""q"""',
        'arguments = "a b \'c d\' e""f"',
        'arguments = a \\"b c\\" d',
        "arguments = a   b\tc  C:\\path\\x",
        'env = A=1;B=2\nenvironment = "C=3"',
        "environment = A=b=c;D=;E = spaced value",
        "arguments2 = x y\nallow_arguments_v1 = true\narguments = z",
        "next_job_start_delay = 5\nmax_transfer_input_mb = 10\nmax_transfer_output_mb = 20",
        "want_io_proxy = true\nload_profile = true\nrun_as_owner = false",
        "job_max_retries = 4\nstack_size = 100",
        "x509userproxy = /no/such/proxy",
        "universe = grid\ngrid_resource = condor a.example b.example\nrequest_memory = 1G",
        "universe = parallel\nmachine_count = 2\nrequest_cpus = 4",
        "universe = vm\nvm_type = xen\nvm_memory = 1G\nexecutable = vm1\nvm_vcpus = 2",
        "universe = java\nexecutable = Main.class\narguments = Main\ntransfer_input_files = in.txt",
        "universe = container\ncontainer_image = docker://a/b:c\narguments = $(Process)",
    ]
    lines = ["executable = job.sh", options[i % len(options)]]
    if "shell =" in lines[1] or "universe = vm" in lines[1] or "executable" in lines[1]:
        lines = lines[1:]
    if "queue_dirs" in lines[-1]:
        lines[-1] = lines[-1].replace("\nqueue_dirs = 1", "")
        return "\n".join(lines) + "\nqueue 2"
    return "\n".join(lines) + "\nqueue " + rng.choice(["", "2"])


def _mixed(rng: random.Random, i: int) -> str:
    """Commands of several families together (their interactions: Requirements, sizes)."""
    body: dict[str, str] = {}
    for family in (_basic, _requests, _requirements, _transfer, _features, _gpus):
        if family is not _basic and rng.random() < 0.5:
            continue
        for line in family(rng, i).split("\n"):
            name = line.partition("=")[0].strip().lower()
            if line.startswith("queue") or not name:
                continue
            body[name] = line
    if rng.random() < 0.3:
        body["universe"] = "universe = " + rng.choice(["vanilla", "local", "scheduler"])
    queue = rng.choice(["queue", "queue 3", "queue name in (a, b)", "queue name from items.txt"])
    return "\n".join([*body.values(), queue])


#: Issue 26's submit items: stray double quotes, an expression inside $(), if without endif,
#: ScheddInterval from SCHEDD_INTERVAL (set in the corpus configuration), $(Node) in the
#: parallel universe.
ISSUE_26 = [
    'executable = job.sh\narguments = "a "b" c"\nqueue',
    'executable = job.sh\narguments = "hello"x\nqueue',
    'executable = job.sh\narguments = "a ""b"" c"\nqueue',
    'executable = job.sh\narguments = """"\nqueue',
    'executable = job.sh\narguments = $(name)\nqueue name in ("hello, world)',
    'executable = job.sh\narguments = $(name)\nqueue name in ("hello"x)',
    'executable = job.sh\narguments = "$(name)"\nqueue name in (x"hello)',
    'executable = job.sh\narguments = $Fq(f)\nf = /tmp/x"y\nqueue',
    "executable = job.sh\narguments = $Fq(f)\nf = /tmp/x y\nqueue",
    "executable = job.sh\nmem = 2\nrequest_memory = $(mem * 4)\nqueue",
    "executable = job.sh\nmem = 2\n+X = $(mem*4)\nqueue",
    "executable = job.sh\nmem = 2\narguments = $(mem * 4)\nqueue",
    "executable = job.sh\nif false\narguments = a\nqueue",
    "executable = job.sh\nif true\nelse\narguments = x\nqueue",
    "executable = job.sh\nif true\nelif true\nqueue",
    "executable = job.sh\nif false\nelif true\nqueue",
    "executable = job.sh\nif true\nqueue",
    "executable = job.sh\nif false\nelse\nqueue",
    "executable = job.sh\nif true\nif true\nqueue",
    "executable = job.sh\nif false\nelif true\nx = 1\nqueue\nx = 2",
    "executable = job.sh\ndeferral_time = 1000\nqueue",
    "executable = job.sh\ncron_minute = 5\nqueue",
    "universe = parallel\nexecutable = job.sh\nmachine_count = 2\narguments = $(Node)\n"
    '+Foo = "$(Node)"\ninput = in.$(Node)\noutput = out.$(Node).$(Process)\n'
    "error = err.$(NODE)\nqueue",
    "u = parallel\nuniverse = $(u)\nexecutable = job.sh\nmachine_count = 2\n"
    "output = o.$(Node)\nqueue 2",
    "universe = vanilla\nexecutable = job.sh\noutput = o.$(Node)\nqueue",
]


#: Files rejected only after a queue statement has run: with ``-spool`` the dry run prints
#: those jobs before failing (the harness cannot tell it from an acceptance), so these are
#: compared without it.
ISSUE_26_PLAIN_ONLY = [
    "executable = job.sh\nqueue\nif true\nx = 1",
    "executable = job.sh\nqueue\nif false\nelif true\nx = 1",
    "executable = job.sh\nif true\nqueue\nendif",
    "executable = job.sh\nif true\nx = 1\nqueue\nelse\nx = 2\nendif",
]


def _issue_26(rng: random.Random, i: int) -> str:
    return ISSUE_26[i]


#: Issue 39: the ``$F`` letters ``f``, ``a``, ``u`` and ``w`` (cedar made ``a`` absolute, took
#: the pieces before turning the separators, quoted ``qa`` with ``"`` and normalised ``f``).
PATH_LETTERS = [
    f"executable = job.sh\nP = {path}\narguments = {args}\nqueue"
    for path in ["/x/y/z.tar.gz", "rel/p.txt", "plain", "a\\b\\c.txt", "/x/y/", "C:\\dir\\f.txt"]
    for args in [
        "$Ff(P) $Fa(P) $Fu(P) $Fw(P)",
        "$Fqa(P)",
        "$Fqaw(P)",
        "$Fpw(P)x $Fdw(P)x $Fnxw(P) $Fbw(P)",
        "$Fpu(P)x $Fau(P) $Ffu(P) $Ffw(P)",
        "$Ffp(P)x $Ffn(P)x $Fba(P)",
    ]
] + ["executable = job.sh\nP = /x/y/\narguments = $Ffd(P)x\nqueue"]

#: Every set of the piece letters p, d, n, x, b on paths with backslashes, dots and doubled
#: separators (issue 39: $Ffd of a\b\c.txt is b\c.txt there), plus f/u/w/qa variants.
_PIECES = ["".join(c) for k in range(1, 6) for c in itertools.combinations("pdnxb", k)]
PATH_PIECES = [
    f"executable = job.sh\nP = {path}\narguments = "
    + " ".join(f"[$F{letters}{extra}(P)]" for letters in _PIECES)
    + "\nqueue"
    for path in [
        "a\\b\\c.txt",
        "/x/y\\z.q",
        "/x\\y\\z.q",
        "a\\/b",
        "//x//y",
        "..aa",
        "/x/.hid",
        "./\\b/\\a",
        ".\\.\\a",
        "b..ba/",
    ]
    for extra in ["", "f"]
] + [
    f"executable = job.sh\nP = {path}\narguments = "
    + " ".join(
        f"[$F{letters}(P)]"
        for letters in [
            "fw",
            "fu",
            "pfw",
            "dfw",
            "nqa",
            "xqa",
            "pqa",
            "dqa",
            "pbqa",
            "dbqa",
            "nxqa",
            "pdnqa",
        ]
    )
    + "\nqueue"
    for path in ["./a", ".\\a", "./", ".baa", "plain", "/", "a.b", "/x"]
]


#: Commands given under their attributes' names (issue 39: htmap writes JobBatchName), the
#: command winning when both are there; signals by number and name; atoi'd and evaluated sizes.
ATTRIBUTE_NAMED = [
    "executable = job.sh\nJobBatchName = mapped\nSubmitEventNotes = $(Process)\nqueue 2",
    "executable = job.sh\nJobBatchName = xyz\nbatch_name = abc\nqueue",
    "executable = job.sh\nbatch_name = abc\nJobBatchName = xyz\nqueue",
    "executable = job.sh\nPeriodicHold = NumJobStarts > 2\nPeriodicRemove = false\n"
    'PeriodicRelease = true\nOnExitHoldReason = "r"\nqueue',
    "executable = job.sh\nJobPrio = 5\nNiceUser = true\nJobDescription = d\nqueue",
    "executable = job.sh\nRequestMemory = 20\nrequest_memory = 10\nRequestCpus = 2\nqueue",
    "executable = job.sh\nKillSig = 15x\nRemoveKillSig = sigusr1\nHoldKillSig = 9\nqueue",
    "executable = job.sh\nkill_sig = SigTerm\nkill_sig_timeout = 5x\ncoresize = 3.7\nqueue",
    "executable = job.sh\nkill_sig = 16\nqueue",
    "executable = job.sh\nkill_sig = SIGCLD\nqueue",
    "executable = job.sh\nkill_sig_timeout = 99999999999\ncoresize = true\nqueue",
    "executable = job.sh\ncoresize = xyz\nqueue",
    "executable = job.sh\nJobMaxVacateTime = 30\nMaxJobRetirementTime = 60\n"
    "KeepClaimIdle = 5\nLeaveJobInQueue = false\nStackSize = 100\nqueue",
    "executable = job.sh\nTransferInputFiles = in.txt\nTransferOutputFiles = out.txt\n"
    "should_transfer_files = YES\nqueue",
    "executable = job.sh\nCronMinute = 5\nCronHour = *\nqueue",
    "executable = job.sh\nNotifyUser = a@b\nJobMachineAttrs = Machine\n"
    "JobAdInformationAttrs = Owner\nDAGNodeName = n1\nqueue",
    # and two found beside them: $RANDOM_CHOICE of one macro name picks from its list, and a
    # custom attribute keeps the spelling it was first given
    "executable = job.sh\nL = only\narguments = $RANDOM_CHOICE(L) $RANDOM_CHOICE(q)\nqueue",
    "executable = job.sh\n+foo = 1\n+FOO = 2\nMY.Bar = 3\n+BAR = 4\nqueue",
    "executable = job.sh\nL = only\nM = one  ,\narguments = $RANDOM_CHOICE(M)\nqueue",
    # $CHOICE: the index a number cut (none or negative: 0), out of range empty
    "executable = job.sh\nI = 1\nL = p, q\narguments = [$CHOICE(1x, a, b)][$CHOICE(1.9, a, b)]"
    "[$CHOICE(I, a, b)][$CHOICE(2, a, b)][$CHOICE(0, a)][$CHOICE(5, L)][$CHOICE(-1, L)]"
    "[$CHOICE(1, L)]\nqueue",
    # a plugin URL with requirements that name HasFileTransfer: no WantTransferPluginMethods
    "executable = job.sh\ntransfer_input_files = file:///tmp/x, in.txt\n"
    "requirements = TARGET.HasFileTransfer && Memory > 1\nshould_transfer_files = YES\nqueue",
    "executable = job.sh\ntransfer_output_files = a\noutput_destination = file:///tmp/o\n"
    "requirements = HasFileTransfer\nqueue",
]


def _attribute_named(rng: random.Random, i: int) -> str:
    return ATTRIBUTE_NAMED[i]


def _path_letters(rng: random.Random, i: int) -> str:
    return PATH_LETTERS[i]


def _path_pieces(rng: random.Random, i: int) -> str:
    return PATH_PIECES[i]


FAMILIES: list[tuple[str, Family, int]] = [
    ("basic", _basic, 50),
    ("requests", _requests, 30),
    ("requirements", _requirements, 24),
    ("gpus", _gpus, 16),
    ("features", _features, 50),
    ("macros", _macros, 38),
    ("transfer", _transfer, 40),
    ("containers", _containers, 15),
    ("universes", _universes, 10),
    ("late", _late, 6),
    ("queues", _queues, 21),
    ("accept-reject", _accept_reject, 30),
    ("mixed", _mixed, 60),
    ("more", _more, 70),
    ("issue-26", _issue_26, len(ISSUE_26)),
    ("path-letters", _path_letters, len(PATH_LETTERS)),
    ("path-pieces", _path_pieces, len(PATH_PIECES)),
    ("attribute-named", _attribute_named, len(ATTRIBUTE_NAMED)),
]


def _support(directory: Path) -> None:
    (directory / "job.sh").write_text("#!/bin/sh\necho hello\n")
    (directory / "job.sh").chmod(0o755)
    (directory / "bin").mkdir(exist_ok=True)
    (directory / "bin" / "tool").write_bytes(b"\x7fELF" + bytes(5000))
    (directory / "bin" / "tool").chmod(0o755)
    (directory / "stdin.txt").write_text("x" * 3000)
    (directory / "in.txt").write_text("input\n")
    (directory / "big.bin").write_bytes(bytes(1500 * 1024))
    data = directory / "data"
    (data / "sub").mkdir(parents=True, exist_ok=True)
    (data / "a.bin").write_bytes(bytes(2500))
    (data / "b.txt").write_text("b" * 100)
    (data / "sub" / "c.bin").write_bytes(bytes(7000))
    for name in ("Main.class", "a.jar", "vm1", "disk.img", "image.sif"):
        (directory / name).write_bytes(bytes(100))
    (directory / "items.txt").write_text("one\ntwo\n\nthree\n")
    (directory / "items2.txt").write_text("1 x\n2, y\n3\tz w\n")
    (directory / "with-queue.inc").write_text("arguments = inc\nqueue 2\n")
    (directory / "no-queue.inc").write_text("arguments = included\n")
    (directory / "logs").mkdir(exist_ok=True)
    for n in (0, 1):
        (directory / f"sub{n}").mkdir(exist_ok=True)
    (directory / "sub").mkdir(exist_ok=True)  # the captures' transfer_input_files
    (directory / "sub" / "f.txt").write_text("f\n")
    (directory / "blob.bin").write_bytes(bytes(range(256)) * 8)


def generate(directory: Path) -> list[Path]:
    """Write the corpus into ``directory`` (emptied first); return the submit files."""
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    _support(directory)
    rng = random.Random(SEED)
    files = []
    for name, family, count in FAMILIES:
        for i in range(count):
            path = directory / f"{name}-{i:03d}.sub"
            path.write_text(family(rng, i) + "\n")
            files.append(path)
    if CAPTURES.is_dir():
        for capture in sorted(CAPTURES.glob("*.sub")):
            path = directory / f"capture-{capture.name}"
            shutil.copyfile(capture, path)
            files.append(path)
    return files


if __name__ == "__main__":
    written = generate(Path(sys.argv[1] if len(sys.argv) > 1 else "submit-corpus"))
    print(f"{len(written)} submit files")
