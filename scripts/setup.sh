#!/usr/bin/env bash
# Installs what HomeAgent needs on a fresh Debian 12 / Raspberry Pi OS Bookworm
# machine: Debian packages (as root, or through sudo), npm packages (npm ci,
# native modules built from source), and the TypeScript build (dist/).
# Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  mosquitto mosquitto-clients      # MQTT broker for tests (and optionally the box)
  pocketsphinx pocketsphinx-en-us  # local command recognition
  espeak-ng                        # text to speech
  alsa-utils sox                   # arecord/aplay, audio conversion
  shellcheck                       # checks the image/ scripts in tests
  bubblewrap                       # sandbox for process plugins (issue 17)
  systemd xz-utils openssl         # systemd-analyze/notify in tests, pi-gen stage test, TLS broker test, the WebUI certificate
  chromium fonts-wqy-microhei      # the WebUI browser test (playwright-core), with a Chinese font for its screenshots
  g++ make python3                 # native npm modules (better-sqlite3, nodejieba, serialport)
)

missing=()
for p in "${PACKAGES[@]}"; do
  case "$p" in \#*) continue ;; esac
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# nodejieba's install script runs `npx @mapbox/node-pre-gyp`; its prebuilt
# download is unreachable, so it builds from source.
export npm_config_yes=true
stamp=node_modules/.homeagent-lock-stamp
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund
  cp package-lock.json "$stamp"
fi

echo "setup: building (tsc)"
npm run build  # tsc, and the CLI made executable: `npx homeagent` in a checkout runs dist/src/cli/main.js itself
