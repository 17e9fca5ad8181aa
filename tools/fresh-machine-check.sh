#!/usr/bin/env bash
# Proves the README's promise: on a fresh Debian 12 machine, as root, `bash tools/test.sh` and
# `bash tools/demo.sh` work from a fresh clone. A developer machine cannot prove it: a package
# installed there by hand, once, hides a missing install step. So this script makes a throw-away
# Debian 12 root with none of the project's packages (mmdebstrap, --variant=minbase), clones a
# revision into it, and runs the two commands there as root, exactly as the README says.
#
# Then it installs the Debian packages the suite built on a second fresh root, a machine that
# never built cascade (minbase and systemd), with apt, as docs/install.md says, and runs them.
#
# Usage: bash tools/fresh-machine-check.sh [--rev REV] [--only test|demo] [--workdir DIR] [--keep]
#   --rev REV      the git revision to test (default: HEAD of the repository this script is in).
#                  It is cloned: uncommitted changes are NOT tested.
#   --only STEP    run only `test` (tools/test.sh) or only `demo` (tools/demo.sh); default both,
#                  and then the packages (they need the test step's build).
#   --workdir DIR  where the root and the logs go (must not exist or be empty;
#                  default: a new directory under /var/tmp).
#   --keep         keep the work directory (root, logs) afterwards; otherwise it is removed,
#                  also on failure or interrupt.
# Exit status: 0 every step passed, 1 a step (or the set-up of the root) failed, 2 usage / not root.
# Docs: docs/fresh-machine.md.
set -euo pipefail

# The host's apt sources are filtered down to these suites of the main archive (component main):
# what a fresh Debian 12 machine has, and nothing the host may have added (other vendors' repos).
readonly WANTED_SUITES="bookworm bookworm-updates bookworm-security"
# Generous limits: measured on 2 busy cores, mmdebstrap takes ~35 s, test.sh ~10 min (set-up,
# build, suite), demo.sh ~15 s (set-up and build already done by then).
readonly MMDEBSTRAP_TIMEOUT=30m TEST_TIMEOUT=60m DEMO_TIMEOUT=15m PACKAGES_TIMEOUT=20m
# The clean environment every command in the root gets: what a root login shell would have,
# nothing inherited from whoever runs this script (no CC, CXX, CMAKE_*, proxies, locale...).
readonly CLEAN_ENV=(env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
                    TERM=dumb LANG=C.UTF-8)
# Where the clone lives inside the root.
readonly CLONE_IN_ROOT=/root/cascade

REPO=$(cd "$(dirname "$0")/.." && pwd)
REV=HEAD ONLY="" WORK="" KEEP=0
ROOT="" COMMIT="" SOURCES=""
TARGET=""         # the second root, where the packages are installed
STEP_JOB=""       # the background job of the step running now (for interrupts)
FAILED=0          # set when a step fails

usage() { sed -n '/^# Usage:/,/^# Docs:/s/^# \{0,1\}//p' "$0"; }
say() { printf '%s\n' "$*"; }
die() { printf 'fresh-machine-check: %s\n' "$*" >&2; exit 1; }
# Seconds as "4m07s".
human_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

require_root() {
  # mmdebstrap in root mode, chroot and the mounts all need root; so do some tests.
  if [ "$(id -u)" -ne 0 ]; then
    echo "fresh-machine-check: must run as root (it builds a Debian root and chroots into it)" >&2
    exit 2
  fi
}

parse_args() {
  while [ $# -gt 0 ]; do
    case $1 in
      --rev) [ $# -ge 2 ] || { usage >&2; exit 2; }; REV=$2; shift 2 ;;
      --only) [[ $# -ge 2 && ( $2 == test || $2 == demo ) ]] || { usage >&2; exit 2; }; ONLY=$2; shift 2 ;;
      --workdir) [ $# -ge 2 ] || { usage >&2; exit 2; }; WORK=$2; shift 2 ;;
      --keep) KEEP=1; shift ;;
      -h|--help) usage; exit 0 ;;
      *) echo "fresh-machine-check: unknown argument: $1" >&2; usage >&2; exit 2 ;;
    esac
  done
}

