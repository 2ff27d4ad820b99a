#!/usr/bin/env bash
# Proves FeatureGate's second promise with a syscall trace: with every feature disabled, the demo SDK creates,
# writes, renames and deletes no file and opens no socket. Then proves the check can fail: with analytics
# enabled and events tracked, the same trace must show file writes and a connect; and a consent-driven run that
# ends with revoke-all must leave only the gate's state file and the consent ledger behind. Events tracked while
# consent is undecided (held in memory) cause no I/O either, and a revoke-all landing while a flush waits on a
# slow collector lets no event reach it afterwards. The remote-data refresher is registered in every run (each
# `remote` step asks it to refresh): while every feature is off it sends nothing and keeps nothing. The README's own
# wiring, with its real URLSessionTransport, creating it and tracking with every feature off, is traced too.
#
# What counts (anything outside /dev and /proc, from any thread, attempted even if it failed):
#   create   open/openat/creat with O_CREAT, O_WRONLY, O_RDWR, O_TRUNC or O_APPEND; mkdir, link, symlink, mknod
#   write    write/pwrite/writev/ftruncate/fallocate on a file (not stdout or stderr); truncate; chmod, chown,
#            utimes and xattr changes; sendfile, copy_file_range, splice
#   rename   rename, renameat, renameat2
#   delete   unlink, unlinkat, rmdir
#   connect  connect
#   send     send, sendto, sendmsg, sendmmsg, and write on a socket
#   socket   socket, socketpair, bind, listen, accept
# The enabled run must show a file write and a TCP connect to 127.0.0.1.
# Reads are fine (the Swift runtime and Foundation read /proc, /sys, libraries and locale data at start-up), and
# so are writes to the runtime's own eventfds and pipes (libdispatch wakes its threads with them).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v strace > /dev/null 2>&1; then
    echo "verify-silence: strace is not installed (apt-get install -y strace)" >&2
    exit 2
fi

# The release build by default: what apps ship (VERIFY_SILENCE_CONFIGURATION=debug traces the debug build).
# `--skip-build` traces the demo already built (CI builds once, with its own flags, for every optimized check).
configuration="${VERIFY_SILENCE_CONFIGURATION:-release}"
[[ "${1:-}" == "--skip-build" ]] || swift build -c "$configuration" --product consent-demo
demo="$(swift build -c "$configuration" --show-bin-path)/consent-demo"
work="$(mktemp -d)"
if [[ -n "${VERIFY_SILENCE_KEEP:-}" ]]; then
    echo "verify-silence: keeping traces in $work"
else
    trap 'rm -rf "$work"' EXIT
fi

syscalls='%file,%network,write,writev,pwrite64,pwritev,pwritev2,ftruncate,fallocate,sendfile,copy_file_range,splice'

