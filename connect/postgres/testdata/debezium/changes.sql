-- The changes the golden files hold after the snapshot of schema.sql's
-- rows, run once the connectors under test have finished their snapshots:
--
--   psql -v ON_ERROR_STOP=1 -d <database> -f changes.sql
--
-- psql runs each statement outside a BEGIN … COMMIT in a transaction of its
-- own. The last statement is the end marker: a logical message with the
-- prefix "golden.end", which a test waits for.

-- Streamed decoding of every type: schema.sql's five rows again, as
-- inserts in one transaction (ids 101–105).
BEGIN;
CREATE TEMPORARY TABLE copied AS SELECT * FROM cdc.all_types ORDER BY id;
UPDATE copied SET id = id + 100;
INSERT INTO cdc.all_types SELECT * FROM copied ORDER BY id;
DROP TABLE copied;
COMMIT;

-- Updates to every kind of value, and back to NULL.
UPDATE cdc.all_types SET c_text = 'updated', c_int4 = c_int4 + 1, c_numeric_any = 'NaN', c_date = '-infinity' WHERE id = 1;
UPDATE cdc.all_types SET c_int2 = 1, c_jsonb = '{"now": "set"}', c_int4_array = '{NULL}', c_interval = '-1 day' WHERE id = 2;
UPDATE cdc.all_types SET c_text = NULL, c_float8 = NULL, c_timestamptz = NULL WHERE id = 3;
-- An update of the primary key: Debezium emits a delete (and its
-- tombstone) of the old key, then a create of the new.
UPDATE cdc.all_types SET id = 20 WHERE id = 4;
DELETE FROM cdc.all_types WHERE id = 5;

-- Replica identity DEFAULT: the TOASTed notes are left alone by the first
-- update (unavailable in the event), set by the second.
UPDATE cdc.ri_default SET qty = qty + 1 WHERE id = 1;
UPDATE cdc.ri_default SET notes = 'short now' WHERE id = 2;
DELETE FROM cdc.ri_default WHERE id = 3;
INSERT INTO cdc.ri_default VALUES (4, 'four', 40, NULL);

-- Replica identity FULL: the same changes, with the whole old row.
UPDATE cdc.ri_full SET qty = qty + 1 WHERE id = 1;
UPDATE cdc.ri_full SET notes = 'short now' WHERE id = 2;
UPDATE cdc.ri_full SET id = 30 WHERE id = 1;
DELETE FROM cdc.ri_full WHERE id = 3;

-- Replica identity NOTHING: inserts only (see schema.sql).
INSERT INTO cdc.ri_nothing VALUES (3, 'three');

-- No primary key: an update and a delete that hit two identical rows.
INSERT INTO cdc.no_pk VALUES ('c', 3);
UPDATE cdc.no_pk SET qty = 20 WHERE name = 'b';
DELETE FROM cdc.no_pk WHERE name = 'a';

-- The partitioned table: inserts into each partition, an update within a
-- partition, an update that moves a row to the other partition, a delete.
INSERT INTO cdc.measurements VALUES (2, 2.5), (200, 200.25);
UPDATE cdc.measurements SET reading = 1.5 WHERE id = 1;
UPDATE cdc.measurements SET id = 120 WHERE id = 50;
DELETE FROM cdc.measurements WHERE id = 150;

-- A transaction across tables, with a transactional logical message.
BEGIN;
INSERT INTO cdc.ri_default VALUES (5, 'five', 50, 'in a transaction');
UPDATE cdc.ri_full SET name = 'renamed' WHERE id = 2;
SELECT pg_logical_emit_message(true, 'golden', 'inside a transaction');
DELETE FROM cdc.measurements WHERE id = 2;
INSERT INTO cdc.no_pk VALUES ('d', 4);
COMMIT;

-- A non-transactional logical message, with bytes that are not UTF-8.
SELECT pg_logical_emit_message(false, 'golden', '\x00ff10'::bytea);

-- Truncates: one table, then two in one statement (Debezium emits "t"
-- events only with skipped.operations=none).
TRUNCATE cdc.ri_nothing;
TRUNCATE cdc.no_pk, cdc.ri_default;

-- The end marker.
SELECT pg_logical_emit_message(false, 'golden.end', 'end');
