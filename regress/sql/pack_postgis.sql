-- vexec_postgis: PostGIS's geometry functions in vexec's batches, served by
-- the kernel pack through PostGIS's own C functions. Every query is compared
-- with mode off row by row (pack_same, from pack_pgvector), and the force plan
-- names the pack functions that served it.
\set SHOW_CONTEXT never
SET search_path = public;
CREATE EXTENSION postgis;

SELECT pack, count(*) FROM vexec.pack_functions() WHERE pack = 'vexec_postgis' GROUP BY pack;

SELECT setseed(0.17);
CREATE TABLE shapes (id int, geom geometry, k int);
INSERT INTO shapes
SELECT i, CASE i % 6
    WHEN 0 THEN ST_MakePoint(round((random() * 100)::numeric, 2), round((random() * 100)::numeric, 2))
    WHEN 1 THEN ST_MakeLine(ST_MakePoint(i % 97, i % 89), ST_MakePoint(i % 97 + 3, i % 89 + 2))
    WHEN 2 THEN ST_Buffer(ST_MakePoint(i % 83, i % 79), 1 + i % 3, 2)
    WHEN 3 THEN ST_MakeEnvelope(i % 71, i % 67, i % 71 + 5, i % 67 + 4)
    WHEN 4 THEN ST_Collect(ST_MakePoint(i % 61, i % 59), ST_MakePoint(i % 53, i % 47))
    ELSE ST_MakePoint(i % 101, i % 103) END, i % 10
  FROM generate_series(1, 3000) i;
INSERT INTO shapes VALUES (3001, NULL, 1), (3002, 'POINT EMPTY', 2), (3003, 'POLYGON EMPTY', 3),
  (3004, 'LINESTRING(0 0, 0 0)', 4), (3005, 'POINT(1 2 3)', 5);
ANALYZE shapes;

