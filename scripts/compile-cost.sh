#!/usr/bin/env bash
# compile-cost: the CPU time (user+sys) the compiler spends on
# acpkit.dev/acpsdk/gen, in the work tree and in a baseline commit
# (issue #14: at most half of the baseline's), plain and with -race.
#
#   scripts/compile-cost.sh [RUNS]      (make compile-cost; RUNS defaults to 5)
#   MODES=plain scripts/compile-cost.sh (only one of "plain race")
#
# BASE (default f9e9270, the last commit before the generated code shrank)
# is extracted with git archive into a temporary directory. Only the
# compile of the one package is timed: its dependencies come from the build
# cache, and a per-run -gcflags value for that package alone (-D, the
# relative path of local imports, which it has none of) gives it a cache
# key of its own, so it is compiled afresh each run. A -toolexec wrapper
# runs that compile and records its children's CPU time. Runs alternate
# between the trees; the medians and their ratio are printed.
set -euo pipefail

RUNS=${1:-5}
BASE=${BASE:-f9e9270}
PKG=acpkit.dev/acpsdk/gen
GO=${GO:-go}

root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir "$tmp/base"
git -C "$root" archive "$BASE" | tar -x -C "$tmp/base"

# The wrapper: time the compile of $PKG, run every other tool as is.
cat >"$tmp/toolexec" <<'EOF'
#!/usr/bin/env bash
tool=$1
case " $* " in
*" -p $COMPILE_COST_PKG "*)
	[[ ${tool##*/} == compile ]] || exec "$@"
	"$@"
	rc=$?
	# times, a builtin (no fork before it is counted): its second line is
	# the children's user and system time, as XmY.YYYs XmY.YYYs.
	times >"$COMPILE_COST_OUT.times"
	awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); t += p[1] * 60 + p[2] } printf "%.3f\n", t }' \
		"$COMPILE_COST_OUT.times" >>"$COMPILE_COST_OUT"
	exit $rc
	;;
esac
exec "$@"
EOF
chmod +x "$tmp/toolexec"

export COMPILE_COST_PKG=$PKG
n=0
# measure DIR OUT [FLAGS...]: one fresh compile of $PKG in DIR, its CPU
# seconds appended to OUT.
measure() {
	local dir=$1 out=$2
	shift 2
	n=$((n + 1))
	: >"$tmp/one"
	(cd "$dir" && COMPILE_COST_OUT="$tmp/one" "$GO" build "$@" -toolexec "$tmp/toolexec" \
		-gcflags="$PKG=-D=compilecost$$.$n" "$PKG")
	[[ -s "$tmp/one" ]] || { echo "compile-cost: $PKG was not compiled in $dir" >&2; exit 1; }
	cat "$tmp/one" >>"$out"
}

median() { sort -n "$1" | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }

for mode in ${MODES:-plain race}; do
	flags=()
	[[ $mode == race ]] && flags=(-race)
	: >"$tmp/$mode.base"
	: >"$tmp/$mode.work"
	# Warm the dependencies' cache entries first (not timed).
	(cd "$tmp/base" && "$GO" build "${flags[@]}" "$PKG")
	(cd "$root" && "$GO" build "${flags[@]}" "$PKG")
	for ((i = 0; i < RUNS; i++)); do
		measure "$tmp/base" "$tmp/$mode.base" "${flags[@]}"
		measure "$root" "$tmp/$mode.work" "${flags[@]}"
	done
	b=$(median "$tmp/$mode.base")
	w=$(median "$tmp/$mode.work")
	printf '%-5s base %s: %6.2fs  work tree: %6.2fs  ratio %.3f  (runs: base %s; work %s)\n' \
		"$mode" "$BASE" "$b" "$w" "$(awk -v w="$w" -v b="$b" 'BEGIN { print w / b }')" \
		"$(paste -sd' ' "$tmp/$mode.base")" "$(paste -sd' ' "$tmp/$mode.work")"
done
