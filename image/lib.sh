# shellcheck shell=bash
# Shared by image/install.sh and image/rollback.sh (sourced, not executed).
#
# Layout under $HOMEAGENT_ROOT (default /):
#   opt/homeagent/releases/<version>/   unpacked bundle + node_modules (+ .install-seq, .failed)
#   opt/homeagent/current  -> releases/<version>   (relative symlink, replaced with rename(2))
#   opt/homeagent/previous -> releases/<version>   (what `homeagent rollback` goes back to)
#   opt/homeagent/bin/node -> the Node.js runtime ExecStart= uses
#   etc/systemd/system/homeagent.service, etc/sysusers.d/homeagent.conf,
#   etc/tmpfiles.d/homeagent.conf, etc/udev/rules.d/99-homeagent-gpio.rules,
#   etc/systemd/system/homeagent-update.{path,service} (the WebUI's update helper)
#     copied from the release that becomes current (so a rollback also rolls
#     back the unit).
#
# Environment (all optional; the defaults are what the device uses):
#   HOMEAGENT_ROOT            install root prefix (tests, image builds)       default /
#   SYSTEMCTL                 systemctl command                               default systemctl
#   HOMEAGENT_NPM             npm command for `npm ci --omit=dev`             default npm
#   HOMEAGENT_NODE            node used to verify bundles                     default node
#   HOMEAGENT_NODE_BIN        what opt/homeagent/bin/node points to           default: `command -v node`, only if the link is missing
#   HOMEAGENT_SYSUSERS        systemd-sysusers command                        default systemd-sysusers
#   HOMEAGENT_TMPFILES        systemd-tmpfiles command                        default systemd-tmpfiles
#   HOMEAGENT_READY_TIMEOUT   seconds to wait for READY (active/running)      default 120
#   HOMEAGENT_POLL_INTERVAL   seconds between state polls                     default 1
#   HOMEAGENT_SETTLE          seconds it must then stay up (same invocation)  default 5
#   HOMEAGENT_KEEP_RELEASES   releases kept on disk (current and previous always) default 3
#   HOMEAGENT_DATA_DIR        the service's data directory (its stores)      default $HOMEAGENT_ROOT/var/lib/homeagent
#   HOMEAGENT_KEYS_DIR        trusted release keys (*.pub, ed25519)          default $HOMEAGENT_ROOT/etc/homeagent/keys
#
# Signatures: install.sh refuses a bundle whose manifest.sig is missing, or not
# made by one of the keys in the keys directory, or does not match the
# manifest (image/release-keys.mjs). Trust never comes from the bundle being
# installed: keys are added by the image, by `homeagent keys add FILE`, or by
# a release signed by a key already trusted (rotation, after it is installed).
#
# Stores: a release that opens a store of an older schema version keeps a copy
# first (<data dir>/backups/pre-migration/, src/kernel/store-version.ts).
# `activate` records in releases/<version>/.current-since when a release became
# current; leaving a release (rollback, or an update that did not start) puts
# back the copies it made since then, so the release rolled back to finds the
# stores as it left them, and moves the stores it wrote to
# <data dir>/backups/rolled-back/<time>-from-<version>/ (image/restore-stores.mjs).
#
# Exit codes of both scripts:
#   0 done (or nothing to do)      1 usage or environment error, nothing changed
#   2 bundle refused (damaged, unsigned, wrongly signed), nothing changed
#   3 npm ci failed, nothing changed
#   4 the new release did not become ready; rolled back, the old one runs
#   5 not ready and no working release to fall back to (service down)
# The last line on stdout is machine-readable:
#   homeagent-release: result=<installed|already-current|rolled-back|failed|refused> version=<v> [previous=<v>] [failed=<v>]
#     [signed_by=<key id>|signature=unchecked] [keys_added=<id,...>] [keys_retired=<id,...>]
#     [reason=<unsigned|malformed|no-trusted-keys|untrusted-key|bad-signature>]   (refused by the signature check)