-- Box operators.
SELECT pack_same($$SELECT id, geom && ST_MakeEnvelope(10, 10, 40, 40), geom ~= geom, geom ~ 'POINT(20 20)', geom @ ST_MakeEnvelope(0, 0, 50, 50) FROM shapes$$);
SELECT pack_same($$SELECT id, geom << 'POINT(50 50)', geom &< 'POINT(50 50)', geom <<| 'POINT(50 50)', geom &<| 'POINT(50 50)', geom &> 'POINT(50 50)', geom >> 'POINT(50 50)', geom |&> 'POINT(50 50)', geom |>> 'POINT(50 50)' FROM shapes$$);
SELECT pack_same($$SELECT id, geom <-> 'POINT(50 50)', geom <#> 'POINT(50 50)' FROM shapes$$);
-- vexec's native box kernel decides the rows whose boxes it reads exactly
-- (stored boxes, points: rounded outwards to floats as PostGIS does) and
-- leaves the others to PostGIS: every operator on coordinates that floats
-- cannot hold, at float edges, tiny, huge, -0, infinite, NaN, 3D and 4D,
-- against each kind of constant, off against force.
CREATE TABLE edges (id int, geom geometry);
INSERT INTO edges VALUES
  (1, 'POINT(0.1 0.1)'), (2, 'POINT(0.30000001 0.2)'), (3, 'POINT(1e-40 -1e-40)'), (4, 'POINT(-0 0)'),
  (5, 'POINT(1e39 -1e39)'), (6, 'POINT(3.4028235e38 1)'), (7, ST_MakePoint('Infinity', 1)), (8, ST_MakePoint('NaN', 'NaN')),
  (9, 'POINT(0.1 0.2 0.3)'), (10, 'POINT ZM (0.1 0.2 0.3 0.4)'), (11, 'POINT EMPTY'), (12, 'LINESTRING(0.1 0.1, 0.3 0.3)'),
  (13, 'POLYGON((0.1 0.1, 0.1 0.3, 0.3 0.3, 0.3 0.1, 0.1 0.1))'), (14, 'GEOMETRYCOLLECTION EMPTY'),
  (15, 'MULTIPOINT((0.1 0.1), (0.2 0.2))'), (16, 'POINT(0.2 0.30000001)'), (17, NULL), (18, 'POINT(16777217 0.1)'),
  (19, ST_MakePoint('-Infinity', '-Infinity')), (20, 'SRID=4326;POINT(0.1 0.1)'), (21, 'POINT(3 4)'),
  (22, 'POINT(3.1 4.1)');
INSERT INTO edges SELECT 100 + i, ST_MakePoint(i / 7.0, i / 3.0) FROM generate_series(-50, 50) i;
SELECT c AS constant, split_part(pack_same(format($$SELECT id, geom && %1$L, geom @ %1$L, geom ~ %1$L, geom ~= %1$L,
    geom << %1$L, geom &< %1$L, geom >> %1$L, geom &> %1$L, geom <<| %1$L, geom &<| %1$L, geom |>> %1$L, geom |&> %1$L
    FROM edges$$, c::geometry)), ' | ', 1) AS off_vs_force
  FROM (VALUES ('POINT(0.1 0.1)'), ('POINT(0.2 0.30000001)'), ('POLYGON((0.1 0.1, 0.1 0.3, 0.3 0.3, 0.3 0.1, 0.1 0.1))'),
               ('POINT(-0 0)'), ('POINT(1e-40 0)'), ('LINESTRING(-1e39 -1e39, 1e39 1e39)'), ('POINT EMPTY'),
               ('LINESTRING(0.1 0.1, 0.3 0.3)'), ('POINT(16777217 0.1)')) v(c);
-- The same operators as quals (column op constant and constant op column:
-- decided in place on the column), with a TOASTed polygon among the rows
-- (its box comes from the general path).
CREATE TABLE edges_toasted AS SELECT * FROM edges;
INSERT INTO edges_toasted VALUES (23, ST_Buffer('POINT(0.2 0.2)'::geometry, 0.1, 2000));
SELECT pg_column_compression(geom) IS NOT NULL OR pg_column_size(geom) < ST_MemSize(geom) AS toasted FROM edges_toasted WHERE id = 23;
SELECT c AS constant, split_part(pack_same((SELECT string_agg(format(
    $$SELECT %2$s AS op, id FROM edges_toasted WHERE geom %1$s %3$L::geometry UNION ALL SELECT -%2$s, id FROM edges_toasted WHERE %3$L::geometry %1$s geom$$,
    op, n, c), ' UNION ALL ')
    FROM unnest(ARRAY['&&', '@', '~', '~=', '<<', '&<', '>>', '&>', '<<|', '&<|', '|>>', '|&>']) WITH ORDINALITY o(op, n))), ' | ', 1) AS quals_off_vs_force
  FROM (VALUES ('POINT(0.1 0.1)'), ('POINT(0.2 0.30000001)'), ('POLYGON((0.1 0.1, 0.1 0.3, 0.3 0.3, 0.3 0.1, 0.1 0.1))'),
               ('POINT(-0 0)'), ('POINT(1e-40 0)'), ('LINESTRING(-1e39 -1e39, 1e39 1e39)'), ('POINT EMPTY'),
               ('LINESTRING(0.1 0.1, 0.3 0.3)'), ('POINT(16777217 0.1)')) v(c);
-- The predicates PostGIS answers false for boxes that do not overlap (the
-- rows with such boxes decided natively), as targets and as quals both ways
-- round; row 20 (SRID 4326) aside, as PostGIS raises for it (below).
SELECT c AS constant,
    split_part(pack_same(format($$SELECT id, ST_Intersects(geom, %1$L), ST_Contains(geom, %1$L), ST_Within(geom, %1$L),
        ST_Covers(%1$L, geom), ST_CoveredBy(geom, %1$L), ST_Touches(geom, %1$L) FROM edges_toasted WHERE id <> 20$$, c::geometry)), ' | ', 1) AS targets,
    split_part(pack_same((SELECT string_agg(format(
        $$SELECT %2$s AS f, id FROM edges_toasted WHERE id <> 20 AND %1$s(geom, %3$L::geometry) UNION ALL SELECT -%2$s, id FROM edges_toasted WHERE id <> 20 AND %1$s(%3$L::geometry, geom)$$,
        f, n, c), ' UNION ALL ')
      FROM unnest(ARRAY['ST_Intersects', 'ST_Contains', 'ST_Within', 'ST_Covers', 'ST_CoveredBy', 'ST_Touches']) WITH ORDINALITY o(f, n))), ' | ', 1) AS quals
  FROM (VALUES ('POINT(0.1 0.1)'), ('POLYGON((0.1 0.1, 0.1 0.3, 0.3 0.3, 0.3 0.1, 0.1 0.1))'), ('POINT(3.1 4.1)'),
               ('LINESTRING(-1e39 -1e39, 1e39 1e39)'), ('POINT EMPTY'), ('POINT(16777217 0.1)'),
               ('POLYGON((10 10, 10 20, 20 20, 20 10, 10 10))')) v(c);
SELECT pack_same($$SELECT id FROM edges WHERE ST_Intersects(geom, 'POINT(1000 1000)')$$);
SELECT pack_same($$SELECT id FROM edges WHERE ST_Contains('POINT(1000 1000)', geom)$$);
SET vexec.mode = force;
EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*) FROM edges WHERE geom && 'POINT(1 1)';
RESET vexec.mode;
-- ST_DWithin of two points is decided natively where the distance is
-- clearly on one side of the tolerance; at the boundary (3-4-5 triangles,
-- equal points at 0), and for anything else, by PostGIS (errors included:
-- a negative tolerance, mixed SRIDs).
SELECT c AS constant, t AS tolerance, split_part(pack_same(format($$SELECT id, ST_DWithin(geom, %L, %s) FROM edges WHERE id <> 20$$,
    c::geometry, t)), ' | ', 1) AS off_vs_force
  FROM (VALUES ('POINT(0.1 0.1)'), ('POINT(3.1 4.1)'), ('POINT(0 0)'), ('POINT(1e-40 0)'), ('POINT(0.1 0.2 9)'),
               ('POLYGON((0.1 0.1, 0.1 0.3, 0.3 0.3, 0.3 0.1, 0.1 0.1))'), ('POINT EMPTY'), ('SRID=4326;POINT(0 0)')) v(c),
       (VALUES ('0'), ('5'), ('0.1'), ('1e-300'), ($$'NaN'$$), ($$'Infinity'$$), ('-1')) w(t)
  ORDER BY 1, 2;
