#!/usr/bin/env bash
# Switch HomeAgent back to the previous release (or to VERSION, any release
# still in opt/homeagent/releases) and restart it. Used by `homeagent rollback`.
#
#   rollback.sh [--no-start] [VERSION]
#
# The release that was current becomes `previous`, so running it twice goes
# back and forth. If the release that was current migrated stores, the copies
# kept before it did are put back first and the stores it wrote are moved to
# a dated folder under <data dir>/backups/rolled-back/ (nothing is deleted; see
# lib.sh restore_stores). If the release rolled back to does not become ready
# within HOMEAGENT_READY_TIMEOUT, the one that was running is restored with its
# stores (exit 4). Settings and exit codes: see lib.sh.
set -euo pipefail

PROG=homeagent-rollback
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$SCRIPT_DIR/lib.sh"

usage() {
  cat >&2 <<'USAGE'
usage: rollback.sh [--no-start] [VERSION]
  VERSION      an installed release (default: the previous one)
  --no-start   switch and enable only; do not restart the service
USAGE
}

main() {
  local target=""
  while [ $# -gt 0 ]; do
    case $1 in
      --no-start) NO_START=1 ;;
      -h | --help)
        usage
        exit 0
        ;;
      -*)
        usage
        die 1 "unknown option $1"
        ;;
      *)
        [ -z "$target" ] || die 1 "only one version"
        target=$1
        ;;
    esac
    shift
  done
  check_settings
  take_lock

  local cur
  cur=$(link_version current)
  if [ -z "$target" ]; then
    target=$(link_version previous)
    [ -n "$target" ] || die 1 "there is no previous release to roll back to"
  fi
  case $target in */* | .* | '') die 1 "not a release name: $target" ;; esac
  [ -d "$RELEASES/$target" ] || die 1 "release $target is not installed (installed: $(list_releases | cut -d' ' -f2 | tr '\n' ' '))"
  [ "$target" != "$cur" ] || die 1 "$target is already the current release"
  if [ -f "$RELEASES/$target/.failed" ]; then
    log "warning: $target failed to start when it was installed"
  fi

  restore_stores "$cur"
  activate "$target" "$cur"
  log "current -> releases/$target${cur:+ (previous: $cur)}"
  reload_units
  if [ "$NO_START" = 1 ]; then
    result "result=rolled-back version=$target${cur:+ previous=$cur}$(stores_result)"
    exit 0
  fi

  log "restarting $UNIT, waiting up to ${READY_TIMEOUT}s for READY"
  if restart_and_wait; then
    rm -f "$RELEASES/$target/.failed"
    log "homeagent $target is running"
    result "result=rolled-back version=$target${cur:+ previous=$cur}$(stores_result)"
    exit 0
  fi
  log "homeagent $target did not become ready. Logs: journalctl -u homeagent -b"
  roll_back_after_failure "$target" "$cur" "$target"
}

main "$@"
