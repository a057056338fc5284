-- The tables whose snapshot and changes the golden files in this directory
-- hold (docs/cdc-postgres-compat.md). Run in a database of its own, made
-- for one run (TestDebeziumGolden creates and drops it), with psql:
--
--   psql -v ON_ERROR_STOP=1 -d <database> -f schema.sql
--
-- Every value is a literal, so a run anywhere gives the same rows. The
-- publication is the test's (it names it); changes.sql runs after the
-- snapshot.

CREATE SCHEMA cdc;

CREATE TYPE cdc.mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN cdc.positive_int AS int CHECK (VALUE > 0);
CREATE DOMAIN cdc.amount AS numeric(8, 3);

-- Every column type of the compatibility list, one column each.
CREATE TABLE cdc.all_types (
	id int PRIMARY KEY,
	c_int2 int2,
	c_int4 int4,
	c_int8 int8,
	c_serial serial,
	c_numeric numeric(10, 2),
	c_numeric_any numeric,
	c_float4 float4,
	c_float8 float8,
	c_bool bool,
	c_text text,
	c_varchar varchar(20),
	c_char char(5),
	c_bytea bytea,
	c_date date,
	c_time time,
	c_time3 time(3),
	c_timetz timetz,
	c_timestamp timestamp,
	c_timestamp3 timestamp(3),
	c_timestamptz timestamptz,
	c_interval interval,
	c_json json,
	c_jsonb jsonb,
	c_uuid uuid,
	c_xml xml,
	c_int4_array int4[],
	c_text_array text[],
	c_enum cdc.mood,
	c_domain_int cdc.positive_int,
	c_domain_numeric cdc.amount,
	c_inet inet,
	c_cidr cidr,
	c_macaddr macaddr,
	c_macaddr8 macaddr8,
	c_money money,
	c_bit1 bit(1),
	c_bit4 bit(4),
	c_varbit varbit
);