PROG=${PROG:-homeagent}
UNIT=homeagent.service
# The WebUI's update helper's trigger (systemd/homeagent-update.path).
UPDATE_PATH_UNIT=homeagent-update.path
ROOT=${HOMEAGENT_ROOT:-/}
ROOT=${ROOT%/}
BASE="$ROOT/opt/homeagent"
RELEASES="$BASE/releases"
SYSTEMCTL=${SYSTEMCTL:-systemctl}
# shellcheck disable=SC2034 # used by install.sh
NODE=${HOMEAGENT_NODE:-node}
# shellcheck disable=SC2034 # used by install.sh
NPM=${HOMEAGENT_NPM:-npm}
SYSUSERS=${HOMEAGENT_SYSUSERS:-systemd-sysusers}
TMPFILES=${HOMEAGENT_TMPFILES:-systemd-tmpfiles}
READY_TIMEOUT=${HOMEAGENT_READY_TIMEOUT:-120}
POLL_INTERVAL=${HOMEAGENT_POLL_INTERVAL:-1}
SETTLE=${HOMEAGENT_SETTLE:-5}
KEEP=${HOMEAGENT_KEEP_RELEASES:-3}
DATA_DIR=${HOMEAGENT_DATA_DIR:-$ROOT/var/lib/homeagent}
# shellcheck disable=SC2034 # used by install.sh
KEYS_DIR=${HOMEAGENT_KEYS_DIR:-$ROOT/etc/homeagent/keys}
# Set by restore_stores: what was put back ("settings:v0,memory:v0") and where the newer stores went.
STORES_RESTORED=""
STORES_ASIDE=""
# shellcheck disable=SC2034 # set by the scripts' --no-start option
NO_START=0

log() { printf '%s: %s\n' "$PROG" "$*" >&2; }

# die CODE MESSAGE...
die() {
  local code=$1
  shift
  log "error: $*"
  exit "$code"
}

# The machine-readable result line (stdout); everything else goes to stderr.
result() { printf 'homeagent-release: %s\n' "$*"; }

check_settings() {
  case $READY_TIMEOUT in '' | *[!0-9]*) die 1 "HOMEAGENT_READY_TIMEOUT must be whole seconds" ;; esac
  case $SETTLE in '' | *[!0-9]*) die 1 "HOMEAGENT_SETTLE must be whole seconds" ;; esac
  case $KEEP in '' | *[!0-9]*) die 1 "HOMEAGENT_KEEP_RELEASES must be a number" ;; esac
  case $POLL_INTERVAL in '' | *[!0-9.]*) die 1 "HOMEAGENT_POLL_INTERVAL must be seconds" ;; esac
  if [ "$KEEP" -lt 2 ]; then KEEP=2; fi
}

# One install or rollback at a time (fd 9 stays open until the script exits).
take_lock() {
  mkdir -p "$RELEASES" 2>/dev/null || die 1 "cannot create $RELEASES (run as root: sudo homeagent ...)"
  [ -w "$RELEASES" ] || die 1 "$RELEASES is not writable (run as root: sudo homeagent ...)"
  exec 9>"$BASE/.lock"
  flock -n 9 || die 1 "another install or rollback is running"
}

# link_version NAME -> the version a link (current|previous) points at, or "".
link_version() {
  local target
  target=$(readlink "$BASE/$1" 2>/dev/null) || return 0
  printf '%s\n' "${target##*/}"
}

# set_link NAME VERSION: point NAME at releases/VERSION atomically (rename(2)
# over the old link, so a reader sees the old or the new target, never none).
set_link() {
  local tmp="$BASE/.$1.new.$$"
  rm -f "$tmp"
  ln -s "releases/$2" "$tmp"
  mv -T "$tmp" "$BASE/$1"
}

clear_link() { rm -f "$BASE/$1"; }