SET vexec.mode = force;
EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*) FROM edges WHERE ST_DWithin(geom, 'POINT(1 1)', 2);
RESET vexec.mode;

-- Predicates and distances (GEOS).
SELECT pack_same($$SELECT id, ST_Intersects(geom, ST_Buffer('POINT(50 50)'::geometry, 20)), ST_Contains(ST_MakeEnvelope(0, 0, 60, 60), geom), ST_Within(geom, ST_MakeEnvelope(0, 0, 60, 60)) FROM shapes$$);
SELECT pack_same($$SELECT id, ST_Covers(ST_MakeEnvelope(0, 0, 60, 60), geom), ST_CoveredBy(geom, ST_MakeEnvelope(0, 0, 60, 60)), ST_Touches(geom, 'LINESTRING(0 50, 100 50)'), ST_Disjoint(geom, 'POINT(5 5)'), ST_Equals(geom, geom) FROM shapes$$);
SELECT pack_same($$SELECT id, ST_DWithin(geom, 'POINT(50 50)', 10), ST_DFullyWithin(geom, 'POINT(50 50)', 30), ST_Distance(geom, 'LINESTRING(0 0, 100 100)') FROM shapes$$);
-- Measures, accessors, constructors.
SELECT pack_same($$SELECT id, ST_Area(geom), ST_Length(geom), ST_Perimeter(geom), ST_NPoints(geom), ST_IsEmpty(geom), ST_Dimension(geom), ST_NumGeometries(geom) FROM shapes$$);
SELECT pack_same($$SELECT id, GeometryType(geom), ST_GeometryType(geom), ST_SRID(geom), ST_AsText(ST_Envelope(geom)), ST_AsText(ST_Centroid(geom)), ST_AsBinary(ST_PointOnSurface(geom)) FROM shapes WHERE id % 3 = 0$$);
SELECT pack_same($$SELECT id, ST_X(geom), ST_Y(geom) FROM shapes WHERE id % 6 IN (0, 5)$$);
SELECT pack_same($$SELECT id, ST_AsText(ST_SetSRID(ST_MakePoint(id, k), 4326)), ST_SRID(ST_Point(id, k, 3857)), ST_AsText(ST_MakePoint(id, k, 1.5)), ST_AsText(ST_MakePoint(id, k, 1, 2)) FROM shapes$$);
SELECT pack_same($$SELECT id, ST_AsText(ST_GeomFromText(CASE WHEN k > 4 THEN 'POINT(1 2)' ELSE 'LINESTRING(0 0, 1 1)' END, 4326)) FROM shapes$$);
-- (Text concatenation has no kernel: that whole expression is PostgreSQL's.)
SELECT pack_same($$SELECT id, ST_AsText(ST_GeomFromText('POINT(' || id || ' ' || k || ')', 4326)) FROM shapes$$);
-- In quals with vexec's own kernels, and a filter by distance.
SELECT pack_same($$SELECT count(*) FROM shapes WHERE geom && ST_MakeEnvelope(10, 10, 40, 40) AND k > 3$$);
SELECT pack_same($$SELECT id FROM shapes WHERE ST_DWithin(geom, 'POINT(50 50)', 5) OR ST_Area(geom) > 15$$);
SELECT pack_same($$SELECT id, ST_Distance(geom, 'POINT(50 50)') AS d FROM shapes WHERE geom IS NOT NULL ORDER BY 2, 1 LIMIT 5$$);

-- PostGIS's errors, at PostgreSQL's row: mixed SRIDs, points expected,
-- malformed text.
SELECT pack_same($$SELECT ST_Intersects(ST_SetSRID(geom, 4326), 'POINT(1 1)') FROM shapes$$);
SELECT pack_same($$SELECT ST_X(geom) FROM shapes$$);
SELECT pack_same($$SELECT ST_GeomFromText(CASE WHEN id = 1500 THEN 'POINT(1' ELSE 'POINT(1 1)' END) FROM shapes$$);
SELECT pack_same($$SELECT ST_X(CASE WHEN id = 1500 THEN geom ELSE 'POINT(1 1)' END), 1 / (id - 1499) FROM shapes WHERE id < 2000$$);
SET vexec.debug_batch_size = 2;
SELECT pack_same($$SELECT id, geom && ST_MakeEnvelope(10, 10, 40, 40), ST_Intersects(geom, ST_Buffer('POINT(50 50)'::geometry, 20)) FROM shapes WHERE id % 5 = 0$$);
RESET vexec.debug_batch_size;

-- Unbinding when PostGIS goes (seen in the same transaction).
BEGIN;
SET LOCAL client_min_messages = warning;
DROP EXTENSION postgis CASCADE;
SELECT count(*) FROM vexec.pack_functions() WHERE pack = 'vexec_postgis';
ROLLBACK;
SELECT count(*) FROM vexec.pack_functions() WHERE pack = 'vexec_postgis';

-- A GiST index still competes on cost in auto.
CREATE INDEX shapes_gist ON shapes USING gist (geom);
SET vexec.mode = auto;
EXPLAIN (COSTS OFF) SELECT id FROM shapes WHERE geom && ST_MakeEnvelope(10, 10, 11, 11);
RESET vexec.mode;
