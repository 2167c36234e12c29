#!/usr/bin/env bash
# Print the path of a PgBouncer that keeps prepared statements in transaction pooling mode (1.21+,
# max_prepared_statements). Debian 12 ships 1.18, so when the installed one is older this builds
# Debian's own newer source package (trixie's, from the Debian archive, checked by apt against its
# signed index) once, into a cache outside the repository, and prints that binary instead. Takes
# about two minutes the first time. Used by .ci/run as PGBOUNCER=$(bash scripts/build_pgbouncer.sh).
set -euo pipefail
SUITE="${PGBOUNCER_SOURCE_SUITE:-trixie}"
at_least_1_21() {  # at_least_1_21 BINARY
    "$1" --version 2>/dev/null | head -1 | awk '{split($2, v, "."); exit !(v[1] > 1 || (v[1] == 1 && v[2] >= 21))}'
}
installed=$(command -v pgbouncer || true)
if [ -n "$installed" ] && at_least_1_21 "$installed"; then echo "$installed"; exit 0; fi
cache="${XDG_CACHE_HOME:-$HOME/.cache}/annotation/pgbouncer-$SUITE"
if [ -x "$cache/pgbouncer" ] && at_least_1_21 "$cache/pgbouncer"; then echo "$cache/pgbouncer"; exit 0; fi

SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
need=()
for pkg in gcc make pkg-config libevent-dev libc-ares-dev libssl-dev; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${#need[@]}" -gt 0 ]; then
    echo "installing ${need[*]}" >&2
    $SUDO apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial"
echo "deb-src http://deb.debian.org/debian $SUITE main" > "$work/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$work/sources.list" -o Dir::Etc::sourceparts=/dev/null
          -o "Dir::State::Lists=$work/lists" -o Debug::NoLocking=1)
echo "building PgBouncer from Debian's $SUITE source package" >&2
apt-get "${apt_opts[@]}" update -qq >&2
(cd "$work" && apt-get "${apt_opts[@]}" source --download-only -qq pgbouncer >&2)
tar -xzf "$work"/pgbouncer_*.orig.tar.gz -C "$work"
(
    cd "$work"/pgbouncer-*/
    ./configure --without-systemd --without-pam --with-cares >/dev/null
    make -j"$(nproc)" pgbouncer >/dev/null
)
mkdir -p "$cache"
cp "$work"/pgbouncer-*/pgbouncer "$cache/pgbouncer"
at_least_1_21 "$cache/pgbouncer"
echo "$cache/pgbouncer"