# --- the revision --------------------------------------------------------------------------------
resolve_revision() {
  COMMIT=$(git -C "$REPO" rev-parse --verify --quiet "$REV^{commit}") ||
    die "no such revision in $REPO: $REV"
  say "revision: $REV = $(git -C "$REPO" log -1 --format='%h %s' "$COMMIT" | cut -c1-100)"
  # The test runs on a fresh clone, as a new user would: say plainly what is not covered.
  local dirty
  # --no-optional-locks: others may be committing in this repository right now; a status that
  # took the index lock to refresh it could make their commit fail.
  dirty=$(git -C "$REPO" --no-optional-locks status --porcelain --untracked-files=no | wc -l)
  if [ "$dirty" -gt 0 ]; then
    say "note: $REPO has $dirty uncommitted change(s): they are NOT tested (a fresh clone of $REV is)"
  else
    say "note: a fresh clone of $REV is tested; uncommitted changes would not be"
  fi
}

# The revision's own package list: its tools/setup.sh --list. Read before anything is created: a
# revision whose set-up cannot list its packages cannot be checked.
read_project_packages() {
  mapfile -t PROJECT_PACKAGES < <(git -C "$REPO" show "$COMMIT:tools/setup.sh" 2>/dev/null |
    bash -s -- --list 2>/dev/null)
  [ ${#PROJECT_PACKAGES[@]} -gt 0 ] ||
    die "$REV: tools/setup.sh --list names no package (revisions before it are not supported)"
}

# --- the work directory and clean-up -------------------------------------------------------------
make_work_dir() {
  if [ -z "$WORK" ]; then
    WORK=$(mktemp -d /var/tmp/cascade-fresh.XXXXXX)
  else
    # It is removed at the end: refuse a directory that holds anything we did not put there.
    [ ! -e "$WORK" ] || [ -z "$(ls -A "$WORK")" ] || die "--workdir $WORK exists and is not empty"
    mkdir -p "$WORK"
  fi
  WORK=$(realpath "$WORK")
  ROOT=$WORK/root
  SOURCES=$WORK/bookworm.sources
  say "work dir: $WORK$([ "$KEEP" = 1 ] && echo ' (kept: --keep)')"
}

# Mount points at or below the work dir, as this (the host's) mount namespace sees them, deepest
# first. The chroot's own mounts live in a private namespace and never show here; only a killed
# mmdebstrap could leave one.
mounts_under_work() {
  findmnt -rn -o TARGET | awk -v w="$WORK" '$0 == w || index($0, w "/") == 1' | sort -r
}

unmount_under_work() {
  local mp
  while read -r mp; do
    [ -n "$mp" ] || continue
    umount -R "$mp" 2>/dev/null || umount -R -l "$mp" 2>/dev/null || true
  done < <(mounts_under_work)
}

# The pid namespace ends every process of a step with it; this is the second line of defence:
# anything whose root directory is still our root is killed (by pid) before the root is removed.
kill_processes_in_root() {
  local p root
  for root in "$ROOT" "$TARGET"; do
    [ -n "$root" ] && [ -d "$root" ] || continue
    for p in /proc/[0-9]*; do
      [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -KILL "${p#/proc/}" 2>/dev/null
    done
  done
  return 0
}

stop_running_step() {
  [ -n "$STEP_JOB" ] || return 0
  # The pid file names the `timeout` process: it passes TERM on to the whole step, then KILLs it.
  [ -s "$WORK/.step.pid" ] && kill -TERM "$(cat "$WORK/.step.pid")" 2>/dev/null
  wait "$STEP_JOB" 2>/dev/null
  STEP_JOB=""
}

cleanup() {
  local rc=$?
  set +e
  stop_running_step
  [ -n "$WORK" ] || exit "$rc"
  kill_processes_in_root
  unmount_under_work
  if [ -n "$(mounts_under_work)" ]; then
    # Never rm -rf through a live mount (a bind of /dev would take the host's devices with it).
    say "work dir NOT removed, something is still mounted below it: $(mounts_under_work | tr '\n' ' ')"
  elif [ "$KEEP" = 1 ]; then
    say "work dir kept: $WORK (logs: $WORK/*.log; remove with: rm -rf --one-file-system $WORK)"
  else
    # --one-file-system: even if a mount appeared after the check, rm does not cross into it.
    rm -rf --one-file-system "$WORK" && say "work dir removed ($WORK; --keep keeps the root and the logs)"
  fi
  exit "$rc"
}

on_signal() {
  say ""
  say "interrupted: stopping the running step and cleaning up"
  exit 130   # the EXIT trap (cleanup) stops the step and removes the work dir
}

# --- running a step with a log ------------------------------------------------------------------
# Prefixes every line with the seconds since the step started, so the log shows where the time
# went (set-up, build, suite).
stamp_lines() {
  local start=$EPOCHSECONDS line
  while IFS= read -r line || [ -n "$line" ]; do
    printf '+%5ds | %s\n' $((EPOCHSECONDS - start)) "$line"
  done
}

# Runs LIMIT CMD... under `timeout`, output stamped into LOG; sets STEP_RC and STEP_SECONDS.
# The step runs in the background and is waited for, so an interrupt is handled at once
# (bash runs traps only between foreground commands).
run_logged() {  # log, limit, cmd...
  local log=$1 limit=$2 start=$EPOCHSECONDS; shift 2
  rm -f "$WORK/.step.pid" "$WORK/.step.rc"
  {
    if (echo "$BASHPID" >"$WORK/.step.pid"; exec timeout --kill-after=60 "$limit" "$@") 2>&1
    then echo 0 >"$WORK/.step.rc"; else echo $? >"$WORK/.step.rc"; fi
  } | stamp_lines >"$log" &
  STEP_JOB=$!
  wait "$STEP_JOB" || true
  STEP_JOB=""
  STEP_RC=$(cat "$WORK/.step.rc" 2>/dev/null || echo 255)
  STEP_SECONDS=$((EPOCHSECONDS - start))
}

# What a step's exit status means, in words.
describe_rc() {  # rc, limit
  case $1 in
    0) echo "PASS" ;;
    124|137) echo "FAIL (timed out after $2)" ;;
    *) echo "FAIL (exit $1)" ;;
  esac
}

