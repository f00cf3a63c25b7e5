#!/bin/sh
# test/static/layers.sh - the layering rule (docs/DESIGN.md, "Layers"):
# every #include "..." of src/, coll/, topo/ and tools/ names a header of
# the including file's own layer or of a layer it may use. The layers, in
# order from the bottom, and what each may use are read from
# test/static/layers.txt. Fails, naming file, line and both layers, on an
# include of a higher layer, of a layer not in the user's list, of a file
# in no layer, or of a header that does not exist.
#   layers.sh [SRCDIR]   (default: $top_srcdir, else this script's tree)
set -u
case ${1:-} in
-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
src=${1:-${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}}
map="$src/test/static/layers.txt"
[ -r "$map" ] || { echo "layers.sh: cannot read $map"; exit 1; }
cd "$src" || exit 1
files=$(find src coll topo tools -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) | sort)
[ -n "$files" ] || { echo "layers.sh: no sources under $src"; exit 1; }
# one line per include: FILE:LINE:HEADER
incs=$(for f in $files; do
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
        sed "s|^\([0-9]*\):[^\"]*\"\([^\"]*\)\".*|$f:\1:\2|"
done)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' "$files" >"$tmp/files"
printf '%s\n' "$incs" >"$tmp/incs"
awk -v mapf="$map" -v filesf="$tmp/files" '
function norm(p,    n, a, out, k, i) {
    n = split(p, a, "/"); k = 0
    for (i = 1; i <= n; i++) {
        if (a[i] == "" || a[i] == ".") continue
        if (a[i] == "..") { if (k > 0) k--; continue }
        out[++k] = a[i]
    }
    p = ""
    for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
    return p
}
function dirof(p) { return sub(/\/[^\/]*$/, "", p) ? p : "" }
function glob2re(g) {
    gsub(/\./, "\\.", g); gsub(/\*\*/, "\001", g); gsub(/\*/, "[^/]*", g); gsub(/\001/, ".*", g)
    return "^" g "$"
}
function layer_of(p,    i) {
    for (i = 1; i <= npat; i++) if (p ~ pre[i]) return play[i]
    return ""
}
BEGIN {
    bad = 0
    while ((getline line < mapf) > 0) {
        sub(/#.*/, "", line)
        n = split(line, w, /[ \t]+/)
        if (n == 0 || (n == 1 && w[1] == "")) continue
        i = (w[1] == "") ? 2 : 1
        if (w[i] == "layer") {
            name = w[i + 1]; rank[name] = ++nl; lname[nl] = name; restrict[name] = ""
            for (j = i + 2; j <= n; j++) {
                if (w[j] == "uses:") { for (k = j + 1; k <= n; k++) uses[name, w[k]] = 1
                                       restrict[name] = 1; break }
                pre[++npat] = glob2re(w[j]); play[npat] = name
            }
        } else if (w[i] == "allow") {
            allow[w[i + 1] " " w[i + 2]] = 1
        } else if (w[i] == "generated") {
            gen[w[i + 1]] = 1
        } else { print "layers.txt: cannot read: " line; bad = 1 }
    }
    while ((getline f < filesf) > 0) exists[f] = 1
    for (f in exists) if (layer_of(f) == "") { print f ": in no layer (test/static/layers.txt)"; bad = 1 }
    FS = ":"
}
{
    f = $1; ln = $2; h = $3
    if (h in gen) next
    t = norm(dirof(f) "/" h)
    if (!(t in exists)) t = norm(h)
    if (!(t in exists)) { print f ":" ln ": includes \"" h "\", which is no file of the tree"; bad = 1; next }
    a = layer_of(f); b = layer_of(t)
    if (a == "" || b == "" || a == b) next
    if ((f " " t) in allow) { used[f " " t] = 1; next }
    if (rank[b] > rank[a]) {
        print f ":" ln ": includes " t ": layer " a " may not use " b ", which is above it"; bad = 1
    } else if (restrict[a] != "" && !((a, b) in uses)) {
        print f ":" ln ": includes " t ": layer " a " may not use " b; bad = 1
    }
}
END {
    for (k in allow) if (!(k in used)) { print "layers.txt: allow " k ": no such include (remove the line)"; bad = 1 }
    if (bad) { print "layers.sh: FAIL"; exit 1 }
    print "layers.sh: " NR " includes in " nl " layers follow the rule"
}' "$tmp/incs"
