#!/usr/bin/env bash
# Make sure the named local services are up (postgres, redis, rabbitmq),
# starting the ones that are down. Used by .ci/run and the benchmarks.
set -euo pipefail

wait_for() {  # wait_for NAME COMMAND...
    local name=$1; shift
    for _ in $(seq 1 60); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.5
    done
    echo "$name did not come up" >&2
    return 1
}

for service in "$@"; do
    case "$service" in
    postgres)
        if ! pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1; then
            echo "starting PostgreSQL"
            pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
        fi
        wait_for PostgreSQL pg_isready -h 127.0.0.1 -p 5432
        ;;
    redis)
        if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
            echo "starting Redis"
            mkdir -p /var/lib/redis /var/log/redis
            redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
                --dir /var/lib/redis --logfile /var/log/redis/ci.log
        fi
        wait_for Redis redis-cli -h 127.0.0.1 -p 6379 ping
        ;;
    rabbitmq)
        if ! (echo > /dev/tcp/127.0.0.1/5672) >/dev/null 2>&1; then
            echo "starting RabbitMQ"
            rabbitmq-server -detached
        fi
        wait_for RabbitMQ bash -c 'echo > /dev/tcp/127.0.0.1/5672'
        ;;
    *) echo "unknown service: $service" >&2; exit 2 ;;
    esac
done
