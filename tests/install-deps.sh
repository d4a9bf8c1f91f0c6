#!/bin/sh
# Install the Debian packages matrix needs to build, test and report (as root,
# Debian bookworm). CUDA, cuDNN, cuBLAS and NCCL are optional and not
# installed here: configure finds them in /usr/local/cuda when present.
# slurm-wlm and munge: tests/e2e/slurm_run.sh starts its own one-node cluster
# (the packages' own services are not used).
# zsh: tests/e2e/completion_zsh.sh runs the zsh completion in a real zsh.
# uidmap (newuidmap): rootless podman, tests/e2e/container_rootless.sh.
set -eu
export DEBIAN_FRONTEND=noninteractive
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
	build-essential autoconf automake pkg-config ca-certificates \
	libyaml-dev libcsv-dev libopenblas-dev zlib1g-dev gnuplot-nox \
	python3 python3-torch python3-torchvision python3-pip \
	libopenmpi-dev openmpi-bin \
	chromium procps time groff-base zsh \
	slurm-wlm munge \
	docker.io podman runc containerd debootstrap uidmap >/dev/null
# ONNX Runtime (CPU) and onnx for the PyTorch engine's runtime onnxruntime and
# int8 (tests/pytorch/engine_runtimes.py skips without them), pinned, into
# Debian's python beside its torch; numpy stays Debian's (torch is built on it).
# Debian's python is /usr/bin/python3 (the first python3 on PATH may be
# another one, without Debian's torch and numpy).
PY=/usr/bin/python3
if NUMPY=$($PY -c 'import numpy; print(numpy.__version__)' 2>/dev/null) &&
	$PY -m pip install -q --break-system-packages --root-user-action=ignore \
		onnxruntime==1.32.0 onnx==1.23.2 "numpy==$NUMPY" >/dev/null; then
	:
else
	echo "install-deps: onnxruntime and onnx not installed: the runtime tests will be skipped" >&2
fi
# transformers, pinned, for tests/engine/bert_hf.py (the native BERT against
# BertForMaskedLM; it skips without it). 4.46.3 still runs on Debian's torch
# 1.13.
if NUMPY=$($PY -c 'import numpy; print(numpy.__version__)' 2>/dev/null) &&
	$PY -m pip install -q --break-system-packages --root-user-action=ignore \
		transformers==4.46.3 "numpy==$NUMPY" >/dev/null; then
	:
else
	echo "install-deps: transformers not installed: tests/engine/bert_hf.py will be skipped" >&2
fi
