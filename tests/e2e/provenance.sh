# Provenance and the columns of a row (issue 21, items 2 and 8): each row
# holds the keys common to the engines in named columns (setup_s, timed_s,
# prepare_s, max_rel_err, top1_agree, node) and what reproduces the point
# (workdir, git_commit, git_dirty, engine_path); env.txt the same and the
# build's compiler and flags. Inside a git repository with a dirty tracked
# file, then clean, then outside any repository. A run directory of the
# matrix before these columns (every such key in `extra`) still reports,
# exports, compares and resumes. Needs git (skips with the reason without).
. "$top_srcdir/tests/setup"
: "${MATRIX_ENGINE:?}"
command -v git > /dev/null || { echo "SKIP: git is not installed"; exit 77; }
command -v python3 > /dev/null || { echo "SKIP: python3 is not installed (it writes the old-format rows)"; exit 77; }
# git stops at the test's directory: the build tree may be a repository
export GIT_CEILING_DIRECTORIES="$work"
g() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=main "$@"; }

# --- a project in a git repository: the recipe, its engine script, a file
mkdir proj
cat > proj/bench.sh <<'SH'
#!/bin/sh
printf 'status=ok\nthroughput=%s\nunit=samples/s\nstep_ms=10\nstep_ms_lo=9.5\nstep_ms_hi=10.5\nsamples=7\ndevice=cpu\nengine=test\nsetup_s=0.25\ntimed_s=1.5\nprepare_s=0.125\nmax_rel_err=0.0012\ntop1_agree=0.998\ncustom=kept in extra\n' "$1" > "$MATRIX_RESULT"
SH
cat > proj/r.yaml <<YAML
name: prov
engine: command
command: [sh, $work/proj/bench.sh, "{speed}"]
factors:
  speed: [10, 20, 30]
YAML
echo 1 > proj/data.txt
(cd proj && g init -q && g add r.yaml bench.sh data.txt && g commit -q -m first)
head=$(git -C proj rev-parse HEAD)
echo 2 > proj/data.txt # a tracked file changed: dirty
(cd proj && "$MATRIX" run r.yaml --out ../dirty --no-report > /dev/null 2> ../err.txt) || fail "run: $(cat err.txt)"
expect_grep "^workdir: $work/proj$" dirty/env.txt "env.txt: working directory"
expect_grep "^project_dir: $work/proj$" dirty/env.txt "env.txt: the recipe's directory"
expect_grep "^git_top: $work/proj$" dirty/env.txt "env.txt: the repository"
expect_grep "^git_commit: $head$" dirty/env.txt "env.txt: commit"
expect_grep "^git_dirty: yes" dirty/env.txt "env.txt: dirty"
expect_grep "^compiler: ." dirty/env.txt "env.txt: compiler"
expect_grep "^cflags: " dirty/env.txt "env.txt: flags"
expect_grep "^libraries: libyaml [0-9]" dirty/env.txt "env.txt: library versions"
expect_grep "^engine_build: CUDA " dirty/env.txt "env.txt: the native engine's build"
expect_eq "$(csv_col dirty/results.csv git_commit | sort -u)" "$head" "row: commit"
expect_eq "$(csv_col dirty/results.csv git_dirty | sort -u)" yes "row: dirty"
expect_eq "$(csv_col dirty/results.csv workdir | sort -u)" "$work/proj" "row: working directory"
sh_abs=$(readlink -f "$(command -v sh)")
expect_eq "$(csv_col dirty/results.csv engine_path | sort -u)" "$sh_abs $work/proj/bench.sh" "row: engine path"
# the engine's keys common to engines in their columns, not in extra
expect_eq "$(csv_col dirty/results.csv setup_s | sort -u)" 0.25 "setup_s column"
expect_eq "$(csv_col dirty/results.csv timed_s | sort -u)" 1.5 "timed_s column"
expect_eq "$(csv_col dirty/results.csv prepare_s | sort -u)" 0.125 "prepare_s column"
expect_eq "$(csv_col dirty/results.csv max_rel_err | sort -u)" 0.0012 "max_rel_err column"
expect_eq "$(csv_col dirty/results.csv top1_agree | sort -u)" 0.998 "top1_agree column"
expect_eq "$(csv_col dirty/results.csv node | sort -u)" "$(hostname)" "node column"
# extra: the engine's own keys (and the runner's cpu), none of those
only_own() { csv_col "$1" extra | grep -v 'custom=kept in extra' ||
	csv_col "$1" extra | grep -E '(^|; )(setup_s|timed_s|prepare_s|max_rel_err|top1_agree|node)=' || :; }
expect_eq "$(only_own dirty/results.csv)" "" "extra: the engine's own keys only"

