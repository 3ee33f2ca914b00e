-- VecInsert: INSERT ... SELECT and multi-row VALUES written through the
-- table access method's multi_insert. Every statement runs off, then in
-- force (and auto where said), each time into a freshly made target: the
-- row count or the error (SQLSTATE, message, DETAIL), the table's contents,
-- its sequences and its indexes (amcheck, every heap tuple indexed) must be
-- the same; the plan must show where VecInsert was used. Sequences must
-- agree after a statement that succeeds; after one that fails, a sequence
-- may be ahead of row mode's (the rows read before the error drew values;
-- the output shows both), as after a failed COPY.
\set SHOW_CONTEXT never
SET search_path = public;
CREATE EXTENSION IF NOT EXISTS amcheck;

CREATE FUNCTION insert_same(setup text, stmt text, target text,
                            modes text[] DEFAULT ARRAY['force'])
RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  m text; n bigint; st text; msg text; det text; outcome text; contents text; seqs text;
  plan text; nodes text; idx regclass; first text; first_seqs text; out text;
BEGIN
  FOREACH m IN ARRAY ARRAY['off'] || modes LOOP
    PERFORM set_config('vexec.mode', 'off', true);
    EXECUTE setup;
    PERFORM set_config('vexec.mode', m, true);
    EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) ' || stmt INTO plan;
    nodes := CASE WHEN plan LIKE '%"Custom Plan Provider": "VecInsert"%' THEN 'VecInsert' ELSE 'row insert' END;
    BEGIN
      EXECUTE stmt;
      GET DIAGNOSTICS n = ROW_COUNT;
      outcome := n || ' inserted';
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
      outcome := format('error %s: %s%s', st, msg, coalesce(' / ' || nullif(det, ''), ''));
    END;
    PERFORM set_config('vexec.mode', 'off', true);
    EXECUTE format('SELECT count(*) || '' rows, md5 '' || left(md5(coalesce(string_agg(x::text, E''\n'' ORDER BY x::text), '''')), 10) FROM %s x', target)
      INTO contents;
    SELECT coalesce(string_agg(format('%s=%s', s.relname, pg_sequence_last_value(s.oid)), ' ' ORDER BY s.relname), '')
      INTO seqs FROM pg_class s WHERE s.relkind = 'S' AND s.relname LIKE target || '%';
    FOR idx IN SELECT i.indexrelid::regclass FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
               JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = target::regclass AND a.amname = 'btree' LOOP
      PERFORM bt_index_check(idx, true);
    END LOOP;
    IF m = 'off' THEN
      first := format('%s; %s', outcome, contents);
      first_seqs := seqs;
      out := first || coalesce('; ' || nullif(seqs, ''), '');
    ELSIF format('%s; %s', outcome, contents) = first AND seqs = first_seqs THEN
      out := out || format(E'\n  %s same (%s)', m, nodes);
    ELSIF format('%s; %s', outcome, contents) = first AND outcome LIKE 'error%' THEN
      out := out || format(E'\n  %s same (%s), sequences after the error: %s', m, nodes, seqs);
    ELSE
      out := out || format(E'\n  %s DIFFERENT (%s): %s; %s; %s', m, nodes, outcome, contents, seqs);
    END IF;
  END LOOP;
  PERFORM set_config('vexec.mode', 'off', true);
  RETURN out;
END $fn$;

-- The reason EXPLAIN (VEXEC) gives for VecInsert in force mode.
CREATE FUNCTION insert_verdict(stmt text) RETURNS SETOF text LANGUAGE plpgsql AS $fn$
DECLARE line text;
BEGIN
  PERFORM set_config('vexec.mode', 'force', true);
  FOR line IN EXECUTE 'EXPLAIN (VEXEC, COSTS OFF) ' || stmt LOOP
    IF line LIKE '%VecInsert%' OR line LIKE '%Insert on%' OR line LIKE '%Vec Insert%' THEN
      RETURN NEXT line;
    END IF;
  END LOOP;
  PERFORM set_config('vexec.mode', 'off', true);
END $fn$;

CREATE TABLE ins_src AS
SELECT g AS id, g % 10 AS grp,
       CASE WHEN g % 7 = 0 THEN NULL ELSE 'name ' || g END AS t,
       (g * 1.25)::numeric(12,2) AS n,
       date '2024-01-01' + g AS d,
       timestamp '2024-01-01' + g * interval '1 minute' AS ts,
       g % 3 = 0 AS b, g / 7.0::float8 AS f,
       CASE WHEN g % 500 = 0 THEN (SELECT string_agg(md5(g::text || x::text), '') FROM generate_series(1, 400) x) END AS big,
       CASE WHEN g % 11 = 0 THEN NULL ELSE decode(md5(g::text), 'hex') END AS by
FROM generate_series(1, 3000) g;
ANALYZE ins_src;

-- Plain copies: every type, NULLs, TOASTed values; in force and auto.
SELECT insert_same($$DROP TABLE IF EXISTS ins_t; CREATE TABLE ins_t (LIKE ins_src)$$,
  'INSERT INTO ins_t SELECT * FROM ins_src', 'ins_t', ARRAY['force', 'auto']);
SELECT insert_same($$DROP TABLE IF EXISTS ins_t; CREATE TABLE ins_t (LIKE ins_src)$$,
  'INSERT INTO ins_t SELECT * FROM ins_src WHERE grp < 4 ORDER BY id DESC', 'ins_t');
SELECT (SELECT count(*) FROM ins_t WHERE big IS NOT NULL) AS toasted,
       (SELECT min(length(big)) FROM ins_t) AS big_length,
       pg_relation_size((SELECT reltoastrelid FROM pg_class WHERE relname = 'ins_t')) > 0 AS has_toast;
-- SELECT * of a table whose tuples are the target's as they lie on disk:
-- VecInsert's input is a Seq Scan whose heap tuples are copied whole. Not
-- where a short tuple (a row older than an added column) would read
-- differently in the target: a column added with a default in either
-- table.
SET vexec.mode = force;
EXPLAIN (COSTS OFF) INSERT INTO ins_t SELECT * FROM ins_src WHERE id > 10;
RESET vexec.mode;
CREATE TABLE ins_short (a int, b text, e text, f float8, g date, h bool, i bigint);
INSERT INTO ins_short SELECT g, 'r' || g, repeat('e', g % 9), g / 3.0, date '2020-01-01' + g, g % 2 = 0, g * 7
  FROM generate_series(1, 2000) g;
ALTER TABLE ins_short ADD COLUMN c int;
INSERT INTO ins_short SELECT g, 'n' || g, NULL, NULL, NULL, NULL, NULL, g FROM generate_series(2001, 2100) g;
CREATE TABLE ins_missing (LIKE ins_short);
INSERT INTO ins_missing SELECT * FROM ins_short;
ALTER TABLE ins_missing ADD COLUMN d int DEFAULT 7;
ANALYZE ins_short, ins_missing;
-- Rows older than ins_short's c are short tuples: copied whole, they read
-- c as NULL in the target too.
SELECT insert_same($$DROP TABLE IF EXISTS ins_t; CREATE TABLE ins_t (LIKE ins_short)$$,
  'INSERT INTO ins_t SELECT * FROM ins_short', 'ins_t', ARRAY['force', 'auto']);
SELECT count(*) AS rows, count(c) AS with_c FROM ins_t;
SET vexec.mode = force;
EXPLAIN (COSTS OFF) INSERT INTO ins_t SELECT * FROM ins_short;
RESET vexec.mode;
-- A source column added with a default: its short tuples read d = 7, so
-- not copied whole.
SELECT insert_same($$DROP TABLE IF EXISTS ins_t; CREATE TABLE ins_t (LIKE ins_missing)$$,
  'INSERT INTO ins_t SELECT * FROM ins_missing', 'ins_t');
SELECT count(*) AS rows, count(*) FILTER (WHERE d = 7) AS d_7 FROM ins_t;
SET vexec.mode = force;
EXPLAIN (COSTS OFF) INSERT INTO ins_t SELECT * FROM ins_missing;
RESET vexec.mode;
-- A target column added with a default (5): a short tuple copied whole
-- would read c = 5, so VecInsert forms the rows and writes the NULLs
-- SELECT returns. PostgreSQL's own ModifyTable copies the short tuples
-- (19rc1 and 18.6 here), and the table then reads c = 5 where ins_short
-- has NULL: a PostgreSQL bug; off and force differ in c for 2,000 rows.
CREATE TABLE ins_t5 (a int, b text, e text, f float8, g date, h bool, i bigint);
INSERT INTO ins_t5 (a) VALUES (0);
ALTER TABLE ins_t5 ADD COLUMN c int DEFAULT 5;
DELETE FROM ins_t5;
SET vexec.mode = force;
EXPLAIN (COSTS OFF) INSERT INTO ins_t5 SELECT * FROM ins_short;
INSERT INTO ins_t5 SELECT * FROM ins_short;
SELECT count(*) AS rows, count(c) AS with_c, count(*) FILTER (WHERE c = 5) AS c_5 FROM ins_t5;
TRUNCATE ins_t5;
SET vexec.mode = off;
INSERT INTO ins_t5 SELECT * FROM ins_short;
SELECT count(*) AS rows, count(c) AS with_c, count(*) FILTER (WHERE c = 5) AS c_5 FROM ins_t5;
RESET vexec.mode;
DROP TABLE ins_t5;
-- Statistics: tuples inserted are counted as row by row (heap_multi_insert
-- counts its rows), in the transaction and after it.
CREATE TABLE ins_stat (LIKE ins_src);
BEGIN;
SET LOCAL vexec.mode = force;
INSERT INTO ins_stat SELECT * FROM ins_src;
SELECT pg_stat_get_xact_tuples_inserted('ins_stat'::regclass) AS force_inserted;
SET LOCAL vexec.mode = off;
INSERT INTO ins_stat SELECT * FROM ins_src;
SELECT pg_stat_get_xact_tuples_inserted('ins_stat'::regclass) AS with_off_inserted;
COMMIT;
SELECT pg_stat_force_next_flush();
SELECT n_tup_ins, n_live_tup FROM pg_stat_user_tables WHERE relname = 'ins_stat';
DROP TABLE ins_stat;
-- Batch boundaries: two rows per batch.
SET vexec.debug_batch_size = 2;
SELECT insert_same($$DROP TABLE IF EXISTS ins_t; CREATE TABLE ins_t (LIKE ins_src)$$,
  'INSERT INTO ins_t SELECT * FROM ins_src WHERE id <= 2501', 'ins_t');
RESET vexec.debug_batch_size;
-- Input from row plans (a join, an aggregate, VALUES) and from a vector join.
SELECT insert_same($$DROP TABLE IF EXISTS ins_t; CREATE TABLE ins_t (grp int, c bigint, s numeric)$$,
  'INSERT INTO ins_t SELECT grp, count(*), sum(n) FROM ins_src GROUP BY grp', 'ins_t');
SELECT insert_same($$DROP TABLE IF EXISTS ins_t; CREATE TABLE ins_t (a int, b text)$$,
  'INSERT INTO ins_t SELECT x.id, y.t FROM ins_src x JOIN ins_src y ON y.id = x.id + 1', 'ins_t');
SELECT insert_same($$DROP TABLE IF EXISTS ins_t; CREATE TABLE ins_t (a int, b text)$$,
  $$INSERT INTO ins_t VALUES (1, 'a'), (2, NULL), (3, 'c'), (NULL, 'd')$$, 'ins_t');

-- Defaults, serial and identity columns, stored and virtual generated
-- columns, a domain, a dropped column, indexes of several kinds.
CREATE DOMAIN ins_pos AS numeric CHECK (VALUE >= 0);
SELECT insert_same($$DROP TABLE IF EXISTS ins_t; DROP SEQUENCE IF EXISTS ins_t_extra;
  CREATE TABLE ins_t (gone int, id int PRIMARY KEY, t text, n ins_pos NOT NULL,
    d date DEFAULT date '2000-01-01', s serial, i bigint GENERATED ALWAYS AS IDENTITY,
    g numeric GENERATED ALWAYS AS (n * 2) STORED, v int GENERATED ALWAYS AS (id + 1) VIRTUAL,
    u text UNIQUE, CHECK (id > 0));
  ALTER TABLE ins_t DROP COLUMN gone;
  CREATE INDEX ins_t_expr ON ins_t (lower(t)) WHERE id % 2 = 0;
  CREATE INDEX ins_t_hash ON ins_t USING hash (t)$$,
  'INSERT INTO ins_t (id, t, n, u) SELECT id, t, n, t FROM ins_src', 'ins_t', ARRAY['force', 'auto']);
SELECT id, t, n, d, s, i, g, v, u FROM ins_t ORDER BY id LIMIT 3;

-- Violations in the middle of a batch: PostgreSQL's error for the first
-- violating row, nothing of the statement left.
\set ins_keyed 'DROP TABLE IF EXISTS ins_t; CREATE TABLE ins_t (id int PRIMARY KEY, t text NOT NULL, n ins_pos, s serial, CHECK (id < 100000)); INSERT INTO ins_t (id, t, n) VALUES (-1, $$before$$, 0)'
SELECT insert_same(:'ins_keyed',
  'INSERT INTO ins_t (id, t, n) SELECT CASE WHEN id = 1500 THEN 1 ELSE id END, coalesce(t, $$x$$), n FROM ins_src', 'ins_t');
SELECT insert_same(:'ins_keyed',
  'INSERT INTO ins_t (id, t, n) SELECT CASE WHEN id = 1500 THEN -1 ELSE id END, coalesce(t, $$x$$), n FROM ins_src', 'ins_t');
SELECT insert_same(:'ins_keyed',
  'INSERT INTO ins_t (id, t, n) SELECT id, t, n FROM ins_src', 'ins_t');
SELECT insert_same(:'ins_keyed',
  'INSERT INTO ins_t (id, t, n) SELECT CASE WHEN id = 2222 THEN 200000 ELSE id END, $$x$$, n FROM ins_src', 'ins_t');
SELECT insert_same(:'ins_keyed',
  'INSERT INTO ins_t (id, t, n) SELECT id, $$x$$, CASE WHEN id = 1700 THEN -n ELSE n END FROM ins_src', 'ins_t');
-- A unique violation (row 1,200) before a CHECK violation (row 1,500) in
-- the same group: the unique violation is reported, as row by row.
SELECT insert_same(:'ins_keyed',
  'INSERT INTO ins_t (id, t, n) SELECT CASE WHEN id = 1200 THEN 5 WHEN id = 1500 THEN 500000 ELSE id END, $$x$$, n FROM ins_src', 'ins_t');
-- And a NOT NULL violation before a unique one.
SELECT insert_same(:'ins_keyed',
  'INSERT INTO ins_t (id, t, n) SELECT CASE WHEN id = 1500 THEN 5 ELSE id END, CASE WHEN id = 1200 THEN NULL ELSE $$x$$ END, n FROM ins_src', 'ins_t');

-- A partition named as the target: its partition constraint is checked.
SELECT insert_same($$DROP TABLE IF EXISTS ins_parted; CREATE TABLE ins_parted (id int, t text) PARTITION BY RANGE (id);
  CREATE TABLE ins_part1 PARTITION OF ins_parted FOR VALUES FROM (0) TO (2000);
  CREATE TABLE ins_part2 PARTITION OF ins_parted FOR VALUES FROM (2000) TO (10000)$$,
  'INSERT INTO ins_part1 SELECT id, t FROM ins_src WHERE id < 2000', 'ins_part1');
SELECT insert_same($$DROP TABLE IF EXISTS ins_parted; CREATE TABLE ins_parted (id int, t text) PARTITION BY RANGE (id);
  CREATE TABLE ins_part1 PARTITION OF ins_parted FOR VALUES FROM (0) TO (2000)$$,
  'INSERT INTO ins_part1 SELECT id, t FROM ins_src', 'ins_part1');

-- Statement triggers fire once per statement, in both modes.
CREATE TABLE ins_log (what text, n bigint);
CREATE FUNCTION ins_log_stmt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO ins_log VALUES (TG_WHEN || ' ' || TG_LEVEL, (SELECT count(*) FROM ins_t)); RETURN NULL; END $$;
SELECT insert_same($$DROP TABLE IF EXISTS ins_t; TRUNCATE ins_log; CREATE TABLE ins_t (id int, t text);
  CREATE TRIGGER b BEFORE INSERT ON ins_t FOR EACH STATEMENT EXECUTE FUNCTION ins_log_stmt();
  CREATE TRIGGER a AFTER INSERT ON ins_t FOR EACH STATEMENT EXECUTE FUNCTION ins_log_stmt()$$,
  'INSERT INTO ins_t SELECT id, t FROM ins_src', 'ins_t');
SELECT * FROM ins_log ORDER BY what;

-- Other targets and settings: a temporary table, an unlogged table, a
-- serializable transaction, a data-modifying WITH.
SELECT insert_same($$DROP TABLE IF EXISTS ins_tmp; CREATE TEMP TABLE ins_tmp (LIKE ins_src)$$,
  'INSERT INTO ins_tmp SELECT * FROM ins_src', 'ins_tmp');
SELECT insert_same($$DROP TABLE IF EXISTS ins_t; CREATE UNLOGGED TABLE ins_t (LIKE ins_src)$$,
  'INSERT INTO ins_t SELECT * FROM ins_src', 'ins_t');
SELECT insert_same($$DROP TABLE IF EXISTS ins_t; CREATE TABLE ins_t (id int PRIMARY KEY, t text)$$,
  'WITH w AS (INSERT INTO ins_t SELECT id, t FROM ins_src WHERE id > 10) INSERT INTO ins_t SELECT id, t FROM ins_src WHERE id <= 10', 'ins_t');
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT insert_same($$DROP TABLE IF EXISTS ins_t; CREATE TABLE ins_t (id int PRIMARY KEY, t text)$$,
  'INSERT INTO ins_t SELECT id, t FROM ins_src', 'ins_t');
COMMIT;
-- A table read and written by the same statement sees none of its new rows.
SELECT insert_same($$DROP TABLE IF EXISTS ins_t; CREATE TABLE ins_t AS SELECT * FROM ins_src$$,
  'INSERT INTO ins_t SELECT * FROM ins_t', 'ins_t', ARRAY['force', 'auto']);
SET vexec.mode = force;
EXPLAIN (COSTS OFF) INSERT INTO ins_t SELECT * FROM ins_t;
RESET vexec.mode;
SELECT insert_same($$DROP TABLE IF EXISTS ins_t; CREATE TABLE ins_t AS SELECT id, t FROM ins_src$$,
  'INSERT INTO ins_t SELECT id + 3000, t FROM ins_t', 'ins_t');

-- Force writes even one row through VecInsert; auto leaves one row to
-- ModifyTable alone.
SELECT * FROM insert_verdict($$INSERT INTO ins_t VALUES (1, 'x')$$);
SET vexec.mode = auto;
EXPLAIN (COSTS OFF) INSERT INTO ins_t VALUES (1, 'x');
EXPLAIN (COSTS OFF) INSERT INTO ins_t SELECT id, t FROM ins_src;
RESET vexec.mode;

-- Refused, each with its reason; the statement runs as ModifyTable does.
CREATE TABLE ins_ref (id int PRIMARY KEY);
INSERT INTO ins_ref SELECT generate_series(1, 3000);
CREATE TABLE ins_fk (id int REFERENCES ins_ref, t text);
SELECT * FROM insert_verdict('INSERT INTO ins_fk SELECT id, t FROM ins_src');
SELECT insert_same('TRUNCATE ins_fk', 'INSERT INTO ins_fk SELECT id, t FROM ins_src', 'ins_fk');
SELECT * FROM insert_verdict('INSERT INTO ins_t SELECT id, t FROM ins_src RETURNING id');
SELECT * FROM insert_verdict('INSERT INTO ins_t SELECT id, t FROM ins_src ON CONFLICT DO NOTHING');
SELECT * FROM insert_verdict('INSERT INTO ins_parted SELECT id, t FROM ins_src');
SELECT * FROM insert_verdict('INSERT INTO ins_t SELECT id, t || random() FROM ins_src');
SET vexec.enable_insert = off;
SELECT * FROM insert_verdict('INSERT INTO ins_t SELECT id, t FROM ins_src');
RESET vexec.enable_insert;
CREATE TABLE ins_trig (id int, t text);
CREATE FUNCTION ins_row_trig() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER r BEFORE INSERT ON ins_trig FOR EACH ROW EXECUTE FUNCTION ins_row_trig();
SELECT * FROM insert_verdict('INSERT INTO ins_trig SELECT id, t FROM ins_src');
CREATE TABLE ins_trans (id int, t text);
CREATE FUNCTION ins_trans_trig() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE TRIGGER tt AFTER INSERT ON ins_trans REFERENCING NEW TABLE AS nt FOR EACH STATEMENT EXECUTE FUNCTION ins_trans_trig();
SELECT * FROM insert_verdict('INSERT INTO ins_trans SELECT id, t FROM ins_src');
CREATE VIEW ins_view AS SELECT * FROM ins_trans WHERE id > 0 WITH CHECK OPTION;
SELECT * FROM insert_verdict('INSERT INTO ins_view SELECT id, t FROM ins_src');
-- A view without CHECK OPTION writes its table, through VecInsert.
CREATE VIEW ins_plain_view AS SELECT * FROM ins_t;
SELECT * FROM insert_verdict('INSERT INTO ins_plain_view SELECT id, t FROM ins_src');
DROP VIEW ins_plain_view;

-- Privileges and row level security, as a plain role.
CREATE ROLE ins_user;
CREATE TABLE ins_rls (id int, t text, owner text DEFAULT current_user);
GRANT SELECT ON ins_src TO ins_user;
GRANT SELECT, INSERT ON ins_rls TO ins_user;
ALTER TABLE ins_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY p_ins ON ins_rls FOR INSERT WITH CHECK (id < 2000);
CREATE POLICY p_sel ON ins_rls FOR SELECT USING (true);
CREATE TABLE ins_noperm (id int);
SET ROLE ins_user;
SELECT * FROM insert_verdict('INSERT INTO ins_rls (id, t) SELECT id, t FROM ins_src');
SET vexec.mode = force;
INSERT INTO ins_rls (id, t) SELECT id, t FROM ins_src WHERE id < 10;
INSERT INTO ins_rls (id, t) SELECT id, t FROM ins_src;
INSERT INTO ins_noperm SELECT id FROM ins_src;
RESET vexec.mode;
RESET ROLE;
SELECT count(*), min(owner) FROM ins_rls;
-- Column privileges.
CREATE TABLE ins_cols (id int, secret text);
GRANT INSERT (id) ON ins_cols TO ins_user;
SET ROLE ins_user;
SET vexec.mode = force;
INSERT INTO ins_cols (id) SELECT id FROM ins_src WHERE id <= 100;
INSERT INTO ins_cols (id, secret) SELECT id, t FROM ins_src WHERE id <= 100;
RESET vexec.mode;
RESET ROLE;
SELECT count(*), count(secret) FROM ins_cols;

-- The batch sink: Arrow record batches into a table through the same
-- INSERT (vexec.arrow_insert reads an Arrow IPC stream). A round trip of
-- every column of ins_src, in off and force.
CREATE TABLE ins_arrow (LIKE ins_src);
SET vexec.mode = force;
SELECT vexec.arrow_insert('ins_arrow', vexec.arrow_ipc('SELECT * FROM ins_src', 1000));
SET vexec.mode = off;
SELECT vexec.arrow_insert('ins_arrow', vexec.arrow_ipc('SELECT * FROM ins_src WHERE id <= 10'));
SELECT count(*) AS rows,
       (SELECT count(*) FROM (SELECT * FROM ins_src EXCEPT ALL SELECT * FROM ins_arrow) d) AS missing,
       (SELECT count(*) FROM (SELECT * FROM ins_arrow EXCEPT ALL SELECT * FROM ins_src) d) AS extra
FROM ins_arrow;
-- Columns by name, the others from their defaults; PostgreSQL's
-- assignment casts from the Arrow type's PostgreSQL type.
CREATE TABLE ins_arrow2 (id int PRIMARY KEY, label varchar(12) NOT NULL, made date DEFAULT '2020-02-02', amount numeric(8,1));
SELECT vexec.arrow_insert('ins_arrow2',
  vexec.arrow_ipc($$SELECT g::bigint AS id, 'row ' || g AS label, g * 2.25 AS amount FROM generate_series(1, 5) g$$));
SELECT * FROM ins_arrow2 ORDER BY id;
-- Errors: each with PostgreSQL's SQLSTATE, and nothing of the stream left.
\set VERBOSITY sqlstate
SELECT vexec.arrow_insert('ins_arrow2', '\x0102'::bytea);
SELECT vexec.arrow_insert('ins_arrow2', vexec.arrow_ipc($$SELECT 'x'::text AS id, 'a' AS label$$));
SELECT vexec.arrow_insert('ins_arrow2', vexec.arrow_ipc($$SELECT 2147483648::bigint AS id, 'a' AS label$$));
SELECT vexec.arrow_insert('ins_arrow2', vexec.arrow_ipc($$SELECT g AS id, CASE WHEN g = 3000 THEN NULL ELSE 'a' END AS label FROM generate_series(100, 4000) g$$));
SELECT vexec.arrow_insert('ins_arrow2', vexec.arrow_ipc($$SELECT g AS id, 'a' AS label FROM generate_series(1, 4000) g$$));
SELECT vexec.arrow_insert('ins_arrow2', vexec.arrow_ipc($$SELECT 7 AS id, 'a' AS nosuch$$));
SELECT vexec.arrow_insert('ins_arrow2', vexec.arrow_ipc($$SELECT 7 AS id, 'too long for twelve' AS label$$));
SELECT * FROM vexec.ingest_rows(12345) AS x(a int);
GRANT USAGE ON SCHEMA vexec TO ins_user;
SET ROLE ins_user;
SELECT vexec.arrow_insert('ins_arrow2', vexec.arrow_ipc($$SELECT 7 AS id, 'a' AS label$$));
RESET ROLE;
\set VERBOSITY default
SELECT count(*) FROM ins_arrow2;
-- Decimal128 values into numeric are built directly (no text): the same
-- numeric, byte for byte (numeric_send), as numeric_in makes of their text.
CREATE TABLE ins_dec (a numeric, b numeric, c numeric(20, 9));
CREATE VIEW ins_dec_src AS SELECT x::numeric(38, 4) AS a, y::numeric(38, 0) AS b, z::numeric(20, 9) AS c
  FROM (VALUES (0, 0, 0), (-1.5, 99999999999999999999999999999999999999, -12345678901.123456789),
               (0.0001, -99999999999999999999999999999999999999, 0.000000001),
               (1234567890123456789012345678901234.5678, 1, -0.5), (-0.0001, -10000, 99999999999.999999999)) v(x, y, z);
SELECT vexec.arrow_insert('ins_dec', vexec.arrow_ipc('SELECT * FROM ins_dec_src'));
SELECT * FROM ins_dec ORDER BY a;
SELECT count(*) AS differ FROM (
  SELECT numeric_send(a), numeric_send(b), numeric_send(c) FROM ins_dec
  EXCEPT ALL SELECT numeric_send(a), numeric_send(b), numeric_send(c) FROM ins_dec_src) d;
-- A corrupt stream is malformed Arrow (22P03), or decodes to values the
-- table then judges: never an internal error, a panic or a huge allocation
-- (a length changed to about 2^55 could abort the backend). Every byte of
-- a small stream changed in turn (three ways: its high bit makes a body
-- length huge).
CREATE TABLE ins_fuzz (id int, label text);
CREATE FUNCTION fuzz_codes(s bytea) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  codes text[] := '{}';
  flip int;
  c text;
BEGIN
  FOR i IN 0 .. length(s) - 1 LOOP
    FOREACH flip IN ARRAY ARRAY[255, 128, 1] LOOP
      BEGIN
        PERFORM vexec.arrow_insert('ins_fuzz', set_byte(s, i, get_byte(s, i) # flip));
      EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS c = RETURNED_SQLSTATE;
        IF c IN ('XX000', 'XX001', 'XX002') OR c LIKE '53%' OR c LIKE '58%' THEN
          codes := codes || c;
        END IF;
      END;
    END LOOP;
  END LOOP;
  RETURN CASE WHEN codes = '{}' THEN 'no internal or resource error' ELSE array_to_string(codes, ', ') END;
END $$;
SELECT fuzz_codes(vexec.arrow_ipc($$SELECT g AS id, 'label ' || g AS label FROM generate_series(1, 3) g$$));
-- A string column's pg.type (field metadata) names a type, parsed as one:
-- never SQL text in the INSERT, never a zero byte.
CREATE TABLE ins_typed (x inet);
CREATE FUNCTION typed_as(t bytea) RETURNS bytea LANGUAGE sql AS $$
  SELECT overlay(s placing t from position('inet'::bytea in s))
    FROM (SELECT vexec.arrow_ipc($q$SELECT '1.2.3.4'::inet AS x$q$) s) a $$;
\set VERBOSITY sqlstate
SELECT vexec.arrow_insert('ins_typed', typed_as('int)'));
SELECT vexec.arrow_insert('ins_typed', typed_as('\x696e0074'));
SELECT vexec.arrow_insert('ins_typed', typed_as('nope'));
SELECT vexec.arrow_insert('ins_typed', typed_as('int4'));
\set VERBOSITY default
SELECT vexec.arrow_insert('ins_typed', typed_as('inet'));
SELECT x FROM ins_typed;
-- Strings become text as textin makes it (empty, non-ASCII, NULL), and a
-- zero byte in one (valid UTF-8 for Arrow) is PostgreSQL's error (22021).
CREATE TABLE ins_text (id int, label text);
SELECT vexec.arrow_insert('ins_text', vexec.arrow_ipc($$SELECT g AS id, CASE g % 4 WHEN 0 THEN NULL WHEN 1 THEN '' WHEN 2 THEN 'zürich ' || g ELSE repeat('ab', g) END AS label FROM generate_series(1, 8) g$$));
SELECT id, label, length(label) FROM ins_text ORDER BY id;
SELECT vexec.arrow_insert('ins_text', (SELECT set_byte(s, position('zXz'::bytea IN s), 0)
  FROM (SELECT vexec.arrow_ipc($$SELECT 9 AS id, 'azXzb'::text AS label$$) s) a));
SELECT count(*) FROM ins_text;
-- The sink's INSERT reads vexec.ingest_rows, volatile (each call takes
-- its batches) but reading no table: VecInsert writes its rows, in auto
-- too. Another volatile function keeps the rows to ModifyTable.
SELECT * FROM insert_verdict('INSERT INTO ins_text (id, label) SELECT * FROM vexec.ingest_rows(1) AS x(id int, label text)');
SELECT * FROM insert_verdict('INSERT INTO ins_text SELECT g, random()::text FROM generate_series(1, 20000) g');
SET vexec.mode = auto;
EXPLAIN (COSTS OFF) INSERT INTO ins_text (id, label) SELECT * FROM vexec.ingest_rows(1) AS x(id int, label text);
SELECT vexec.arrow_insert('ins_text', vexec.arrow_ipc($$SELECT g AS id, 'l' || g AS label FROM generate_series(100, 2099) g$$, 300));
RESET vexec.mode;
SELECT count(*), sum(id), count(DISTINCT label) FROM ins_text;
-- Where the sink's columns are the new row's (no cast, no default),
-- VecInsert reads the batches itself and the function never runs: no call
-- of vexec.ingest_rows is counted in force, one a chunk in off; the rows
-- are the same, in any column order, over batches and batch slices.
CREATE TABLE ins_sink (id int NOT NULL, label text, d date, x float8);
SET track_functions = 'all';
BEGIN;
SET LOCAL vexec.mode = force;
SELECT vexec.arrow_insert('ins_sink', vexec.arrow_ipc($$SELECT 'l' || g AS label, g AS id, date '2020-01-01' + g AS d, CASE WHEN g % 9 = 0 THEN NULL ELSE g / 8.0::float8 END AS x FROM generate_series(1, 3000) g$$, 700));
SELECT count(*) AS ingest_rows_calls FROM pg_stat_xact_user_functions WHERE funcname = 'ingest_rows';
SET LOCAL vexec.mode = off;
SELECT vexec.arrow_insert('ins_sink', vexec.arrow_ipc($$SELECT 'l' || g AS label, g AS id, date '2020-01-01' + g AS d, CASE WHEN g % 9 = 0 THEN NULL ELSE g / 8.0::float8 END AS x FROM generate_series(1, 3000) g$$, 700));
SELECT calls AS ingest_rows_calls FROM pg_stat_xact_user_functions WHERE funcname = 'ingest_rows';
COMMIT;
RESET track_functions;
SELECT count(*), count(DISTINCT (id, label, d, x)) AS distinct_rows, count(x), sum(id), min(d), max(label) FROM ins_sink;
-- Errors in force as in off: a NULL into NOT NULL (23502), a zero byte
-- (22021); nothing kept.
SET vexec.mode = off;
SELECT vexec.arrow_insert('ins_sink', vexec.arrow_ipc($$SELECT CASE WHEN g = 2500 THEN NULL ELSE g END AS id, 'n' || g AS label, date '2020-01-01' AS d, 0.5::float8 AS x FROM generate_series(1, 3000) g$$));
SET vexec.mode = force;
SELECT vexec.arrow_insert('ins_sink', vexec.arrow_ipc($$SELECT CASE WHEN g = 2500 THEN NULL ELSE g END AS id, 'n' || g AS label, date '2020-01-01' AS d, 0.5::float8 AS x FROM generate_series(1, 3000) g$$));
SELECT vexec.arrow_insert('ins_sink', (SELECT set_byte(s, position('zXz'::bytea IN s), 0)
  FROM (SELECT vexec.arrow_ipc($$SELECT 9 AS id, 'azXzb'::text AS label, date '2020-01-01' AS d, 0.5::float8 AS x$$) s) a));
RESET vexec.mode;
SELECT count(*) FROM ins_sink;
-- Typed strings read by input functions that keep state in fn_extra
-- (range_in, multirange_in), looked up once per call, over several
-- batches: every value as it was.
CREATE TABLE ins_stateful (r int4range, m int4multirange, i inet);
SELECT vexec.arrow_insert('ins_stateful', vexec.arrow_ipc($q$
  SELECT int4range(g, g + 3) AS r, int4multirange(int4range(g, g + 1), int4range(g + 5, NULL)) AS m,
         ('10.0.' || g % 256 || '.1')::inet AS i
  FROM generate_series(1, 3000) g$q$, 700));
SELECT count(*), count(DISTINCT r), sum(upper(r) - lower(r)), count(DISTINCT i) FROM ins_stateful;
SELECT count(*) AS differing FROM ins_stateful
  WHERE (r, m, i) IS DISTINCT FROM (int4range(lower(r), lower(r) + 3),
                                    int4multirange(int4range(lower(r), lower(r) + 1), int4range(lower(r) + 5, NULL)),
                                    ('10.0.' || lower(r) % 256 || '.1')::inet);

-- A long stream goes in by chunks of about half work_mem, one execution of
-- the INSERT each (their rows have different command ids), all in one
-- transaction; a table with triggers (or rules) takes it in one execution,
-- so its statement trigger fires once.
CREATE TABLE ins_chunks (id int, label text);
CREATE TABLE ins_chunks_trig (id int, label text);
CREATE TABLE ins_fired (n int);
CREATE FUNCTION ins_count() RETURNS trigger LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO ins_fired VALUES (1); RETURN NULL; END$$;
CREATE TRIGGER ins_once AFTER INSERT ON ins_chunks_trig FOR EACH STATEMENT EXECUTE FUNCTION ins_count();
SET work_mem = '64kB';
BEGIN;
SELECT vexec.arrow_insert('ins_chunks',
  vexec.arrow_ipc($$SELECT g AS id, 'row number ' || g AS label FROM generate_series(1, 200000) g$$));
SELECT vexec.arrow_insert('ins_chunks_trig',
  vexec.arrow_ipc($$SELECT g AS id, 'row number ' || g AS label FROM generate_series(1, 200000) g$$));
COMMIT;
RESET work_mem;
SELECT count(*), sum(id), count(DISTINCT label), count(DISTINCT cmin::text::int) > 1 AS chunked FROM ins_chunks;
SELECT count(*), sum(id), count(DISTINCT cmin::text::int) AS executions FROM ins_chunks_trig;
SELECT count(*) AS fired FROM ins_fired;
-- A failure in a later chunk leaves nothing of the earlier ones.
CREATE TABLE ins_chunks_pk (id int PRIMARY KEY, label text);
SET work_mem = '64kB';
\set VERBOSITY sqlstate
SELECT vexec.arrow_insert('ins_chunks_pk',
  vexec.arrow_ipc($$SELECT CASE WHEN g = 199999 THEN 5 ELSE g END AS id, 'row number ' || g AS label
                    FROM generate_series(1, 200000) g$$));
\set VERBOSITY default
RESET work_mem;
SELECT count(*) FROM ins_chunks_pk;
-- Where every column of the table allows (int2, int4, int8, float8, date,
-- text from UTF-8 strings), VecInsert writes the sink's rows as heap tuples
-- it forms itself (ingest/tuples.rs): byte for byte the tuples PostgreSQL
-- forms from the same values, compared page item by page item with the
-- row executor's (the database is UTF-8, so text takes that path too).
SELECT getdatabaseencoding();
CREATE EXTENSION pageinspect;
CREATE TABLE ins_form_src AS
  SELECT CASE WHEN g % 11 = 1 THEN NULL ELSE (g - 1500)::int2 END AS s,
         CASE WHEN g % 13 = 2 THEN NULL WHEN g = 3 THEN -2147483648 ELSE g * 7919 END AS i,
         CASE WHEN g % 17 = 3 THEN NULL ELSE g::int8 * 3037000493 END AS b,
         CASE g % 6 WHEN 0 THEN 'NaN'::float8 WHEN 1 THEN '-0'::float8 WHEN 2 THEN '-Infinity'
                    WHEN 3 THEN NULL ELSE g / 7.0 END AS f,
         CASE WHEN g % 19 = 4 THEN NULL WHEN g = 5 THEN date '4713-01-01 BC' ELSE date '2000-01-01' + g * 37 END AS d,
         CASE WHEN g % 5 = 0 THEN NULL ELSE repeat('x', g % 300) END AS t,
         CASE WHEN g % 29 = 0 THEN NULL ELSE 'é€' || g END AS u,
         repeat('ab', (g % 7) * 1000) AS long,
         CASE WHEN g % 3 = 0 THEN NULL ELSE g END AS ninth
  FROM generate_series(1, 3000) g;
INSERT INTO ins_form_src VALUES (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
CREATE TABLE ins_form_off (LIKE ins_form_src);
CREATE TABLE ins_form_force (LIKE ins_form_src);
SET vexec.mode = off;
SELECT vexec.arrow_insert('ins_form_off', vexec.arrow_ipc('SELECT * FROM ins_form_src', 700));
SET vexec.mode = force;
SELECT vexec.arrow_insert('ins_form_force', vexec.arrow_ipc('SELECT * FROM ins_form_src', 700));
RESET vexec.mode;
-- (Compared as multisets: the row executor, without a bulk insert state,
-- puts some rows into earlier pages' free space.)
CREATE FUNCTION ins_form_items(rel regclass)
  RETURNS TABLE (infomask int, natts int, hoff int, bits text, data bytea) LANGUAGE sql AS $$
  SELECT t_infomask & 7, t_infomask2 & 2047, t_hoff, t_bits, t_data
  FROM generate_series(0, pg_relation_size(rel) / 8192 - 1) blk, heap_page_items(get_raw_page(rel::text, blk::int))
$$;
SELECT (SELECT count(*) FROM ins_form_items('ins_form_off')) AS tuples,
       (SELECT count(*) FROM ins_form_items('ins_form_off') WHERE bits IS NOT NULL) AS with_nulls,
       (SELECT count(*) FROM ins_form_src WHERE octet_length(long) > 2000) AS compressed,
       (SELECT count(*) FROM (SELECT * FROM ins_form_items('ins_form_off')
                              EXCEPT ALL SELECT * FROM ins_form_items('ins_form_force')) x) AS only_off,
       (SELECT count(*) FROM (SELECT * FROM ins_form_items('ins_form_force')
                              EXCEPT ALL SELECT * FROM ins_form_items('ins_form_off')) x) AS only_force;
SELECT (SELECT count(*) FROM (TABLE ins_form_force EXCEPT ALL TABLE ins_form_src) x) AS not_in_source;
