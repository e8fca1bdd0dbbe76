#!/usr/bin/env python3
"""Writes an Orrery canonical trace as a site's Slurm records, for the fair-share "what if".

    to_sacct.py TRACE.csv CLUSTER_NAME OUT_DIR

Each virtual cluster of the trace becomes a Slurm account, with an association for every user
who submitted a job there; a job is charged to its own VC's account. Writes OUT_DIR/sacct.txt (the
`sacct -P` columns `orrery import` reads: JobID, JobName, User, Account, Partition, Submit,
Elapsed, Timelimit, State, ReqTRES, NNodes, QOS) and OUT_DIR/accounts.txt (`sacctmgr -P show
assoc` and `show qos`: every account and user with a share of 1, one QOS `normal` without
limits), so that `--policy slurm:conf=...,accounts=OUT_DIR/accounts.txt` knows every association.
Times are written in UTC from the trace's `#epoch_unix`.
"""
import csv
import datetime as dt
import os
import sys


def hms(seconds):
    seconds = max(0, int(seconds))
    d, rest = divmod(seconds, 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return (f"{d}-" if d else "") + f"{h:02d}:{m:02d}:{s:02d}"


def read_trace(path):
    epoch, lines = 0, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#epoch_unix="):
                epoch = int(line.split("=", 1)[1])
            elif not line.startswith("#"):
                lines.append(line)
    return epoch, list(csv.DictReader(lines))


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def sacct_rows(epoch, jobs):
    out = ["JobID|JobName|User|Account|Partition|Submit|Elapsed|Timelimit|State|ReqTRES|NNodes|QOS"]
    for j in jobs:
        submit = dt.datetime.fromtimestamp(epoch + int(j["submit"]), dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        limit = hms(j["walltime"]) if j["walltime"] not in ("", "-1") else "UNLIMITED"
        nodes = j["nodes"] or "1"
        tres = f"cpu={max(1, int(j['cpu_milli'] or 0) // 1000)},gres/gpu={j['gpus']},node={nodes}"
        out.append("|".join([str(1000 + int(j["id"])), j["name"] or "job", j["user"], j["vc"], "batch", submit,
                             hms(j["duration"]), limit, j["state"] or "COMPLETED", tres, nodes, "normal"]))
    return "\n".join(out) + "\n"


def accounts_listing(cluster, jobs):
    users = {}  # account -> its users, in the order of their first jobs there
    for j in jobs:
        members = users.setdefault(j["vc"], [])
        if j["user"] not in members:
            members.append(j["user"])
    out = ["Cluster|Account|User|Partition|Share|GrpTRES|MaxJobs|MaxTRES|QOS|Def QOS",
           f"{cluster}|root|||1||||normal|normal"]
    for account, members in users.items():
        out.append(f"{cluster}| {account}|||1||||normal|normal")
        for user in members:
            out.append(f"{cluster}|  {account}|{user}||1||||normal|normal")
    out += ["", "Name|Priority|PreemptMode|UsageFactor|GrpTRES|MaxTRES|MaxWall|MaxTRESPU|MaxJobsPU",
            "normal|0|cluster|1.000000|||||"]
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 4:
        sys.exit("usage: to_sacct.py TRACE.csv CLUSTER_NAME OUT_DIR")
    trace, cluster, out_dir = argv[1:]
    epoch, jobs = read_trace(trace)
    if not jobs:
        sys.exit(f"{trace}: no jobs")
    os.makedirs(out_dir, exist_ok=True)
    write_atomic(os.path.join(out_dir, "sacct.txt"), sacct_rows(epoch, jobs))
    write_atomic(os.path.join(out_dir, "accounts.txt"), accounts_listing(cluster, jobs))
    print(f"{len(jobs)} jobs, {len({j['vc'] for j in jobs})} accounts, {len({j['user'] for j in jobs})} users -> {out_dir}")


if __name__ == "__main__":
    main(sys.argv)