# --- the root ------------------------------------------------------------------------------------
# Prints the bookworm stanzas of deb822 input with only the wanted suites and component main,
# Types deb, comments dropped; other fields (URIs, Signed-By, ...) kept as they are.
filter_deb822_sources() {
  awk -v wanted="$WANTED_SUITES" '
    function has_word(list, word,   n, w, i) {
      n = split(list, w, /[ \t\n]+/); for (i = 1; i <= n; i++) if (w[i] == word) return 1; return 0
    }
    BEGIN { RS = ""; FS = "\n" }
    {
      nf = 0; split("", name); split("", value)
      for (i = 1; i <= NF; i++) {
        line = $i
        if (line ~ /^#/) continue
        if (line ~ /^[ \t]/) { if (nf) value[nf] = value[nf] "\n" line; continue }
        p = index(line, ":"); if (!p) continue
        v = substr(line, p + 1); sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v)
        name[++nf] = substr(line, 1, p - 1); value[nf] = v
      }
      types = suites = comps = enabled = ""
      for (i = 1; i <= nf; i++) {
        key = tolower(name[i])
        if (key == "types") types = value[i]; else if (key == "suites") suites = value[i]
        else if (key == "components") comps = value[i]; else if (key == "enabled") enabled = value[i]
      }
      if (tolower(enabled) == "no" || !has_word(types, "deb") || !has_word(comps, "main")) next
      kept = ""; n = split(suites, s, /[ \t\n]+/)
      for (j = 1; j <= n; j++) if (has_word(wanted, s[j])) kept = kept (kept == "" ? "" : " ") s[j]
      if (kept == "") next
      for (i = 1; i <= nf; i++) {
        key = tolower(name[i]); v = value[i]
        if (key == "types") v = "deb"
        else if (key == "suites") v = kept
        else if (key == "components") v = "main"
        print name[i] ":" (v ~ /^\n/ ? "" : " ") v
      }
      print ""
    }'
}

