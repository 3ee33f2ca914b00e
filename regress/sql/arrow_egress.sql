-- vexec.arrow_ipc(query): a query's result as an Arrow IPC stream (the
-- Arrow egress; values are checked by reading the stream back
-- in the #[pg_test]s of vexec/src/egress/, and against psycopg by the
-- arrow-types check leg). Here: the stream's framing,
-- the caller's privileges and row level security, and the errors.
SET search_path = public;
\set VERBOSITY terse

-- An IPC stream: messages framed by the 0xFFFFFFFF continuation marker,
-- ended by the end-of-stream marker (continuation, zero length).
SELECT substr(s, 1, 4) = '\xffffffff'::bytea AS starts_with_a_message,
       substr(s, length(s) - 7) = '\xffffffff00000000'::bytea AS ends_the_stream
FROM vexec.arrow_ipc('SELECT g AS id, g::text AS label FROM generate_series(1, 20000) g') s;
-- An empty result is a schema and the end marker.
SELECT length(vexec.arrow_ipc('SELECT 1 AS x WHERE false')) < length(vexec.arrow_ipc('SELECT 1 AS x'))
  AS empty_is_shorter;

-- The query runs as the caller: privileges and row level security hold.
CREATE TABLE ae_secret (id int, owner text);
INSERT INTO ae_secret VALUES (1, 'ae_reader'), (2, 'someone else');
ALTER TABLE ae_secret ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON ae_secret USING (owner = current_user);
CREATE ROLE ae_reader;
CREATE ROLE ae_stranger;
GRANT SELECT ON ae_secret TO ae_reader;
GRANT USAGE ON SCHEMA vexec TO ae_reader, ae_stranger;
SET ROLE ae_stranger;
SELECT vexec.arrow_ipc('SELECT * FROM ae_secret');
RESET ROLE;
SET ROLE ae_reader;
-- One row visible: the same stream as for a one-row literal of the same shape.
SELECT vexec.arrow_ipc('SELECT id, owner FROM ae_secret')
     = vexec.arrow_ipc($$SELECT 1 AS id, 'ae_reader'::text AS owner$$) AS only_own_rows;
RESET ROLE;
-- Column privileges hold too.
CREATE TABLE ae_columns (visible int, hidden text);
GRANT SELECT (visible) ON ae_columns TO ae_reader;
SET ROLE ae_reader;
SELECT length(vexec.arrow_ipc('SELECT visible FROM ae_columns')) > 0 AS granted_column;
SELECT vexec.arrow_ipc('SELECT hidden FROM ae_columns');
RESET ROLE;
DROP TABLE ae_columns;

-- Values Arrow cannot hold, arrays a List cannot carry, and bad calls: errors with
-- SQLSTATEs, never a wrong value.
CREATE FUNCTION ae_error(q text, batch_rows int DEFAULT 8192) RETURNS text LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM vexec.arrow_ipc(q, batch_rows);
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $fn$;
SELECT ae_error($$SELECT 'infinity'::timestamptz AS t$$);
SELECT ae_error($$SELECT '-infinity'::date AS d$$);
SELECT ae_error($$SELECT '294276-12-31 23:59:59'::timestamp AS t$$);
SELECT ae_error($$SELECT 'NaN'::numeric(10,2) AS n$$);
SELECT ae_error($$SELECT time '24:00:00' AS t$$);
SELECT ae_error($$SELECT 'infinity'::interval AS i$$);
SELECT ae_error($$SELECT ARRAY[[1, 2], [3, 4]] AS m$$);
SELECT ae_error($$SELECT '[0:1]={5,6}'::int[] AS b$$);
-- The same values from a vector node's batches (the egress's batch path,
-- which appends whole columns): the same errors, in the batch that holds them.
CREATE TABLE ae_edges AS
  SELECT g, CASE WHEN g = 1500 THEN 'infinity'::date ELSE date '2020-01-01' + g END AS d,
         (CASE WHEN g = 1700 THEN 'NaN' ELSE g / 4.0 END)::numeric(10,2) AS n
  FROM generate_series(1, 3000) g;
SET vexec.mode = force;
SET vexec.min_rows = 0;
SELECT ae_error('SELECT g, d FROM ae_edges');
SELECT ae_error('SELECT n, g FROM ae_edges');
SELECT ae_error('SELECT g, d, n FROM ae_edges WHERE g NOT IN (1500, 1700)');
RESET vexec.min_rows;
RESET vexec.mode;
DROP TABLE ae_edges;
SELECT ae_error('SELECT 1 +');
SELECT ae_error('SELECT 1; SELECT 2');
SELECT ae_error('SELECT 1 AS x', 0);
SELECT ae_error('INSERT INTO ae_secret VALUES (3, $$x$$)');
SELECT count(*) AS rows_unchanged FROM ae_secret;
-- A statement with RETURNING runs (once) and returns its rows.
SELECT vexec.arrow_ipc('INSERT INTO ae_secret VALUES (3, $$x$$) RETURNING id')
     = vexec.arrow_ipc('SELECT 3 AS id') AS returning_rows;
SELECT count(*) AS one_row_more FROM ae_secret;
-- Types Arrow has no type for travel as PostgreSQL's text (extension
-- vexec.pg_text): the stream carries the text.
SELECT position(convert_to('(1,2)', 'UTF8') IN vexec.arrow_ipc('SELECT point(1, 2) AS p')) > 0 AS point_as_text;
-- A numeric without a precision Arrow can hold travels as its exact text.
SELECT ae_error($$SELECT 1e100::numeric AS big, 'NaN'::numeric AS nan$$);

-- vexec.arrow_ipc_stream: the same stream in pieces, made a batch at a time.
SELECT string_agg(p, ''::bytea ORDER BY n) = vexec.arrow_ipc('SELECT g FROM generate_series(1, 30000) g', 7000)
  AS pieces_are_the_stream
FROM vexec.arrow_ipc_stream('SELECT g FROM generate_series(1, 30000) g', 7000) WITH ORDINALITY AS t(p, n);
SELECT count(*) AS pieces FROM (SELECT vexec.arrow_ipc_stream('SELECT g FROM generate_series(1, 30000) g', 7000)) s;
-- Reading part of it, then the whole again, in one transaction.
BEGIN;
SELECT length(p) > 0 AS schema_piece FROM (SELECT vexec.arrow_ipc_stream('SELECT g FROM generate_series(1, 30000) g') AS p LIMIT 1) s;
SELECT count(*) AS pieces FROM (SELECT vexec.arrow_ipc_stream('SELECT g FROM generate_series(1, 30000) g', 7000)) s;
COMMIT;
-- An error in the middle of the result aborts the statement.
SELECT count(*) FROM (SELECT vexec.arrow_ipc_stream('SELECT 1 / (g - 15000) FROM generate_series(1, 30000) g', 7000)) s;
SET ROLE ae_stranger;
SELECT count(*) FROM (SELECT vexec.arrow_ipc_stream('SELECT * FROM ae_secret')) s;
RESET ROLE;
SELECT ae_error('SELECT 1 +', 1);

DROP TABLE ae_secret;
DROP FUNCTION ae_error;
REVOKE USAGE ON SCHEMA vexec FROM ae_reader, ae_stranger;
DROP ROLE ae_reader, ae_stranger;
