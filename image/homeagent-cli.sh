#!/bin/sh
# `homeagent` on the device's PATH: /usr/local/bin/homeagent is a symlink to
# /opt/homeagent/current/image/homeagent-cli.sh (systemd/homeagent.tmpfiles).
# Runs the CLI of the release this file belongs to with the service's Node.js.
set -eu
self=$(readlink -f "$0")
release=$(dirname "$(dirname "$self")")
node=/opt/homeagent/bin/node
[ -x "$node" ] || node=node
exec "$node" "$release/dist/src/cli/main.js" "$@"
