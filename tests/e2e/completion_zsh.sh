# zsh completion (issue 21, item 3): contrib/zsh-completion/_matrix, loaded
# by zsh's own completion system (compinit, from $fpath as when installed),
# completes commands, options, option values, recipe names, the recipe's
# factors and levels (KEY=VALUE, --only) and the engine's flags, values and
# models; an option's value after it or joined to it (--format=c), as the
# bash completion does. Each case is typed, with a TAB, into a real interactive zsh on a
# pseudo-terminal (zsh/zpty); TAB runs a test widget that runs the completion
# system (_main_complete) with compadd recording every candidate it adds (as
# the word it would become) into a file.
. "$top_srcdir/tests/setup"
: "${MATRIX_ENGINE:?}"
command -v zsh >/dev/null 2>&1 || { echo "SKIP: zsh is not installed (tests/install-deps.sh installs it)"; exit 77; }
zsh -fc 'zmodload zsh/zpty' 2>/dev/null || { echo "SKIP: this zsh has no zsh/zpty module to drive an interactive shell"; exit 77; }
mkdir rec experiments
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

# the interactive shell's set-up: the completion system with _matrix found in
# $fpath, TAB bound to the test widget
cat > inner.zsh <<'EOT'
PS1= PROMPT= RPROMPT=
fpath=("$top_srcdir/contrib/zsh-completion" $fpath)
autoload -Uz compinit && compinit -u -D
unsetopt beep
zstyle ':completion:*' insert-tab false
# compadd, recording: calls that only filter (-O, -A, -D) pass through; the
# others record each word that matches as the command line would get it
# (ignored prefix, -P prefix, word, -S suffix), then add as usual
compadd() {
	local -a hits apre asuf
	local h
	if (( ${@[(I)-[OAD]]} )); then
		builtin compadd "$@"
		return
	fi
	builtin compadd -A hits "$@"
	zparseopts -E P:=apre S:=asuf
	for h in $hits; do
		print -r -- "$IPREFIX${apre[2]}$h${asuf[2]}" >> capture
	done
	builtin compadd "$@"
}
_test_complete() {
	_main_complete
	print -r -- '@@done' >> capture
}
zle -C test-complete complete-word _test_complete
bindkey '^I' test-complete
bindkey '^U' kill-whole-line
print -r -- '@@ready' >> capture
EOT

M=$MATRIX E=$MATRIX_ENGINE
cat > cases.txt <<EOT
$M 
$M r
$M -
$M help ex
$M run --dr
$M run -
$M run -j 2 -
$M expand --format 
$M run --executor 
$M export --format j
$M run tin
$M run tiny 
$M run tiny com
$M run --out experiments tiny com
$M expand tiny model=
$M expand tiny batch=1,
$M expand tiny --only 
$M expand tiny --only compile=n
$M expand tiny --only batch=8,model=r
$M expand tiny --only 'model=mnist_cnn|r
$M expand tiny --only model=mnist_cnn\\|r
$M report ex
$M expand --format=
$M export --format=j
$M run --executor=
$M run --dry-run=
$M expand tiny --only=compile=n
$M expand tiny --only=batch=8,model=r
$M report --out=ex
$M run --out=experiments tiny com
$E --ch
$E --compile re
$E --model bert_
$E --device 
$E --data 
EOT

# the driver: one interactive zsh, each case typed with a TAB, the line
# cleared after; the terminal's output is read away as it comes. got.txt:
# per case, the line|its candidates sorted (C locale), each once
cat > driver.zsh <<'EOT'
zmodload zsh/zpty
export LC_ALL=C
wait_for() {   # wait_for MARKER: until the capture file holds the line MARKER
	local junk
	integer t0=$SECONDS
	until [[ -f capture && ${${(f)"$(<capture)"}[(Ie)$1]} -gt 0 ]]; do
		zpty -r -t z junk 2>/dev/null || sleep 0.02
		(( SECONDS - t0 < 60 )) || { print -u2 "no answer from the shell after 60 s"; cat capture >&2; exit 1; }
	done
}
rm -f capture
zpty z zsh -f -i
zpty -w z '. ./inner.zsh'
wait_for @@ready
while IFS= read -r line; do
	: > capture
	zpty -w -n z "$line"$'\t'
	wait_for @@done
	zpty -w -n z $'\C-u'
	got=(${(ou)${(f)"$(<capture)"}:#@@*})
	print -r -- "$line|${(j: :)got} "
done < cases.txt > got.txt
zpty -d z
EOT
MATRIX_RECIPES=$work/rec zsh -f driver.zsh || fail "the zsh driver failed"

cat > want.txt <<EOT
$M |build compare expand export help merge recipes report run run-point status time 
$M r|recipes report run run-point 
$M -|--help --version -V -h 
$M help ex|expand export 
$M run --dr|--dry-run 
EOT
# every option of 'matrix help run' is offered for 'run -', short ones too
opts=$("$MATRIX" help run | sed -n 's/^  \(-[A-Za-z]\)\{0,1\}\(, \)\{0,1\}\(--[a-z][a-z-]*\).*/\1 \3/p' | tr '\n' ' ')
printf '%s\n' "$M run -|$(printf '%s\n' $opts --help | LC_ALL=C sort -u | tr '\n' ' ')" >> want.txt
printf '%s\n' "$M run -j 2 -|$(printf '%s\n' $opts --help | LC_ALL=C sort -u | tr '\n' ' ')" >> want.txt
cat >> want.txt <<EOT
$M expand --format |csv table 
$M run --executor |local slurm 
$M export --format j|json jsonl 
$M run tin|tinier tiny 
$M run tiny |batch= compile= model= 
$M run tiny com|compile= 
$M run --out experiments tiny com|compile= 
$M expand tiny model=|model=mnist_cnn model=resnet_tiny 
$M expand tiny batch=1,|batch=1,1 batch=1,8 
$M expand tiny --only |batch= compile= id= model= 
$M expand tiny --only compile=n|compile=none 
$M expand tiny --only batch=8,model=r|batch=8,model=resnet_tiny 
$M expand tiny --only 'model=mnist_cnn|r|model=mnist_cnn|resnet_tiny 
$M expand tiny --only model=mnist_cnn\\|r|model=mnist_cnn\\|resnet_tiny 
$M report ex|experiments 
$M expand --format=|--format=csv --format=table 
$M export --format=j|--format=json --format=jsonl 
$M run --executor=|--executor=local --executor=slurm 
$M run --dry-run=| 
$M expand tiny --only=compile=n|--only=compile=none 
$M expand tiny --only=batch=8,model=r|--only=batch=8,model=resnet_tiny 
$M report --out=ex|--out=experiments 
$M run --out=experiments tiny com|compile= 
$E --ch|--channels-last 
$E --compile re|reduce-overhead 
$E --model bert_|bert_base bert_large bert_tiny 
$E --device |auto cpu cuda 
EOT
# --data synthetic|DIR: the value and the directories here
printf '%s\n' "$E --data |experiments rec synthetic " >> want.txt
diff want.txt got.txt || fail "completions differ (- expected, + got)"
echo ok
