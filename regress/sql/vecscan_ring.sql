-- A table larger than a quarter of shared_buffers is read through a ring of
-- buffers (BAS_BULKREAD) so that one scan does not evict the buffer pool.
-- VecScan keeps the pages of a batch pinned; it must read through a ring
-- wide enough for them, or the pages it holds stay behind in shared buffers.
-- Answers must be mode off's, in every block order the scan may take.
SET search_path = public;
SET max_parallel_workers_per_gather = 0;
CREATE EXTENSION pg_buffercache;

-- Rows of about 1 kB (7 a page): a batch spans as many pages as it may pin.
CREATE TABLE vring (id int8, grp int4, note text) WITH (toast_tuple_target = 2000);
ALTER TABLE vring ALTER note SET STORAGE plain;
INSERT INTO vring
  SELECT g, g % 7, repeat(chr(97 + g % 26), 900 + g % 100) FROM generate_series(1, 70000) g;
VACUUM (ANALYZE) vring;
SELECT pg_relation_size('vring') / current_setting('block_size')::int
       > (SELECT setting::int FROM pg_settings WHERE name = 'shared_buffers') / 4
  AS larger_than_a_quarter_of_shared_buffers;

CREATE FUNCTION vring_buffers() RETURNS int LANGUAGE sql AS $$
  SELECT count(*)::int FROM pg_buffercache
  WHERE relfilenode = pg_relation_filenode('vring')
    AND reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
$$;
CREATE FUNCTION vring_pages() RETURNS int LANGUAGE sql AS $$
  SELECT (pg_relation_size('vring') / current_setting('block_size')::int)::int
$$;

-- The vector nodes of a plan (other lines differ between PostgreSQL versions).
CREATE FUNCTION vring_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $fn$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF ln ~ 'Vec' THEN RETURN NEXT ln; END IF;
  END LOOP;
END $fn$;

SET vexec.mode = force;
SELECT vring_plan($$SELECT grp, sum(length(note)) FROM vring WHERE note LIKE 'b%' GROUP BY grp$$);

-- The answers of both modes (each scan reads every page once).
CREATE TABLE vring_answers (mode text, grp int, n int8, len int8);
SET vexec.mode = off;
INSERT INTO vring_answers SELECT 'off', grp, count(*), sum(length(note)) FROM vring WHERE note LIKE 'b%' GROUP BY grp;
SET vexec.mode = force;
INSERT INTO vring_answers SELECT 'force', grp, count(*), sum(length(note)) FROM vring WHERE note LIKE 'b%' GROUP BY grp;
SELECT (SELECT count(*) FROM vring_answers WHERE mode = 'off') AS groups,
       NOT EXISTS ((SELECT grp, n, len FROM vring_answers WHERE mode = 'off'
                    EXCEPT SELECT grp, n, len FROM vring_answers WHERE mode = 'force')
                   UNION ALL
                   (SELECT grp, n, len FROM vring_answers WHERE mode = 'force'
                    EXCEPT SELECT grp, n, len FROM vring_answers WHERE mode = 'off')) AS same_answers;

-- After a scan from an empty cache, only about a ring's worth of the
-- table's pages stays in shared buffers, in either mode (before the ring
-- was widened, a force scan left 60% of this table there).
SELECT (pg_buffercache_evict_relation('vring')).buffers_evicted >= 0 AS evicted;
SET vexec.mode = off;
SELECT count(*) FROM vring WHERE note LIKE 'b%';
SELECT vring_buffers() < vring_pages() / 10 AS off_within_ring;
SELECT (pg_buffercache_evict_relation('vring')).buffers_evicted >= 0 AS evicted;
SET vexec.mode = force;
SELECT count(*), sum(length(note)) FROM vring WHERE note LIKE 'b%';
SELECT vring_buffers() < vring_pages() / 10 AS force_within_ring;

-- A parallel scan: each participant reads its chunks of the table through
-- a ring of its own, widened as a serial scan's is (before, each left the
-- pages its batches held behind: a third of this table with two workers).
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET vexec.mode = force;
SELECT vring_plan($$SELECT count(*), sum(length(note)) FROM vring WHERE note LIKE 'b%'$$);
SELECT (pg_buffercache_evict_relation('vring')).buffers_evicted >= 0 AS evicted;
SELECT count(*), sum(length(note)) FROM vring WHERE note LIKE 'b%';
SELECT vring_buffers() < vring_pages() / 5 AS parallel_force_within_rings;
SET vexec.mode = off;
SELECT count(*), sum(length(note)) FROM vring WHERE note LIKE 'b%';
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- A rescan (VecScan under a correlated subplan) reads the whole table again.
SET vexec.mode = force;
SELECT vring_plan($$SELECT k, (SELECT count(*) FROM vring WHERE grp = k AND note LIKE 'c%') FROM (VALUES (1), (2)) v(k)$$);
SELECT k, (SELECT count(*) FROM vring WHERE grp = k AND note LIKE 'c%') FROM (VALUES (1), (2)) v(k);
SET vexec.mode = off;
SELECT k, (SELECT count(*) FROM vring WHERE grp = k AND note LIKE 'c%') FROM (VALUES (1), (2)) v(k);
RESET vexec.mode;

DROP TABLE vring, vring_answers;
DROP FUNCTION vring_buffers(), vring_pages(), vring_plan(text);
DROP EXTENSION pg_buffercache;
