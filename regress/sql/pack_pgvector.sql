-- vexec_pgvector: pgvector's functions in vexec's batches, served by the
-- kernel pack (run twice: shared_preload_libraries = 'vexec_pgvector,vexec'
-- and 'vexec,vexec_pgvector'; the registry does not mind the order). Every query is
-- compared with mode off row by row (float results by md5 of their text,
-- which PostgreSQL prints exactly, so the values agree bit for bit; only the
-- row count is shown, as pgvector's float loops may differ between CPUs),
-- and the force plan names the pack functions that served it.
\set SHOW_CONTEXT never
SET search_path = public;
CREATE EXTENSION vexec;
CREATE EXTENSION vector;

-- What the pack serves in this database: every declaration bound.
SELECT pack, count(*) FROM vexec.pack_functions() GROUP BY pack;
SELECT signature FROM vexec.pack_functions() WHERE signature LIKE 'l2%' ORDER BY signature;

-- off against force, plus the pack kernels force's plan shows.
CREATE FUNCTION pack_same(q text) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  packs text;
BEGIN
  PERFORM set_config('vexec.mode', 'force', true);
  SELECT string_agg(DISTINCT m[1], ', ') INTO packs
    FROM (SELECT regexp_matches(p, 'Pack Kernels: (.*)', 'g') m
            FROM (SELECT "QUERY PLAN" p FROM pack_explain(q)) e) s;
  PERFORM set_config('vexec.mode', 'off', true);
  RETURN compare_modes(q, answer => 'count') || ' | ' || coalesce(packs, 'no pack kernel');
END $fn$;
CREATE FUNCTION pack_explain(q text) RETURNS TABLE ("QUERY PLAN" text) LANGUAGE plpgsql AS $fn$
BEGIN
  RETURN QUERY EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q;
END $fn$;

SELECT setseed(0.42);
CREATE TABLE items (id int, emb vector(8), h halfvec(8), s sparsevec(8), b bit(8), k int);
INSERT INTO items
SELECT i, v::vector(8), v::halfvec(8), v::sparsevec(8),
       (floor(random() * 256)::int)::bit(8), (random() * 10)::int
  FROM generate_series(1, 5000) i,
       LATERAL (SELECT array_agg(CASE WHEN random() < 0.3 THEN 0 ELSE round((random() * 4 - 2)::numeric, 3) END)::float4[] v
                  FROM generate_series(1, 8) d WHERE i > 0) a;
INSERT INTO items VALUES (5001, NULL, NULL, NULL, NULL, 1), (5002, '[0,0,0,0,0,0,0,0]', '[0,0,0,0,0,0,0,0]', '{}/8', B'00000000', 2);
ANALYZE items;

-- Distances: every operator and function of each type.
SELECT pack_same($$SELECT id, emb <-> '[1,0,0,0,0,0,0,1]', emb <#> '[1,0,0,0,0,0,0,1]', emb <=> '[1,0,0,0,0,0,0,1]', emb <+> '[1,0,0,0,0,0,0,1]' FROM items$$);
SELECT pack_same($$SELECT id, l2_distance(emb, '[1,2,3,4,5,6,7,8]'), inner_product(emb, '[1,2,3,4,5,6,7,8]'), cosine_distance(emb, '[1,2,3,4,5,6,7,8]'), l1_distance(emb, '[1,2,3,4,5,6,7,8]') FROM items$$);
SELECT pack_same($$SELECT id, h <-> '[1,0,0,0,0,0,0,1]', h <#> '[1,0,0,0,0,0,0,1]', h <=> '[1,0,0,0,0,0,0,1]', h <+> '[1,0,0,0,0,0,0,1]' FROM items$$);
SELECT pack_same($$SELECT id, s <-> '{1:1,8:1}/8', s <#> '{1:1,8:1}/8', s <=> '{1:1,8:1}/8', s <+> '{1:1,8:1}/8' FROM items$$);
SELECT pack_same($$SELECT id, b <~> B'10101010', b <%> B'10101010' FROM items$$);
-- Norms, dimensions, normalization, quantization, subvectors, arithmetic.
SELECT pack_same($$SELECT id, vector_dims(emb), vector_norm(emb), l2_normalize(emb), binary_quantize(emb), subvector(emb, 2, 3) FROM items$$);
SELECT pack_same($$SELECT id, vector_dims(h), l2_norm(h), l2_normalize(h), binary_quantize(h), subvector(h, 2, 3), l2_norm(s), l2_normalize(s) FROM items$$);
SELECT pack_same($$SELECT id, emb + emb, emb - '[1,1,1,1,1,1,1,1]', emb * emb, emb || '[9]', h + h, h - h, h * h, h || h FROM items$$);
SELECT pack_same($$SELECT id, emb < '[0,0,0,0,0,0,0,0]', emb = emb, h >= h, s <> '{}/8', vector_cmp(emb, '[0,0,0,0,0,0,0,0]') FROM items$$);
SELECT pack_same($$SELECT id, emb::halfvec(8), h::vector(8), emb::sparsevec(8), s::vector(8), emb::real[] FROM items$$);
-- In quals, with kernels of vexec's own around them.
SELECT pack_same($$SELECT id FROM items WHERE emb <-> '[1,0,0,0,0,0,0,1]' < 2 AND k > 3$$);
SELECT pack_same($$SELECT count(*) FROM items WHERE h <=> '[1,1,1,1,1,1,1,1]' BETWEEN 0.5 AND 1.5 OR vector_dims(emb) <> 8$$);
SELECT pack_same($$SELECT k, count(*), sum(emb <-> '[1,0,0,0,0,0,0,1]') FROM items WHERE b <~> B'11110000' <= 4 GROUP BY k$$);

-- Exact kNN without an index: VecSort's top-N over the pack's distances.
-- (The last key makes the order total.)
SELECT pack_same($$SELECT id, emb <-> '[1,0,0,0,0,0,0,1]' AS d FROM items ORDER BY emb <-> '[1,0,0,0,0,0,0,1]', id LIMIT 10$$);
SELECT pack_same($$SELECT id FROM items WHERE k = 5 ORDER BY h <=> '[1,1,1,1,1,1,1,1]', id LIMIT 5$$);
SET vexec.mode = force;
EXPLAIN (COSTS OFF) SELECT id FROM items ORDER BY emb <-> '[1,0,0,0,0,0,0,1]' LIMIT 10;
PREPARE knn(vector) AS SELECT id FROM items ORDER BY emb <-> $1, id LIMIT 3;
EXECUTE knn('[1,0,0,0,0,0,0,1]');
SET vexec.mode = off;
EXECUTE knn('[1,0,0,0,0,0,0,1]');
DEALLOCATE knn;

-- TOASTed vectors (2,000 dimensions, 8 kB: stored out of line) reach the
-- function as TOAST pointers and are detoasted by pgvector itself.
CREATE TABLE wide (id int, emb vector(2000));
ALTER TABLE wide ALTER COLUMN emb SET STORAGE EXTERNAL;
INSERT INTO wide SELECT i, (SELECT array_agg(((i * d) % 17)::float4 / 4) FROM generate_series(1, 2000) d)::vector
  FROM generate_series(1, 40) i;
INSERT INTO wide VALUES (41, NULL);
SELECT pg_relation_size(reltoastrelid) > 0 AS toasted FROM pg_class WHERE relname = 'wide';
SELECT pack_same($$SELECT id, emb <-> (SELECT emb FROM wide WHERE id = 7), vector_norm(emb), vector_dims(emb), l2_normalize(emb) FROM wide$$);
SELECT pack_same($$SELECT id FROM wide ORDER BY emb <=> (SELECT emb FROM wide WHERE id = 3), id LIMIT 5$$);

-- Batches of two rows: bindings and the fmgr loop at every batch edge.
SET vexec.debug_batch_size = 2;
SELECT pack_same($$SELECT id, emb <-> '[1,0,0,0,0,0,0,1]', h <=> '[1,1,1,1,1,1,1,1]', b <~> B'10101010' FROM items WHERE id % 7 = 1$$);
SELECT pack_same($$SELECT emb <-> CASE WHEN id = 2000 THEN '[1,2]'::vector ELSE '[1,2,3,4,5,6,7,8]' END, 1 / (id - 1999) FROM items$$);
RESET vexec.debug_batch_size;

-- pgvector's errors, at PostgreSQL's row: where two errors compete in one
-- batch, the one the row executor meets first is raised (the pack's error
-- is set aside and the batch evaluated row by row).
SELECT pack_same($$SELECT emb <-> '[1,2,3]' FROM items$$);
SELECT pack_same($$SELECT emb <-> CASE WHEN id = 2000 THEN '[1,2]'::vector ELSE '[1,2,3,4,5,6,7,8]' END, 1 / (id - 1999) FROM items$$);
SELECT pack_same($$SELECT emb <-> CASE WHEN id = 2000 THEN '[1,2]'::vector ELSE '[1,2,3,4,5,6,7,8]' END, 1 / (id - 2001) FROM items$$);
SELECT pack_same($$SELECT id FROM items WHERE subvector(emb, 1, 0) IS NULL$$);

-- A same-named function of the user's, or a C function of the same
-- library under another name, is not the pack's: evaluated by PostgreSQL.
CREATE SCHEMA mine;
CREATE FUNCTION mine.l2_distance(vector, vector) RETURNS float8 LANGUAGE sql IMMUTABLE STRICT
  AS $$ SELECT 42::float8 $$;
CREATE FUNCTION mine.my_l2(vector, vector) RETURNS float8 LANGUAGE c IMMUTABLE STRICT
  AS '$libdir/vector', 'l2_distance';
SELECT pack_same($$SELECT mine.l2_distance(emb, '[1,1,1,1,1,1,1,1]'), mine.my_l2(emb, '[1,1,1,1,1,1,1,1]') FROM items$$);
SELECT count(*) FROM vexec.pack_functions() WHERE signature LIKE '%my_l2%' OR function = 'mine.l2_distance(vector,vector)'::regprocedure;

-- Bindings follow the extension: a version outside the pack's range, or a
-- dropped extension, binds nothing (seen in the same transaction).
BEGIN;
UPDATE pg_extension SET extversion = '0.9.1' WHERE extname = 'vector';
SELECT count(*) FROM vexec.pack_functions();
SELECT pack_same($$SELECT id, emb <-> '[1,0,0,0,0,0,0,1]' FROM items$$);
ROLLBACK;
SELECT count(*) FROM vexec.pack_functions();
BEGIN;
SET LOCAL client_min_messages = warning;
DROP EXTENSION vector CASCADE;
SELECT count(*) FROM vexec.pack_functions();
ROLLBACK;
SELECT pack_same($$SELECT id, emb <-> '[1,0,0,0,0,0,0,1]' FROM items$$);

-- An HNSW index still competes on cost in auto, and wins where it should.
CREATE INDEX items_hnsw ON items USING hnsw (emb vector_l2_ops);
SET vexec.mode = auto;
EXPLAIN (COSTS OFF) SELECT id FROM items ORDER BY emb <-> '[1,0,0,0,0,0,0,1]' LIMIT 10;
RESET vexec.mode;