# Install order of releases; pruning drops the oldest first.
next_seq() {
  local max=0 f n
  for f in "$RELEASES"/*/.install-seq; do
    [ -f "$f" ] || continue
    n=$(cat "$f")
    case $n in '' | *[!0-9]*) continue ;; esac
    if [ "$n" -gt "$max" ]; then max=$n; fi
  done
  echo $((max + 1))
}

# opt/homeagent/bin/node: the runtime ExecStart= names. Re-pointed when
# HOMEAGENT_NODE_BIN is given, created from PATH when missing or dangling.
ensure_node_link() {
  local link="$BASE/bin/node" target=${HOMEAGENT_NODE_BIN:-}
  mkdir -p "$BASE/bin"
  if [ -z "$target" ]; then
    if [ -e "$link" ]; then return 0; fi
    target=$(command -v node || true)
    [ -n "$target" ] || die 1 "Node.js (node) is not installed; install Node.js 20 or set HOMEAGENT_NODE_BIN"
  fi
  case $target in /*) ;; *) die 1 "HOMEAGENT_NODE_BIN must be an absolute path, got '$target'" ;; esac
  rm -f "$BASE/bin/.node.new.$$"
  ln -s "$target" "$BASE/bin/.node.new.$$"
  mv -T "$BASE/bin/.node.new.$$" "$link"
}

# install_units VERSION: copy the release's systemd files into etc/ and apply
# the user and directory definitions.
install_units() {
  local rel="$RELEASES/$1" rootarg=()
  if [ -n "$ROOT" ]; then rootarg=("--root=$ROOT"); fi
  install -D -m 0644 "$rel/systemd/homeagent.service" "$ROOT/etc/systemd/system/$UNIT"
  install -D -m 0644 "$rel/systemd/homeagent.sysusers" "$ROOT/etc/sysusers.d/homeagent.conf"
  install -D -m 0644 "$rel/systemd/homeagent.tmpfiles" "$ROOT/etc/tmpfiles.d/homeagent.conf"
  if [ -f "$rel/systemd/99-homeagent-gpio.rules" ]; then
    install -D -m 0644 "$rel/systemd/99-homeagent-gpio.rules" "$ROOT/etc/udev/rules.d/99-homeagent-gpio.rules"
  fi
  # The WebUI's update helper (a .path unit watching the update spool, and the oneshot it starts).
  local u
  for u in homeagent-update.path homeagent-update.service; do
    if [ -f "$rel/systemd/$u" ]; then install -D -m 0644 "$rel/systemd/$u" "$ROOT/etc/systemd/system/$u"; fi
  done
  "$SYSUSERS" "${rootarg[@]}" "$ROOT/etc/sysusers.d/homeagent.conf" >&2 || die 1 "systemd-sysusers failed"
  "$TMPFILES" --create "${rootarg[@]}" "$ROOT/etc/tmpfiles.d/homeagent.conf" >&2 || die 1 "systemd-tmpfiles failed"
}

# Make systemd pick up the unit (and udev the GPIO rule). With --no-start
# (image builds in a chroot, no systemd running) only the offline `enable`.
reload_units() {
  if [ "$NO_START" = 1 ]; then
    "$SYSTEMCTL" --root="${ROOT:-/}" enable "$UNIT" >&2 || die 1 "systemctl enable failed"
    if [ -f "$ROOT/etc/systemd/system/$UPDATE_PATH_UNIT" ]; then
      "$SYSTEMCTL" --root="${ROOT:-/}" enable "$UPDATE_PATH_UNIT" >&2 || die 1 "systemctl enable $UPDATE_PATH_UNIT failed"
    fi
    return 0
  fi
  "$SYSTEMCTL" daemon-reload >&2 || die 1 "systemctl daemon-reload failed"
  "$SYSTEMCTL" enable "$UNIT" >&2 || die 1 "systemctl enable failed"
  # Watch the WebUI's update spool from now on (a no-op when it already does).
  if [ -f "$ROOT/etc/systemd/system/$UPDATE_PATH_UNIT" ]; then
    "$SYSTEMCTL" enable --now "$UPDATE_PATH_UNIT" >&2 || log "warning: systemctl enable --now $UPDATE_PATH_UNIT failed: updates from the WebUI wait for a reboot"
  fi
  if [ -z "$ROOT" ] && [ -f /etc/udev/rules.d/99-homeagent-gpio.rules ] && command -v udevadm >/dev/null 2>&1; then
    udevadm control --reload-rules >&2 || log "warning: udevadm control --reload-rules failed"
    udevadm trigger --subsystem-match=gpio >&2 || true
  fi
}

# unit_state -> "ActiveState SubState InvocationID MainPID" (missing values as "-").
unit_state() {
  local out key value active=- sub=- inv=- pid=-
  out=$("$SYSTEMCTL" show -p ActiveState -p SubState -p InvocationID -p MainPID "$UNIT" 2>/dev/null) || true
  while IFS='=' read -r key value; do
    [ -n "$value" ] || value=-
    case $key in
      ActiveState) active=$value ;;
      SubState) sub=$value ;;
      InvocationID) inv=$value ;;
      MainPID) pid=$value ;;
    esac
  done <<<"$out"
  printf '%s %s %s %s\n' "$active" "$sub" "$inv" "$pid"
}

# restart_and_wait: restart the unit and wait until a NEW invocation of it is
# active/running (Type=notify: only after READY=1) within READY_TIMEOUT, then
# check it is still the same invocation, still running, SETTLE seconds later
# (a crash right after READY is a failure too). Returns 0 when ready.
restart_and_wait() {
  local before active sub inv pid deadline
  read -r _ _ before _ <<<"$(unit_state)"
  "$SYSTEMCTL" reset-failed "$UNIT" >/dev/null 2>&1 || true
  "$SYSTEMCTL" --no-block restart "$UNIT" >&2 || {
    log "systemctl restart $UNIT failed"
    return 1
  }
  deadline=$(($(date +%s) + READY_TIMEOUT))
  while :; do
    read -r active sub inv pid <<<"$(unit_state)"
    if [ "$inv" != "$before" ] && [ "$inv" != - ]; then
      if [ "$active" = active ] && [ "$sub" = running ]; then break; fi
      if [ "$active" = failed ]; then
        log "$UNIT failed (start limit reached or start-up error)"
        return 1
      fi
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "$UNIT not ready after ${READY_TIMEOUT}s (state $active/$sub)"
      return 1
    fi
    sleep "$POLL_INTERVAL"
  done
  log "$UNIT is ready (pid $pid); checking it stays up for ${SETTLE}s"
  local ready_inv=$inv
  if [ "$SETTLE" -gt 0 ]; then sleep "$SETTLE"; fi
  read -r active sub inv pid <<<"$(unit_state)"
  if [ "$inv" != "$ready_inv" ] || [ "$active" != active ] || [ "$sub" != running ]; then
    log "$UNIT did not stay up after READY (state $active/$sub)"
    return 1
  fi
  return 0
}

# activate VERSION PREVIOUS: make VERSION current (units first, then the
# links); PREVIOUS ("" for none) becomes the rollback target.
activate() {
  ensure_node_link
  install_units "$1"
  if [ -n "$2" ]; then set_link previous "$2"; else clear_link previous; fi
  # On the device, get the release onto the disk before `current` names it:
  # a power cut must leave the old or the new release, never a half-written one.
  if [ -z "$ROOT" ]; then sync; fi
  set_link current "$1"
  date -u +%Y%m%dT%H%M%S%3NZ >"$RELEASES/$1/.current-since"
  if [ -z "$ROOT" ]; then sync; fi
}

# restore_stores LEAVING: before switching away from release LEAVING, put back
# the copies of the stores it migrated since it became current (see the top).
# Stops the service first when there is something to put back. Sets
# STORES_RESTORED and STORES_ASIDE. When the copies cannot be put back the
# stores are left as they were (the script moves back what it moved), the
# service is started again and the script exits 1.
restore_stores() {
  local leaving=$1 since out
  [ -n "$leaving" ] || return 0
  since=$(cat "$RELEASES/$leaving/.current-since" 2>/dev/null || true)
  if [ -z "$since" ]; then
    log "no record of when $leaving became current; the stores stay as they are"
    return 0
  fi
  if ! out=$("$NODE" "$SCRIPT_DIR/restore-stores.mjs" restore --data-dir "$DATA_DIR" --since "$since" --from "$leaving" --dry-run); then
    log "warning: cannot read the store copies in $DATA_DIR/backups; the stores stay as they are"
    return 0
  fi
  case $out in restored=-*)
    log "no store was migrated by $leaving; the stores stay as they are"
    return 0
    ;;
  esac
  if [ "$NO_START" != 1 ]; then
    log "stopping $UNIT to put back the stores as they were before $leaving migrated them"
    "$SYSTEMCTL" stop "$UNIT" >&2 || log "warning: systemctl stop $UNIT failed"
  fi
  if ! out=$("$NODE" "$SCRIPT_DIR/restore-stores.mjs" restore --data-dir "$DATA_DIR" --since "$since" --from "$leaving"); then
    if [ "$NO_START" != 1 ]; then "$SYSTEMCTL" --no-block start "$UNIT" >&2 || true; fi
    die 1 "cannot put back the stores from before $leaving; nothing was changed and $leaving runs on"
  fi
  STORES_RESTORED=${out%% aside=*}
  STORES_RESTORED=${STORES_RESTORED#restored=}
  STORES_ASIDE=${out#* aside=}
  log "put back the stores from before $leaving migrated them ($STORES_RESTORED); the stores $leaving wrote are kept in $STORES_ASIDE (nothing was deleted)"
}

# undo_stores: a rollback target did not start; move the stores restore_stores
# set aside back into place (the copies it put back stay in backups/pre-migration).
undo_stores() {
  [ -n "$STORES_ASIDE" ] || return 0
  "$SYSTEMCTL" stop "$UNIT" >&2 || true
  if "$NODE" "$SCRIPT_DIR/restore-stores.mjs" undo --data-dir "$DATA_DIR" --aside "$STORES_ASIDE" >/dev/null; then
    log "the stores moved to $STORES_ASIDE are back in $DATA_DIR"
  else
    log "warning: could not move every store back from $STORES_ASIDE; see the lines above"
  fi
  STORES_RESTORED=""
  STORES_ASIDE=""
}

# The stores part of a result line ("" when nothing was put back).
stores_result() {
  if [ -n "$STORES_RESTORED" ]; then printf ' stores_restored=%s stores_aside=%s' "$STORES_RESTORED" "$STORES_ASIDE"; fi
}

# Keep current, previous and the newest releases up to KEEP; delete the rest.
prune_releases() {
  local cur prev kept=0 name
  cur=$(link_version current)
  prev=$(link_version previous)
  if [ -n "$cur" ] && [ -d "$RELEASES/$cur" ]; then kept=$((kept + 1)); fi
  if [ -n "$prev" ] && [ "$prev" != "$cur" ] && [ -d "$RELEASES/$prev" ]; then kept=$((kept + 1)); fi
  while read -r _ name; do
    [ -n "$name" ] || continue
    if [ "$name" = "$cur" ] || [ "$name" = "$prev" ]; then continue; fi
    if [ "$kept" -lt "$KEEP" ]; then
      kept=$((kept + 1))
      continue
    fi
    log "pruning old release $name"
    rm -rf "${RELEASES:?}/$name"
  done < <(list_releases)
}

# list_releases -> "seq name" lines, newest first.
list_releases() {
  local d seq
  for d in "$RELEASES"/*/; do
    [ -d "$d" ] || continue
    d=${d%/}
    seq=0
    if [ -f "$d/.install-seq" ]; then seq=$(cat "$d/.install-seq"); fi
    case $seq in '' | *[!0-9]*) seq=0 ;; esac
    printf '%s %s\n' "$seq" "${d##*/}"
  done | sort -rn
}

# roll_back_after_failure FAILED GOOD GOOD_PREVIOUS: the new release FAILED did not
# come up; make GOOD current again and restart it. Exits 4 or 5.
roll_back_after_failure() {
  local failed=$1 good=$2 good_prev=$3
  touch "$RELEASES/$failed/.failed"
  if [ -z "$good" ] || [ ! -d "$RELEASES/$good" ]; then
    log "no earlier release to roll back to; $UNIT is down. Logs: journalctl -u homeagent -b"
    result "result=failed version=$failed"
    exit 5
  fi
  log "rolling back to $good"
  # The stores as $good left them: undo a rollback's restore, or put back what $failed migrated.
  if [ -n "$STORES_ASIDE" ]; then undo_stores; else restore_stores "$failed"; fi
  activate "$good" "$good_prev"
  reload_units
  if restart_and_wait; then
    log "rolled back: $good is running again; $failed is kept in $RELEASES/$failed for inspection"
    result "result=rolled-back version=$good failed=$failed$(stores_result)"
    exit 4
  fi
  log "$good did not come back up either; $UNIT is down. Logs: journalctl -u homeagent -b"
  result "result=failed version=$good failed=$failed"
  exit 5
}
