# Turns a sacctmgr listing as `--policy slurm:accounts=FILE` reads it (docs/formats/sacctmgr.md:
# `sacctmgr -P show assoc [tree]` and `sacctmgr -P show qos` tables, '|'-separated, each after
# its header line, separated by blank lines) into the sacctmgr commands that create the same
# QOS, accounts and user associations in a fresh slurmdbd. Used by harness.sh; one command a
# line, fields separated by tabs:
#   qos NAME                        sacctmgr add qos NAME
#   qosset NAME ATTR=V...           sacctmgr modify qos NAME set ATTR=V...
#   account NAME ATTR=V...          sacctmgr add account NAME ATTR=V... (parent first)
#   user NAME ACCOUNT ATTR=V...     sacctmgr add user NAME account=ACCOUNT ATTR=V...
# The Cluster column is ignored (the harness's cluster is used); root's own row is not added
# (slurmdbd has it). A column it does not know is an error naming its file:line:col.
BEGIN { FS = "|"; table = "" }

function trim(s) { sub(/^[ \t\r]+/, "", s); sub(/[ \t\r]+$/, "", s); return s }
function lead(s,   n) { n = match(s, /[^ ]/); return n ? n - 1 : 0 }
function fail(col, msg) {
  printf "%s:%d:%d: %s\n", FILENAME, FNR, col, msg > "/dev/stderr"; bad = 1; exit 2
}
# The sacctmgr attribute of a column (lower case, '_'/' ' removed), "" for an ignored one.
function assoc_attr(c) {
  if (c == "share" || c == "fairshare") return "fairshare"
  if (c == "grptres") return "GrpTRES"
  if (c == "grpjobs") return "GrpJobs"
  if (c == "grpsubmit" || c == "grpsubmitjobs") return "GrpSubmitJobs"
  if (c == "maxjobs") return "MaxJobs"
  if (c == "maxtres" || c == "maxtresperjob") return "MaxTRES"
  if (c == "maxsubmit" || c == "maxsubmitjobs") return "MaxSubmitJobs"
  if (c == "qos") return "QOS"
  if (c == "defqos" || c == "defaultqos") return "DefaultQOS"
  if (c == "cluster" || c == "account" || c == "user" || c == "partition" || c == "parname" || c == "parentname") return "-"
  return ""
}
function qos_attr(c) {
  if (c == "priority") return "Priority"
  if (c == "preempt") return "Preempt"
  if (c == "preemptmode") return "PreemptMode"
  if (c == "usagefactor") return "UsageFactor"
  if (c == "grptres") return "GrpTRES"
  if (c == "grpjobs") return "GrpJobs"
  if (c == "grpsubmit" || c == "grpsubmitjobs") return "GrpSubmitJobs"
  if (c == "maxtres" || c == "maxtresperjob") return "MaxTRESPerJob"
  if (c == "maxwall" || c == "maxwalldurationperjob") return "MaxWall"
  if (c == "maxtrespu" || c == "maxtresperuser") return "MaxTRESPerUser"
  if (c == "maxjobspu" || c == "maxjobsperuser") return "MaxJobsPerUser"
  if (c == "maxsubmitpu" || c == "maxsubmitjobsperuser") return "MaxSubmitJobsPerUser"
  if (c == "name") return "-"
  return ""
}

function header(   i, c, pos) {
  delete col; delete attr; table = ""
  for (i = 1; i <= NF; ++i) { c = tolower(trim($i)); gsub(/[ _]/, "", c); col[c] = i; names[i] = c }
  table = ("account" in col) ? "assoc" : (("name" in col) ? "qos" : "")
  if (table == "") fail(1, "expected a header with an Account or a Name column, got \"" $0 "\"")
  pos = 1
  for (i = 1; i <= NF; ++i) {
    if (names[i] == "") { pos += length($i) + 1; continue }
    attr[i] = table == "assoc" ? assoc_attr(names[i]) : qos_attr(names[i])
    if (attr[i] == "") fail(pos, "column '" trim($i) "' is not loaded into slurmdbd by the harness")
    pos += length($i) + 1
  }
  depth_parent[0] = "root"
}

function attrs(skip_share,   i, v, out) {
  out = ""
  for (i = 1; i <= NF; ++i) {
    if (!(i in attr) || attr[i] == "-") continue
    v = trim($i)
    if (v == "" || (attr[i] == "PreemptMode" && tolower(v) == "cluster")) continue
    if (attr[i] == "fairshare" && skip_share) continue
    out = out "\t" attr[i] "=" v
  }
  return out
}

function assoc_row(   acct, user, d, parent) {
  acct = $(col["account"]); d = lead(acct); acct = trim(acct)
  user = ("user" in col) ? trim($(col["user"])) : ""
  if (user != "") {
    line = "user\t" user "\t" acct
    if ("partition" in col && trim($(col["partition"])) != "") line = line "\tPartition=" trim($(col["partition"]))
    print line attrs(0)
    return
  }
  if (acct == "root") return
  if ("parname" in col) parent = trim($(col["parname"]))
  else if ("parentname" in col) parent = trim($(col["parentname"]))
  else parent = (d > 0 && (d - 1) in depth_parent) ? depth_parent[d - 1] : "root"
  if (parent == "") parent = "root"
  depth_parent[d] = acct
  print "account\t" acct "\tParent=" parent attrs(0)
}

/^[ \t\r]*$/ { table = ""; next }
table == "" { header(); next }
table == "assoc" { assoc_row(); next }
table == "qos" {
  name = trim($(col["name"]))
  if (name != "normal") print "qos\t" name
  qset[++nq] = name attrs(0)
  next
}
END {
  if (bad) exit 2
  # Every QOS exists before any is modified (a Preempt list names others).
  for (i = 1; i <= nq; ++i) { split(qset[i], parts, "\t"); if (index(qset[i], "\t")) print "qosset\t" qset[i] }
}
