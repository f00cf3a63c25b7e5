#!/bin/sh
# test/static/links.sh - every relative link of README.md and docs/**/*.md
# resolves inside the repository: the file or folder exists, and a
# "#anchor" names a heading of the target Markdown file (GitHub's anchors:
# lower case, punctuation dropped, spaces as hyphens, "-1", "-2" for
# repeats). Links to absolute paths, or relative ones that leave the
# repository ("../shared/..."), fail. http(s) and mailto links are allowed
# and not fetched. Fenced code blocks and `code spans` are skipped.
#
#   sh test/static/links.sh [FILE.md ...]   (default: README.md docs/**/*.md)
#   LINKS_ROOT=DIR ...                      (the repository root; default: $top_srcdir)
set -u
case ${1:-} in
-h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
root=${LINKS_ROOT:-${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}}
cd "$root" || exit 2
if [ $# -gt 0 ]; then
    files="$*"
else
    files="README.md $(find docs -name '*.md' | LC_ALL=C sort)"
fi

# anchors FILE: the heading anchors of a Markdown file, one per line
anchors() {
    awk '
    /^[ \t]*(```|~~~)/ { fence = !fence; next }
    fence { next }
    /^#+[ \t]/ && match($0, /^#+/) && RLENGTH <= 6 {
        h = $0
        sub(/^#+[ \t]+/, "", h); sub(/[ \t]+#+[ \t]*$/, "", h)
        # [text](url) counts as its text
        while (match(h, /\[[^]]*\]\([^)]*\)/)) {
            t = substr(h, RSTART + 1, RLENGTH - 1); sub(/\]\(.*/, "", t)
            h = substr(h, 1, RSTART - 1) t substr(h, RSTART + RLENGTH)
        }
        h = tolower(h)
        gsub(/[^a-z0-9 _-]/, "", h)
        gsub(/ /, "-", h)
        n = seen[h]++
        print (n ? h "-" n : h)
    }' "$1"
}

# every link as "FILE:LINE<TAB>TARGET"
links=$(for f in $files; do
    awk -v f="$f" '
    /^[ \t]*(```|~~~)/ { fence = !fence; next }
    fence { next }
    {
        l = $0
        gsub(/``[^`]*``/, "", l); gsub(/`[^`]*`/, "", l)
        while (match(l, /\]\([^)]*\)/)) {
            t = substr(l, RSTART + 2, RLENGTH - 3)
            sub(/[ \t]+".*"$/, "", t); sub(/^</, "", t); sub(/>$/, "", t)
            print f ":" FNR "\t" t
            l = substr(l, RSTART + RLENGTH)
        }
        # reference definitions: [name]: target
        if (match(l, /^ *\[[^]]+\]:[ \t]+[^ \t]+/)) {
            t = l; sub(/^[ ]*\[[^]]+\]:[ \t]+/, "", t); sub(/[ \t].*/, "", t)
            print f ":" FNR "\t" t
        }
    }' "$f"
done)

bad=0
n=0
tab=$(printf '\t')
while IFS=$tab read -r where target; do
    [ -n "$where" ] || continue
    n=$((n + 1))
    file=${where%:*}
    case $target in
    http://* | https://* | mailto:*) continue ;;
    '') echo "$where: empty link"; bad=$((bad + 1)); continue ;;
    /*) echo "$where: $target: an absolute path, not a file of the repository"; bad=$((bad + 1)); continue ;;
    *:*) echo "$where: $target: a link with a scheme other than http(s) or mailto"; bad=$((bad + 1)); continue ;;
    esac
    path=${target%%#*}
    anchor=
    case $target in *'#'*) anchor=${target#*#} ;; esac
    if [ -z "$path" ]; then
        dest=$file
    else
        # resolve against the linking file's folder, inside the repository
        dest=$(printf '%s/%s\n' "$(dirname "$file")" "$path" | awk -F/ '{
            n = 0
            for (i = 1; i <= NF; i++) {
                if ($i == "" || $i == ".") continue
                if ($i == "..") { if (n == 0) { print "OUTSIDE"; exit } n--; continue }
                p[++n] = $i
            }
            s = ""; for (i = 1; i <= n; i++) s = s (i > 1 ? "/" : "") p[i]
            print (s == "" ? "." : s)
        }')
        if [ "$dest" = OUTSIDE ]; then
            echo "$where: $target: outside the repository"
            bad=$((bad + 1))
            continue
        fi
        if [ ! -e "$dest" ]; then
            echo "$where: $target: no such file ($dest)"
            bad=$((bad + 1))
            continue
        fi
    fi
    if [ -n "$anchor" ]; then
        case $dest in
        *.md)
            if ! anchors "$dest" | grep -qxF -- "$anchor"; then
                echo "$where: $target: no heading with the anchor #$anchor in $dest"
                bad=$((bad + 1))
            fi ;;
        esac
    fi
done <<EOF
$links
EOF

if [ $bad -gt 0 ]; then
    echo "links.sh: FAIL: $bad broken link(s) of $n"
    exit 1
fi
echo "links.sh: $n links, none broken"
