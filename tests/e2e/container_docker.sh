# container_docker.sh - points inside docker images: see container_checks.sh.
. "$top_srcdir/tests/setup"
rt=docker
. "$top_srcdir/tests/e2e/container_lib.sh"
. "$top_srcdir/tests/e2e/container_checks.sh"
