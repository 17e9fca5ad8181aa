#!/usr/bin/env bash
# How fast SQLite takes a registration storm's rows under the hub's two
# instance-table keys: (name, group_name, id) with random UUID-like ids
# (schema 5) and an increasing integer row (schema 6, hub/sqlite_store.hpp).
# The hub's settings: WAL, synchronous NORMAL, an 8 MiB page cache,
# wal_autocheckpoint 16384. Prints the seconds each took.
#
#   bench/sqlite_keys.sh [ROWS] [BATCH]     # defaults: 1000000 rows, 8192 per transaction
set -euo pipefail

rows=${1:-1000000}
batch=${2:-8192}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

columns="name, group_name, id, owner, address, weight, zone, status, metadata"
# One transaction of `batch` rows; $1: the first row's number, "" for the text key.
transaction() {
  local first=$1 row_column="" row_value=""
  if [[ -n $first ]]; then
    row_column="row, "
    row_value="$first + value, "
  fi
  echo "BEGIN;"
  echo "INSERT INTO t(${row_column}${columns}) SELECT ${row_value}" \
    "'payments-service-for-region-' || (abs(random()) % 1000), 'default'," \
    "lower(hex(randomblob(18))), 'node' || value," \
    "'10.1.' || (value % 250) || '.' || (value % 200) || ':8080', 100, 'dc1', 1," \
    "x'82a16b01a2767632a16b02a3763333' FROM generate_series(1, ${batch});"
  echo "COMMIT;"
}

# $1: "text" or "row".
script() {
  echo "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-8192;"
  echo "PRAGMA wal_autocheckpoint=16384;"
  if [[ $1 == text ]]; then
    echo "CREATE TABLE t(name TEXT NOT NULL, group_name TEXT NOT NULL, id TEXT NOT NULL," \
      "owner TEXT, address TEXT, weight INT, zone TEXT, status INT, metadata BLOB," \
      "PRIMARY KEY (name, group_name, id)) WITHOUT ROWID;"
  else
    echo "CREATE TABLE t(row INTEGER PRIMARY KEY, name TEXT NOT NULL, group_name TEXT NOT NULL," \
      "id TEXT NOT NULL, owner TEXT, address TEXT, weight INT, zone TEXT, status INT," \
      "metadata BLOB);"
  fi
  for ((done_rows = 0; done_rows < rows; done_rows += batch)); do
    transaction "$([[ $1 == row ]] && echo "$done_rows")"
  done
}

echo "sqlite $(sqlite3 --version | cut -d' ' -f1): ${rows} rows, ${batch} per transaction"
for key in text row; do
  script "$key" > "$dir/$key.sql"
  start=$(date +%s%N)
  sqlite3 "$dir/$key.db" < "$dir/$key.sql" > /dev/null
  ms=$((($(date +%s%N) - start) / 1000000))
  printf '%-5s key: %d.%03d s\n' "$key" $((ms / 1000)) $((ms % 1000))
done
