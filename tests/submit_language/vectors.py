# ruff: noqa: E501
"""Test vectors of spec 06 §5.9 (condor_submit -dry-run of HTCondor 25.13.2), verbatim."""

VECTORS = {
    "V01": (
        'executable = /bin/echo\narguments = a \\"b c\\" d\noutput = out.$(Cluster).$(Process)\nerror = err.$(Cluster).$(Process)\nlog = job.log\nqueue\n',
        'Err="err.1.0"\nOut="out.1.0"\nArgs="a \\"b c\\" d"\nUserLog="/w/job.log"\nStreamErr=false\nStreamOut=false\n# absent: Arguments, TransferErr, TransferOut\n# procs: P0: -\n',
    ),
    "V02": (
        'executable = /bin/echo\narguments = "a b \'c d\' e""f"\nqueue\n',
        'Arguments="a b c\' \'d e\\"f"\n# procs: P0: -\n',
    ),
    "V03": (
        "executable = /bin/echo\narguments = \"it''s 'a  b' c\"\nenvironment = A=hello world;B=2\nqueue\n",
        "Arguments=\"its a'  'b c\"\nEnvironment=\"A=hello' 'world B=2\"\n# procs: P0: -\n",
    ),
    "V04": (
        "executable = /bin/echo\nenvironment = \"PATH=/bin:/usr/bin FOO='with space' EMPTY=\"\nqueue\n",
        "Environment=\"EMPTY= FOO=with' 'space PATH=/bin:/usr/bin\"\n# procs: P0: -\n",
    ),
    "V05": (
        "executable = /bin/echo\nshould_transfer_files = YES\nwhen_to_transfer_output = ON_EXIT_OR_EVICT\ntransfer_input_files = in.txt, data1.dat\ntransfer_output_files = out1, out2\nqueue\n",
        'Requirements=(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (versionGE(split(TARGET.CondorVersion)[1],"25.12.0") || (TARGET.Disk >= RequestDisk)) && (TARGET.Memory >= RequestMemory) && (TARGET.HasFileTransfer)\nTransferInput="in.txt,data1.dat"\nTransferOutput="out1,out2"\nShouldTransferFiles="YES"\nWhenToTransferOutput="ON_EXIT_OR_EVICT"\n# absent: FileSystemDomain\n# procs: P0: -\n',
    ),
    "V06": (
        "executable = /bin/echo\nrequest_cpus = 4\nrequest_memory = 2GB\nrequest_disk = 10G\nqueue\n",
        'RequestCpus=4\nRequestDisk=10485760\nRequirements=(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (versionGE(split(TARGET.CondorVersion)[1],"25.12.0") || (TARGET.Disk >= RequestDisk)) && (TARGET.Memory >= RequestMemory) && (TARGET.Cpus >= RequestCpus) && ((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))\nRequestMemory=2048\n# procs: P0: -\n',
    ),
    "V07": (
        "executable = /bin/echo\nrequirements = (Memory > 1024) && (HasFoo =?= true)\nrank = Memory * 2\nqueue\n",
        'Rank=Memory * 2\nRequirements=((Memory > 1024) && (HasFoo =?= true)) && (TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (versionGE(split(TARGET.CondorVersion)[1],"25.12.0") || (TARGET.Disk >= RequestDisk)) && (TARGET.Memory >= RequestMemory) && ((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))\n# procs: P0: -\n',
    ),
    "V08": (
        'executable = /bin/echo\n+Foo = "bar"\n+Num = 7\nMY.Flag = True\n+Word = hello\n+Project = "proj_$(Cluster)"\n-Gone =\nqueue\n',
        'Foo="bar"\nNum=7\nFlag=true\nGone=undefined\nWord=hello\nProject="proj_1"\n# procs: P0: -\n',
    ),
    "V09": (
        "executable = /bin/echo\narguments = $(Cluster).$(Process) $(JobId)\noutput = out.$(Process)\nqueue 3\n",
        'Out="out.0"\nArgs="1.0 1.0"\nStreamOut=false\n# absent: Arguments, TransferOut\n# procs: P0: - | P1: Out="out.1", Args="1.1 1.1" | P2: Out="out.2", Args="1.2 1.2"\n',
    ),
    "V10": (
        "executable = /bin/echo\narguments = $(name) $(num) $(ItemIndex) $(Row) $(Step)\nqueue name,num from (\n  alpha 1\n  beta 2\n)\n",
        'Args="alpha 1 0 0 0"\n# absent: Arguments\n# procs: P0: - | P1: Args="beta 2 1 1 0"\n',
    ),
    "V11": (
        "executable = /bin/echo\narguments = $(item) $(ItemIndex)\nqueue item in [1:] (a, b, c)\n",
        'Args="b 1"\n# absent: Arguments\n# procs: P0: - | P1: Args="c 2"\n',
    ),
    "V12": (
        "executable = /bin/echo\ninitialdir = sub1\nlog = rel.log\noutput = o.txt\ninput = in.txt\nqueue\n",
        'In="in.txt"\nIwd="/w/sub1"\nOut="o.txt"\nUserLog="/w/sub1/rel.log"\nStreamIn=false\nStreamOut=false\n# absent: TransferIn, TransferOut\n# procs: P0: -\n',
    ),
    "V13": (
        "executable = /bin/echo\nhold = true\nqueue 2\n",
        'HoldReason="submitted on hold at user\'s request"\nHoldReasonCode=15\n# procs: P0: JobStatus=5 | P1: JobStatus=5\n',
    ),
    "V14": (
        "executable = /bin/echo\nmax_retries = 3\nsuccess_exit_code = 2\nqueue\n",
        "OnExitHold=false\nOnExitRemove=NumJobCompletions > JobMaxRetries || ExitCode =?= JobSuccessExitCode\nJobMaxRetries=3\nJobSuccessExitCode=2\n# procs: P0: -\n",
    ),
    "V15": (
        "executable = /bin/echo\ncontainer_image = docker://ubuntu:22.04\nqueue\n",
        'Requirements=(TARGET.Arch == "X86_64") && TARGET.HasContainer && TARGET.HasDockerURL && (versionGE(split(TARGET.CondorVersion)[1],"25.12.0") || (TARGET.Disk >= RequestDisk)) && (TARGET.Memory >= RequestMemory) && ((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))\nWantContainer=true\nContainerImage="docker://ubuntu:22.04"\nWantDockerImage=true\nContainerImageSource="docker"\n# procs: P0: -\n',
    ),
    "V16": (
        "executable = /bin/echo\naccounting_group = group_physics\naccounting_group_user = alice\nqueue\n",
        'AcctGroup="group_physics"\nAcctGroupUser="alice"\nAccountingGroup="group_physics.alice"\n# procs: P0: -\n',
    ),
    "V17": (
        "universe = scheduler\nexecutable = /bin/echo\narguments = sched\nqueue\n",
        'Args="sched"\nKillSig="SIGTERM"\nJobUniverse=7\nRequirements=(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory)\n# absent: Arguments, JobLeaseDuration\n# procs: P0: -\n',
    ),
    "V18": (
        "universe = docker\ndocker_image = busybox:latest\nexecutable = /bin/echo\narguments = hi\nqueue\n",
        'Args="hi"\nWantDocker=true\nDockerImage="busybox:latest"\nRequirements=(TARGET.Arch == "X86_64") && TARGET.HasDocker && (versionGE(split(TARGET.CondorVersion)[1],"25.12.0") || (TARGET.Disk >= RequestDisk)) && (TARGET.Memory >= RequestMemory) && ((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))\n# absent: Arguments\n# procs: P0: -\n',
    ),
    "V19": (
        "executable = /bin/cat\ninput = in.txt\noutput = cat.out\nerror = cat.err\nstream_output = true\nstream_error = false\ntransfer_input = false\nqueue\n",
        'In="in.txt"\nCmd="/bin/cat"\nErr="cat.err"\nOut="cat.out"\nStreamErr=false\nStreamOut=true\n# absent: TransferErr, TransferOut\n# procs: P0: -\n',
    ),
    "V20": (
        'executable = /bin/echo\nrequest_foo = 2\nrequest_Licenses = "abc"\nqueue\n',
        'Requestfoo=2\nRequirements=(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (versionGE(split(TARGET.CondorVersion)[1],"25.12.0") || (TARGET.Disk >= RequestDisk)) && (TARGET.Memory >= RequestMemory) && (TARGET.foo >= Requestfoo) && regexp(RequestLicenses,TARGET.Licenses) && ((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))\nRequestLicenses="abc"\n# procs: P0: -\n',
    ),
    "V21": (
        "executable = /bin/echo\ntransfer_input_files = https://example.com/file.tar.gz, in.txt\nqueue\n",
        'Requirements=(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (versionGE(split(TARGET.CondorVersion)[1],"25.12.0") || (TARGET.Disk >= RequestDisk)) && (TARGET.Memory >= RequestMemory) && ((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer && stringListIMember("https",TARGET.HasFileTransferPluginMethods)))\nTransferInput="https://example.com/file.tar.gz,in.txt"\nWantTransferPluginMethods="https"\n# procs: P0: -\n',
    ),
    "V22": (
        "executable = /bin/echo\narguments = a   b\tc  C:\\path\\x\nqueue\n",
        'Args="a b c C:\\path\\x"\n# absent: Arguments\n# procs: P0: -\n',
    ),
    "V23": (
        'executable = /bin/echo\nenv = A=1;B=2\nenvironment = "C=3"\nqueue\n',
        'Env="C=3"\nEnvDelim=";"\n# absent: Environment\n# procs: P0: -\n',
    ),
    "V24": (
        "executable = /bin/echo\nrequest_memory = 1024, 2048\nqueue\n",
        'RequestMemory=1024\nTransformOnEvict="RequestMemory"\nTransformBody_RequestMemory="REQUIREMENTS (VacateReasonCode==21 || VacateReasonCode == 34) && VacateReasonSubCode == 102\x1eSET RequestMemory 2048"\n# procs: P0: -\n',
    ),
    "V25": (
        "executable = /bin/echo\narguments = $(x)\noutput = o$(x).txt\nqueue x from (\na\n\nb\n# c\n)\n",
        'Out="oa.txt"\nArgs="a"\nStreamOut=false\n# absent: Arguments, TransferOut\n# procs: P0: - | P1: - | P2: Out="ob.txt", Args="b"\n',
    ),
}