-- 1: ordinary values. 2: NULL in every nullable column (a serial is NOT
-- NULL: it takes its default). 3 and 4: the largest and the smallest
-- values, NaN and the infinities, empty and NULL-holding arrays, unicode
-- text, negative intervals. 5: the remaining special values
-- (numeric(10,2) holds NaN but no infinity).
INSERT INTO cdc.all_types VALUES
	(1, 12345, 1234567, 123456789012, DEFAULT, 12345678.91, 3.14159265358979323846264338327950288,
	 1.5, 2.718281828459045, true, 'hello', 'varchar text', 'abc', '\xdeadbeef',
	 '2024-02-29', '13:45:30.123456', '13:45:30.123', '13:45:30.5+02',
	 '2024-02-29 13:45:30.123456', '2024-02-29 13:45:30.123', '2024-02-29 13:45:30.123456+02',
	 '1 year 2 mons 3 days 04:05:06.789', '{"a": 1, "b": [true, null]}', '{"b": [true, null], "a": 1}',
	 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '<doc><item n="1">x &amp; y</item></doc>',
	 '{1,2,3}', '{"a","b c","d,e"}', 'happy', 42, 12345.678,
	 '192.168.1.1', '10.0.0.0/8', '08:00:2b:01:02:03', '08:00:2b:01:02:03:04:05', 1234.56,
	 B'1', B'1010', B'10110'),
	(2, NULL, NULL, NULL, DEFAULT, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
	(3, 32767, 2147483647, 9223372036854775807, DEFAULT, 99999999.99, 'NaN',
	 'NaN', 'Infinity', false, 'héllo wörld ☃ 😀 日本語 "quoted" \ back', '', 'ü', '\x',
	 'infinity', '24:00:00', '23:59:59.999', '23:59:59.999999-12',
	 'infinity', '294276-12-31 23:59:59.999', 'infinity',
	 '-1 year -2 mons -3 days -04:05:06.789', '[]', '{}',
	 '00000000-0000-0000-0000-000000000000', '<a/>',
	 '{}', '{NULL,"x",NULL}', 'sad', 2147483647, 99999.999,
	 '::1', '2001:db8::/32', 'ff:ff:ff:ff:ff:ff', 'ff:ff:ff:ff:ff:ff:ff:ff', '92233720368547758.07',
	 B'0', B'0000', B''),
	(4, -32768, -2147483648, -9223372036854775808, DEFAULT, -99999999.99, '-Infinity',
	 '-Infinity', 'NaN', false, E'line\nbreak\ttab', 'exactly twenty chars', 'abcde', '\x00ff',
	 '-infinity', '00:00:00', '00:00:00', '00:00:00+14',
	 '-infinity', '0001-01-01 00:00:00', '-infinity',
	 '-178000000 years', 'null', '"text"',
	 'ffffffff-ffff-ffff-ffff-ffffffffffff', 'text only',
	 '{1,NULL,3}', '{}', 'ok', 1, -99999.999,
	 '0.0.0.0', '0.0.0.0/0', '00:00:00:00:00:00', '00:00:00:00:00:00:00:00', '-92233720368547758.08',
	 B'1', B'1111', B'1'),
	(5, 0, 0, 0, DEFAULT, 'NaN', 'Infinity',
	 'Infinity', '-Infinity', true, ' ', 'x', '', '\x00',
	 '1970-01-01', '00:00:00.000001', '12:00:00', '12:00:00-00',
	 '1970-01-01 00:00:00', '1970-01-01 00:00:00', '1970-01-01 00:00:00+00',
	 '178000000 years', '0', '1.5e20',
	 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '<doc/>',
	 '{-1}', '{""}', 'happy', 7, 0,
	 '10.1.2.3/24', '10.1.2.0/24', '01:02:03:04:05:06', '01:02:03:04:05:06:07:08', 0,
	 B'0', B'0101', B'0000000011');

-- Replica identity DEFAULT: an update or delete carries only the key of
-- the old row; an update that leaves a TOASTed column alone does not carry
-- that column (Debezium's unavailable-value placeholder).
CREATE TABLE cdc.ri_default (id int PRIMARY KEY, name text, qty int, notes text);
ALTER TABLE cdc.ri_default REPLICA IDENTITY DEFAULT;

-- Replica identity FULL: an update or delete carries the whole old row.
CREATE TABLE cdc.ri_full (id int PRIMARY KEY, name text, qty int, notes text);
ALTER TABLE cdc.ri_full REPLICA IDENTITY FULL;

-- Replica identity NOTHING: no old row at all. PostgreSQL refuses an
-- update or a delete of such a table while a publication publishes them,
-- so it gets inserts (and a truncate) only.
CREATE TABLE cdc.ri_nothing (id int PRIMARY KEY, name text);
ALTER TABLE cdc.ri_nothing REPLICA IDENTITY NOTHING;

-- No primary key: a null record key. FULL, so updates and deletes are
-- allowed and carry the old row.
CREATE TABLE cdc.no_pk (name text, qty int);
ALTER TABLE cdc.no_pk REPLICA IDENTITY FULL;

-- A partitioned table: the publication publishes its partitions' changes
-- as the root's (publish_via_partition_root).
CREATE TABLE cdc.measurements (id int, reading numeric(6, 2), PRIMARY KEY (id)) PARTITION BY RANGE (id);
CREATE TABLE cdc.measurements_low PARTITION OF cdc.measurements FOR VALUES FROM (MINVALUE) TO (100);
CREATE TABLE cdc.measurements_high PARTITION OF cdc.measurements FOR VALUES FROM (100) TO (MAXVALUE);

-- 6,400 characters of hex digits: too long to stay inline, too random to
-- compress below PostgreSQL's TOAST threshold.
INSERT INTO cdc.ri_default
SELECT i, 'row ' || i, i * 10, (SELECT string_agg(md5(i::text || '/' || n::text), '') FROM generate_series(1, 200) n)
FROM generate_series(1, 3) i;
INSERT INTO cdc.ri_full SELECT * FROM cdc.ri_default;
INSERT INTO cdc.ri_nothing VALUES (1, 'one'), (2, 'two');
INSERT INTO cdc.no_pk VALUES ('a', 1), ('b', 2), ('b', 2);
INSERT INTO cdc.measurements VALUES (1, 1.25), (50, 50.5), (100, 100.75), (150, -1.5);
