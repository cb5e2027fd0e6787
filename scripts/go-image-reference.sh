#!/usr/bin/env bash
# Extracts the sources of distribution's reference package and go-digest (Debian's golang-github-docker-distribution-dev
# and golang-github-opencontainers-go-digest-dev, pinned by the Debian release) into a GOPATH, without installing the
# first package's 60-odd dependencies, which its reference and digestset packages do not import. The image reference test builds
# its differential tool (test/helpers/imageref) against it. Usage: scripts/go-image-reference.sh [GOPATH]
# (default /usr/local/share/ray-gpu/gocode, as test/core/config/image-reference.test.ts reads it).
set -euo pipefail
dest=${1:-/usr/local/share/ray-gpu/gocode}
[ -d "$dest/src/github.com/docker/distribution/digestset" ] && [ -d "$dest/src/github.com/opencontainers/go-digest" ] && exit 0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
packages=(golang-github-docker-distribution-dev golang-github-opencontainers-go-digest-dev)
download() { (cd "$work" && apt-get download -qq "${packages[@]}" 2>/dev/null); }
download || { apt-get update -qq && download; } # no package lists yet: fetch them once
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
mkdir -p "$dest/src/github.com/docker/distribution" "$dest/src/github.com/opencontainers"
for pkg in reference digestset; do
  cp -r "$work/root/usr/share/gocode/src/github.com/docker/distribution/$pkg" "$dest/src/github.com/docker/distribution/"
done
cp -r "$work/root/usr/share/gocode/src/github.com/opencontainers/go-digest" "$dest/src/github.com/opencontainers/"
