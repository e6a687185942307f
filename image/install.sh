#!/usr/bin/env bash
# Install or update HomeAgent from a release bundle (homeagent-<version>.tar.gz,
# made by `npm run bundle`). Used by `homeagent update FILE`, by the pi-gen
# stage (with --no-start, inside the image chroot) and by the tests (in a
# temporary root with a fake systemctl and npm).
#
#   install.sh [--no-start] [--allow-unsigned] BUNDLE.tar.gz
#
# Steps, in an order that leaves the running release untouched until the new
# one is complete:
#   1. unpack into opt/homeagent/.staging-XXXXXX and verify it against its
#      manifest.json with verify-bundle.mjs from THIS script's directory
#      (checksums, sizes, no extra/missing/required files), then its
#      signature (manifest.sig) against the trusted keys in HOMEAGENT_KEYS_DIR
#      (/etc/homeagent/keys) with release-keys.mjs from THIS directory
#      -> refused: exit 2 (--allow-unsigned: development only, warns loudly);
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
#   6. enroll the release keys the new release carries (rotation; only when
#      its signature was verified) and prune old releases (keep
#      HOMEAGENT_KEEP_RELEASES).
# Settings and exit codes: see lib.sh.
set -euo pipefail

PROG=homeagent-install
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$SCRIPT_DIR/lib.sh"

usage() {
  cat >&2 <<'EOF'
usage: install.sh [--no-start] [--allow-unsigned] BUNDLE.tar.gz
  --no-start         install and enable only; do not restart the service (image builds)
  --allow-unsigned   DEVELOPMENT ONLY: install even if the bundle is unsigned or not
                     signed by a trusted key (its keys are never enrolled)
environment: HOMEAGENT_ROOT, SYSTEMCTL, HOMEAGENT_NPM, HOMEAGENT_NODE, HOMEAGENT_NODE_BIN,
  HOMEAGENT_READY_TIMEOUT, HOMEAGENT_SETTLE, HOMEAGENT_KEEP_RELEASES, HOMEAGENT_KEYS_DIR (see image/lib.sh)
EOF
}

ALLOW_UNSIGNED=0
# The trusted key that signed the bundle ("" when --allow-unsigned let it in).
SIGNED_BY=""
# Parts of the result line.
SIGNATURE_RESULT=""
KEYS_RESULT=""

# enroll_release_keys VERSION: rotation. The keys the installed release carries
# (manifest.keys.add, keys/<id>.pub) become trusted and the ones it retires
# stop being trusted, only when its signature by a trusted key was verified.
# A failure here is reported, not fatal: the release is installed and runs.
enroll_release_keys() {
  local rel="$RELEASES/$1" out added retired
  if [ -z "$SIGNED_BY" ]; then
    if [ -d "$rel/keys" ]; then log "WARNING: not trusting the release keys inside $1: its signature was not checked"; fi
    return 0
  fi
  if ! out=$("$NODE" "$SCRIPT_DIR/release-keys.mjs" --keys-dir "$KEYS_DIR" enroll "$rel"); then
    log "WARNING: could not enroll the release keys carried by $1 (see above); the trusted keys in $KEYS_DIR are unchanged"
    return 0
  fi
  added=${out%% retired=*}
  added=${added#added=}
  retired=${out#* retired=}
  if [ "$added" != - ]; then KEYS_RESULT+=" keys_added=$added"; fi
  if [ "$retired" != - ]; then KEYS_RESULT+=" keys_retired=$retired"; fi
}

main() {
  local bundle=""
  while [ $# -gt 0 ]; do
    case $1 in
      --no-start) NO_START=1 ;;
      --allow-unsigned) ALLOW_UNSIGNED=1 ;;
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

  # Who made it: manifest.sig against this device's trusted keys (never keys
  # from the bundle). Before anything is put into place.
  local sig_args=(--keys-dir "$KEYS_DIR") sig_out sig_err="$STAGE/.signature-check"
  if [ "$ALLOW_UNSIGNED" = 1 ]; then sig_args+=(--allow-unsigned); fi
  if ! sig_out=$("$NODE" "$SCRIPT_DIR/release-keys.mjs" "${sig_args[@]}" verify "$top" 2>"$sig_err"); then
    grep '^warning: ' "$sig_err" >&2 || true
    sig_out=${sig_out#reason=}
    result "result=refused version=$version reason=${sig_out:-signature}"
    die 2 "bundle refused: $(grep -v '^warning: ' "$sig_err" | tail -n 1) (nothing was changed)"
  fi
  cat "$sig_err" >&2
  SIGNED_BY=${sig_out#signed-by=}
  if [ "$SIGNED_BY" = - ] || [ -z "$SIGNED_BY" ]; then
    SIGNED_BY=""
    SIGNATURE_RESULT=" signature=unchecked"
    log "WARNING: installing homeagent $version WITHOUT a trusted signature (--allow-unsigned, development only)"
  else
    SIGNATURE_RESULT=" signed_by=$SIGNED_BY"
    log "signature verified: homeagent $version is signed by trusted key $SIGNED_BY ($KEYS_DIR)"
  fi

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
    enroll_release_keys "$version"
    prune_releases
    log "installed $version (not started: --no-start)"
    result "result=installed version=$version${cur:+ previous=$cur}$SIGNATURE_RESULT$KEYS_RESULT"
    exit 0
  fi

  # 4. restart and wait for READY
  log "restarting $UNIT, waiting up to ${READY_TIMEOUT}s for READY"
  if restart_and_wait; then
    enroll_release_keys "$version"
    prune_releases
    log "homeagent $version is running"
    result "result=installed version=$version${cur:+ previous=$cur}$SIGNATURE_RESULT$KEYS_RESULT"
    exit 0
  fi

  # 5. automatic rollback
  log "homeagent $version did not become ready. Logs: journalctl -u homeagent -b"
  roll_back_after_failure "$version" "$cur" "$prev"
}

main "$@"
