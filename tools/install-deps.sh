#!/bin/sh
# usage: tools/install-deps.sh   (as root or with sudo)
# Install the Debian packages hcomm needs to build, test and benchmark.
# Idempotent: skips apt-get when everything is already there.
case ${1:-} in
-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
set -e
PKGS="build-essential autoconf automake libtool pkg-config \
libopenmpi-dev openmpi-bin libucx-dev libhwloc-dev libjson-c-dev check gnuplot-nox cppcheck \
python3-mpi4py python3-numpy python3-torch libtorch-dev"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && { echo "install-deps: all packages present"; exit 0; }
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
echo "install-deps: installing$missing"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q $missing
