#!/bin/sh
# A command engine for the runner's tests. Usage: engine.sh MODE [VALUE]
# It writes its result to $MATRIX_RESULT (the engine contract) and behaves
# according to MODE.
mode=$1
value=${2:-1}
res=${MATRIX_RESULT:?}
case $mode in
ok)
	printf 'status=ok\nthroughput=%s\nunit=samples/s\nstep_ms=%s\nstep_ms_lo=9.5\nstep_ms_hi=10.5\nsamples=7\ndevice=cpu\nengine=test\nversion=1.2\n' \
		"$value" 10 >"$res" ;;
sleep)
	sleep "$value"
	printf 'status=ok\nthroughput=1\n' >"$res" ;;
fail)
	echo "engine: something went wrong" >&2
	exit 1 ;;
failreason)
	printf 'status=failed\nreason=the model diverged\n' >"$res"
	exit 1 ;;
unsupported)
	printf 'status=unsupported\nreason=fp16 needs a GPU\n' >"$res"
	exit 3 ;;
oom)
	echo "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB" >&2
	exit 1 ;;
crash)
	kill -SEGV $$ ;;
hang)
	sleep 1000 ;;
hangchild)
	# a grandchild that ignores SIGTERM, its pid recorded for the test
	sh -c 'trap "" TERM; echo $$ > "$0"; while :; do sleep 1; done' "${PIDFILE:-$value}" &
	wait ;;
garbled)
	printf 'status=ok\nthis line has no equals sign\n' >"$res" ;;
badnumber)
	printf 'status=ok\nthroughput=fast\n' >"$res" ;;
nan)
	printf 'status=ok\nthroughput=nan\nstep_ms=1\n' >"$res" ;;
negative)
	printf 'status=ok\nthroughput=100\nstep_ms=-2.5\n' >"$res" ;;
noresult)
	: ;;
noisy)
	# megabytes of output
	i=0; while [ $i -lt 2000 ]; do
		printf '%01000d\n' "$i"; i=$((i + 1))
	done
	printf 'status=ok\nthroughput=5\n' >"$res" ;;
*)
	echo "engine.sh: unknown mode '$mode'" >&2
	exit 2 ;;
esac