# The same for one-line sources.list input, written out as deb822 (one file, one format).
filter_oneline_sources() {
  awk -v wanted="$WANTED_SUITES" '
    function has_word(list, word,   n, w, i) {
      n = split(list, w, /[ \t]+/); for (i = 1; i <= n; i++) if (w[i] == word) return 1; return 0
    }
    {
      line = $0; sub(/#.*/, "", line)
      if (line !~ /^[ \t]*deb[ \t]/) next
      opts = ""
      if (match(line, /\[[^\]]*\]/)) {
        opts = substr(line, RSTART + 1, RLENGTH - 2)
        line = substr(line, 1, RSTART - 1) " " substr(line, RSTART + RLENGTH)
      }
      sub(/^[ \t]+/, "", line); n = split(line, w, /[ \t]+/)
      if (n < 4 || !has_word(wanted, w[3])) next
      main = 0; for (i = 4; i <= n; i++) if (w[i] == "main") main = 1
      if (!main) next
      print "Types: deb"; print "URIs: " w[2]; print "Suites: " w[3]; print "Components: main"
      m = split(opts, o, /[ \t]+/)
      for (i = 1; i <= m; i++) {
        p = index(o[i], "="); if (!p) continue
        k = substr(o[i], 1, p - 1); v = substr(o[i], p + 1)
        if (k == "signed-by") print "Signed-By: " v
        else if (k == "arch") { gsub(/,/, " ", v); print "Architectures: " v }
        else if (k == "trusted") print "Trusted: " v
      }
      print ""
    }'
}

# The host's own Debian mirror, as the host's apt sources give it: no mirror is named here, so the
# check uses whatever this machine is allowed to reach.
write_bookworm_sources() {
  local f
  : >"$SOURCES"
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && filter_deb822_sources <"$f" >>"$SOURCES"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] && filter_oneline_sources <"$f" >>"$SOURCES"
  done
  [ -s "$SOURCES" ] || die "the host's apt sources have no bookworm main suite ($WANTED_SUITES)"
  say "apt sources (the host's, bookworm main only): $(grep -ci '^suites:' "$SOURCES") stanza(s), suites:" \
      "$(sed -n 's/^[Ss]uites: *//p' "$SOURCES" | tr '\n' ' ')"
}

create_root() {
  make_debian_root "$ROOT" "$WORK/mmdebstrap.log"
  MMDEBSTRAP_SECONDS=$STEP_SECONDS
}

# make_debian_root DIR LOG [MMDEBSTRAP OPTION...]: a bookworm minbase root from the host's sources.
make_debian_root() {
  local dir=$1 log=$2
  shift 2
  say ""
  say "== mmdebstrap: bookworm, --variant=minbase $*, into $dir (log: $log)"
  # --mode=root: we are root; the mounts mmdebstrap needs live in its own namespace.
  # Check-Valid-Until false: the host's sources may be a dated snapshot whose Release files have
  # expired; the option is written into the root (etc/apt/apt.conf.d/99mmdebstrap), so the
  # apt-get update of tools/setup.sh inside gets it too.
  run_logged "$log" "$MMDEBSTRAP_TIMEOUT" \
    mmdebstrap --mode=root --variant=minbase --format=directory \
      --aptopt='Acquire::Check-Valid-Until "false"' "$@" \
      bookworm "$dir" "$SOURCES"
  if [ "$STEP_RC" != 0 ]; then
    tail -n 20 "$log"
    die "mmdebstrap: $(describe_rc "$STEP_RC" "$MMDEBSTRAP_TIMEOUT")"
  fi
  say "   done in $(human_time "$STEP_SECONDS"):" \
      "$(dpkg-query --admindir="$dir/var/lib/dpkg" -W | wc -l) packages"
}

# setup.sh runs apt-get update/install inside the root: it must find the same sources there.
check_root_sources() {
  local inside key
  inside=$ROOT/etc/apt/sources.list.d/0000$(basename "$SOURCES")  # mmdebstrap's name for it
  cmp -s "$SOURCES" "$inside" || die "the root's apt sources ($inside) differ from $SOURCES"
  [ ! -s "$ROOT/etc/apt/sources.list" ] ||
    die "the root has an unexpected $ROOT/etc/apt/sources.list"
  grep -q 'Check-Valid-Until "false"' "$ROOT/etc/apt/apt.conf.d/99mmdebstrap" ||
    die "Check-Valid-Until is not in the root's apt configuration"
  # The sources name their keyrings by path; those paths must exist inside the root too.
  while read -r key; do
    [ -f "$ROOT$key" ] || die "the sources name keyring $key, which the root lacks"
  done < <(sed -n 's/^[Ss]igned-[Bb]y: *\(\/.*\)$/\1/p' "$SOURCES" | sort -u)
  say "root's apt sources: /etc/apt/sources.list.d/$(basename "$inside") = the host's bookworm sources;" \
      "Check-Valid-Until off; keyrings present"
}