# classify TRACE: prints "creates writes renames deletes connects sends sockets inet-connects", one line, and
# writes every offending call to TRACE.found.
classify() {
    awk -v found="$1.found" '
        function outside(path) { return path !~ /^\/(dev|proc)(\/|$)/ }
        function quoted(text) { return match(text, /"[^"]*"/) ? substr(text, RSTART + 1, RLENGTH - 2) : "" }
        function fdpath(text) { return match(text, /^-?[0-9]+<[^>]*>/) ? substr(text, index(text, "<") + 1, RLENGTH - index(text, "<") - 1) : "?" }
        function fdnumber(text) { return match(text, /^-?[0-9]+/) ? substr(text, 1, RLENGTH) + 0 : -1 }
        function hit(kind) { counts[kind]++; print kind ": " raw > found }
        {
            raw = $0
            line = $0
            sub(/^[0-9]+ +/, "", line)
            if (line ~ /^<\.\.\./ || line ~ /^(\+\+\+|---)/) next   # resumed halves were counted at their start
            name = line; sub(/\(.*/, "", name)
            args = substr(line, length(name) + 2)

            if (name ~ /^(open|openat|openat2|creat)$/) {
                path = quoted(args)
                if (path !~ /^\// && name != "open" && name != "creat") {
                    base = fdpath(args); if (base != "?") path = base "/" path
                }
                if ((name == "creat" || args ~ /O_(CREAT|WRONLY|RDWR|TRUNC|APPEND)/) && outside(path)) hit("create")
            } else if (name ~ /^(mkdir|mkdirat|link|linkat|symlink|symlinkat|mknod|mknodat)$/) {
                if (outside(quoted(args))) hit("create")
            } else if (name ~ /^(rename|renameat|renameat2)$/) {
                hit("rename")
            } else if (name ~ /^(unlink|unlinkat|rmdir)$/) {
                if (outside(quoted(args))) hit("delete")
            } else if (name ~ /^(write|pwrite64|writev|pwritev|pwritev2|ftruncate|fallocate)$/) {
                fd = fdnumber(args); target = fdpath(args)
                if (fd == 1 || fd == 2) next
                if (target ~ /^socket:/) hit("send")
                else if (target ~ /^(anon_inode:|pipe:)/) next
                else if (target == "?" || outside(target)) hit("write")
            } else if (name ~ /^(truncate|chmod|fchmod|fchmodat|chown|fchown|lchown|fchownat|utime|utimes|utimensat|futimesat|setxattr|lsetxattr|fsetxattr|removexattr|lremovexattr|fremovexattr)$/) {
                path = quoted(args)
                if (path == "" || outside(path)) hit("write")
            } else if (name ~ /^(sendfile|copy_file_range|splice)$/) {
                hit("write")
            } else if (name == "connect") {
                hit("connect")
                if (args ~ /sa_family=AF_INET6?,/) counts["inet"]++
            } else if (name ~ /^(send|sendto|sendmsg|sendmmsg)$/) {
                hit("send")
            } else if (name ~ /^(socket|socketpair|bind|listen|accept|accept4)$/) {
                hit("socket")
            }
        }
        END {
            printf "%d %d %d %d %d %d %d %d\n", counts["create"], counts["write"], counts["rename"], counts["delete"],
                counts["connect"], counts["send"], counts["socket"], counts["inet"]
        }
    ' "$1"
}

# run NAME ARGS...: runs the demo under strace; writes the counts line to NAME.counts. Not run in a subshell,
# so a failing demo stops the script.
run() {
    local name=$1
    shift
    : > "$work/$name.trace.found"
    if ! env HOME="${DEMO_HOME:-$HOME}" strace -f -qq -y -s 16 -o "$work/$name.trace" -e trace="$syscalls" "$demo" "$@" \
        > "$work/$name.out" 2>&1; then
        echo "verify-silence: the demo failed in run '$name':" >&2
        cat "$work/$name.out" >&2
        exit 1
    fi
    classify "$work/$name.trace" > "$work/$name.counts"
}

failed=0
report() {
    printf '%-58s %7s %6s %7s %7s %8s %5s %7s %12s\n' "$@"
}
report run creates writes renames deletes connects sends sockets tcp-connects

# The README's "Use it" wiring as written (`--readme N`): PrivacyStack, a real URLSessionTransport, an analytics
# buffer with its UploadBackend, a push registration; started, then events tracked and flushed, every feature off.
# Creating URLSessionTransport must not make its session's configuration (on Linux that alone creates directories
# under $HOME), so it runs with a fresh $HOME, which must stay empty.
mkdir -p "$work/readme-home"
DEMO_HOME="$work/readme-home" run readme-off --data-dir "$work/readme-off-data" --readme 5
read -r c w r d n s k i < "$work/readme-off.counts"
report "README wiring, disabled (URLSessionTransport, track:5)" "$c" "$w" "$r" "$d" "$n" "$s" "$k" "$i"
if ! grep -q '^features  \[\]$' "$work/readme-off.out" || ! grep -q '^tracked   0 of 5 event(s); refused 5$' "$work/readme-off.out"; then
    echo "verify-silence: FAILED: the README run did not track its 5 events with every feature off:" >&2
    cat "$work/readme-off.out" >&2
    failed=1
fi
if (( c + w + r + d + n + s + k > 0 )); then
    echo "verify-silence: FAILED: the README's wiring did I/O with every feature off:" >&2
    head -20 "$work/readme-off.trace.found" >&2
    failed=1
fi
if [[ -e "$work/readme-off-data" || -n "$(ls -A "$work/readme-home")" ]]; then
    echo "verify-silence: FAILED: the README's wiring created its data dir or something under \$HOME:" >&2
    (cd "$work" && find readme-home readme-off-data 2> /dev/null) >&2
    failed=1
fi

# Everything disabled: the default config (default-off; a missing file also means off). The data dir must not
# even be created.
# off-consent: consent and ATT steps that change nothing (ATT still undetermined) must not write the ledger.
for spec in "off-idle|none" "off-busy|track:20,disable:all,disable:push,track:5" "off-consent|att:notDetermined,track:10" \
    "off-remote|remote,track:3,remote"; do
    name=${spec%%|*}
    steps=${spec#*|}
    run "$name" --data-dir "$work/$name-data" --steps "$steps"
    read -r c w r d n s k i < "$work/$name.counts"
    report "disabled ($steps)" "$c" "$w" "$r" "$d" "$n" "$s" "$k" "$i"
    if ! grep -q '^features  \[\]$' "$work/$name.out"; then
        echo "verify-silence: run '$name' did not start with every feature disabled:" >&2
        cat "$work/$name.out" >&2
        failed=1
    fi
    if (( c + w + r + d + n + s + k > 0 )); then
        echo "verify-silence: FAILED: the disabled SDK did I/O in run '$name':" >&2
        head -20 "$work/$name.trace.found" >&2
        failed=1
    fi
    if [[ -e "$work/$name-data" ]]; then
        echo "verify-silence: FAILED: the disabled SDK created its data dir in run '$name'" >&2
        failed=1
    fi
done

# Undecided is not denied, and not a licence either: analytics consent is never answered, so events tracked with
# --hold-undecided wait in memory only and are gone at exit.
steps=track:10,att:notDetermined,track:5
run undecided --hold-undecided --data-dir "$work/undecided-data" --steps "$steps"
read -r c w r d n s k i < "$work/undecided.counts"
report "undecided, held ($steps)" "$c" "$w" "$r" "$d" "$n" "$s" "$k" "$i"
if (( c + w + r + d + n + s + k > 0 )); then
    echo "verify-silence: FAILED: events held while consent was undecided caused I/O:" >&2
    head -20 "$work/undecided.trace.found" >&2
    failed=1
fi
if ! grep -q '^held      15 analytics event(s) in memory' "$work/undecided.out"; then
    echo "verify-silence: FAILED: the undecided run did not hold its 15 events in memory (the check is blind):" >&2
    grep '^held' "$work/undecided.out" >&2 || cat "$work/undecided.out" >&2
    failed=1
fi

# Analytics granted (consent permits it and decides it on) and events tracked: the trace must see the I/O, or the
# check above proves nothing. (enable:analytics alone stays off: consent withholds analytics until it is granted.)
run on --data-dir "$work/on-data" --steps grant:analytics,track:5
read -r c w r d n s k i < "$work/on.counts"
report "enabled (grant:analytics,track:5)" "$c" "$w" "$r" "$d" "$n" "$s" "$k" "$i"
if (( c + w == 0 )); then
    echo "verify-silence: FAILED: with analytics enabled the trace saw no file write: the check is blind" >&2
    failed=1
fi
# Only a TCP connect counts here: glibc's name-service lookups also connect (to nscd's Unix socket) when a
# directory is created with permissions, and must not stand in for the upload.
if (( i == 0 )); then
    echo "verify-silence: FAILED: with analytics enabled the trace saw no TCP connect: the check is blind" >&2
    failed=1
fi

# The refresher with push enabled: the remote-data request must show in the trace (a TCP connect) and the payload
# must be kept, or the disabled run with `remote` steps above proves nothing.
steps=enable:push,remote
run remote-on --data-dir "$work/remote-on-data" --steps "$steps"
read -r c w r d n s k i < "$work/remote-on.counts"
report "remote data fetched ($steps)" "$c" "$w" "$r" "$d" "$n" "$s" "$k" "$i"
if (( i == 0 )) || [[ ! -e "$work/remote-on-data/featuregate-remote.json" ]]; then
    echo "verify-silence: FAILED: with push enabled the refresher fetched or kept nothing: the check is blind" >&2
    failed=1
fi
if ! grep -q 'reason(for: .push): push: off (remote kill switch: disable_features\[0\]' "$work/remote-on.out"; then
    echo "verify-silence: FAILED: the remote-data response did not disable push:" >&2
    cat "$work/remote-on.out" >&2
    failed=1
fi

# Consent-driven: granting analytics turns the SDK on (the trace must see it), and revoke-all must leave only the
# gate's state and the consent ledger in the data dir.
steps=grant:analytics,enable:push,track:4,att:denied,revoke-all
run consent --data-dir "$work/consent-data" --steps "$steps"
read -r c w r d n s k i < "$work/consent.counts"
report "consent (default flow, ends with revoke-all)" "$c" "$w" "$r" "$d" "$n" "$s" "$k" "$i"
if (( c + w == 0 || i == 0 )); then
    echo "verify-silence: FAILED: the consent-driven run shows no file write or no TCP connect: the check is blind" >&2
    failed=1
fi
left=$(cd "$work/consent-data" && find . -mindepth 1 | sed 's|^\./||' | sort | tr '\n' ' ')
# .featuregate.lock: the (empty) lock processes sharing the directory take before they write.
if [[ "$left" != ".featuregate.lock consent-ledger.jsonl consent-ledger.jsonl.checkpoint featuregate-state.json " ]]; then
    echo "verify-silence: FAILED: after revoke-all the data dir holds: $left" >&2
    echo "  expected only .featuregate.lock, consent-ledger.jsonl, consent-ledger.jsonl.checkpoint and featuregate-state.json" >&2
    failed=1
fi

# Revocation at any moment: revoke-all lands while a flush waits on a deliberately slow collector (it holds
# each upload 3 s, then answers 503, so the flush would retry). The collector must receive no event after
# revoke-all began, and must have received the first upload before it (or the check is blind).
steps=grant:analytics,track-pending:5,revoke-all
run slow --slow-collector 3000 --data-dir "$work/slow-data" --steps "$steps"
read -r c w r d n s k i < "$work/slow.counts"
report "slow collector ($steps)" "$c" "$w" "$r" "$d" "$n" "$s" "$k" "$i"
slow_line=$(grep '^== slow collector:' "$work/slow.out" || true)
if [[ ! "$slow_line" =~ ([0-9]+)\ event\(s\)\ received\ before\ revoke-all\ began,\ ([0-9]+)\ after ]]; then
    echo "verify-silence: FAILED: the slow-collector run printed no event counts:" >&2
    cat "$work/slow.out" >&2
    failed=1
elif (( BASH_REMATCH[2] != 0 )); then
    echo "verify-silence: FAILED: the collector received ${BASH_REMATCH[2]} event(s) after revoke-all began" >&2
    failed=1
elif (( BASH_REMATCH[1] == 0 )); then
    echo "verify-silence: FAILED: no upload reached the slow collector before revoke-all: the check is blind" >&2
    failed=1
fi
left=$(cd "$work/slow-data" && find . -mindepth 1 | sed 's|^\./||' | sort | tr '\n' ' ')
# .featuregate.lock: the (empty) lock processes sharing the directory take before they write.
if [[ "$left" != ".featuregate.lock consent-ledger.jsonl consent-ledger.jsonl.checkpoint featuregate-state.json " ]]; then
    echo "verify-silence: FAILED: after revoke-all during a slow flush the data dir holds: $left" >&2
    failed=1
fi

if (( failed )); then exit 1; fi
echo "verify-silence: passed (disabled and undecided runs silent; enabled runs seen; revoke-all left only the state,"
echo "  the ledger, its checkpoint and the lock; no event reached the slow collector after revoke-all began)"
