# matrix expand: counts, formats, filters, exclusions; ids independent of key
# order; seeded shuffles deterministic, with containers kept grouped.
. "$top_srcdir/tests/setup"
cat > a.yaml <<'YAML'
name: a
engine: native
factors:
  model: [resnet18, resnet50]
  batch: [1, 8, 64]
  precision: [fp32, fp16]
exclude:
  - {model: resnet50, batch: [1, 8], precision: fp16}
YAML
cat > b.yaml <<'YAML'
engine: native
factors:
  precision: [fp16, fp32]
  batch: [64, 1, 8]
  model: [resnet50, resnet18]
exclude:
  - {precision: fp16, model: resnet50, batch: [8, 1]}
name: a
YAML
expect_eq "$("$MATRIX" expand a.yaml --count)" 10 "count with exclusions"
expect_eq "$("$MATRIX" expand a.yaml --count --only model=resnet18)" 6 "count with --only"
# a point matches every term: a factor named twice keeps the levels both allow
expect_eq "$("$MATRIX" expand a.yaml --count --only 'model=resnet18|resnet50,model=resnet18')" 6 "a factor in two terms: both"
expect_status 2 "$MATRIX" expand a.yaml --only 'model=resnet50,model=resnet18' 2> e0
expect_grep "no point of the plan matches every term of 'model=resnet50,model=resnet18'" e0 "a factor in two disjoint terms"
"$MATRIX" expand a.yaml --format csv > a.csv
"$MATRIX" expand b.yaml --format csv > b.csv
expect_eq "$(head -1 a.csv)" "id,index,repeat,model,batch,precision" "csv header"
expect_eq "$(sed -n 2p a.csv | cut -d, -f2-)" "1,0,resnet18,1,fp32" "first point in declared order"
expect_eq "$(sed -n 3p a.csv | cut -d, -f5-)" "1,fp16" "last factor fastest"
cut -d, -f1 a.csv | tail -n +2 | sort > a.ids
cut -d, -f1 b.csv | tail -n +2 | sort > b.ids
cmp a.ids b.ids || fail "ids depend on the order of keys"
expect_eq "$(sort -u a.ids | wc -l)" 10 "ids unique"
"$MATRIX" expand a.yaml > table.txt
expect_eq "$(head -1 table.txt | tr -s ' ')" " index id model batch precision" "table header"
expect_eq "$(wc -l < table.txt)" 11 "table rows"
# shuffled: deterministic by seed, a permutation of the given plan
sed 's/^name: a$/name: a\norder: shuffled\nseed: 7/' a.yaml > s7.yaml
sed 's/^name: a$/name: a\norder: shuffled\nseed: 8/' a.yaml > s8.yaml
"$MATRIX" expand s7.yaml --format csv | cut -d, -f1 > s7a
"$MATRIX" expand s7.yaml --format csv | cut -d, -f1 > s7b
"$MATRIX" expand s8.yaml --format csv | cut -d, -f1 > s8
cmp s7a s7b || fail "shuffle not deterministic"
! cmp -s s7a s8 || fail "seeds 7 and 8 give the same order"
! cmp -s s7a a.csv || fail "shuffle is the given order"
expect_eq "$(tail -n +2 s7a | sort | tr '\n' ' ')" "$(tr '\n' ' ' < a.ids)" "shuffle is a permutation"
# containers stay grouped under shuffling
cat > c.yaml <<'YAML'
name: c
engine: native
order: shuffled
seed: 3
containers: {old: "matrix-engine:old", new: "matrix-engine:new"}
factors:
  container: [old, new]
  batch: [1, 2, 4, 8, 16, 32]
  precision: [fp32, tf32, fp16, bf16]
YAML
"$MATRIX" expand c.yaml --format csv | tail -n +2 | cut -d, -f4 | uniq > groups
expect_eq "$(tr '\n' ' ' < groups)" "old new " "containers grouped"
# a container runtime that cannot start is one error before anything runs
sed 's/^containers: {/containers: {runtime: docker, /' c.yaml > cd.yaml
expect_status 2 env DOCKER_HOST=unix://$work/no-dockerd.sock "$MATRIX" run cd.yaml --out crun 2> cerr
expect_grep "^matrix: .*container 'old' needs docker, and it does not work here (docker: .*): install podman" cerr "runtime refused"
expect_eq "$(wc -l < cerr)" 1 "one error line"
[ ! -e crun ] || fail "a refused run created its directory"
# repeat
sed 's/^name: a$/name: a\nrepeat: 3/' a.yaml > r3.yaml
expect_eq "$("$MATRIX" expand r3.yaml --count)" 30 "repeat count"
expect_eq "$("$MATRIX" expand r3.yaml --format csv | cut -d, -f1 | tail -n +2 | sort -u | wc -l)" 30 "repeat ids distinct"
# bad options
expect_status 2 "$MATRIX" expand a.yaml --format json 2> e1
expect_eq "$(cat e1)" "matrix: expand: unknown format 'json' (expected table or csv)" "bad format"
expect_status 2 "$MATRIX" expand a.yaml --only modle=resnet18 2> e2
expect_eq "$(cat e2)" "matrix: --only: the recipe has no factor 'modle' (did you mean 'model'?)" "bad filter"

