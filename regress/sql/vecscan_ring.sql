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

-- A table smaller than the ring threshold is read by pinning each page's
-- buffer directly when it is the buffer after the previous page's, and
-- through the read stream again from the first page that had to be read
-- from disk. Every way gives the row scan's answers and buffer counts: read
-- in order from an empty cache, with only its second half cached (the
-- first page comes from disk), with only its first half cached (the direct
-- pins stop at the middle), rescanned, and fully cached.
CREATE TABLE vdirect AS SELECT g AS id, g % 7 AS grp, repeat('x', g % 50) AS note FROM generate_series(1, 30000) g;
VACUUM (ANALYZE) vdirect;
CREATE FUNCTION vdirect_pages() RETURNS int LANGUAGE sql AS $$
  SELECT (pg_relation_size('vdirect') / current_setting('block_size')::int)::int $$;
-- The buffers a scan of vdirect counted (EXPLAIN's, as the row scan counts
-- them) and, where a page was read from disk, whether any page was pinned
-- directly (none: the first page comes from disk, and from there the read
-- stream reads; with every page cached it depends on where the buffers lie).
CREATE FUNCTION vdirect_shared(q text) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE ln text; hit int; rd int; direct int;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF ln ~ '^\s*Buffers: shared' AND hit IS NULL THEN
      hit := coalesce(substring(ln FROM 'hit=(\d+)')::int, 0);
      rd := coalesce(substring(ln FROM 'read=(\d+)')::int, 0);
    END IF;
    IF ln ~ 'Pages Pinned Directly' THEN
      direct := substring(ln FROM 'Directly: (\d+)')::int;
    END IF;
  END LOOP;
  RETURN CASE WHEN hit + rd = vdirect_pages() THEN 'every page once' ELSE format('%s hit + %s read of %s pages', hit, rd, vdirect_pages()) END
    || CASE WHEN rd = 0 THEN ', all hits' ELSE ', some read' END
    || CASE WHEN direct IS NULL THEN '' WHEN rd = 0 THEN '' WHEN direct = 0 THEN ', none pinned directly' ELSE ', some pinned directly' END;
END $fn$;
CREATE TABLE vdirect_answers (run text, grp int, n int8, len int8);
SET vexec.mode = off;
INSERT INTO vdirect_answers SELECT 'off', grp, count(*), sum(length(note)) FROM vdirect GROUP BY grp;
SET vexec.mode = force;
SELECT (pg_buffercache_evict_relation('vdirect')).buffers_evicted >= 0 AS evicted;
SELECT vdirect_shared('SELECT count(*) FROM vdirect');
SELECT vdirect_shared('SELECT count(*) FROM vdirect');
SELECT (pg_buffercache_evict_relation('vdirect')).buffers_evicted >= 0 AS evicted;
INSERT INTO vdirect_answers SELECT 'cold', grp, count(*), sum(length(note)) FROM vdirect GROUP BY grp;
SELECT (pg_buffercache_evict_relation('vdirect')).buffers_evicted >= 0 AS evicted;
SET vexec.mode = off;
SELECT count(*) > 0 AS second_half_cached FROM vdirect WHERE ctid >= format('(%s,0)', vdirect_pages() / 2)::tid;
SET vexec.mode = force;
INSERT INTO vdirect_answers SELECT 'second half cached', grp, count(*), sum(length(note)) FROM vdirect GROUP BY grp;
SELECT (pg_buffercache_evict_relation('vdirect')).buffers_evicted >= 0 AS evicted;
SET vexec.mode = off;
SELECT count(*) > 0 AS first_half_cached FROM vdirect WHERE ctid < format('(%s,0)', vdirect_pages() / 2)::tid;
SET vexec.mode = force;
INSERT INTO vdirect_answers SELECT 'first half cached', grp, count(*), sum(length(note)) FROM vdirect GROUP BY grp;
INSERT INTO vdirect_answers SELECT 'cached', grp, count(*), sum(length(note)) FROM vdirect GROUP BY grp;
INSERT INTO vdirect_answers SELECT 'rescanned', k, (SELECT count(*) FROM vdirect WHERE grp = k), (SELECT sum(length(note)) FROM vdirect WHERE grp = k)
  FROM generate_series(0, 6) k;
SELECT run, count(*) AS groups,
       NOT EXISTS ((SELECT grp, n, len FROM vdirect_answers WHERE run = 'off'
                    EXCEPT SELECT grp, n, len FROM vdirect_answers a WHERE a.run = r.run)
                   UNION ALL
                   (SELECT grp, n, len FROM vdirect_answers a WHERE a.run = r.run
                    EXCEPT SELECT grp, n, len FROM vdirect_answers WHERE run = 'off')) AS same_as_off
FROM (SELECT DISTINCT run FROM vdirect_answers) r JOIN vdirect_answers USING (run)
GROUP BY run ORDER BY run;
SET vexec.mode = off;
SELECT vdirect_shared('SELECT count(*) FROM vdirect');
-- A parallel scan's participants pin the pages of their chunks directly
-- too (a lookup at the start of each chunk), cold and cached.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET vexec.mode = force;
SELECT vring_plan($$SELECT grp, count(*), sum(length(note)) FROM vdirect GROUP BY grp$$);
SELECT (pg_buffercache_evict_relation('vdirect')).buffers_evicted >= 0 AS evicted;
INSERT INTO vdirect_answers SELECT 'parallel cold', grp, count(*), sum(length(note)) FROM vdirect GROUP BY grp;
INSERT INTO vdirect_answers SELECT 'parallel cached', grp, count(*), sum(length(note)) FROM vdirect GROUP BY grp;
SELECT run, count(*) AS groups,
       NOT EXISTS ((SELECT grp, n, len FROM vdirect_answers WHERE run = 'off'
                    EXCEPT SELECT grp, n, len FROM vdirect_answers a WHERE a.run = r.run)
                   UNION ALL
                   (SELECT grp, n, len FROM vdirect_answers a WHERE a.run = r.run
                    EXCEPT SELECT grp, n, len FROM vdirect_answers WHERE run = 'off')) AS same_as_off
FROM (SELECT DISTINCT run FROM vdirect_answers WHERE run LIKE 'parallel%') r JOIN vdirect_answers USING (run)
GROUP BY run ORDER BY run;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;
-- A temporary table's pages are in local buffers, read through the stream.
SET vexec.mode = force;
CREATE TEMP TABLE vdirect_tmp AS SELECT * FROM vdirect;
SELECT count(*), sum(length(note)) FROM vdirect_tmp;
CREATE FUNCTION vdirect_pins(q text) RETURNS int LANGUAGE plpgsql AS $fn$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF ln ~ 'Pages Pinned Directly' THEN
      RETURN substring(ln FROM 'Directly: (\d+)')::int;
    END IF;
  END LOOP;
  RETURN NULL;
END $fn$;
SELECT vdirect_pins('SELECT count(*) FROM vdirect_tmp') AS temp_table_pinned_directly;
SELECT vdirect_pins('SELECT count(*) FROM vdirect') <= vdirect_pages() - 1 AS at_most_all_but_the_first;
RESET vexec.mode;
DROP TABLE vdirect, vdirect_answers, vdirect_tmp;
DROP FUNCTION vdirect_pages(), vdirect_shared(text), vdirect_pins(text);

DROP TABLE vring, vring_answers;
DROP FUNCTION vring_buffers(), vring_pages(), vring_plan(text);
DROP EXTENSION pg_buffercache;
