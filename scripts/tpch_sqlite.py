#!/usr/bin/env python3
"""TPC-H on SQLite, for the bundled `tpch` trace (scripts/collect_workloads.py runs it).

    tpch_sqlite.py load DB TBL_DIR       # build DB from tpchgen-cli's .tbl files (not traced)
    tpch_sqlite.py session > s.sql       # the query session, for `sqlite3 -readonly DB < s.sql`

The session keeps SQLite's own page cache small (1 MiB by default, far below the lineitem table)
and memory-mapped I/O off, so every page SQLite needs beyond that cache is a pread of the database
file that strace sees, as the papers' MySQL tpc-h traces saw the database's reads. It runs in the
sqlite3 shell (a C program, so program contexts are SQLite's own call sites rather than an
interpreter's). The queries are TPC-H's Q1, Q3, Q5, Q6, Q12 and Q14 with dates written for SQLite;
Q1 and Q6 run twice, so the session scans lineitem again and again from the same call site (a
looping program context for AMP), while Q3, Q5 and Q12 reach orders, customer and supplier
through their keys (random reads).
"""

from __future__ import annotations

import argparse
import csv
import os
import sqlite3
import sys

SCHEMA = """
CREATE TABLE region (r_regionkey INTEGER PRIMARY KEY, r_name TEXT, r_comment TEXT);
CREATE TABLE nation (n_nationkey INTEGER PRIMARY KEY, n_name TEXT, n_regionkey INTEGER, n_comment TEXT);
CREATE TABLE supplier (s_suppkey INTEGER PRIMARY KEY, s_name TEXT, s_address TEXT, s_nationkey INTEGER,
  s_phone TEXT, s_acctbal REAL, s_comment TEXT);
CREATE TABLE customer (c_custkey INTEGER PRIMARY KEY, c_name TEXT, c_address TEXT, c_nationkey INTEGER,
  c_phone TEXT, c_acctbal REAL, c_mktsegment TEXT, c_comment TEXT);
CREATE TABLE part (p_partkey INTEGER PRIMARY KEY, p_name TEXT, p_mfgr TEXT, p_brand TEXT, p_type TEXT,
  p_size INTEGER, p_container TEXT, p_retailprice REAL, p_comment TEXT);
CREATE TABLE partsupp (ps_partkey INTEGER, ps_suppkey INTEGER, ps_availqty INTEGER, ps_supplycost REAL,
  ps_comment TEXT, PRIMARY KEY (ps_partkey, ps_suppkey));
CREATE TABLE orders (o_orderkey INTEGER PRIMARY KEY, o_custkey INTEGER, o_orderstatus TEXT,
  o_totalprice REAL, o_orderdate TEXT, o_orderpriority TEXT, o_clerk TEXT, o_shippriority INTEGER,
  o_comment TEXT);
CREATE TABLE lineitem (l_orderkey INTEGER, l_partkey INTEGER, l_suppkey INTEGER, l_linenumber INTEGER,
  l_quantity REAL, l_extendedprice REAL, l_discount REAL, l_tax REAL, l_returnflag TEXT,
  l_linestatus TEXT, l_shipdate TEXT, l_commitdate TEXT, l_receiptdate TEXT, l_shipinstruct TEXT,
  l_shipmode TEXT, l_comment TEXT);
"""
INDEXES = "CREATE INDEX lineitem_orderkey ON lineitem (l_orderkey);"
TABLES = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"]

QUERIES = {
    1: """SELECT l_returnflag, l_linestatus, SUM(l_quantity), SUM(l_extendedprice),
            SUM(l_extendedprice * (1 - l_discount)), SUM(l_extendedprice * (1 - l_discount) * (1 + l_tax)),
            AVG(l_quantity), AVG(l_extendedprice), AVG(l_discount), COUNT(*)
          FROM lineitem WHERE l_shipdate <= date('1998-12-01', '-90 day')
          GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus""",
    3: """SELECT l_orderkey, SUM(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_shippriority
          FROM customer, orders, lineitem
          WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey AND l_orderkey = o_orderkey
            AND o_orderdate < '1995-03-15' AND l_shipdate > '1995-03-15'
          GROUP BY l_orderkey, o_orderdate, o_shippriority ORDER BY revenue DESC, o_orderdate LIMIT 10""",
    5: """SELECT n_name, SUM(l_extendedprice * (1 - l_discount)) AS revenue
          FROM customer, orders, lineitem, supplier, nation, region
          WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey
            AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey
            AND r_name = 'ASIA' AND o_orderdate >= '1994-01-01' AND o_orderdate < '1995-01-01'
          GROUP BY n_name ORDER BY revenue DESC""",
    6: """SELECT SUM(l_extendedprice * l_discount) FROM lineitem
          WHERE l_shipdate >= '1994-01-01' AND l_shipdate < '1995-01-01'
            AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24""",
    12: """SELECT l_shipmode,
             SUM(CASE WHEN o_orderpriority IN ('1-URGENT', '2-HIGH') THEN 1 ELSE 0 END),
             SUM(CASE WHEN o_orderpriority NOT IN ('1-URGENT', '2-HIGH') THEN 1 ELSE 0 END)
           FROM orders, lineitem
           WHERE o_orderkey = l_orderkey AND l_shipmode IN ('MAIL', 'SHIP') AND l_commitdate < l_receiptdate
             AND l_shipdate < l_commitdate AND l_receiptdate >= '1994-01-01' AND l_receiptdate < '1995-01-01'
           GROUP BY l_shipmode ORDER BY l_shipmode""",
    14: """SELECT 100.00 * SUM(CASE WHEN p_type LIKE 'PROMO%' THEN l_extendedprice * (1 - l_discount) ELSE 0 END)
             / SUM(l_extendedprice * (1 - l_discount))
           FROM lineitem, part
           WHERE l_partkey = p_partkey AND l_shipdate >= '1995-09-01' AND l_shipdate < '1995-10-01'""",
}
SESSION = [1, 6, 3, 14, 12, 5, 1, 6]


def load(db: str, tbl_dir: str) -> None:
    if os.path.exists(db):
        os.remove(db)
    con = sqlite3.connect(db)
    con.executescript(SCHEMA)
    for table in TABLES:
        path = os.path.join(tbl_dir, f"{table}.tbl")
        with open(path, newline="") as f:
            rows = (r[:-1] if r and r[-1] == "" else r for r in csv.reader(f, delimiter="|"))
            ncols = len(con.execute(f"SELECT * FROM {table} LIMIT 0").description)
            con.executemany(f"INSERT INTO {table} VALUES ({','.join('?' * ncols)})", rows)
    con.executescript(INDEXES)
    con.commit()
    con.execute("VACUUM")
    con.close()


def session_sql(cache_kib: int, session: list[int]) -> str:
    lines = [f"PRAGMA cache_size = -{cache_kib};", "PRAGMA mmap_size = 0;"]
    for q in session:
        lines.append(f"SELECT 'Q{q}';")
        lines.append(" ".join(QUERIES[q].split()) + ";")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    lo = sub.add_parser("load")
    lo.add_argument("db")
    lo.add_argument("tbl_dir")
    se = sub.add_parser("session")
    se.add_argument("--cache-kib", type=int, default=1024, help="SQLite page cache (default: 1024 KiB)")
    se.add_argument("--queries", default=",".join(map(str, SESSION)), help="query numbers, in order")
    a = ap.parse_args()
    if a.cmd == "load":
        load(a.db, a.tbl_dir)
    else:
        sys.stdout.write(session_sql(a.cache_kib, [int(q) for q in a.queries.split(",")]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
