#!/bin/bash -e
# pi-gen (inside the image chroot, after 00-run.sh): install Node.js 20 and
# HomeAgent with the same image/install.sh that `homeagent update` uses, in
# --no-start mode (no systemd runs in the chroot: the service is enabled and
# starts on first boot).
#
# HOMEAGENT_ROOT (default /) prefixes every path so the tests can run this
# file against a temporary root instead of a chroot.

ROOT=${HOMEAGENT_ROOT:-/}
ROOT=${ROOT%/}
DIR="${ROOT}/tmp/homeagent-install"
export PATH="/usr/local/bin:${PATH}"

# Node.js: the official linux-arm64 tarball into /usr/local (node, npm, npx on
# PATH for the admin; opt/homeagent/bin/node points at it for the service).
mkdir -p "${ROOT}/usr/local"
# include/node stays: node-gyp compiles native modules against those headers.
tar -xJf "${DIR}/node.tar.xz" -C "${ROOT}/usr/local" --strip-components=1 --no-same-owner \
	--exclude='*/CHANGELOG.md' --exclude='*/README.md' --exclude='*/share/doc'
node_version=$("${ROOT}/usr/local/bin/node" --version)
case ${node_version} in
	v2[0-9].* | v[3-9][0-9].*) echo "HomeAgent: Node.js ${node_version} installed" ;;
	*)
		echo "HomeAgent: Node.js ${node_version} is too old; HomeAgent needs 20 or newer" >&2
		exit 1
		;;
esac

# The release keys the box trusts, from the image build (never from the bundle):
# install.sh below refuses the bundle unless one of them signed it, and so does
# every later `homeagent update`.
"${HOMEAGENT_NODE:-node}" "${DIR}/release-keys.mjs" --keys-dir "${HOMEAGENT_KEYS_DIR:-${ROOT}/etc/homeagent/keys}" add "${DIR}"/keys/*.pub

bundle=$(find "${DIR}" -maxdepth 1 -name 'homeagent-*.tar.gz' | sort -V | tail -n 1)
HOMEAGENT_NODE_BIN=/usr/local/bin/node HOMEAGENT_ROOT="${ROOT:-/}" bash "${DIR}/install.sh" --no-start "${bundle}"

# The image's admin user may use the maintenance CLI (its socket belongs to
# group homeagent) without sudo.
if [ -n "${FIRST_USER_NAME:-}" ] && grep -q "^${FIRST_USER_NAME}:" "${ROOT}/etc/passwd"; then
	printf 'm %s homeagent\n' "${FIRST_USER_NAME}" >"${ROOT}/etc/sysusers.d/homeagent-admin.conf"
	if [ -n "${ROOT}" ]; then
		systemd-sysusers --root="${ROOT}" "${ROOT}/etc/sysusers.d/homeagent-admin.conf"
	else
		systemd-sysusers /etc/sysusers.d/homeagent-admin.conf
	fi
fi

rm -rf "${DIR}" "${ROOT}/root/.npm"
