-- TPC-H schema (specification section 1.4) with the primary keys as indexes; loaded from
-- tpchgen-cli's pipe-delimited .tbl files by the tpch workload.
create table region (r_regionkey integer primary key, r_name char(25), r_comment varchar(152));
create table nation (n_nationkey integer primary key, n_name char(25), n_regionkey integer, n_comment varchar(152));
create table part (p_partkey integer primary key, p_name varchar(55), p_mfgr char(25), p_brand char(10), p_type varchar(25),
  p_size integer, p_container char(10), p_retailprice decimal(15,2), p_comment varchar(23));
create table supplier (s_suppkey integer primary key, s_name char(25), s_address varchar(40), s_nationkey integer,
  s_phone char(15), s_acctbal decimal(15,2), s_comment varchar(101));
create table partsupp (ps_partkey integer, ps_suppkey integer, ps_availqty integer, ps_supplycost decimal(15,2),
  ps_comment varchar(199), primary key (ps_partkey, ps_suppkey));
create table customer (c_custkey integer primary key, c_name varchar(25), c_address varchar(40), c_nationkey integer,
  c_phone char(15), c_acctbal decimal(15,2), c_mktsegment char(10), c_comment varchar(117));
create table orders (o_orderkey integer primary key, o_custkey integer, o_orderstatus char(1), o_totalprice decimal(15,2),
  o_orderdate date, o_orderpriority char(15), o_clerk char(15), o_shippriority integer, o_comment varchar(79));
create table lineitem (l_orderkey integer, l_partkey integer, l_suppkey integer, l_linenumber integer,
  l_quantity decimal(15,2), l_extendedprice decimal(15,2), l_discount decimal(15,2), l_tax decimal(15,2),
  l_returnflag char(1), l_linestatus char(1), l_shipdate date, l_commitdate date, l_receiptdate date,
  l_shipinstruct char(25), l_shipmode char(10), l_comment varchar(44), primary key (l_orderkey, l_linenumber));
