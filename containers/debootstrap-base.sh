#!/bin/sh
# debootstrap-base.sh - a Debian bookworm base image from Debian's mirror, for
# machines that reach a package mirror but no image registry.
#
#   containers/debootstrap-base.sh TARBALL [MIRROR]
#       writes TARBALL (a rootfs tar, minbase variant) unless it exists;
#   podman import TARBALL localhost/debian:bookworm   (or: docker import)
#
# Needs root (debootstrap) and the debootstrap package. About a minute.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 TARBALL [MIRROR]" >&2; exit 2; }
tarball=$1
mirror=${2:-http://deb.debian.org/debian}
[ -s "$tarball" ] && exit 0
command -v debootstrap >/dev/null || { echo "debootstrap-base: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 1; }
root=$(mktemp -d "${TMPDIR:-/tmp}/debootstrap.XXXXXX")
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 || {
	tail -n 20 "$root.log" >&2
	rm -f "$root.log"
	echo "debootstrap-base: debootstrap from '$mirror' failed" >&2
	exit 1
}
rm -f "$root.log"
# what the image does not need: package lists and caches
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" --numeric-owner -cf "$tarball.tmp" .
mv "$tarball.tmp" "$tarball"