# dpkg-query on the root's database, from the host (no chroot needed to read it).
root_dpkg_query() { dpkg-query --admindir="$ROOT/var/lib/dpkg" "$@"; }

# Prints the packages of the root that minbase is made of: Essential or Priority required, and apt,
# with everything they depend on (alternatives and virtual packages resolved to what is
# installed). Computed from the root's own dpkg database.
minbase_closure() {
  # shellcheck disable=SC2016  # a dpkg-query format, not a shell expansion
  root_dpkg_query -W -f='${db:Status-Abbrev}\t${Package}\t${Essential}\t${Priority}\t${Provides}\t'\
'${Pre-Depends}, ${Depends}\n' |
    awk -F'\t' '
      function names(list, out,   n, parts, i, name) {   # "a (>= 1) | b:any, c" -> out[a], out[b], out[c]
        n = split(list, parts, /[,|]/)
        for (i = 1; i <= n; i++) {
          name = parts[i]; sub(/^[ \t]+/, "", name); sub(/[ \t(:].*/, "", name)
          if (name != "") out[name] = 1
        }
      }
      $1 ~ /^ii/ {
        pkg = $2; installed[pkg] = 1; deps[pkg] = $6
        split("", p); names($5, p); for (v in p) provider[v] = provider[v] " " pkg
        if ($3 == "yes" || $4 == "required" || pkg == "apt") queue[++tail] = pkg
      }
      END {
        for (head = 1; head <= tail; head++) {
          pkg = queue[head]; if (pkg in seen) continue; seen[pkg] = 1
          split("", d); names(deps[pkg], d)
          for (name in d) {
            if (name in installed) queue[++tail] = name
            n = split(provider[name], by, " "); for (i = 1; i <= n; i++) queue[++tail] = by[i]
          }
        }
        for (pkg in seen) print pkg
      }' | sort
}

# The whole point: the project's packages must be missing, or the run proves nothing. The only
# ones allowed are those minbase itself is made of (e.g. adduser, which apt depends on): they are
# on every Debian system.
check_root_lacks_project_packages() {
  local pkg present=() in_minbase=() minbase=$WORK/packages-minbase.txt extra
  minbase_closure >"$minbase"
  for pkg in "${PROJECT_PACKAGES[@]}"; do
    # shellcheck disable=SC2016  # a dpkg-query format, not a shell expansion
    root_dpkg_query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null | grep -q '^ii' || continue
    if grep -qx "$pkg" "$minbase"; then in_minbase+=("$pkg"); else present+=("$pkg"); fi
  done
  [ ${#present[@]} -eq 0 ] || die "the fresh root already has project packages: ${present[*]}"
  # shellcheck disable=SC2016
  extra=$(root_dpkg_query -W -f='${Package}\n' | sort | comm -23 - "$minbase" | tr '\n' ' ')
  [ -z "$extra" ] || die "the root has packages beyond minbase: $extra"
  say "root: $(wc -l <"$minbase") packages, all of them minbase" \
      "(essential, required, apt and their dependencies)"
  say "root lacks the project's packages: $(( ${#PROJECT_PACKAGES[@]} - ${#in_minbase[@]} )) of the" \
      "${#PROJECT_PACKAGES[@]} of tools/setup.sh are not installed" \
      "${in_minbase[*]:+(installed, as part of minbase: ${in_minbase[*]})}"
}

# A plain clone on the host (git is not in minbase, and a new user's checkout is a clone too).
# --no-local: a real clone (copied objects, no hard links into the developer's repository).
clone_revision_into_root() {
  git clone --quiet --no-local "$REPO" "$ROOT$CLONE_IN_ROOT"
  git -C "$ROOT$CLONE_IN_ROOT" -c advice.detachedHead=false checkout --quiet "$COMMIT" ||
    die "cannot check out $COMMIT in the clone"
  say "clone: $CLONE_IN_ROOT in the root at $(git -C "$ROOT$CLONE_IN_ROOT" rev-parse --short HEAD)"
}

# A chroot has no init: a service a package would start there would outlive the step, on the
# host's network. policy-rc.d is Debian's switch that chroot builders use to say "start nothing".
forbid_service_starts() {  # [root]
  local root=${1:-$ROOT}
  printf '#!/bin/sh\n# fresh-machine-check: no services in a throw-away chroot\nexit 101\n' \
    >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
}

# The command prefix that runs something in the root: a private mount namespace (nothing mounted
# shows on the host, everything goes when the step ends) and a pid namespace (no process of the
# step survives it), /proc, /sys, /dev (rbind, with /dev/pts), a fresh /dev/shm, then chroot with
# the clean environment. The namespace's first shell only mounts and waits: the step itself is not
# pid 1, so it gets signals as usual.
# The root is first bind-mounted on itself so that / inside is a mount point, as on a real
# machine: without it `unshare --propagation private` in there (tests/install/deb_install_test.sh)
# fails with "cannot change root filesystem propagation: Invalid argument".
# shellcheck disable=SC2016  # expanded by the namespace's shell, not here
readonly MOUNT_AND_RUN='
set -eu
root=$1; shift
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --rbind /dev "$root/dev"
mountpoint -q "$root/dev/pts" || mount -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts"
mount -t tmpfs -o nosuid,nodev,mode=1777 shm "$root/dev/shm"
set +e
"$@"
rc=$?
exit "$rc"'

# Sets IN_ROOT, the prefix of a command run in the root, as root, in the clean environment (an
# array, not a function: `timeout` must be able to exec it).
set_in_root_prefix() {
  IN_ROOT=(unshare --mount --propagation private --pid --fork --kill-child --
           bash -c "$MOUNT_AND_RUN" mount-and-run "$ROOT" chroot "$ROOT" "${CLEAN_ENV[@]}")
}

# Sets IN_TARGET_NS: the namespaces and mounts of IN_ROOT for the second root, on the host's
# side of the chroot (an array too: `timeout` execs it).
set_in_target_prefix() {
  IN_TARGET_NS=(unshare --mount --propagation private --pid --fork --kill-child --
                bash -c "$MOUNT_AND_RUN" mount-and-run "$TARGET")
}

copy_resolv_conf() {  # [root]
  # Name resolution for apt inside: the host's resolver, copied (not linked) into the root.
  local root=${1:-$ROOT}
  rm -f "$root/etc/resolv.conf"
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
}

record_packages() {  # file
  # shellcheck disable=SC2016  # a dpkg-query format, not a shell expansion
  "${IN_ROOT[@]}" dpkg-query -W -f='${Package}\n' | sort >"$1"
}

# The chroot shares the host's network (apt needs the mirror), so its loopback is the host's: the
# tests and the demo use fixed ports there, and anything the host runs on them at the same time
# (another checkout's suite or demo) makes them fail with "port taken". Say so up front.
warn_busy_cascade_ports() {
  local busy
  busy=$(ss -Hltn 2>/dev/null | awk '{ n = split($4, a, ":"); p = a[n] + 0
                                        if ((p >= 7400 && p < 8000) || p == 9000) print p }' |
         sort -un | tr '\n' ' ')
  [ -z "$busy" ] || say "   warning: loopback ports in cascade's range are in use on the host: $busy" \
                        "(shared with the chroot; a test or the demo may fail with 'port taken')"
}

# --- the two commands ----------------------------------------------------------------------------
# Seconds into the test.sh log of the first line matching a pattern (the log is stamped).
stamp_of() {  # log, extended regex
  sed -E -n "s/^\+ *([0-9]+)s \| ($2).*/\1/p" "$1" | head -n 1
}

# Where test.sh's time went, from the stamps: set-up ends with apt's last line before the build's
# first "[ n%]" line (cmake configure prints nothing: the gap is its time), ctest starts at
# "Test project" (tools/check_setup.py, just before it, is counted with the build).
report_test_phases() {  # log, total seconds
  local log=$1 total=$2 setup_end build_at suite_at
  build_at=$(stamp_of "$log" '\[ *[0-9]+%\]')
  suite_at=$(stamp_of "$log" 'Test project ')
  setup_end=$(sed -E -n '/^\+ *[0-9]+s \| \[ *[0-9]+%\]/q; s/^\+ *([0-9]+)s \| .*/\1/p' "$log" | tail -n 1)
  build_at=${build_at:-$total} suite_at=${suite_at:-$total} setup_end=${setup_end:-0}
  say "   phases: set-up $(human_time "$setup_end")," \
      "cmake configure $(human_time $((build_at - setup_end)))," \
      "build $(human_time $((suite_at - build_at))), ctest $(human_time $((total - suite_at)))"
}

report_ctest_outcome() {  # log
  local log=$1 summary
  summary=$(sed -n 's/^+ *[0-9]*s | \([0-9]*% tests passed.*\)/\1/p' "$log" | tail -n 1)
  say "   ctest: ${summary:-no ctest summary line (the suite did not run to its end)}"
  list_ctest_block "$log" 'The following tests did not run:' "skipped tests (ctest counts them as passed):"
  list_ctest_block "$log" 'The following tests FAILED:' "failed tests:"
}

# Prints the "N - name (reason)" lines of one of ctest's closing lists, under a title.
list_ctest_block() {  # log, ctest's heading, title
  local lines
  lines=$(sed -n "/$2/,/^+ *[0-9]*s | [^[:space:]0-9]/p" "$1" |
            sed -n 's/^+ *[0-9]*s | \t*\( *[0-9]* - .*\)/     \1/p')
  [ -z "$lines" ] || { say "   $3"; say "$lines"; }
}

# What tools/setup.sh installed during a step: dpkg-query before and after, compared.
report_installed_packages() {  # step, log, before, after
  local step=$1 log=$2 added explicit
  added=$(comm -13 "$3" "$4")
  printf '%s\n' "$added" | sed '/^$/d' >"$WORK/packages-installed-by-$step.txt"
  explicit=$(sed -n 's/^+ *[0-9]*s | setup: //p' "$log" | head -n 1)
  say "   packages installed during the step: $(wc -l <"$WORK/packages-installed-by-$step.txt")" \
      "(set-up said: ${explicit:-nothing})"
  [ -z "$added" ] || tr '\n' ' ' <<<"$added" | fold -s -w 96 | sed 's/^/     /'
  [ -z "$added" ] || echo
}

# The demo prints a heading per step ("== a. ..."): how many, and the last one reached.
report_demo_outcome() {  # log
  local headings
  headings=$(sed -n 's/^+ *[0-9]*s | .*== \(.*\)/\1/p' "$1" | sed 's/\x1b\[[0-9;]*m//g')
  say "   demo: $(grep -c . <<<"$headings" || true) headings printed, the last: ${headings##*$'\n'}"
}

# Runs `bash tools/STEP.sh` from the clone, as the README says, and reports.
run_step() {  # step (test|demo), time limit
  local step=$1 limit=$2 log=$WORK/$1.log
  local before=$WORK/packages-before-$1.txt after=$WORK/packages-after-$1.txt
  say ""
  say "== bash tools/$step.sh (in the root, as root, clean environment; limit $limit; log: $log)"
  warn_busy_cascade_ports
  copy_resolv_conf
  record_packages "$before"
  say "   started $(date -u +%H:%M:%S) UTC"
  run_logged "$log" "$limit" "${IN_ROOT[@]}" bash -c "cd $CLONE_IN_ROOT && bash tools/$step.sh"
  record_packages "$after"
  RESULT[$step]="$(describe_rc "$STEP_RC" "$limit"), $(human_time "$STEP_SECONDS")"
  say "   $step: ${RESULT[$step]}"
  if [ "$step" = test ]; then
    report_test_phases "$log" "$STEP_SECONDS"
    report_ctest_outcome "$log"
  else
    report_demo_outcome "$log"
  fi
  report_installed_packages "$step" "$log" "$before" "$after"
  if [ "$STEP_RC" != 0 ]; then
    FAILED=1
    say "   last lines of $log:"
    tail -n 25 "$log" | sed 's/^/   /'
  fi
}


# --- the packages, on a machine that never built cascade -----------------------------------------
# The test step built the Debian packages (tests/install: build/tests/install/debs in the clone).
# A second fresh root, minbase and systemd (a server's init) and nothing of the project's, gets
# them with apt, which must find every dependency in Debian's archive: a Depends: that names too
# little shows here, where nothing was installed for the build. The check itself is the suite's
# own (tests/install/installed_packages_check.sh): user, units, hub and agent as their units run
# them, a program built against libcascade-dev, purge. It runs without network (a private
# namespace: the hub's fixed port is its own), so apt downloads what it needs first.
readonly TARGET_DEBS=/var/cache/cascade-debs
# shellcheck disable=SC2016  # expanded by the namespace's shell, not here
readonly OFFLINE_CHECK='
set -eu
target=$1; shift
mount -t tmpfs -o mode=755 run "$target/run"
ip link set lo up
exec bash "$@"'

download_for_target() {  # log
  local debs=$ROOT$CLONE_IN_ROOT/build/tests/install/debs
  ls "$debs"/*.deb >/dev/null 2>&1 || { say "   no packages in $debs (did the suite build them?)"; return 1; }
  mkdir -p "$TARGET$TARGET_DEBS"
  cp "$debs"/*.deb "$TARGET$TARGET_DEBS/"
  copy_resolv_conf "$TARGET"
  "${IN_TARGET_NS[@]}" chroot "$TARGET" "${CLEAN_ENV[@]}" bash -c "
    apt-get update -qq && apt-get install -y -qq --no-install-recommends --download-only \
      $TARGET_DEBS/*.deb cmake g++ make" >"$1" 2>&1
}

run_packages_step() {
  local log=$WORK/packages.log clone=$ROOT$CLONE_IN_ROOT
  TARGET=$WORK/target
  make_debian_root "$TARGET" "$WORK/mmdebstrap-target.log" --include=systemd
  forbid_service_starts "$TARGET"
  set_in_target_prefix
  say ""
  say "== the packages on the second root: apt install, run, build against, purge (log: $log)"
  if ! download_for_target "$WORK/packages-download.log"; then
    tail -n 20 "$WORK/packages-download.log" | sed 's/^/   /'
    RESULT[packages]="FAIL (apt could not get what the packages need)"
    FAILED=1
    return
  fi
  run_logged "$log" "$PACKAGES_TIMEOUT" "${IN_TARGET_NS[@]}" unshare --net -- \
    bash -c "$OFFLINE_CHECK" offline-check "$TARGET" \
    "$clone/tests/install/installed_packages_check.sh" --consumer "$clone" "$TARGET" "$TARGET$TARGET_DEBS"
  RESULT[packages]="$(describe_rc "$STEP_RC" "$PACKAGES_TIMEOUT"), $(human_time "$STEP_SECONDS")"
  say "   packages: ${RESULT[packages]}"
  sed -n 's/^+ *[0-9]*s | \(== .*\)/   \1/p' "$log"
  if [ "$STEP_RC" != 0 ]; then
    FAILED=1
    tail -n 25 "$log" | sed 's/^/   /'
  fi
}

main() {
  parse_args "$@"
  require_root
  command -v mmdebstrap >/dev/null ||
    die "mmdebstrap is missing (apt-get install mmdebstrap; tools/setup.sh installs it)"
  local t0=$EPOCHSECONDS
  say "fresh-machine check of $REPO ($(date -u '+%Y-%m-%d %H:%M UTC'))"
  resolve_revision
  read_project_packages
  trap cleanup EXIT
  trap on_signal INT TERM HUP
  make_work_dir
  write_bookworm_sources
  create_root
  check_root_sources
  check_root_lacks_project_packages
  clone_revision_into_root
  forbid_service_starts
  set_in_root_prefix

  declare -gA RESULT=()
  case $ONLY in
    test) run_step test "$TEST_TIMEOUT" ;;
    demo) run_step demo "$DEMO_TIMEOUT" ;;
    *) run_step test "$TEST_TIMEOUT"; run_step demo "$DEMO_TIMEOUT"
       if [ "${RESULT[test]}" = "${RESULT[test]#FAIL}" ]; then run_packages_step; fi ;;
  esac

  say ""
  say "== summary ($(human_time $((EPOCHSECONDS - t0))) in all;" \
      "mmdebstrap $(human_time "$MMDEBSTRAP_SECONDS"))"
  local s
  for s in test demo; do [ -z "${RESULT[$s]:-}" ] || say "   bash tools/$s.sh: ${RESULT[$s]}"; done
  [ -z "${RESULT[packages]:-}" ] || say "   packages on a second fresh root: ${RESULT[packages]}"
  [ "$FAILED" = 0 ] || { say "   FAILED"; exit 1; }
  say "   all passed"
}

main "$@"
