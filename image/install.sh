#!/usr/bin/env bash
# Install or update HomeAgent from a release bundle (homeagent-<version>.tar.gz,
# made by `npm run bundle`). Used by `homeagent update FILE`, by the pi-gen
# stage (with --no-start, inside the image chroot) and by the tests (in a
# temporary root with a fake systemctl and npm).
#
#   install.sh [--no-start] BUNDLE.tar.gz
#
# Steps, in an order that leaves the running release untouched until the new
# one is complete:
#   1. unpack into opt/homeagent/.staging-XXXXXX and verify it against its
#      manifest.json with verify-bundle.mjs from THIS script's directory
#      (checksums, sizes, no extra/missing/required files) -> refused: exit 2;
#   2. `npm ci --omit=dev` in the staged release (native modules such as
#      better-sqlite3 are built for this machine)          -> failed: exit 3;
#   3. move it to opt/homeagent/releases/<version>, install its systemd units,
#      point `previous` at the running release and switch `current` with one
#      rename(2);
#   4. restart homeagent.service and wait until the new process has sent READY
#      (active/running) within HOMEAGENT_READY_TIMEOUT and stays up for
#      HOMEAGENT_SETTLE seconds;
#   5. otherwise switch back to the previous release and restart it
#      (automatic rollback, exit 4);
#   6. prune old releases (keep HOMEAGENT_KEEP_RELEASES).
# Settings and exit codes: see lib.sh.
set -euo pipefail

PROG=homeagent-install
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$SCRIPT_DIR/lib.sh"

usage() {
  cat >&2 <<'EOF'
usage: install.sh [--no-start] BUNDLE.tar.gz
  --no-start   install and enable only; do not restart the service (image builds)
environment: HOMEAGENT_ROOT, SYSTEMCTL, HOMEAGENT_NPM, HOMEAGENT_NODE, HOMEAGENT_NODE_BIN,
  HOMEAGENT_READY_TIMEOUT, HOMEAGENT_SETTLE, HOMEAGENT_KEEP_RELEASES (see image/lib.sh)
EOF
}

main() {
  local bundle=""
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
        [ -z "$bundle" ] || die 1 "only one bundle at a time"
        bundle=$1
        ;;
    esac
    shift
  done
  [ -n "$bundle" ] || {
    usage
    exit 1
  }
  if [ ! -f "$bundle" ] || [ ! -r "$bundle" ]; then die 1 "cannot read bundle $bundle"; fi
  check_settings
  take_lock

  STAGE=$(mktemp -d "$BASE/.staging-XXXXXX")
  trap 'rm -rf "$STAGE"' EXIT

  # 1. unpack and verify
  log "unpacking $bundle"
  if ! tar -xzf "$bundle" -C "$STAGE" --no-same-owner >&2; then
    die 2 "bundle refused: $bundle is not a readable .tar.gz; nothing was changed"
  fi
  local entries
  shopt -s dotglob nullglob
  entries=("$STAGE"/*)
  shopt -u dotglob nullglob
  if [ "${#entries[@]}" -ne 1 ] || [ ! -d "${entries[0]}" ]; then
    die 2 "bundle refused: expected one homeagent-<version>/ directory in $bundle"
  fi
  local top=${entries[0]} version
  if ! version=$("$NODE" "$SCRIPT_DIR/verify-bundle.mjs" "$top"); then
    die 2 "bundle refused: $bundle does not match its manifest; nothing was changed"
  fi
  [ "${top##*/}" = "homeagent-$version" ] || die 2 "bundle refused: directory ${top##*/} does not match version $version"
  log "bundle verified: homeagent $version"

  local cur prev
  cur=$(link_version current)
  prev=$(link_version previous)
  if [ "$version" = "$cur" ] && [ -d "$RELEASES/$cur" ]; then
    log "$version is already the current release; nothing to do"
    result "result=already-current version=$version"
    exit 0
  fi

  # 2. dependencies, built on this machine
  log "installing dependencies: $NPM ci --omit=dev"
  if ! (cd "$top" && "$NPM" ci --omit=dev --no-audit --no-fund >&2); then
    die 3 "npm ci failed for $version; nothing was changed"
  fi

  # 3. into place (same file system: rename), units, links
  if [ -e "$RELEASES/$version" ]; then
    log "replacing the earlier copy of $version in $RELEASES"
    mv "$RELEASES/$version" "$STAGE/replaced"
  fi
  next_seq >"$top/.install-seq"
  mv "$top" "$RELEASES/$version"
  if [ -n "$cur" ] && [ -d "$RELEASES/$cur" ]; then
    activate "$version" "$cur"
  else
    activate "$version" ""
    cur=""
  fi
  log "current -> releases/$version${cur:+ (previous: $cur)}"
  reload_units

  if [ "$NO_START" = 1 ]; then
    prune_releases
    log "installed $version (not started: --no-start)"
    result "result=installed version=$version${cur:+ previous=$cur}"
    exit 0
  fi

  # 4. restart and wait for READY
  log "restarting $UNIT, waiting up to ${READY_TIMEOUT}s for READY"
  if restart_and_wait; then
    prune_releases
    log "homeagent $version is running"
    result "result=installed version=$version${cur:+ previous=$cur}"
    exit 0
  fi

  # 5. automatic rollback
  log "homeagent $version did not become ready. Logs: journalctl -u homeagent -b"
  roll_back_after_failure "$version" "$cur" "$prev"
}

main "$@"
