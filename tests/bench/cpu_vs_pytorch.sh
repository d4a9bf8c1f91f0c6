#!/bin/sh
# cpu_vs_pytorch.sh - the native engine against PyTorch on this machine, in
# the same run. PyTorch is measured by a plain training / inference loop
# (below: the model, SGD, random data, the median of timed steps after a
# warm-up), and also through the project's PyTorch engine
# (engine/pytorch/matrix_torch.py, same flags) when it is there. Native and
# plain PyTorch are alternated (native, torch, native, torch) and the better
# of the two runs kept for each, so that a burst of load elsewhere on the
# machine hurts neither side alone. Not part of `make check` (`make bench`).
#
#   MNIST CNN training, batch 64, 2 threads       target >= 2x PyTorch
#   ResNet-50 inference fp32, batch 8, 2 threads  target >= 1x PyTorch, % of peak
#   ResNet-18 training, batch 8, 2 threads        target >= 1x PyTorch
#   engine start-up for mnist_cnn                 target < 50 ms
#
# Extra interpreters with another torch (e.g. a newer one from PyPI) can be
# named in BENCH_PYTHONS="python-a python-b".
set -eu
E=${MATRIX_ENGINE:?}
PY=${PYTHON_TORCH:-}
T=${top_srcdir:?}/engine/pytorch/matrix_torch.py
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
key() { sed -n "s/^$1=//p" "$2"; }

cat >"$W/plain.py" <<'PY'
"""plain PyTorch loop: model task batch seconds -> samples/s (median step)"""
import sys, time
import torch, torch.nn as nn, torch.nn.functional as F
model, task, batch, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
torch.set_num_threads(2)
if model == "mnist_cnn":
    class Net(nn.Module):  # 004_9e9952a87295c093.txt
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
            self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
            self.conv2_drop = nn.Dropout2d()
            self.fc1 = nn.Linear(320, 50)
            self.fc2 = nn.Linear(50, 10)
        def forward(self, x):
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = F.relu(self.fc1(x.view(-1, 320)))
            x = F.dropout(x, training=self.training)
            return F.log_softmax(self.fc2(x), dim=1)
    m, x, classes, opt_args = Net(), torch.randn(batch, 1, 28, 28), 10, dict(lr=0.01, momentum=0.5)
else:
    import torchvision
    m = getattr(torchvision.models, model)(num_classes=1000)
    x, classes, opt_args = torch.randn(batch, 3, 224, 224), 1000, dict(lr=0.01, momentum=0.9, weight_decay=1e-4)
t = torch.randint(0, classes, (batch,))
if task == "train":
    m.train()
    opt = torch.optim.SGD(m.parameters(), **opt_args)
    def step():
        opt.zero_grad()
        F.cross_entropy(m(x), t).backward()
        opt.step()
else:
    m.eval()
    def step():
        with torch.no_grad():
            m(x)
for _ in range(3):
    step()
ts, start = [], time.perf_counter()
while time.perf_counter() - start < secs or len(ts) < 5:
    t0 = time.perf_counter()
    step()
    ts.append(time.perf_counter() - t0)
ts.sort()
print(batch / ts[len(ts) // 2])
PY

# native ARGS...: throughput of one native run (samples/s)
native() { "$E" "$@" --result "$W/r" >/dev/null && cp "$W/r" "$W/native" && key throughput "$W/r"; }
max() { awk -v a="$1" -v b="$2" 'BEGIN{print (a > b) ? a : b}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", (b > 0) ? a / b : 0}'; }
met() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN{print (b > 0 && a / b >= t) ? "met" : "not met"}'; }

# compare LABEL TARGET MODEL TASK BATCH SECONDS NATIVE_ARGS...
compare() {
  label=$1 target=$2 model=$3 task=$4 batch=$5 secs=$6; shift 6
  n=0
  for py in ${PY:+"$PY"} ${BENCH_PYTHONS:-}; do
    eval "p_$(printf %s "$py" | tr -c 'a-zA-Z0-9' _)=0"
  done
  for i in 1 2; do
    n=$(max "$n" "$(native --model "$model" --task "$task" --batch "$batch" "$@")")
    for py in ${PY:+"$PY"} ${BENCH_PYTHONS:-}; do
      v=p_$(printf %s "$py" | tr -c 'a-zA-Z0-9' _)
      eval "cur=\$$v"
      eval "$v=$(max "$cur" "$("$py" "$W/plain.py" "$model" "$task" "$batch" "$secs" || echo 0)")"
    done
  done
  printf '%-42s native             %9.2f samples/s' "$label" "$n"
  case $model in resnet50)
    printf ' (%s TFLOP/s, %s%% of the estimated fp32 peak)' "$(key tflops "$W/native")" "$(key pct_peak "$W/native")";;
  esac
  echo
  for py in ${PY:+"$PY"} ${BENCH_PYTHONS:-}; do
    v=p_$(printf %s "$py" | tr -c 'a-zA-Z0-9' _)
    eval "p=\$$v"
    ver=$("$py" -c 'import torch; print(torch.__version__)')
    printf '%-42s torch %-12s %9.2f samples/s  native/torch %sx (target >= %sx: %s)\n' "" "$ver" "$p" \
      "$(ratio "$n" "$p")" "$target" "$(met "$n" "$p" "$target")"
  done
  if [ -n "$PY" ] && [ -f "$T" ]; then
    if "$PY" "$T" --model "$model" --task "$task" --batch "$batch" "$@" --result "$W/t" >/dev/null 2>&1; then
      printf '%-42s matrix_torch.py    %9.2f samples/s  (the PyTorch engine, same flags)\n' "" "$(key throughput "$W/t")"
    fi
  fi
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
compare "mnist_cnn train batch 64, 2 threads" 2 mnist_cnn train 64 2 \
  --threads 2 --device cpu --warmup 0.5s --min-time 2s --max-time 8s --rel-ci 0.02
# the plain loop runs under torch.no_grad(), which frees every activation when
# it is dead: the native engine's --inference-mode on (memory planning)
compare "resnet50 infer fp32 eval batch 8, 2 threads" 1 resnet50 infer 8 4 --eval on --inference-mode on \
  --threads 2 --device cpu --warmup 1 --min-time 4s --max-time 10s --rel-ci 0.02
compare "resnet18 train batch 8, 2 threads" 1 resnet18 train 8 4 \
  --threads 2 --device cpu --warmup 1 --min-time 4s --max-time 10s --rel-ci 0.02

# start-up: process start to the first timed step, no warm-up
s=1
for i in 1 2 3; do
  "$E" --model mnist_cnn --task train --batch 64 --threads 2 --warmup 0 --steps 3 --result "$W/r" >/dev/null
  s=$(awk -v a="$s" -v t="$(key startup_s "$W/r")" 'BEGIN{print (t < a) ? t : a}')
done
printf '%-42s native             %9.1f ms (target < 50 ms: %s)\n' "mnist_cnn start-up (best of 3)" \
  "$(awk -v s="$s" 'BEGIN{print s * 1000}')" "$(awk -v s="$s" 'BEGIN{print (s < 0.05) ? "met" : "not met"}')"
echo "machine load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
