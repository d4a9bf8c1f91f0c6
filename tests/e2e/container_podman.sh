# container_podman.sh - points inside podman images: see container_checks.sh.
. "$top_srcdir/tests/setup"
rt=podman
. "$top_srcdir/tests/e2e/container_lib.sh"
. "$top_srcdir/tests/e2e/container_checks.sh"
