# bash completion (issue 21, item 3): contrib/bash-completion/matrix registers
# _matrix for matrix and _matrix_engine for matrix-engine (complete -p), and
# completes commands, options, option values, recipe names, the recipe's
# factors and levels (KEY=VALUE, --only) and the engine's flags, values and
# models, from lines as readline hands them over (COMP_LINE, COMP_POINT; its
# COMP_WORDS split at '=' too); an option's value after it or joined to it
# (--format=c), each reply cut as readline splits the word at '='.
. "$top_srcdir/tests/setup"
: "${MATRIX_ENGINE:?}"
command -v bash >/dev/null 2>&1 || { echo "SKIP: no bash to load the completion into"; exit 77; }
mkdir rec
cat > rec/tiny.yaml <<'EOT'
name: tiny
engine: native
device: cpu
factors:
  model: [mnist_cnn, resnet_tiny]
  batch: [1, 8]
  compile: [none, default]
EOT
cp rec/tiny.yaml rec/tinier.yaml
cat > cases.sh <<'EOT'
. "$top_srcdir/contrib/bash-completion/matrix"
complete -p matrix matrix-engine
# c FUNC LINE: what completing LINE (cursor at its end) offers, sorted
c() {
	COMP_LINE=$2 COMP_POINT=${#2} COMPREPLY=()
	read -r -a COMP_WORDS <<< "${2//=/ = }"; COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	"$1"
	printf '%s|' "$2"; printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '; echo
}
M=$MATRIX E=$MATRIX_ENGINE
c _matrix "$M "
c _matrix "$M r"
c _matrix "$M -"
c _matrix "$M help ex"
c _matrix "$M run --dr"
c _matrix "$M run -"
c _matrix "$M expand --format "
c _matrix "$M run --executor "
c _matrix "$M export --format j"
c _matrix "$M run tin"
c _matrix "$M run tiny "
c _matrix "$M run tiny com"
c _matrix "$M expand tiny model="
c _matrix "$M expand tiny batch=1,"
c _matrix "$M expand tiny --only "
c _matrix "$M expand tiny --only compile=n"
c _matrix "$M expand tiny --only batch=8,model=r"
c _matrix "$M report ex"
c _matrix "$M expand --format=c"
c _matrix "$M export --format=j"
c _matrix "$M run --executor="
c _matrix "$M run --dry-run="
c _matrix "$M expand tiny --only=compile=n"
c _matrix "$M expand tiny --only=batch=8,model=r"
c _matrix "$M report --out=ex"
c _matrix "$M run --out=experiments tiny com"
c _matrix_engine "$E --ch"
c _matrix_engine "$E --compile re"
c _matrix_engine "$E --model bert_"
c _matrix_engine "$E --device "
EOT
mkdir experiments
MATRIX_RECIPES=$work/rec bash cases.sh > got.txt 2>&1 || { cat got.txt; fail "the completion script failed"; }
M=$MATRIX E=$MATRIX_ENGINE
cat > want.txt <<EOT
complete -F _matrix matrix
complete -F _matrix_engine matrix-engine
$M |build compare expand export help merge recipes report run run-point status time 
$M r|recipes report run run-point 
$M -|--help --version -V -h 
$M help ex|expand export 
$M run --dr|--dry-run 
EOT
# every option of 'matrix help run' is offered for 'run -'
opts=$("$MATRIX" help run | sed -n 's/^  \(-[A-Za-z], \)\{0,1\}\(--[a-z][a-z-]*\).*/\2/p' | sort -u | tr '\n' ' ')
printf '%s\n' "$M run -|$(printf '%s\n' $opts --help | sort -u | tr '\n' ' ')" >> want.txt
cat >> want.txt <<EOT
$M expand --format |csv table 
$M run --executor |local slurm 
$M export --format j|json jsonl 
$M run tin|tinier tiny 
$M run tiny |batch= compile= model= 
$M run tiny com|compile= 
$M expand tiny model=|mnist_cnn resnet_tiny 
$M expand tiny batch=1,|1,1 1,8 
$M expand tiny --only |batch= compile= id= model= 
$M expand tiny --only compile=n|none 
$M expand tiny --only batch=8,model=r|resnet_tiny 
$M report ex|experiments 
$M expand --format=c|csv 
$M export --format=j|json jsonl 
$M run --executor=|local slurm 
$M run --dry-run=| 
$M expand tiny --only=compile=n|none 
$M expand tiny --only=batch=8,model=r|resnet_tiny 
$M report --out=ex|experiments 
$M run --out=experiments tiny com|compile= 
$E --ch|--channels-last 
$E --compile re|reduce-overhead 
$E --model bert_|bert_base bert_large bert_tiny 
$E --device |auto cpu cuda 
EOT
diff want.txt got.txt || fail "completions differ (- expected, + got)"
echo ok
