#!/bin/sh
# First start on an empty data volume: a cluster whose superuser is POSTGRES_USER with
# POSTGRES_PASSWORD, and the database POSTGRES_DB, as the official image's entrypoint makes.
set -eu
user="${POSTGRES_USER:-postgres}"
database="${POSTGRES_DB:-$user}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  password_file="$(mktemp)"
  printf '%s\n' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" > "$password_file"
  initdb -D "$PGDATA" -U "$user" --pwfile="$password_file" -A scram-sha-256 -E UTF8 --locale=C.UTF-8
  rm -f "$password_file"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$database" != "postgres" ]; then
    echo "CREATE DATABASE \"$database\"" | postgres --single -D "$PGDATA" postgres >/dev/null
  fi
fi
if [ "$1" = "postgres" ]; then
  shift
  exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
fi
exec "$@"