# committed: clean; the commit recorded is the new one
(cd proj && g commit -q -am second)
head2=$(git -C proj rev-parse HEAD)
(cd proj && "$MATRIX" run r.yaml --out ../clean --no-report > /dev/null 2>&1) || fail "clean run"
expect_grep "^git_commit: $head2$" clean/env.txt "env.txt: new commit"
expect_grep "^git_dirty: no$" clean/env.txt "env.txt: clean"
expect_eq "$(csv_col clean/results.csv git_dirty | sort -u)" no "row: clean"
# a resume from elsewhere: the project is the one the first run recorded
rm clean/results.csv
mkdir proj/elsewhere
(cd proj/elsewhere && "$MATRIX" run --resume ../../clean --no-report > /dev/null 2>&1) || fail "resume"
expect_grep "^project_dir: $work/proj$" clean/env.txt "resume: the project kept"
expect_grep "^workdir: $work/proj/elsewhere$" clean/env.txt "resume: its working directory"
expect_eq "$(csv_col clean/results.csv git_commit | sort -u)" "$head2" "resume: commit"

# --- outside any repository, with the native engine
mkdir plain
cat > plain/n.yaml <<'YAML'
name: native_prov
engine: native
device: cpu
measure: {warmup: 2, min_time: 0.01s, max_time: 0.05s}
factors:
  model: [mnist_cnn]
  task: [infer]
  batch: [1]
YAML
"$MATRIX" run plain/n.yaml --out native --no-report > /dev/null 2>&1 || fail "native run"
expect_grep "^git: none" native/env.txt "env.txt: no repository"
grep -q "^git_commit:" native/env.txt && fail "env.txt names a commit outside a repository"
expect_eq "$(csv_col native/results.csv git_commit)$(csv_col native/results.csv git_dirty)" "" "row: no commit, no flag"
expect_eq "$(csv_col native/results.csv engine_path)" "$(readlink -f "$MATRIX_ENGINE")" "row: the engine's absolute path"
expect_grep "compiler=$(sed -n 's/^compiler: //p' native/env.txt)" native/results.csv "row: the engine's compiler"
expect_grep "cflags=" native/results.csv "row: the engine's flags"
expect_eq "$(csv_col native/results.csv setup_s | grep -c '^[0-9.e-]*$')" 1 "native: setup_s column"

# --- a directory of the matrix before these columns. Its rows held every
# key without a column in `extra` (node, setup_s, timed_s, prepare_s,
# max_rel_err, top1_agree) and had no provenance columns: written here from
# a run of this version by taking those columns out and putting their
# values back in extra, as that version wrote them; the last row dropped,
# so that a resume has a point to run.
cp -r dirty old
python3 - old/results.csv <<'PY'
import csv, sys
new = ["setup_s", "timed_s", "prepare_s", "max_rel_err", "top1_agree", "node",
       "workdir", "git_commit", "git_dirty", "engine_path"]
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
header = [c for c in csv.reader(open(sys.argv[1], newline="")).__next__() if c not in new]
with open(sys.argv[1], "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(header)
    for r in rows[:-1]:
        r["extra"] = "; ".join(["%s=%s" % (k, r[k]) for k in new[:6]] + [r["extra"]])
        w.writerow([r[c] for c in header])
PY
grep -q "setup_s=0.25; timed_s=1.5" old/results.csv || fail "the old-format rows were not written"
"$MATRIX" report old > /dev/null 2> err.txt || fail "report on an old directory: $(cat err.txt)"
expect_grep "^| 10 | 10 | 9.5 .. 10.5 | ok |$" old/report.md "report: the old rows in the per-point table"
"$MATRIX" export old --format csv > old.csv || fail "export of an old directory"
"$MATRIX" export dirty --format csv | head -3 > new.csv
cut -d, -f1-11 old.csv > old11.csv; cut -d, -f1-11 new.csv > new11.csv
cmp old11.csv new11.csv || fail "the old directory exports other values: $(cat old.csv)"
"$MATRIX" export old --metric setup_s --format csv > s.csv || fail "export --metric setup_s of an old directory"
expect_eq "$(csv_col s.csv value | sort -u)" 0.25 "an old row's setup_s read from extra"
"$MATRIX" compare old dirty > cmp.txt || fail "compare an old directory with a new one"
expect_grep "geometric mean" cmp.txt "compare output"
"$MATRIX" run --resume old --no-report > out.txt 2> err.txt || fail "resume of an old directory: $(cat err.txt)"
expect_grep "written by an older matrix: its 2 rows rewritten in this version's columns" err.txt "resume says it upgraded"
expect_eq "$(head -1 old/results.csv)" "$(head -1 dirty/results.csv)" "resume: this version's header"
expect_eq "$(tail -n +2 old/results.csv | wc -l)" 3 "resume: the old rows kept, the missing point run"
expect_eq "$(csv_col old/results.csv setup_s | tr '\n' ' ')" "0.25 0.25 0.25 " "upgraded rows: setup_s moved to its column"
expect_eq "$(csv_col old/results.csv node | sort -u)" "$(hostname)" "upgraded rows: node"
expect_eq "$(only_own old/results.csv)" "" "upgraded rows: extra without the moved keys"
expect_eq "$(csv_col old/results.csv git_commit | head -2 | tr -d '\n')" "" "upgraded rows: no commit invented"
echo ok
