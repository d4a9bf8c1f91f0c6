#!/bin/sh
# Install the Debian packages matrix needs to build, test and report (as root,
# Debian bookworm). CUDA, cuDNN, cuBLAS and NCCL are optional and not
# installed here: configure finds them in /usr/local/cuda when present.
set -eu
export DEBIAN_FRONTEND=noninteractive
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
	build-essential autoconf automake pkg-config ca-certificates \
	libyaml-dev libcsv-dev libopenblas-dev gnuplot-nox \
	python3 python3-torch python3-torchvision \
	libopenmpi-dev openmpi-bin \
	chromium procps time >/dev/null