# --count with exclusions is exact without walking the cube: 2^40
# combinations with one rule (a quarter excluded), and 2,001 rules over 12
# four-level factors, each in seconds (walking took minutes)
{
	echo "name: big"; echo "engine: command"; echo "command: [true]"; echo "factors:"
	i=0; while [ $i -lt 40 ]; do echo "  f$i: [a, b]"; i=$((i + 1)); done
	echo "exclude:"; echo "  - {f0: a, f1: b}"
} > big.yaml
expect_eq "$(timeout 10 "$MATRIX" expand --count big.yaml)" 824633720832 "2^40 cube, one rule"
{
	echo "name: many"; echo "engine: command"; echo "command: [true]"; echo "factors:"
	i=0; while [ $i -lt 12 ]; do echo "  f$i: [a, b, c, d]"; i=$((i + 1)); done
	echo "exclude:"
	n=0
	for a in a b c d; do for b in a b c d; do for c in a b c d; do for d in a b c d; do for e in a b c d; do for f in a b; do
		[ $n -lt 2001 ] && echo "  - {f0: $a, f1: $b, f2: $c, f3: $d, f4: $e, f5: $f}"
		n=$((n + 1))
	done; done; done; done; done; done
} > many.yaml
expect_eq "$(timeout 20 "$MATRIX" expand --count many.yaml)" 8581120 "2,001 rules"
# a fractional design: 2^(5-2) x a three-level factor crossed, one level
# of it excluded; its runs are points of the full factorial (same ids), the
# design printed above the table
cat > frac.yaml <<'YAML'
name: frac
engine: command
command: [true, "{model}", "{a}", "{b}", "{c}", "{d}", "{e}", "{result}"]
order: shuffled
factors:
  model: [small, medium, large]
  a: [off, on]
  b: [off, on]
  c: [off, on]
  d: [off, on]
  e: [off, on]
exclude:
  - {model: large}
design: {type: fractional, resolution: 3, factors: [a, b, c, d, e]}
YAML
expect_eq "$("$MATRIX" expand frac.yaml --count)" 16 "2^(5-2) x 2 models"
expect_eq "$("$MATRIX" expand frac.yaml --count --only model=small)" 8 "--only on a fraction"
expect_eq "$("$MATRIX" expand frac.yaml --count design.fraction=1/2)" 32 "override of the fraction"
"$MATRIX" expand frac.yaml --format csv > frac.csv
grep -v '^design:' frac.yaml > full.yaml
"$MATRIX" expand full.yaml --format csv > full.csv
expect_eq "$(wc -l < frac.csv)" 17 "csv rows of the fraction"
expect_eq "$(wc -l < full.csv)" 65 "csv rows of the full factorial"
cut -d, -f1 full.csv | sort > full.ids
cut -d, -f1 frac.csv | sort | comm -23 - full.ids > strays
[ ! -s strays ] || fail "fraction ids not in the full factorial: $(cat strays)"
"$MATRIX" expand frac.yaml > frac.txt
head -13 frac.txt > frac.head
cat > frac.expected <<'EOF'
design: 2^(5-2) fractional factorial, resolution III: 8 of the 32 combinations (1/4 fraction), crossed with each of the 3 combinations of the other factors (before exclusions)
factors: A = a (off -, on +), B = b (off -, on +), C = c (off -, on +), D = d (off -, on +), E = e (off -, on +)
generators (minimum aberration): D = AB, E = AC
defining relation: I = ABD = ACE = BCDE
word-length pattern: A3 = 2, A4 = 1
aliases of main effects and two-factor interactions (longer interactions left out):
  A = BD = CE
  B = AD
  C = AE
  D = AB
  E = AC
  BC = DE
  BE = CD
EOF
cmp frac.head frac.expected || { diff -u frac.expected frac.head >&2; fail "design text"; }
expect_eq "$(sed -n 15p frac.txt | tr -s ' ' | sed 's/ *$//')" " index id model a b c d e" "table after the design"
expect_eq "$(wc -l < frac.txt)" 31 "design, blank line, header, 16 runs"
echo ok
