#!/bin/bash -e
# pi-gen (host side): copy what the chroot step installs into the image:
#   - the release bundle       HOMEAGENT_BUNDLE       (default: newest files/homeagent-*.tar.gz)
#   - the Node.js 20 tarball   HOMEAGENT_NODE_TARBALL (default: newest files/node-v20*-linux-arm64.tar.xz)
#     checked against files/SHASUMS256.txt from nodejs.org, or HOMEAGENT_NODE_SHA256
#   - the release keys the image trusts   HOMEAGENT_RELEASE_KEYS (space-separated .pub files;
#     default: every files/*.pub): the public keys (npm run keygen) whose signatures the
#     box accepts; the bundle must be signed by one of them
#   - the installer: install.sh, lib.sh, verify-bundle.mjs, release-keys.mjs from this
#     repository's image/ directory (HOMEAGENT_IMAGE_DIR), the same scripts the tests run.
# Set the variables with `export` in pi-gen's config file. pi-gen runs this
# file with the sub-stage directory as working directory.

SUB_STAGE_DIR=$(pwd)
IMAGE_DIR=${HOMEAGENT_IMAGE_DIR:-$(cd "${SUB_STAGE_DIR}/../../.." && pwd)}
FILES_DIR="${SUB_STAGE_DIR}/files"
DEST="${ROOTFS_DIR:?ROOTFS_DIR is not set (run through pi-gen)}/tmp/homeagent-install"

newest() {
	# newest FILE matching a glob in FILES_DIR, by version order
	find "${FILES_DIR}" -maxdepth 1 -name "$1" 2>/dev/null | sort -V | tail -n 1
}

bundle=${HOMEAGENT_BUNDLE:-$(newest 'homeagent-*.tar.gz')}
node_tarball=${HOMEAGENT_NODE_TARBALL:-$(newest 'node-v20*-linux-arm64.tar.xz')}

if [ -z "${bundle}" ] || [ ! -f "${bundle}" ]; then
	echo "HomeAgent: no bundle; run 'npm run bundle' and put homeagent-<version>.tar.gz in ${FILES_DIR} or set HOMEAGENT_BUNDLE" >&2
	exit 1
fi
if [ -z "${node_tarball}" ] || [ ! -f "${node_tarball}" ]; then
	echo "HomeAgent: no Node.js tarball; download node-v20.x-linux-arm64.tar.xz and SHASUMS256.txt from https://nodejs.org/dist/ into ${FILES_DIR} or set HOMEAGENT_NODE_TARBALL" >&2
	exit 1
fi
if [ -n "${HOMEAGENT_RELEASE_KEYS:-}" ]; then
	read -r -a release_keys <<<"${HOMEAGENT_RELEASE_KEYS}"
else
	mapfile -t release_keys < <(find "${FILES_DIR}" -maxdepth 1 -name '*.pub' 2>/dev/null | sort)
fi
if [ "${#release_keys[@]}" -eq 0 ]; then
	echo "HomeAgent: no release key: the image must trust the key that signs your bundles. Put its public key (npm run keygen makes a pair) in ${FILES_DIR} as NAME.pub or set HOMEAGENT_RELEASE_KEYS" >&2
	exit 1
fi
for k in "${release_keys[@]}"; do
	if [ ! -f "${k}" ]; then
		echo "HomeAgent: release key ${k} does not exist" >&2
		exit 1
	fi
	if grep -q 'PRIVATE KEY' "${k}"; then
		echo "HomeAgent: ${k} is a PRIVATE key; the image needs the public key (.pub) only" >&2
		exit 1
	fi
done
for f in install.sh lib.sh verify-bundle.mjs release-keys.mjs; do
	if [ ! -f "${IMAGE_DIR}/${f}" ]; then
		echo "HomeAgent: ${IMAGE_DIR}/${f} is missing (set HOMEAGENT_IMAGE_DIR to the repository's image/ directory)" >&2
		exit 1
	fi
done

# The Node.js tarball must match the checksum nodejs.org publishes.
node_name=$(basename "${node_tarball}")
if [ -n "${HOMEAGENT_NODE_SHA256:-}" ]; then
	expected=${HOMEAGENT_NODE_SHA256}
elif [ -f "$(dirname "${node_tarball}")/SHASUMS256.txt" ]; then
	expected=$(awk -v n="${node_name}" '$2 == n { print $1 }' "$(dirname "${node_tarball}")/SHASUMS256.txt")
else
	expected=""
fi
if [ -z "${expected}" ]; then
	echo "HomeAgent: no checksum for ${node_name}: put nodejs.org's SHASUMS256.txt next to it or set HOMEAGENT_NODE_SHA256" >&2
	exit 1
fi
actual=$(sha256sum "${node_tarball}" | cut -d' ' -f1)
if [ "${actual}" != "${expected}" ]; then
	echo "HomeAgent: ${node_name} checksum mismatch (got ${actual}, expected ${expected})" >&2
	exit 1
fi

rm -rf "${DEST}"
install -d -m 0755 "${DEST}"
install -m 0755 "${IMAGE_DIR}/install.sh" "${DEST}/install.sh"
install -m 0644 "${IMAGE_DIR}/lib.sh" "${DEST}/lib.sh"
install -m 0644 "${IMAGE_DIR}/verify-bundle.mjs" "${DEST}/verify-bundle.mjs"
install -m 0644 "${IMAGE_DIR}/release-keys.mjs" "${DEST}/release-keys.mjs"
install -d -m 0755 "${DEST}/keys"
for k in "${release_keys[@]}"; do
	install -m 0644 "${k}" "${DEST}/keys/$(basename "${k}")"
done
install -m 0644 "${bundle}" "${DEST}/$(basename "${bundle}")"
install -m 0644 "${node_tarball}" "${DEST}/node.tar.xz"
echo "HomeAgent: staged $(basename "${bundle}"), ${node_name} and ${#release_keys[@]} release key(s) in ${DEST}"
