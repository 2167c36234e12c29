#!/usr/bin/env bash
# Install what the multi-node stack (tests/deploy/localstack.py) needs from Debian when it is missing:
# nginx (nginx-light), PgBouncer, openssl (its throw-away certificate), psql (PgBouncer's console),
# and a validator for compose.yaml (Debian's docker-compose, without the container runtime it
# recommends) unless the `docker compose` plugin is there.
# Only the packages: their system services are not started or configured; the stack runs its own
# nginx and PgBouncer on high ports with configuration files in a temporary directory.
set -euo pipefail
missing=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v psql >/dev/null 2>&1 || missing+=(postgresql-client)
docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
if [ "${#missing[@]}" -gt 0 ]; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    echo "installing ${missing[*]}"
    # policy-rc.d exit 101: the packages' own services stay stopped (this machine's nginx is the stack's).
    policy=/usr/sbin/policy-rc.d
    created_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null && $SUDO chmod +x "$policy" && created_policy=1
    fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    if [ "$created_policy" = 1 ]; then $SUDO rm -f "$policy"; fi
fi
